//! The engine for an agent runtime to embed: build a catalog from skill
//! roots, evaluate eligibility against the host (OS, binaries,
//! environment variables, tools), then search, disclose by tiers, render
//! the prompt block and load skills — with no network, no installs and no
//! config files read.
//!
//! ```no_run
//! use skillpm_engine::embed::{Engine, Host};
//! use skillpm_engine::disclose::Options;
//!
//! let host = Host::new()
//!     .bins(["git", "sh"])
//!     .env(["GITHUB_TOKEN"])
//!     .tools(["Read", "Bash"]);
//! let engine = Engine::from_roots(&host, &["/home/me/.agents/skills".into()]);
//! for hit in engine.search("review this pull request", 5) {
//!     println!("{} {:.4} {}", hit.command, hit.score, hit.kind.as_str());
//! }
//! let d = engine.disclose("review this pull request", &Options::default());
//! print!("{}", d.text);
//! ```
//!
//! Every listing is sorted by command (search results by rank, then
//! command) and byte-identical for the same tree and host. `examples/embed.rs`
//! is a runnable version.

use crate::authorize::ActiveSkill;
use crate::catalog::{Catalog, SkillEntry};
use crate::commands::{CommandError, CommandTable, Invocation};
use crate::config::Environment;
use crate::disclose::{self, Disclosure, Options};
use crate::load::{self, LoadError};
use crate::parallel::Workers;
use crate::prompt::{self, Format};
use crate::search::{SearchHit, SearchIndex};
use crate::tools::{HostTools, ToolPolicy, ToolStatus, ToolValidation};
use std::path::PathBuf;

/// What the host offers, for eligibility. Nothing is read from the
/// process: what is not declared is absent.
#[derive(Debug, Clone)]
pub struct Host {
    env: Environment,
    tools: ToolPolicy,
}

impl Default for Host {
    fn default() -> Self {
        Host {
            env: Environment::isolated(),
            tools: ToolPolicy::default(),
        }
    }
}

impl Host {
    /// This OS, no binaries, no variables, tools unchecked.
    pub fn new() -> Self {
        Self::default()
    }

    /// The OS, in `std::env::consts::OS` spelling (`linux`, `macos`, ...).
    pub fn os(mut self, os: &str) -> Self {
        self.env.os = os.to_string();
        self
    }

    /// Binaries on the host's PATH.
    pub fn bins<S: Into<String>>(mut self, bins: impl IntoIterator<Item = S>) -> Self {
        self.env.bins = Some(bins.into_iter().map(Into::into).collect());
        self
    }

    /// Environment variables that are set.
    pub fn env<S: Into<String>>(mut self, vars: impl IntoIterator<Item = S>) -> Self {
        self.env.env_set = vars.into_iter().map(Into::into).collect();
        self
    }

    /// The host's tools; skills' tool references are checked against them.
    pub fn tools<S: AsRef<str>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.tools.host = Some(HostTools::new(tools));
        self
    }

    /// What a missing tool does (default `warn`).
    pub fn tool_validation(mut self, mode: ToolValidation) -> Self {
        self.tools.validation = mode;
        self
    }

    /// The threads that parse a catalog's skills (default: a thread per
    /// core, at most eight, started on first use). A runtime that keeps
    /// its own pool sized, or builds many engines, passes one handle to
    /// each.
    pub fn workers(mut self, workers: Workers) -> Self {
        self.env.workers = workers;
        self
    }
}

/// A catalog and its search index, built once and queried many times.
#[derive(Debug)]
pub struct Engine {
    catalog: Catalog,
    index: SearchIndex,
}

impl Engine {
    /// Discovers the skills under `roots` (lowest precedence first; a
    /// later root's skill shadows an earlier one with the same command)
    /// and evaluates them for `host`.
    pub fn from_roots(host: &Host, roots: &[PathBuf]) -> Engine {
        Engine::new(Catalog::from_roots(&host.env, roots, host.tools.clone()))
    }

    /// Wraps a catalog built another way (for example
    /// [`Catalog::build`], which reads skillpm's roots and config).
    pub fn new(catalog: Catalog) -> Engine {
        let index = SearchIndex::build(&catalog);
        Engine { catalog, index }
    }

    /// Every discovered skill with its state and reason.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The skills the agent is offered, in command order.
    pub fn skills(&self) -> impl Iterator<Item = &SkillEntry> {
        self.catalog.visible()
    }

