//! Named agents: where each one reads skills, in which order, and which
//! frontmatter keys it honours when deciding whether a skill is offered.
//!
//! Pure data and pure functions (no I/O), so an agent runtime embedding the
//! engine gets the same answers as `skillpm status --agent NAME`. Every row
//! comes from the agent's own documentation, cited in [`Agent::source`]
//! (and in the book: docs/src/reference/agents.md). Where a document names directories but
//! not their order, the order below is the one the book states as ours:
//! project over user, and within a scope the agent's own directory over the
//! shared ones it reads for compatibility.

use crate::config::Environment;
use crate::discover::Scope;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// A frontmatter key (or family of keys) the engine can honour. A dialect
/// is the list of these an agent reads; everything else in the
/// frontmatter is ignored for that agent's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// Top-level `requires: {bins, anyBins, env, os}`.
    Requires,
    /// Top-level `os: [...]`.
    Os,
    /// Top-level `conflicts: [...]`.
    Conflicts,
    /// Top-level `always: true` (bypasses the prompt budget).
    Always,
    /// Top-level `user_invocable_only: true`.
    UserInvocableOnly,
    /// An agent's own block (`sven: {requires_bins, requires_env, ...}`).
    AgentBlocks,
    /// `metadata.openclaw` (and the older `clawdbot` / `clawdis`).
    OpenclawMetadata,
    /// `disable-model-invocation: true`: the skill is only run when the
    /// user names it, so it is never offered to the model (the engine's
    /// `user_invocable_only`).
    DisableModelInvocation,
}

impl Key {
    /// How the key is written in a SKILL.md, for `status --agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Key::Requires => "requires",
            Key::Os => "os",
            Key::Conflicts => "conflicts",
            Key::Always => "always",
            Key::UserInvocableOnly => "user_invocable_only",
            Key::AgentBlocks => {
                "<agent>: {requires_bins, requires_env, always, user_invocable_only}"
            }
            Key::OpenclawMetadata => "metadata.openclaw (clawdbot, clawdis)",
            Key::DisableModelInvocation => "disable-model-invocation",
        }
    }
}

/// skillpm's own dialect: every form public skills use (the default view).
pub const SKILLPM_DIALECT: &[Key] = &[
    Key::Requires,
    Key::Os,
    Key::Conflicts,
    Key::Always,
    Key::UserInvocableOnly,
    Key::AgentBlocks,
    Key::OpenclawMetadata,
];

/// One directory an agent reads skills from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentRoot {
    pub scope: Scope,
    /// Relative to what [`AgentRoot::under`] says.
    pub path: &'static str,
    pub under: Under,
}

/// What an agent root's path is relative to. Most agents keep their user
/// skills under the home directory on every platform (`~/.claude/skills`
/// is `%USERPROFILE%\.claude\skills` on Windows); the exceptions follow
/// their own documentation (docs/src/reference/agents.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Under {
    /// The project (project scope) or the home directory (user scope).
    Base,
    /// The XDG config directory on every platform (`$XDG_CONFIG_HOME`,
    /// else `~/.config`, Windows included), as OpenCode reads it.
    XdgConfig,
    /// The XDG config directory on Linux and macOS; on Windows
    /// `%APPDATA%` joined with `windows` instead (goose:
    /// `%APPDATA%\Block\goose\config\skills`).
    AppConfig { windows: &'static str },
}

impl AgentRoot {
    /// Where this root is in `env` (whose `os` selects the platform's
    /// rule), `None` when the directory it is under is unknown (no home).
    pub fn locate(&self, env: &Environment) -> Option<PathBuf> {
        match (self.scope, self.under) {
            (Scope::User, Under::Base) => env.home.as_ref().map(|h| h.join(self.path)),
            (_, Under::Base) => Some(env.project_base().join(self.path)),
            (_, Under::XdgConfig) => env.xdg_config.as_ref().map(|d| d.join(self.path)),
            (_, Under::AppConfig { windows }) if env.os == "windows" => {
                env.app_data.as_ref().map(|d| d.join(windows))
            }
            (_, Under::AppConfig { .. }) => env.xdg_config.as_ref().map(|d| d.join(self.path)),
        }
    }
}

/// How deep below a root an agent looks for skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// `<root>/<name>/SKILL.md` only: a skill in a group directory
    /// (`<root>/group/name/SKILL.md`) or inside another skill is not one
    /// to this agent.
    TopLevel,
    /// Nested skills too, as skillpm's own discovery finds them.
    Nested,
}

impl Depth {
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::TopLevel => "top-level",
            Depth::Nested => "nested",
        }
    }
}

