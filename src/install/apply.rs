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

/// Swaps every staged tree into `root`, in order, each by way of
/// `parked` (see [`super::journal`]): the staged tree is moved to
/// `parked/NAME`, then swapped with the installed one (or renamed into
/// place), so the old tree is left at `parked/NAME` until the run ends.
/// Returns the first error; the staged trees not swapped are deleted.
pub fn install_all(
    root: &WriteDir,
    parked: &Path,
    items: Vec<(&LockedSkill, Staged)>,
    stamps: &mut Stamps,
) -> Result<(), InstallError> {
    for (skill, staged) in items {
        let dest = root.join(skill.name.as_str());
        if dest.exists() && Marker::read(&dest).is_none() {
            return Err(InstallError::Foreign { path: dest });
        }
        let new = parked.join(skill.name.as_str());
        std::fs::rename(staged.dir.path(), &new).map_err(fs_err("move", staged.dir.path()))?;
        let _ = staged.dir.keep();
        put(&new, &dest)?;
        if let Some(f) = &staged.stamp {
            stamps.set(skill.name.as_str(), &skill.checksum, f);
        }
    }
    Ok(())
}

/// Puts the entry `new` at `dest`: swapped with what is there, so whoever
/// looks at `dest` sees the old entry or the new one, never neither (the
/// old one is left at `new`), or renamed there.
fn put(new: &Path, dest: &Path) -> Result<(), crate::fs::FsError> {
    if std::fs::symlink_metadata(dest).is_ok() {
        exchange(new, dest)
    } else {
        std::fs::rename(new, dest).map_err(fs_err("rename into", dest))
    }
}

/// Removes an installed skill (only if it carries our marker): moves it
/// to `parked/NAME`, deleted with `parked` once the run ends, so a crash
/// never leaves a half-deleted skill visible and a rollback can put it
/// back.
pub fn remove_one(root: &WriteDir, parked: &Path, name: &SkillName) -> Result<bool, InstallError> {
    let dest = root.join(name.as_str());
    if Marker::read(&dest).is_none() {
        return Ok(false);
    }
    park(&dest, &parked.join(name.as_str()))?;
    Ok(true)
}

fn park(dest: &Path, parked: &Path) -> Result<(), crate::fs::FsError> {
    std::fs::rename(dest, parked).map_err(fs_err("move aside", dest))
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
/// so it is verified like any install). Made at `parked/<skill>` and put in
/// place as [`install_all`] puts a tree, so the entry is always the old one
/// or the new one. Only replaces what is ours: an entry with our marker,
/// or our own link.
pub fn link_one(
    root: &WriteDir,
    parked: &Path,
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
    let tmp = parked.join(name);
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
    put(&tmp, &dest)?;
    if let Some(f) = stamp {
        stamps.set(name, &skill.checksum, &f);
    }
    Ok(())
}

/// Removes our link or copy `root/<name>` (see [`link_one`]) into
/// `parked`.
pub fn unlink_one(root: &WriteDir, parked: &Path, name: &SkillName) -> Result<bool, InstallError> {
    let dest = root.join(name.as_str());
    if is_symlink(&dest) {
        park(&dest, &parked.join(name.as_str()))?;
        return Ok(true);
    }
    remove_one(root, parked, name)
}
