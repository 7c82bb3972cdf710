//! Plan and apply: put exactly the locked trees into the install roots.
//!
//! Every installed skill carries a small marker file naming the checksum it
//! was installed from. The marker is written into the staged tree before it
//! is renamed into place, so tree and marker change together: [`plan`] can
//! trust it to tell "unchanged" from "replace" without hashing anything, and
//! skillpm only ever removes or replaces directories that carry its marker
//! (user-written skills in the same root are never touched).
//!
//! Replacing an existing skill swaps the directories atomically
//! (`renameat2(RENAME_EXCHANGE)` on Linux), so a crash at any moment leaves
//! either the old or the new tree at the destination, never neither.

use crate::lockfile::LockedSkill;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::io;
use std::path::{Path, PathBuf};

/// Name of the marker file inside every skill skillpm installed.
pub const MARKER: &str = ".skillpm-install";
/// Prefix of staging and trash directories beside installed skills; the
/// engine skips dot-directories, so agents never see them.
pub const STAGING_PREFIX: &str = ".skillpm-";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(
        "{path} exists and was not installed by skillpm; move it away or remove it, then retry"
    )]
    Foreign { path: PathBuf },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> InstallError + 'a {
    move |source| InstallError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// What the marker in an installed skill says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub version: String,
    pub checksum: Checksum,
}

impl Marker {
    fn render(&self) -> String {
        format!("{}\n{}\n{}\n", self.name, self.version, self.checksum)
    }

    /// Reads the marker of `dir`; `None` if absent or unreadable, which
    /// means "not ours".
    pub fn read(dir: &Path) -> Option<Marker> {
        let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
        let mut lines = text.lines();
        let name = lines.next()?.to_string();
        let version = lines.next()?.to_string();
        let checksum = Checksum::parse(lines.next()?).ok()?;
        Some(Marker {
            name,
            version,
            checksum,
        })
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Install(LockedSkill),
    Replace(LockedSkill),
    Remove(SkillName),
    Unchanged(SkillName),
}

/// A plan for one install root.
#[derive(Debug, Clone)]
pub struct Plan {
    pub root: PathBuf,
    pub actions: Vec<Action>,
}

impl Plan {
    /// Skills whose trees must be prepared before [`apply`].
    pub fn needed(&self) -> impl Iterator<Item = &LockedSkill> {
        self.actions.iter().filter_map(|a| match a {
            Action::Install(s) | Action::Replace(s) => Some(s),
            _ => None,
        })
    }