/// One agent's documented skill layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent {
    /// The name written in `[install] targets` and `--agent`.
    pub id: &'static str,
    pub display: &'static str,
    /// Every directory the agent reads, lowest precedence first: a later
    /// root's skill shadows an earlier one with the same command.
    pub roots: &'static [AgentRoot],
    /// Where skillpm installs for this agent inside a project: the shared
    /// `.agents/skills` whenever the agent reads it, so several agents are
    /// served by one directory instead of one copy each.
    pub install: &'static str,
    /// The frontmatter keys it honours for eligibility.
    pub dialect: &'static [Key],
    /// Whether it finds skills nested below a root's top level.
    pub depth: Depth,
    /// Where the roots, their order and the dialect are documented.
    pub source: &'static str,
    /// What the documentation leaves open, said once for the book.
    pub note: &'static str,
    /// Project paths whose presence shows the project uses this agent
    /// (`skillpm init` proposes it as a target).
    pub detect: &'static [&'static str],
    /// The plugin marketplace file the agent installs plugins from
    /// itself, if it has such a thing. Skills skillpm installs from a
    /// plugin are plain skills to it either way.
    pub plugins: Option<&'static str>,
}

const fn user(path: &'static str) -> AgentRoot {
    AgentRoot {
        scope: Scope::User,
        path,
        under: Under::Base,
    }
}

/// A user root in the XDG config directory, on every platform.
const fn user_xdg(path: &'static str) -> AgentRoot {
    AgentRoot {
        scope: Scope::User,
        path,
        under: Under::XdgConfig,
    }
}

/// A user root in the XDG config directory, or on Windows at `windows`
/// in `%APPDATA%`.
const fn user_app_config(path: &'static str, windows: &'static str) -> AgentRoot {
    AgentRoot {
        scope: Scope::User,
        path,
        under: Under::AppConfig { windows },
    }
}

const fn project(path: &'static str) -> AgentRoot {
    AgentRoot {
        scope: Scope::Project,
        path,
        under: Under::Base,
    }
}

/// The shared project directory most agents read.
pub const SHARED: &str = ".agents/skills";

