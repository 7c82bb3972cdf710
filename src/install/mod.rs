//! Plan, prepare and apply: put exactly the locked trees into the install
//! roots, as uv's installer does.
//!
//! Every installed skill carries a small marker file naming the checksum it
//! was installed from. The marker is written into the staged tree before it
//! is renamed into place, so tree and marker change together, and skillpm
//! only ever removes or replaces directories that carry its marker
//! (user-written skills in the same root are never touched).
//!
//! [`plan`] diffs the lock against disk; [`prepare`] unpacks a verified
//! tarball for every skill the plan needs into a staging directory beside
//! its destination; [`apply`] swaps each staged tree in atomically.

mod apply;
pub mod journal;
mod link;
mod marker;
mod plan;
mod prepare;

pub use apply::{install_all, link_one, remove_one, sweep_leftovers, unlink_one};
pub use link::{probe as probe_symlinks, Symlinks};
pub use marker::{compare, Integrity, Marker};
pub use plan::{installed, is_link_to, link_target, plan_all, Action, LinkMode, Plan};
pub use prepare::{prepare, Prepared, Staged};

use std::path::PathBuf;

/// Name of the marker file inside every skill skillpm installed (defined in
/// skillpm-core so the engine can hide it without importing install code).
pub const MARKER: &str = skillpm_core::skill::INSTALL_MARKER;
/// Prefix of staging and trash directories beside installed skills; the
/// engine skips dot-directories, so agents never see them.
pub const STAGING_PREFIX: &str = ".skillpm-";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    #[error(
        "{path} exists and was not installed by skillpm; move it away or remove it, then retry"
    )]
    Foreign { path: PathBuf },
}
