//! The evaluated view: every discovered skill with its state and reason.
//!
//! This is what `status`, `prompt` and `load` share. Entries are sorted by
//! command, then highest precedence first, so every rendering of a catalog
//! is deterministic.

use crate::agents::{self, Key};
use crate::config::{ConfigError, Environment};
use crate::discover::{self, Found, Root, Scope};
use crate::eligibility::{Probe, Reason, Requirements};
use crate::parallel::Workers;
use crate::parses::{self, Fresh, Parsed, Parses};
use crate::tools::{ToolPolicy, ToolRefs, ToolStatus, Verdict};
use crate::triggers::{self, Triggers};
use serde_json::{json, Value};
use skillpm_core::checksum::Checksum;
use skillpm_core::skill::{SkillDoc, SkillError, Warning};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Eligible,
    Skipped,
    Shadowed,
    Invalid,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Eligible => "eligible",
            State::Skipped => "skipped",
            State::Shadowed => "shadowed",
            State::Invalid => "invalid",
        }
    }
}

#[derive(Debug, Clone)]
pub struct SkillEntry {
    pub command: String,
    /// The frontmatter `name`, else the directory name.
    pub name: String,
    pub description: String,
    pub version: Option<String>,
    pub path: PathBuf,
    pub skill_md: PathBuf,
    pub root: usize,
    pub scope: Scope,
    pub state: State,
    pub reason: Option<Reason>,
    pub warnings: Vec<Warning>,
    pub requirements: Requirements,
    /// The parsed file; `None` when it could not be loaded.
    pub doc: Option<SkillDoc>,
    /// The digest of the bytes `doc` was parsed from: a reader holding
    /// bytes of the same digest holds this parse too (`skillpm mcp` serves
    /// a `SKILL.md` read after the catalogue's, and parses it again only
    /// if it differs). Hashed here, where the catalogue reads, so other
    /// parsers (the audit, `validate`) do not pay for it.
    pub doc_digest: Option<Checksum>,
    /// What should bring the skill forward ([`crate::triggers`]).
    pub triggers: Triggers,
    /// `brief_description`, else the first sentence of the description.
    pub brief: String,
    /// The tools the skill names ([`crate::tools`]).
    pub tools: ToolRefs,
    /// Set by the installer layer: the version skillpm installed here.
    pub installed: Option<String>,
    /// The same skill in roots of lower precedence: directories there
    /// that are links to this one's tree ([`merge_links`]).
    pub linked_from: Vec<PathBuf>,
    /// The skills its `skill.toml` says it needs ([`needs`]).
    pub dependencies: Vec<String>,
    /// The eligible skills that need this one.
    pub needed_by: Vec<String>,
}

/// The skills discovery found, not yet read.
pub struct Discovered {
    layout: discover::Layout,
    found: Vec<Found>,
}

#[derive(Debug, Clone)]
pub struct Catalog {
    pub project: Option<PathBuf>,
    pub roots: Vec<Root>,
    pub skills: Vec<SkillEntry>,
    /// The host tools the skills were checked against, and the mode.
    pub tool_policy: ToolPolicy,
}

impl Catalog {
    /// Discovers, parses and evaluates every skill visible from `env`.
    pub fn build(env: &Environment) -> Result<Catalog, ConfigError> {
        Ok(Catalog::build_from(env, discover::layout(env)?, None))
    }

    /// The first half of [`Catalog::build_keeping`]: the roots walked,
    /// nothing read, so a caller may still be loading the kept parses.
    pub fn discover(env: &Environment) -> Result<Discovered, ConfigError> {
        let layout = discover::layout(env)?;
        let found = discover::scan(&layout);
        Ok(Discovered { layout, found })
    }