/// Every agent skillpm knows, sorted by id.
pub const AGENTS: &[Agent] = &[
    Agent {
        id: "amp",
        display: "Amp",
        roots: &[
            user(".claude/skills"),
            user(".config/amp/skills"),
            user(".config/agents/skills"),
            project(".claude/skills"),
            project(".agents/skills"),
        ],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://ampcode.com/manual#agent-skills",
        note: "reads name and description only",
        detect: &[".amp"],
        plugins: None,
    },
    Agent {
        id: "claude-code",
        display: "Claude Code",
        // Personal skills override project skills (enterprise > personal >
        // project > plugin), so the user root comes last.
        roots: &[project(".claude/skills"), user(".claude/skills")],
        install: ".claude/skills",
        dialect: &[Key::DisableModelInvocation],
        // `.claude/skills/<skill-name>/SKILL.md`; skills in subdirectories
        // are not found (anthropics/claude-code#18192, #28266).
        depth: Depth::TopLevel,
        source: "https://code.claude.com/docs/en/skills",
        note: "personal skills win over project skills; does not read .agents/skills; finds <root>/<name>/SKILL.md only, not nested skills",
        detect: &[".claude", "CLAUDE.md"],
        plugins: Some(".claude-plugin/marketplace.json"),
    },
    Agent {
        id: "codex",
        display: "OpenAI Codex",
        roots: &[user(".agents/skills"), project(".agents/skills")],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://developers.openai.com/codex/skills",
        note: "repository skills over user skills; eligibility lives in agents/openai.yaml, not SKILL.md",
        detect: &[".codex"],
        plugins: Some(".agents/plugins/marketplace.json"),
    },
    Agent {
        id: "cursor",
        display: "Cursor",
        roots: &[
            user(".codex/skills"),
            user(".claude/skills"),
            user(".agents/skills"),
            user(".cursor/skills"),
            project(".codex/skills"),
            project(".claude/skills"),
            project(".agents/skills"),
            project(".cursor/skills"),
        ],
        install: SHARED,
        dialect: &[Key::DisableModelInvocation],
        depth: Depth::Nested,
        source: "https://cursor.com/docs/skills",
        note: "precedence between its directories is not documented",
        detect: &[".cursor", ".cursorrules"],
        plugins: None,
    },
    Agent {
        id: "gemini-cli",
        display: "Gemini CLI",
        roots: &[
            user(".gemini/skills"),
            user(".agents/skills"),
            project(".gemini/skills"),
            project(".agents/skills"),
        ],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://geminicli.com/docs/cli/using-agent-skills/",
        note: "workspace over user; within a tier the .agents/skills alias wins",
        detect: &[".gemini", "GEMINI.md"],
        plugins: None,
    },
    Agent {
        id: "github-copilot",
        display: "GitHub Copilot",
        roots: &[
            user(".claude/skills"),
            user(".agents/skills"),
            user(".copilot/skills"),
            project(".claude/skills"),
            project(".agents/skills"),
            project(".github/skills"),
        ],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/create-skills",
        note: "precedence between its directories is not documented",
        detect: &[".github/skills", ".github/copilot-instructions.md"],
        plugins: Some(".github/plugin/marketplace.json"),
    },
    Agent {
        id: "goose",
        display: "goose",
        // goose's own directory is its config directory's (the
        // `etcetera` crate's app strategy); `~/.config/agents/skills` is
        // read literally under the home directory.
        roots: &[
            user(".claude/skills"),
            user(".config/agents/skills"),
            user_app_config("goose/skills", "Block/goose/config/skills"),
            user(".agents/skills"),
            project(".claude/skills"),
            project(".goose/skills"),
            project(".agents/skills"),
        ],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://block.github.io/goose/docs/guides/context-engineering/using-skills",
        note: "later directories win; .goose and .claude are read for backward compatibility",
        detect: &[".goose", ".goosehints"],
        plugins: None,
    },
    Agent {
        id: "openclaw",
        display: "OpenClaw",
        roots: &[
            user(".openclaw/skills"),
            user(".agents/skills"),
            project(".agents/skills"),
            project("skills"),
        ],
        install: SHARED,
        dialect: &[Key::OpenclawMetadata, Key::DisableModelInvocation],
        depth: Depth::Nested,
        source: "https://docs.openclaw.ai/tools/skills",
        note: "the project is OpenClaw's workspace; <workspace>/skills wins over everything",
        detect: &[".openclaw"],
        plugins: None,
    },
    Agent {
        id: "opencode",
        display: "OpenCode",
        roots: &[
            user(".claude/skills"),
            user(".agents/skills"),
            // xdg-basedir, on Windows too.
            user_xdg("opencode/skills"),
            project(".claude/skills"),
            project(".agents/skills"),
            project(".opencode/skills"),
        ],
        install: SHARED,
        dialect: &[],
        depth: Depth::Nested,
        source: "https://opencode.ai/docs/skills",
        note: "unknown frontmatter keys are ignored; precedence between its directories is not documented",
        detect: &[".opencode", "opencode.json"],
        plugins: None,
    },
];

/// The agent named `id`.
impl Agent {
    /// Where skillpm installs for this agent with `--global`, relative to
    /// the home directory: its project install directory when the agent
    /// reads that directory under the home too (the shared
    /// `~/.agents/skills` for most), else the user root it reads with the
    /// highest precedence.
    pub fn user_install(&self) -> Option<&'static str> {
        let user_roots = || {
            self.roots
                .iter()
                .filter(|r| r.scope == Scope::User && r.under == Under::Base)
        };
        if user_roots().any(|r| r.path == self.install) {
            return Some(self.install);
        }
        user_roots().next_back().map(|r| r.path)
    }
}

pub fn find(id: &str) -> Option<&'static Agent> {
    AGENTS.iter().find(|a| a.id == id)
}

/// The agents a project uses, judged by which of their `detect` paths
/// `exists` (given by the caller, so this stays free of I/O): each with the
/// first path found, in id order.
pub fn detect(exists: impl Fn(&str) -> bool) -> Vec<(&'static Agent, &'static str)> {
    AGENTS
        .iter()
        .filter_map(|a| a.detect.iter().find(|p| exists(p)).map(|p| (a, *p)))
        .collect()
}

/// The known ids, for error messages.
pub fn ids() -> String {
    AGENTS.iter().map(|a| a.id).collect::<Vec<_>>().join(", ")
}

