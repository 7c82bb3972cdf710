//! What one named agent sees: its roots in its precedence, evaluated in its
//! dialect ([`crate::agents`]); and the matrix of every skill against every
//! agent. skillpm's own config (`[engine] roots`, `disabled`) is skillpm's,
//! not the agent's, so it plays no part here.

use crate::agents::{Agent, Depth, AGENTS};
use crate::catalog::{Catalog, State};
use crate::config::read_engine_table;
use crate::config::Environment;
use crate::discover::{leaves, Layout, Root, Scope};
use serde::Serialize;
use std::collections::BTreeSet;

/// The roots `agent` reads from `env`, lowest precedence first. Without a
/// home directory the user roots are left out, and so is a project root
/// that leads outside the project (a committed `.claude/skills -> ~`)
/// unless the user's own config trusts project roots: the default view
/// refuses such a root with an error ([`crate::discover::layout`]).
pub fn layout(env: &Environment, agent: &Agent) -> Layout {
    let base = env.project_base();
    let trust = env
        .user_config_file()
        .and_then(|f| read_engine_table(&f).ok())
        .is_some_and(|t| t.trust_project_roots);
    let mut roots: Vec<Root> = Vec::new();
    for r in agent.roots {
        let Some(path) = r.locate(env) else {
            continue;
        };
        if r.scope == Scope::Project && !trust && leaves(&base, &path).is_some() {
            continue;
        }
        // A project at the home directory reads one directory once; its
        // later (higher) position is the one that counts.
        roots.retain(|x| x.path != path);
        let exists = path.is_dir();
        roots.push(Root {
            path,
            scope: r.scope,
            exists,
        });
    }
    Layout {
        project: env.project_dir(),
        roots,
        disabled: Vec::new(),
    }
}

/// The catalog exactly as `agent` sees it, and the commands of the
/// skills in its roots that it does not look deep enough to find, sorted.
pub fn catalog(env: &Environment, agent: &Agent) -> (Catalog, Vec<String>) {
    let mut cat = Catalog::build_from(env, layout(env, agent), Some(agent.dialect));
    let too_deep = drop_too_deep(agent, &mut cat);
    (cat, too_deep)
}

/// Takes out of `cat` the skills `agent` does not find: for a
/// [`Depth::TopLevel`] agent, every nested skill (a command is the path
/// below its root, so a nested one holds a `/`). Returns their commands,
/// sorted, each once.
fn drop_too_deep(agent: &Agent, cat: &mut Catalog) -> Vec<String> {
    if agent.depth == Depth::Nested {
        return Vec::new();
    }
    let mut gone = BTreeSet::new();
    cat.skills.retain(|s| {
        let deep = s.command.contains('/');
        if deep {
            gone.insert(s.command.clone());
        }
        !deep
    });
    for s in &mut cat.skills {
        s.needed_by.retain(|c| !gone.contains(c));
    }
    gone.into_iter().collect()
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// `eligible`, `skipped` or `absent`.
    pub state: &'static str,
    /// The reason code when skipped (`missing-bin`, `invalid: ...` as
    /// `bad-frontmatter`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Eligible but never offered to the model (`disable-model-invocation`,
    /// `user_invocable_only`): the user must name it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_only: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub command: String,
    /// One cell per agent, in [`Matrix::agents`] order.
    pub cells: Vec<Cell>,
}

/// Every skill any agent sees, against every agent; rows sorted by
/// command, columns by agent id, so the output is the same on every run.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub agents: Vec<&'static str>,
    pub skills: Vec<Row>,
}

pub fn matrix(env: &Environment) -> Matrix {
    let mut cats = Catalog::build_many(
        env,
        AGENTS
            .iter()
            .map(|a| (layout(env, a), Some(a.dialect)))
            .collect(),
    );
    for (cat, agent) in cats.iter_mut().zip(AGENTS) {
        drop_too_deep(agent, cat);
    }
    let commands: BTreeSet<&str> = cats
        .iter()
        .flat_map(|c| c.skills.iter().map(|s| s.command.as_str()))
        .collect();
    let skills = commands
        .into_iter()
        .map(|cmd| Row {
            command: cmd.to_string(),
            cells: cats.iter().map(|c| cell(c, cmd)).collect(),
        })
        .collect();
    Matrix {
        agents: AGENTS.iter().map(|a| a.id).collect(),
        skills,
    }
}

