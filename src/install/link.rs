//! How a root after the first points at the written trees, per platform.
//!
//! A relative symlink wherever one can be made. On Windows a symlink
//! needs Developer Mode or an administrator (`ERROR_PRIVILEGE_NOT_HELD`
//! otherwise), so a run there first tries one, and copies (each with its
//! marker, verified like any install) when it cannot. Junctions are not
//! used: they hold an absolute path, which breaks when the project is
//! moved or cloned, where a relative link or a copy does not.

use super::plan::LinkMode;
use std::path::Path;

/// Whether this run can make directory symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    Allowed,
    /// Refused by the operating system (Windows without the privilege).
    Refused,
}

impl LinkMode {
    /// The mode a run uses: copies when skills.toml asks for them
    /// (`[install] link = "copy"`), or when symlinks cannot be made.
    pub fn choose(copy_requested: bool, symlinks: Symlinks) -> LinkMode {
        match (copy_requested, symlinks) {
            (false, Symlinks::Allowed) => LinkMode::Symlink,
            _ => LinkMode::Copy,
        }
    }
}

/// Whether a directory symlink can be made in `dir` (which exists):
/// always on Unix and macOS; on Windows, tried once.
pub fn probe(dir: &Path) -> Symlinks {
    if cfg!(windows) {
        try_symlink(dir)
    } else {
        Symlinks::Allowed
    }
}

/// Makes and removes one directory symlink in a fresh directory in `dir`.
fn try_symlink(dir: &Path) -> Symlinks {
    let Ok(t) = tempfile::Builder::new()
        .prefix(super::STAGING_PREFIX)
        .tempdir_in(dir)
    else {
        return Symlinks::Refused;
    };
    match symlink_dir(Path::new("."), &t.path().join("probe")) {
        Ok(()) => Symlinks::Allowed,
        Err(_) => Symlinks::Refused,
    }
}

/// A symlink to a directory (Windows tells file and directory links
/// apart).
#[cfg(unix)]
pub(super) fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
pub(super) fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_when_asked_or_when_symlinks_are_refused() {
        assert_eq!(
            LinkMode::choose(false, Symlinks::Allowed),
            LinkMode::Symlink
        );
        assert_eq!(LinkMode::choose(true, Symlinks::Allowed), LinkMode::Copy);
        assert_eq!(LinkMode::choose(false, Symlinks::Refused), LinkMode::Copy);
        assert_eq!(LinkMode::choose(true, Symlinks::Refused), LinkMode::Copy);
    }

    /// The probe itself: a directory where links can be made says so and
    /// is left as it was; one that cannot hold anything says refused.
    #[test]
    fn the_probe_makes_a_link_and_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(try_symlink(t.path()), Symlinks::Allowed);
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
        assert_eq!(try_symlink(&t.path().join("missing")), Symlinks::Refused);
        if cfg!(unix) {
            assert_eq!(probe(t.path()), Symlinks::Allowed);
        }
    }
}