    /// [`Catalog::build`] of what [`Catalog::discover`] found, taking the
    /// kept parse of each `SKILL.md` whose fingerprint is unchanged, and
    /// leaving in `parses` those of this build ([`crate::parses`]).
    pub fn build_keeping(env: &Environment, found: Discovered, parses: &mut Parses) -> Catalog {
        let Discovered { layout, found } = found;
        let tool_policy = crate::config::tool_policy(env).unwrap_or_default();
        let now = std::time::SystemTime::now();
        let all: Vec<_> = env.workers.chunked(&found, 64, |part| {
            part.iter()
                .map(|f| {
                    let (parsed, kept, Fresh(new)) = parses.parse(&f.skill_md, now);
                    let fresh = new && parsed.is_ok();
                    (entry(f.clone(), parsed, &layout.roots, None), kept, fresh)
                })
                .collect()
        });
        let mut skills = Vec::with_capacity(all.len());
        let mut kept = HashMap::with_capacity(all.len());
        let mut parsed = 0;
        for (f, (e, k, fresh)) in found.iter().zip(all) {
            skills.push(e);
            parsed += usize::from(fresh);
            kept.extend(k.map(|k| (f.skill_md.clone(), k)));
        }
        parses.replace(kept, parsed);
        Catalog::assemble_entries(env, layout, skills, tool_policy)
    }

    /// The catalog over `layout`'s roots, reading eligibility keys in
    /// `dialect` only (`None`: skillpm's, every form), as one named agent
    /// sees it ([`crate::agents`]).
    pub fn build_from(
        env: &Environment,
        layout: discover::Layout,
        dialect: Option<&[Key]>,
    ) -> Catalog {
        // `layout` read the same config files, so only a file changed
        // since then can fail here; it then checks no tools.
        let tool_policy = crate::config::tool_policy(env).unwrap_or_default();
        Catalog::assemble(env, layout, dialect, tool_policy)
    }

    /// One catalog per `(layout, dialect)`, each `SKILL.md` parsed once
    /// however many layouts reach it: `status --agents` builds one per
    /// agent over mostly the same directories.
    pub fn build_many(
        env: &Environment,
        views: Vec<(discover::Layout, Option<&[Key]>)>,
    ) -> Vec<Catalog> {
        let tool_policy = crate::config::tool_policy(env).unwrap_or_default();
        let found: Vec<Vec<Found>> = views.iter().map(|(l, _)| discover::scan(l)).collect();
        let mut index: HashMap<&Path, usize> = HashMap::new();
        let mut unique: Vec<Found> = Vec::new();
        for f in found.iter().flatten() {
            index.entry(&f.skill_md).or_insert_with(|| {
                unique.push(f.clone());
                unique.len() - 1
            });
        }
        let parsed = parse_all(&env.workers, &unique);
        let doc = |f: &Found| {
            index
                .get(f.skill_md.as_path())
                .and_then(|&i| parsed.get(i))
                .cloned()
                .unwrap_or_else(|| Err(SkillError::Io("not parsed".into())))
        };
        let docs: Vec<Vec<_>> = found
            .iter()
            .map(|fs| fs.iter().map(doc).collect())
            .collect();
        views
            .into_iter()
            .zip(found)
            .zip(docs)
            .map(|(((layout, dialect), found), parsed)| {
                Catalog::assemble_parsed(env, layout, found, parsed, dialect, tool_policy.clone())
            })
            .collect()
    }

    fn assemble(
        env: &Environment,
        layout: discover::Layout,
        dialect: Option<&[Key]>,
        tool_policy: ToolPolicy,
    ) -> Catalog {
        let found = discover::scan(&layout);
        // Each skill is read, parsed and made an entry on the pool: YAML
        // and the trigger patterns' compiling are most of a large tree's
        // catalogue.
        let skills = env.workers.chunked(&found, 64, |part| {
            part.iter()
                .map(|f| {
                    let parsed = parses::read_and_parse(&f.skill_md);
                    entry(f.clone(), parsed, &layout.roots, dialect)
                })
                .collect()
        });
        Catalog::assemble_entries(env, layout, skills, tool_policy)
    }

    fn assemble_parsed(
        env: &Environment,
        layout: discover::Layout,
        found: Vec<Found>,
        parsed: Vec<Parsed>,
        dialect: Option<&[Key]>,
        tool_policy: ToolPolicy,
    ) -> Catalog {
        let skills: Vec<SkillEntry> = found
            .into_iter()
            .zip(parsed)
            .map(|(f, doc)| entry(f, doc, &layout.roots, dialect))
            .collect();
        Catalog::assemble_entries(env, layout, skills, tool_policy)
    }

