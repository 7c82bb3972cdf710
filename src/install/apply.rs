//! Applying a plan: stage each tree beside its destination, write the
//! marker, swap it in (`renameat2(RENAME_EXCHANGE)` on Linux), so a crash
//! at any moment leaves the old or the new tree, never neither.

use super::plan::{is_link_to, is_symlink, link_target, LinkMode};
use super::{InstallError, Marker, MARKER, STAGING_PREFIX};
use crate::cache::Cache;
use crate::fs::{copy_tree, exchange, fs_err};
use crate::project::lockfile::LockedSkill;
use skillpm_core::name::SkillName;
use std::path::Path;

/// Installs `skill` from the cached `tree` into `root`: copy into a staging
/// directory beside the destination, write the marker, then swap it in.
/// `root` must exist ([`install_all`] creates it once).
fn install_one(
    root: &Path,
    skill: &LockedSkill,
    tree: &Path,
    cache: &Cache,
) -> Result<(), InstallError> {
    let dest = root.join(skill.name.as_str());
    if dest.exists() && Marker::read(&dest).is_none() {
        return Err(InstallError::Foreign { path: dest });
    }
    let staging = tempfile::Builder::new()
        .prefix(&format!("{STAGING_PREFIX}stage-{}-", skill.name))
        .tempdir_in(root)
        .map_err(fs_err("create staging directory in", root))?;
    copy_tree(tree, staging.path())?;
    let marker = Marker {
        name: skill.name.to_string(),
        version: skill.version.to_string(),
        checksum: skill.checksum,
    };
    // Taken before the marker exists, and unchanged by the rename below
    // (renaming a directory does not touch its files).
    let stamp = crate::fs::fingerprint::of_tree(staging.path(), &[MARKER]);
    let mpath = staging.path().join(MARKER);
    std::fs::write(&mpath, marker.render()).map_err(fs_err("write", &mpath))?;
    if dest.exists() {
        exchange(staging.path(), &dest)?;
        // `staging` now holds the old tree; dropping it deletes it.
    } else {
        std::fs::rename(staging.path(), &dest).map_err(fs_err("rename into", &dest))?;
        let _ = staging.keep();
    }
    if let Some(f) = stamp {
        cache.stamp_installed(&dest, &skill.checksum, &f);
    }
    Ok(())
}

/// Installs every `(skill, cached tree)` pair into `root`, spread over a
/// few threads: each install is independent and atomic on its own, and
/// warm restores are bound by per-file system calls, which a second core
/// halves. Returns the first error; skills installed before it stay
/// installed (each is complete, carries its marker, and the lock is only
/// written after every install succeeded).
pub fn install_all(
    root: &Path,
    items: &[(&LockedSkill, &Path)],
    cache: &Cache,
) -> Result<(), InstallError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    /// More threads than this only contend on the root directory's lock.
    const MAX_THREADS: usize = 8;
    if items.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(root).map_err(fs_err("create", root))?;
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
                if let Err(e) = install_one(root, s, tree, cache) {
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
    std::fs::rename(&dest, &trash).map_err(fs_err("move aside", &dest))?;
    std::fs::remove_dir_all(&trash).map_err(fs_err("remove", &trash))?;
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

/// Points `root/<skill>` at the tree written in `primary`: a relative
/// symlink, or in [`LinkMode::Copy`] a copy of that tree (marker included,
/// so it is verified like any install). Made beside the destination and
/// swapped in, so the entry is always the old one or the new one. Only
/// replaces what is ours: an entry with our marker, or our own link.
pub fn link_one(
    root: &Path,
    primary: &Path,
    skill: &LockedSkill,
    mode: LinkMode,
    cache: &Cache,
) -> Result<(), InstallError> {
    let name = skill.name.as_str();
    let dest = root.join(name);
    let target = link_target(root, primary, name);
    let present = std::fs::symlink_metadata(&dest).is_ok();
    if present && Marker::read(&dest).is_none() && !is_link_to(&dest, &target) {
        return Err(InstallError::Foreign { path: dest });
    }
    std::fs::create_dir_all(root).map_err(fs_err("create", root))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!("{STAGING_PREFIX}link-{name}-"))
        .tempdir_in(root)
        .map_err(fs_err("create staging directory in", root))?;
    let tmp = staging.path().join(name);
    match mode {
        LinkMode::Symlink => {
            symlink_dir(&target, &tmp).map_err(fs_err("create the link", &tmp))?;
        }
        LinkMode::Copy => {
            std::fs::create_dir(&tmp).map_err(fs_err("create", &tmp))?;
            copy_tree(&primary.join(name), &tmp)?;
        }
    }
    let stamp = (mode == LinkMode::Copy)
        .then(|| crate::fs::fingerprint::of_tree(&tmp, &[MARKER]))
        .flatten();
    if present {
        // The old entry lands in `staging`, which is deleted on drop
        // (removing a directory never follows a symlink inside it).
        exchange(&tmp, &dest)?;
    } else {
        std::fs::rename(&tmp, &dest).map_err(fs_err("rename into", &dest))?;
    }
    if let Some(f) = stamp {
        cache.stamp_installed(&dest, &skill.checksum, &f);
    }
    Ok(())
}

/// Removes our link or copy `root/<name>` (see [`link_one`]).
pub fn unlink_one(root: &Path, name: &SkillName) -> Result<bool, InstallError> {
    let dest = root.join(name.as_str());
    if is_symlink(&dest) {
        std::fs::remove_file(&dest).map_err(fs_err("remove", &dest))?;
        return Ok(true);
    }
    remove_one(root, name)
}

#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}
