//! Applying a plan: swap each staged tree (see [`super::prepare`]) into
//! place (`renameat2(RENAME_EXCHANGE)` on Linux), so a crash at any moment
//! leaves the old or the new tree, never neither.

use super::link::symlink_dir;
use super::plan::{is_link_to, is_symlink, link_target, LinkMode};
use super::prepare::Staged;
use super::{InstallError, Marker, MARKER, STAGING_PREFIX};
use crate::cache::Stamps;
use crate::fs::write_dir::WriteDir;
use crate::fs::{copy_tree, exchange, fs_err};
use crate::project::lockfile::LockedSkill;
use skillpm_core::name::SkillName;
use std::path::Path;

/// Swaps every staged tree into `root`, in order. Returns the first
/// error; skills swapped before it stay installed (each is complete,
/// carries its marker, and the lock is only written after every install
/// succeeded), and the staged trees not swapped are deleted.
pub fn install_all(
    root: &WriteDir,
    items: Vec<(&LockedSkill, Staged)>,
    stamps: &mut Stamps,
) -> Result<(), InstallError> {
    for (skill, staged) in items {
        let dest = root.join(skill.name.as_str());
        if dest.exists() && Marker::read(&dest).is_none() {
            return Err(InstallError::Foreign { path: dest });
        }
        if dest.exists() {
            exchange(staged.dir.path(), &dest)?;
            // The staging directory now holds the old tree; dropping
            // `staged` deletes it.
        } else {
            std::fs::rename(staged.dir.path(), &dest).map_err(fs_err("rename into", &dest))?;
            let _ = staged.dir.keep();
        }
        if let Some(f) = &staged.stamp {
            stamps.set(skill.name.as_str(), &skill.checksum, f);
        }
    }
    Ok(())
}

/// Removes an installed skill (only if it carries our marker). The tree is
/// first renamed aside so a crash never leaves a half-deleted skill visible.
pub fn remove_one(root: &WriteDir, name: &SkillName) -> Result<bool, InstallError> {
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
pub fn sweep_leftovers(root: &WriteDir) {
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
    root: &WriteDir,
    primary: &Path,
    skill: &LockedSkill,
    mode: LinkMode,
    stamps: &mut Stamps,
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
        stamps.set(name, &skill.checksum, &f);
    }
    Ok(())
}

/// Removes our link or copy `root/<name>` (see [`link_one`]).
pub fn unlink_one(root: &WriteDir, name: &SkillName) -> Result<bool, InstallError> {
    let dest = root.join(name.as_str());
    if is_symlink(&dest) {
        std::fs::remove_file(&dest).map_err(fs_err("remove", &dest))?;
        return Ok(true);
    }
    remove_one(root, name)
}