    /// The catalog of `skills` found in `layout`: shadowing, links between
    /// roots, and eligibility.
    fn assemble_entries(
        env: &Environment,
        layout: discover::Layout,
        mut skills: Vec<SkillEntry>,
        tool_policy: ToolPolicy,
    ) -> Catalog {
        skills.sort_by(|a, b| a.command.cmp(&b.command).then(b.root.cmp(&a.root)));
        merge_links(&mut skills);
        evaluate(
            &mut skills,
            &layout.disabled,
            &Probe::new(env),
            &tool_policy,
        );
        Catalog {
            project: layout.project,
            roots: layout.roots,
            skills,
            tool_policy,
        }
    }

    /// A catalog over exactly `roots` (lowest precedence first), reading
    /// no config file: what an embedding runtime uses, with an
    /// [`Environment::isolated`] describing its host. `tools` is the
    /// host's tool policy.
    pub fn from_roots(env: &Environment, roots: &[PathBuf], tools: ToolPolicy) -> Catalog {
        let layout = discover::Layout {
            project: None,
            roots: roots
                .iter()
                .map(|p| Root {
                    path: p.clone(),
                    scope: Scope::Extra,
                    exists: p.is_dir(),
                })
                .collect(),
            disabled: Vec::new(),
        };
        Catalog::assemble(env, layout, None, tools)
    }

    /// Skills an agent is offered: eligible and not `user_invocable_only`,
    /// in command order. The prompt, search and the MCP server serve
    /// exactly these.
    pub fn visible(&self) -> impl Iterator<Item = &SkillEntry> {
        self.eligible()
            .filter(|s| !s.requirements.user_invocable_only)
    }

    /// `entry`'s tools with whether this host has them (`available` is
    /// `null` when no host tools were given).
    pub fn tool_statuses(&self, entry: &SkillEntry) -> Vec<ToolStatus> {
        self.tool_policy.statuses(&entry.tools)
    }

    /// The skill an agent gets for `command` (the unshadowed one).
    pub fn find(&self, command: &str) -> Option<&SkillEntry> {
        self.skills
            .iter()
            .find(|s| s.command == command && s.state != State::Shadowed)
    }

    /// Skills an agent may use, in command order.
    pub fn eligible(&self) -> impl Iterator<Item = &SkillEntry> {
        self.skills.iter().filter(|s| s.state == State::Eligible)
    }