fn cell(cat: &Catalog, command: &str) -> Cell {
    match cat.find(command) {
        None => Cell {
            state: "absent",
            reason: None,
            user_only: false,
        },
        Some(s) if s.state == State::Eligible => Cell {
            state: "eligible",
            reason: None,
            user_only: s.requirements.user_invocable_only,
        },
        Some(s) => Cell {
            state: "skipped",
            reason: s.reason.as_ref().map(|r| r.code.clone()),
            user_only: false,
        },
    }
}

impl Matrix {
    /// A fixed-width table: `yes`, `user` (eligible, user-invoked only),
    /// `skip:<code>` or `-`.
    pub fn render_human(&self) -> String {
        let text = |c: &Cell| match (c.state, &c.reason) {
            ("eligible", _) if c.user_only => "user".to_string(),
            ("eligible", _) => "yes".to_string(),
            ("skipped", Some(r)) => format!("skip:{r}"),
            ("skipped", None) => "skip".to_string(),
            _ => "-".to_string(),
        };
        let first = self
            .skills
            .iter()
            .map(|r| r.command.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(5, 40);
        let widths: Vec<usize> = self
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| {
                self.skills
                    .iter()
                    .map(|r| text(&r.cells[i]).len())
                    .max()
                    .unwrap_or(0)
                    .max(a.len())
            })
            .collect();
        let mut out = format!("{:<first$}", "skill");
        for (a, w) in self.agents.iter().zip(&widths) {
            out.push_str(&format!("  {a:<w$}"));
        }
        out = out.trim_end().to_string();
        out.push('\n');
        for r in &self.skills {
            let mut line = format!("{:<first$}", r.command);
            for (c, w) in r.cells.iter().zip(&widths) {
                line.push_str(&format!("  {:<w$}", text(c)));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if self.skills.is_empty() {
            out.push_str("No skills found.\n");
        }
        out
    }
}

/// How many nested skills the header names before "and N more".
const SHOWN_TOO_DEEP: usize = 10;

/// The header `status --agent` prints above the catalog: who, where it is
/// documented, which keys decide eligibility, and the skills in its roots
/// it does not find (`too_deep`, from [`catalog`]).
pub fn describe(agent: &Agent, too_deep: &[String]) -> String {
    let dialect = if agent.dialect.is_empty() {
        "none (every valid skill is offered; requirement keys are ignored)".to_string()
    } else {
        agent
            .dialect
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "Agent: {} ({})\nDialect: {dialect}\nInstalls into: {}\nSource: {}\nNote: {}\n",
        agent.display, agent.id, agent.install, agent.source, agent.note
    );
    if let Some(file) = agent.plugins {
        out.push_str(&format!(
            "Plugins: it installs plugins itself from {file}; skills skillpm adds from a plugin are plain skills to it\n"
        ));
    }
    if !too_deep.is_empty() {
        let mut names = too_deep
            .iter()
            .take(SHOWN_TOO_DEEP)
            .map(|c| skillpm_core::text::sanitize(c))
            .collect::<Vec<_>>()
            .join(", ");
        if too_deep.len() > SHOWN_TOO_DEEP {
            names.push_str(&format!(", and {} more", too_deep.len() - SHOWN_TOO_DEEP));
        }
        out.push_str(&format!(
            "Not found by {}: {} nested skill(s), as it reads <root>/<name>/SKILL.md only: {names}\n",
            agent.display,
            too_deep.len()
        ));
    }
    out
}

/// [`describe`] as JSON, added to `status --json` under `"agent"`.
pub fn describe_json(agent: &Agent, too_deep: &[String]) -> serde_json::Value {
    serde_json::json!({
        "id": agent.id,
        "name": agent.display,
        "install": agent.install,
        "dialect": agent.dialect.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "depth": agent.depth.as_str(),
        "not_found_nested": too_deep,
        "source": agent.source,
        "plugins": agent.plugins,
    })
}