    /// Ranked search ([`crate::search`]).
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.index.search(query, limit)
    }

    /// The prompt text `query` earns ([`crate::disclose`]).
    pub fn disclose(&self, query: &str, opts: &Options) -> Disclosure {
        disclose::disclose(&self.catalog, &self.index, query, opts)
    }

    /// The whole `<available_skills>` block.
    pub fn prompt(&self, budget: usize, format: Format) -> String {
        prompt::render(&self.catalog, budget, format)
    }

    /// The `<skill_content>` block for `command`.
    pub fn load(&self, command: &str) -> Result<String, LoadError> {
        load::render(&self.catalog, command)
    }

    /// The skills a user can invoke by name, with their argument hints
    /// and the definitions they shadow ([`crate::commands`]).
    pub fn commands(&self) -> CommandTable<'_> {
        CommandTable::build(&self.catalog)
    }

    /// Resolves a command line (`/deploy staging --dry-run`) to its skill
    /// and instructions, with the arguments filled in as Claude Code fills
    /// them; the arguments are inserted as text, never read as
    /// placeholders.
    ///
    /// ```no_run
    /// # use skillpm_engine::embed::{Engine, Host};
    /// # let engine = Engine::from_roots(&Host::new(), &[]);
    /// let inv = engine.invoke("/fix-issue 123").expect("a command");
    /// println!("{}: {}", inv.command, inv.text);
    /// ```
    pub fn invoke(&self, line: &str) -> Result<Invocation, CommandError> {
        self.commands().invoke(line)
    }

    /// `command` as an active skill, with its parsed `allowed-tools`, for
    /// a session's [`crate::authorize::ToolGuard`] (`None`: no such skill). The guard holds
    /// the session's state (active skills, approvals); the engine holds
    /// none.
    ///
    /// ```no_run
    /// # use skillpm_engine::embed::{Engine, Host};
    /// use skillpm_engine::authorize::{Decision, Mode, ToolGuard, ToolPattern};
    /// # let engine = Engine::from_roots(&Host::new(), &[]);
    /// let mut guard = ToolGuard::new(Mode::Approval);
    /// guard.activate(engine.active_skill("git-helper").expect("a skill"));
    /// let call = ToolPattern::parse("Bash(git push)").expect("a call");
    /// if guard.check(&call).decision == Decision::Ask {
    ///     // ask the user; if they agree, the session remembers it:
    ///     guard.approve(&call);
    /// }
    /// ```
    pub fn active_skill(&self, command: &str) -> Option<ActiveSkill> {
        self.catalog.find(command).map(ActiveSkill::from_entry)
    }

    /// `command`'s tool references with their availability on the host.
    pub fn tools(&self, command: &str) -> Option<Vec<ToolStatus>> {
        self.catalog
            .find(command)
            .map(|s| self.catalog.tool_statuses(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_context_decides_eligibility_and_tools() {
        let dir = tempfile::tempdir().unwrap();
        let write = |cmd: &str, fm: &str| {
            let d = dir.path().join(cmd);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("SKILL.md"),
                format!("---\n{fm}\n---\nbody of {cmd}\n"),
            )
            .unwrap();
        };
        write(
            "docker",
            "description: Runs containers.\nrequires: {bins: [docker], env: [DOCKER_HOST]}",
        );
        write(
            "edit",
            "description: Edits files.\nallowed-tools: Read Write",
        );
        let roots = [dir.path().to_path_buf()];
        let bare = Engine::from_roots(&Host::new(), &roots);
        let names = |e: &Engine| e.skills().map(|s| s.command.clone()).collect::<Vec<_>>();
        assert_eq!(names(&bare), ["edit"]);
        assert_eq!(bare.tools("edit").unwrap()[0].available, None);
        let host = Host::new()
            .bins(["docker"])
            .env(["DOCKER_HOST"])
            .tools(["read"])
            .tool_validation(ToolValidation::Strict);
        let full = Engine::from_roots(&host, &roots);
        assert_eq!(names(&full), ["docker"]);
        let edit = full.catalog().find("edit").unwrap();
        assert_eq!(edit.reason.as_ref().unwrap().code, "missing-tool");
        let tools = full.tools("edit").unwrap();
        assert_eq!(
            tools
                .iter()
                .map(|t| (t.name.as_str(), t.available))
                .collect::<Vec<_>>(),
            [("Read", Some(true)), ("Write", Some(false))]
        );
        assert!(full.load("docker").unwrap().contains("body of docker"));
        assert!(full
            .invoke("/docker up")
            .unwrap()
            .text
            .ends_with("body of docker\n\nARGUMENTS: up\n"));
        assert!(full.commands().get("docker").is_some());
        let mut guard = crate::authorize::ToolGuard::new(crate::authorize::Mode::Strict);
        guard.activate(full.active_skill("edit").unwrap());
        let call = |s| crate::authorize::ToolPattern::parse(s).unwrap();
        assert_eq!(
            guard.check(&call("Write(/tmp/a)")).reason,
            crate::authorize::Reason::SkillAllowlist
        );
        assert_eq!(
            guard.check(&call("Bash(ls)")).decision,
            crate::authorize::Decision::Deny
        );
        assert!(full.active_skill("nope").is_none());
        assert_eq!(full.search("containers", 5)[0].command, "docker");
        write("mac", "description: Mac only.\nos: [darwin]");
        let mac = Engine::from_roots(&Host::new().os("macos"), &roots);
        assert_eq!(names(&mac), ["edit", "mac"]);
        assert_eq!(
            names(&Engine::from_roots(&Host::new().os("linux"), &roots)),
            ["edit"]
        );
    }
}