    /// The `status --json` document: a stable contract, so keys are
    /// written in a fixed order.
    pub fn to_json(&self) -> Value {
        let roots: Vec<Value> = self
            .roots
            .iter()
            .map(|r| json!({"path": r.path, "scope": r.scope.as_str(), "exists": r.exists}))
            .collect();
        let skills: Vec<Value> = self
            .skills
            .iter()
            .map(|s| {
                json!({
                    "command": s.command,
                    "name": s.name,
                    "description": s.description,
                    "version": s.version,
                    "installed": s.installed,
                    "path": s.path,
                    "linked_from": s.linked_from,
                    "dependencies": s.dependencies,
                    "needed_by": s.needed_by,
                    "root": self.roots.get(s.root).map(|r| &r.path),
                    "scope": s.scope.as_str(),
                    "state": s.state.as_str(),
                    "lifecycle": crate::lifecycle::Lifecycle::of(s.state).as_str(),
                    "reason": s.reason,
                    "unchecked": s.requirements.unchecked,
                    "tools": self.tool_statuses(s),
                    "warnings": s.warnings.iter().map(|w| match w.line {
                        Some(l) => format!("line {l}: {}", w.message),
                        None => w.message.clone(),
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({"project": self.project, "roots": roots, "skills": skills})
    }
}

/// Parses every `SKILL.md`, spread over the available cores: reading and
/// YAML parsing dominate `status` on large trees.
fn parse_all(workers: &Workers, found: &[Found]) -> Vec<Parsed> {
    workers.chunked(found, 64, |part| {
        part.iter()
            .map(|f| parses::read_and_parse(&f.skill_md))
            .collect()
    })
}

fn entry(f: Found, doc: Parsed, roots: &[Root], dialect: Option<&[Key]>) -> SkillEntry {
    let dir_name = f
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let scope = roots.get(f.root).map(|r| r.scope).unwrap_or(Scope::Extra);
    let dependencies = needs(&f.dir);
    let mut e = SkillEntry {
        command: f.command,
        name: dir_name.clone(),
        description: String::new(),
        version: None,
        path: f.dir,
        skill_md: f.skill_md,
        root: f.root,
        scope,
        state: State::Eligible,
        reason: None,
        warnings: Vec::new(),
        requirements: Requirements::default(),
        doc: None,
        doc_digest: None,
        installed: None,
        triggers: Triggers::default(),
        brief: String::new(),
        tools: ToolRefs::default(),
        linked_from: Vec::new(),
        dependencies,
        needed_by: Vec::new(),
    };
    match doc {
        Ok((doc, digest)) => {
            e.doc_digest = Some(digest);
            if let Some(n) = doc.name() {
                if n != dir_name {
                    e.warnings.push(Warning {
                        line: doc.key_lines.get("name").copied(),
                        message: format!("name `{n}` differs from directory `{dir_name}`"),
                    });
                }
                e.name = n.to_string();
            }
            e.description = doc.description().to_string();
            e.version = doc.version();
            e.requirements = match dialect {
                Some(d) => Requirements::from_frontmatter(&agents::view(&doc.frontmatter, d)),
                None => Requirements::from_frontmatter(&doc.frontmatter),
            };
            e.warnings.extend(doc.warnings.iter().cloned());
            read_triggers_and_tools(&mut e, &doc);
            e.doc = Some(doc);
        }
        Err(err) => {
            e.state = State::Invalid;
            e.reason = Some(Reason::new(err.code(), err.detail()));
        }
    }
    e
}

/// Fills in triggers, the brief description and tool references; what
/// could not be read becomes a warning on the skill's key line.
fn read_triggers_and_tools(e: &mut SkillEntry, doc: &SkillDoc) {
    let fm = &doc.frontmatter;
    let (t, tw) = Triggers::from_frontmatter(fm);
    let (tools, toolw) = ToolRefs::from_frontmatter(fm);
    e.triggers = t;
    e.tools = tools;
    e.brief = triggers::brief_description(fm, &e.description);
    let at = |key: &str| doc.key_lines.get(key).copied();
    let tools_line = at("tools").or(at("allowed-tools")).or(at("toolValidation"));
    e.warnings.extend(
        tw.into_iter()
            .map(|m| (at("triggers"), m))
            .chain(toolw.into_iter().map(|m| (tools_line, m)))
            .map(|(line, message)| Warning { line, message }),
    );
}

/// One tree linked into several roots (skillpm's own installs for several
/// agents) is one skill, not one that shadows copies of itself: each entry
/// of a command that resolves to the tree of the entry before it (of
/// higher precedence) is dropped and named in that one's `linked_from`.
/// `skills` is sorted by command, highest precedence first; paths are
/// resolved only for commands found more than once.
fn merge_links(skills: &mut Vec<SkillEntry>) {
    let mut kept: Vec<SkillEntry> = Vec::with_capacity(skills.len());
    let mut winner_tree: Option<PathBuf> = None;
    for s in skills.drain(..) {
        match kept.last_mut() {
            Some(w) if w.command == s.command => {
                let tree = winner_tree.get_or_insert_with(|| canonical(&w.path));
                if canonical(&s.path) == *tree {
                    w.linked_from.push(s.path);
                    continue;
                }
            }
            _ => winner_tree = None,
        }
        kept.push(s);
    }
    *skills = kept;
}

/// `path` with every link resolved, or as it is when it cannot be.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Applies shadowing, `disabled`, requirements, tools and conflicts, in
/// that order. `skills` is sorted by command, highest precedence first.
fn evaluate(skills: &mut [SkillEntry], disabled: &[String], probe: &Probe, tools: &ToolPolicy) {
    let mut winner: Option<(String, String)> = None;
    for s in skills.iter_mut() {
        match &winner {
            Some((cmd, path)) if *cmd == s.command => {
                s.state = State::Shadowed;
                s.reason = Some(Reason::new("shadowed", format!("shadowed by {path}")));
                continue;
            }
            _ => winner = Some((s.command.clone(), s.path.display().to_string())),
        }
        if s.state == State::Invalid {
            continue;
        }
        if disabled.iter().any(|d| *d == s.command || *d == s.name) {
            s.state = State::Skipped;
            s.reason = Some(Reason::new("disabled", "disabled in config"));
        } else if let Some(r) = probe.check(&s.requirements) {
            s.state = State::Skipped;
            s.reason = Some(r);
        } else {
            match tools.check(&s.tools) {
                Verdict::Fine => {}
                Verdict::Warn(message) => s.warnings.push(Warning {
                    line: None,
                    message,
                }),
                Verdict::Skip(detail) => {
                    s.state = State::Skipped;
                    s.reason = Some(Reason::new("missing-tool", detail));
                }
            }
        }
    }
    resolve_conflicts(skills);
    resolve_dependencies(skills);
}

/// The names a skill's `skill.toml` lists under `[dependencies]` (the
/// package manager's file; its values are the package manager's concern,
/// the names are the agent's). None when there is no such file or it does
/// not parse: the package manager reports that, and loading stays lenient.
fn needs(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("skill.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut names: Vec<String> = doc
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// An eligible skill needs each of its dependencies eligible too; one
/// whose dependency is missing or not eligible is skipped with
/// `missing-dependency`, which may in turn skip what needs it, until
/// nothing changes. Then each eligible skill learns who needs it.
fn resolve_dependencies(skills: &mut [SkillEntry]) {
    if skills.iter().all(|s| s.dependencies.is_empty()) {
        return;
    }
    loop {
        let eligible: HashSet<String> = skills
            .iter()
            .filter(|s| s.state == State::Eligible)
            .flat_map(|s| [s.name.clone(), s.command.clone()])
            .collect();
        let mut changed = false;
        for s in skills.iter_mut().filter(|s| s.state == State::Eligible) {
            if let Some(d) = s.dependencies.iter().find(|d| !eligible.contains(*d)) {
                s.state = State::Skipped;
                s.reason = Some(Reason::new(
                    "missing-dependency",
                    format!("needs `{d}`, which is not installed or not eligible"),
                ));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut needed_by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in skills.iter().filter(|s| s.state == State::Eligible) {
        for d in &s.dependencies {
            needed_by
                .entry(d.clone())
                .or_default()
                .push(s.command.clone());
        }
    }
    for s in skills.iter_mut().filter(|s| s.state == State::Eligible) {
        let mut by: Vec<String> = [&s.name, &s.command]
            .into_iter()
            .filter_map(|id| needed_by.get(id))
            .flatten()
            .cloned()
            .collect();
        by.sort();
        by.dedup();
        s.needed_by = by;
    }
}

/// Among eligible skills, the one with higher precedence (later root; in
/// one root, the earlier command) keeps its place and the other is skipped.
fn resolve_conflicts(skills: &mut [SkillEntry]) {
    let mut order: Vec<usize> = (0..skills.len())
        .filter(|&i| skills[i].state == State::Eligible)
        .collect();
    if !order
        .iter()
        .any(|&i| !skills[i].requirements.conflicts.is_empty())
    {
        return;
    }
    order.sort_by(|&a, &b| {
        skills[b]
            .root
            .cmp(&skills[a].root)
            .then(skills[a].command.cmp(&skills[b].command))
    });
    // Who each accepted skill is, and whom it excludes.
    let mut accepted: BTreeMap<String, String> = BTreeMap::new();
    let mut excluded: BTreeMap<String, String> = BTreeMap::new();
    for i in order {
        let s = &skills[i];
        let ids: HashSet<&str> = [s.command.as_str(), s.name.as_str()].into();
        let hit = ids
            .iter()
            .find_map(|id| excluded.get(*id).cloned())
            .or_else(|| {
                s.requirements
                    .conflicts
                    .iter()
                    .find_map(|c| accepted.get(c).cloned())
            });
        if let Some(other) = hit {
            let s = &mut skills[i];
            s.state = State::Skipped;
            s.reason = Some(Reason::new(
                "conflict",
                format!("conflicts with `{other}`, which takes precedence"),
            ));
            continue;
        }
        for id in ids {
            accepted.insert(id.to_string(), s.command.clone());
        }
        for c in &s.requirements.conflicts {
            excluded.insert(c.clone(), s.command.clone());
        }
    }
}

/// The colour a run of [`render_human`] output is meant to be shown in.
/// The engine only names it: the CLI sanitizes each run's text first and
/// then adds the terminal's colour codes, so those codes are the only
/// escapes that can reach the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Green,
    Yellow,
    Dim,
    Red,
}

/// Human output as runs of text, each with its [`Tone`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Styled(pub Vec<(Tone, String)>);

impl Styled {
    fn push(&mut self, tone: Tone, s: &str) {
        match self.0.last_mut() {
            Some((t, run)) if *t == tone => run.push_str(s),
            _ => self.0.push((tone, s.to_string())),
        }
    }
}

/// One line per skill, grouped by state.
pub fn render_human(cat: &Catalog) -> Styled {
    let mut out = Styled::default();
    let project = cat
        .project
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(none: no skills.toml found)".to_string());
    out.push(
        Tone::Plain,
        &format!("Project: {project}\nRoots (lowest precedence first):\n"),
    );
    for r in &cat.roots {
        let missing = if r.exists { "" } else { "  (missing)" };
        out.push(
            Tone::Plain,
            &format!("  {:<8} {}{missing}\n", r.scope.as_str(), r.path.display()),
        );
    }
    let width = cat
        .skills
        .iter()
        .map(|s| s.command.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for (state, title, tone) in [
        (State::Eligible, "Eligible", Tone::Green),
        (State::Skipped, "Skipped", Tone::Yellow),
        (State::Shadowed, "Shadowed", Tone::Dim),
        (State::Invalid, "Invalid", Tone::Red),
    ] {
        let group: Vec<&SkillEntry> = cat.skills.iter().filter(|s| s.state == state).collect();
        if group.is_empty() {
            continue;
        }
        out.push(Tone::Plain, "\n");
        out.push(tone, &format!("{title} ({}):", group.len()));
        out.push(Tone::Plain, "\n");
        for s in group {
            let detail = match &s.reason {
                Some(r) if r.code == "shadowed" => r.detail.clone(),
                Some(r) => format!("{}: {}", r.code, r.detail),
                None => one_line(&s.description, 72),
            };
            let version = match (&s.installed, &s.version) {
                (Some(v), _) => format!(" [installed {v}]"),
                (None, Some(v)) => format!(" [{v}]"),
                _ => String::new(),
            };
            let linked: Vec<String> = s
                .linked_from
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let linked = match linked.is_empty() {
                true => String::new(),
                false => format!(" (also in {})", linked.join(", ")),
            };
            let needed = match s.needed_by.is_empty() {
                true => String::new(),
                false => format!(" (needed by {})", s.needed_by.join(", ")),
            };
            out.push(
                Tone::Plain,
                &format!(
                    "  {:<width$}  {detail}{version}{linked}{needed}\n",
                    s.command
                ),
            );
            for w in &s.warnings {
                let at = w.line.map(|l| format!(":{l}")).unwrap_or_default();
                out.push(Tone::Plain, &format!("  {:<width$}  ", ""));
                out.push(Tone::Yellow, "warning:");
                out.push(
                    Tone::Plain,
                    &format!(" {}{at}: {}\n", s.skill_md.display(), w.message),
                );
            }
        }
    }
    if cat.skills.is_empty() {
        out.push(Tone::Plain, "\nNo skills found.\n");
    }
    out
}

/// Collapses whitespace and shortens to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
