//! The commands, one file per group (as cargo's `ops/`): each takes the
//! environment and options, does its work through the library, and returns
//! data for the CLI to print. Nothing here draws to the terminal.

mod add;
mod audit;
mod doctor;
mod graph;
mod import;
mod init;
mod query;
mod registry;
mod remove;
mod signatures;
mod sync;
mod verify;

pub use add::{add, choice_listing, AddRequest, Selection};
pub use audit::{audit, Acceptance, AuditReport, Checked, SkillReport};
pub use doctor::{
    doctor, fix, invocation, tools_dir, Checkup, Diagnosis, DoctorError, FixOptions, Fixed,
    Invocation, StepResult,
};
pub use graph::{graph, Graph, GraphNode, TreeLine};
pub use import::{folder_hash, import, Imported, VERCEL_LOCK};
pub use init::{init, Initialized};
pub use query::{annotate_installed, info, list, outdated, search, ListRow, OutdatedRow};
pub use registry::{
    add_owners, login, owners, prepare_publish, publish, remove_owners, yank, Publishable,
    RegistryArgs,
};
pub use remove::remove;
pub use signatures::{audit_signatures, SignatureAudit, SignatureCheck, Signed};
pub use sync::{install, recover, update};
pub use verify::{verify, VerifyIssue};

use crate::cache::Cache;
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Flags shared by the commands that install.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Fail instead of changing the lock.
    pub locked: bool,
    /// `locked`, and no network access.
    pub frozen: bool,
    /// Use the user manifest and `~/.agents/skills`.
    pub global: bool,
    /// Cache directory; `None` means the default.
    pub cache_dir: Option<PathBuf>,
    /// Critical audit findings accepted for this run (`--allow`).
    pub allow: Vec<crate::project::manifest::Allow>,
}

impl Options {
    /// The flag that forbids changing the lock, for messages.
    fn flag(&self) -> &'static str {
        if self.frozen {
            "--frozen"
        } else {
            "--locked"
        }
    }

    fn cache(&self) -> Result<Cache> {
        self.cache_dir
            .clone()
            .or_else(Cache::default_dir)
            .map(Cache::new)
            .ok_or(Error::NoCacheDir)
    }
}

/// A skill another one pulled in: name, version, the skills that need it.
pub type PulledIn = (String, String, Vec<String>);

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub installed: usize,
    /// Of `installed`, how many came from what the cache held before the run.
    pub from_cache: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// Locked entries whose version or source changed: name, old, new.
    pub changed: Vec<(String, String, String)>,
    /// Skills another one pulled in that the lock did not hold: name,
    /// version, and the skills that need it.
    pub pulled_in: Vec<PulledIn>,
    /// Dependencies the lock held that nothing needs any more.
    pub dropped: Vec<String>,
    pub lock_written: bool,
    pub elapsed: Duration,
}

impl Summary {
    /// One line per changed lock entry (`Updated x 1.0.0 -> 1.1.0`), then
    /// one line of totals that names only what happened.
    pub fn line(&self) -> String {
        let mut out = String::new();
        for (name, old, new) in &self.changed {
            out.push_str(&format!("Updated {name} {old} -> {new}\n"));
        }
        for (name, version, by) in &self.pulled_in {
            out.push_str(&format!(
                "Added {name} {version}, needed by {}\n",
                by.join(", ")
            ));
        }
        if !self.dropped.is_empty() {
            out.push_str(&format!("No longer needed: {}\n", self.dropped.join(", ")));
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if self.installed > 0 {
            parts.push(format!(
                "Installed {} skill{} ({} from cache)",
                self.installed,
                plural(self.installed),
                self.from_cache
            ));
        }
        if self.removed > 0 {
            parts.push(format!(
                "Removed {} skill{}",
                self.removed,
                plural(self.removed)
            ));
        }
        if parts.is_empty() {
            parts.push("Up to date".to_string());
        }
        if self.unchanged > 0 {
            parts.push(format!("{} unchanged", self.unchanged));
        }
        out.push_str(&format!(
            "{} in {:.2}s",
            parts.join(", "),
            self.elapsed.as_secs_f64()
        ));
        out
    }
}

/// The runtime a command runs its async work on: one per command, a
/// current-thread reactor. CPU- and disk-bound work goes to the process's
/// pool ([`crate::parallel`]); the runtime's own blocking pool is left
/// the name lookups and is bounded all the same, at one thread more than
/// the machine has cores (at most eight): every thread costs its
/// creation, its stack's pages and its exit, and tokio's default (up to
/// 512) grew to two dozen threads for a 1 000-skill `add` when staging
/// ran there.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(crate::parallel::cores().saturating_add(1).min(8))
        .build()
        .map_err(Error::Runtime)
}

/// Parses a user-typed skill name.
fn parse_name(n: &str) -> Result<skillpm_core::name::SkillName> {
    skillpm_core::name::SkillName::new(n).map_err(|source| Error::BadName {
        name: n.to_string(),
        source,
    })
}