    pub fn is_noop(&self) -> bool {
        self.actions
            .iter()
            .all(|a| matches!(a, Action::Unchanged(_)))
    }
}

/// Compares the wanted skills with what is on disk in `root`. `previous`
/// lists skills skillpm installed before (the old lock); those no longer
/// wanted are removed, but only if their directory carries our marker.
pub fn plan(root: &Path, wanted: &[LockedSkill], previous: &[SkillName]) -> Plan {
    let mut actions = Vec::new();
    for s in wanted {
        let dir = root.join(s.name.as_str());
        actions.push(match Marker::read(&dir) {
            Some(m) if m.checksum == s.checksum => Action::Unchanged(s.name.clone()),
            Some(_) => Action::Replace(s.clone()),
            None if dir.exists() => Action::Replace(s.clone()),
            None => Action::Install(s.clone()),
        });
    }
    for name in previous {
        if !wanted.iter().any(|w| &w.name == name)
            && Marker::read(&root.join(name.as_str())).is_some()
        {
            actions.push(Action::Remove(name.clone()));
        }
    }
    Plan {
        root: root.to_path_buf(),
        actions,
    }
}

/// Installs `skill` from the cached `tree` into `root`: copy into a staging
/// directory beside the destination, write the marker, then swap it in.
/// `root` must exist ([`install_all`] creates it once).
fn install_one(root: &Path, skill: &LockedSkill, tree: &Path) -> Result<(), InstallError> {
    let dest = root.join(skill.name.as_str());
    if dest.exists() && Marker::read(&dest).is_none() {
        return Err(InstallError::Foreign { path: dest });
    }
    let staging = tempfile::Builder::new()
        .prefix(&format!("{STAGING_PREFIX}stage-{}-", skill.name))
        .tempdir_in(root)
        .map_err(io_err("create staging directory in", root))?;
    copy_tree(tree, staging.path())?;
    let marker = Marker {
        name: skill.name.to_string(),
        version: skill.version.to_string(),
        checksum: skill.checksum,
    };
    let mpath = staging.path().join(MARKER);
    std::fs::write(&mpath, marker.render()).map_err(io_err("write", &mpath))?;
    if dest.exists() {
        exchange(staging.path(), &dest)?;
        // `staging` now holds the old tree; dropping it deletes it.
    } else {
        std::fs::rename(staging.path(), &dest).map_err(io_err("rename into", &dest))?;
        let _ = staging.keep();
    }
    Ok(())
}

/// Installs every `(skill, cached tree)` pair into `root`, spread over a
/// few threads: each install is independent and atomic on its own, and
/// warm restores are bound by per-file system calls, which a second core
/// halves. Returns the first error; skills installed before it stay
/// installed (each is complete, carries its marker, and the lock is only
/// written after every install succeeded).
pub fn install_all(root: &Path, items: &[(&LockedSkill, &Path)]) -> Result<(), InstallError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    /// More threads than this only contend on the root directory's lock.
    const MAX_THREADS: usize = 8;
    if items.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(root).map_err(io_err("create", root))?;
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, MAX_THREADS)
        .min(items.len());
    let next = AtomicUsize::new(0);
    let first_error: Mutex<Option<InstallError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((s, tree)) = items.get(i) else { break };
                if let Err(e) = install_one(root, s, tree) {
                    // Stop handing out work; keep the first error only.
                    next.store(items.len(), Ordering::Relaxed);
                    let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    slot.get_or_insert(e);
                    break;
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Removes an installed skill (only if it carries our marker). The tree is
/// first renamed aside so a crash never leaves a half-deleted skill visible.
pub fn remove_one(root: &Path, name: &SkillName) -> Result<bool, InstallError> {
    let dest = root.join(name.as_str());
    if Marker::read(&dest).is_none() {
        return Ok(false);
    }
    let trash = root.join(format!(
        "{STAGING_PREFIX}trash-{name}-{}",
        std::process::id()
    ));
    std::fs::rename(&dest, &trash).map_err(io_err("move aside", &dest))?;
    std::fs::remove_dir_all(&trash).map_err(io_err("remove", &trash))?;
    Ok(true)
}

/// Deletes staging and trash directories left by an interrupted run.
pub fn sweep_leftovers(root: &Path) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(STAGING_PREFIX) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<(), InstallError> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)
        .map_err(|e| io_err("swap into", b)(io::Error::from(e)))
}

/// Without an atomic exchange: move the old tree aside, move the new one
/// in. A crash between the two renames leaves the old tree under a staging
/// name, which the next run sweeps and then reinstalls.
#[cfg(not(target_os = "linux"))]
fn exchange(a: &Path, b: &Path) -> Result<(), InstallError> {
    let aside = a.with_extension("old");
    std::fs::rename(b, &aside).map_err(io_err("move aside", b))?;
    std::fs::rename(a, b).map_err(io_err("rename into", b))?;
    std::fs::rename(&aside, a).map_err(io_err("move", &aside))
}

/// Copies a tree file by file. `std::fs::copy` uses `copy_file_range` on
/// Linux, which reflinks on filesystems that support it; hard links are
/// never used, because an edit to an installed file would then change the
/// cache.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    let rd = std::fs::read_dir(from).map_err(io_err("read", from))?;
    for e in rd {
        let e = e.map_err(io_err("read", from))?;
        let ft = e.file_type().map_err(io_err("stat", &e.path()))?;
        let src = e.path();
        let dst = to.join(e.file_name());
        if ft.is_dir() {
            std::fs::create_dir(&dst).map_err(io_err("create", &dst))?;
            copy_tree(&src, &dst)?;
        } else if ft.is_file() {
            std::fs::copy(&src, &dst).map_err(io_err("copy to", &dst))?;
        }
        // Cached trees hold only files and directories (the unpacker
        // refuses anything else), so nothing else can appear here.
    }
    Ok(())
}