/// The frontmatter as an agent with `dialect` reads it for eligibility:
/// only the keys it honours survive, and `disable-model-invocation: true`
/// becomes the engine's `user_invocable_only`. The result is what
/// [`crate::eligibility::Requirements::from_frontmatter`] is given, so one
/// evaluator serves every dialect.
pub fn view(fm: &Map<String, Value>, dialect: &[Key]) -> Map<String, Value> {
    let mut out = Map::new();
    let keep = |out: &mut Map<String, Value>, k: &str| {
        if let Some(v) = fm.get(k) {
            out.insert(k.to_string(), v.clone());
        }
    };
    for key in dialect {
        match key {
            Key::Requires => keep(&mut out, "requires"),
            Key::Os => keep(&mut out, "os"),
            Key::Conflicts => keep(&mut out, "conflicts"),
            Key::Always => keep(&mut out, "always"),
            Key::UserInvocableOnly => keep(&mut out, "user_invocable_only"),
            Key::AgentBlocks => {
                for (k, v) in fm {
                    if v.is_object() && !matches!(k.as_str(), "metadata" | "requires") {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Key::OpenclawMetadata => {
                if let Some(meta) = fm.get("metadata").and_then(Value::as_object) {
                    let kept: Map<String, Value> = meta
                        .iter()
                        .filter(|(k, _)| matches!(k.as_str(), "openclaw" | "clawdbot" | "clawdis"))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    out.insert("metadata".into(), Value::Object(kept));
                }
            }
            Key::DisableModelInvocation => {
                if crate::eligibility::is_true(fm.get("disable-model-invocation")) {
                    out.insert("user_invocable_only".into(), Value::Bool(true));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(json: &str) -> Map<String, Value> {
        match serde_json::from_str::<Value>(json).unwrap() {
            Value::Object(m) => m,
            _ => panic!("not a map"),
        }
    }

    #[test]
    fn agents_sorted_unique_and_install_into_a_root_they_read() {
        let ids: Vec<_> = AGENTS.iter().map(|a| a.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted);
        for a in AGENTS {
            assert!(
                a.roots
                    .iter()
                    .any(|r| r.scope == Scope::Project && r.path == a.install),
                "{} installs where it does not read",
                a.id
            );
        }
    }

    /// Each platform's rule for where an agent's user roots are, selected
    /// through the environment's `os`.
    #[test]
    fn user_roots_follow_each_platforms_directories() {
        let goose = find("goose").unwrap();
        let opencode = find("opencode").unwrap();
        let own = |a: &Agent, under: fn(&Under) -> bool| {
            *a.roots.iter().find(|r| under(&r.under)).unwrap()
        };
        let goose_own = own(goose, |u| matches!(u, Under::AppConfig { .. }));
        let opencode_own = own(opencode, |u| matches!(u, Under::XdgConfig));
        let claude = find("claude-code").unwrap().roots[1];
        let mut env = Environment::isolated();
        env.home = Some(PathBuf::from("/home/a"));
        env.xdg_config = Some(PathBuf::from("/home/a/.config"));
        env.os = "linux".into();
        assert_eq!(
            goose_own.locate(&env),
            Some(PathBuf::from("/home/a/.config/goose/skills"))
        );
        env.os = "macos".into();
        env.xdg_config = Some(PathBuf::from("/x"));
        assert_eq!(
            goose_own.locate(&env),
            Some(PathBuf::from("/x/goose/skills"))
        );
        assert_eq!(
            opencode_own.locate(&env),
            Some(PathBuf::from("/x/opencode/skills"))
        );
        env.os = "windows".into();
        env.home = Some(PathBuf::from("C:/Users/a"));
        env.xdg_config = Some(PathBuf::from("C:/Users/a/.config"));
        env.app_data = Some(PathBuf::from("C:/Users/a/AppData/Roaming"));
        assert_eq!(
            goose_own.locate(&env),
            Some(PathBuf::from(
                "C:/Users/a/AppData/Roaming/Block/goose/config/skills"
            ))
        );
        assert_eq!(
            opencode_own.locate(&env),
            Some(PathBuf::from("C:/Users/a/.config/opencode/skills"))
        );
        assert_eq!(
            claude.locate(&env),
            Some(PathBuf::from("C:/Users/a/.claude/skills"))
        );
        env.home = None;
        assert_eq!(claude.locate(&env), None);
    }

    #[test]
    fn views_keep_only_the_dialect() {
        let m = fm(
            r#"{"requires": {"bins": ["x"]}, "sven": {"requires_env": ["E"]},
            "metadata": {"openclaw": {"os": ["darwin"]}, "other": 1},
            "disable-model-invocation": true}"#,
        );
        assert!(view(&m, &[]).is_empty());
        let claude = view(&m, find("claude-code").unwrap().dialect);
        assert_eq!(claude, fm(r#"{"user_invocable_only": true}"#));
        let oc = view(&m, find("openclaw").unwrap().dialect);
        assert_eq!(
            oc,
            fm(r#"{"metadata": {"openclaw": {"os": ["darwin"]}}, "user_invocable_only": true}"#)
        );
        let all = view(&m, SKILLPM_DIALECT);
        assert!(all.contains_key("requires") && all.contains_key("sven"));
    }
}
