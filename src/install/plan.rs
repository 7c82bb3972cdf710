//! The diff of wanted (the lock) against installed (the markers on disk),
//! so a no-op run touches nothing.

use super::marker::{Integrity, Marker};
use crate::cache::Cache;
use crate::project::lockfile::LockedSkill;
use skillpm_core::name::SkillName;
use std::path::{Path, PathBuf};

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
    /// Skills whose trees must be prepared before they are applied.
    pub fn needed(&self) -> impl Iterator<Item = &LockedSkill> {
        self.actions.iter().filter_map(|a| match a {
            Action::Install(s) | Action::Replace(s) => Some(s),
            _ => None,
        })
    }
}

/// Compares the wanted skills with what is on disk in `root`, so that one
/// run converges disk to the lock whatever happened before:
/// - a skill whose marker names the locked checksum is unchanged only if
///   its tree is intact ([`Marker::intact`]); an edited tree, or one that
///   lost an exec bit, is replaced;
/// - every directory carrying our marker that the lock does not want is
///   removed, including orphans of an interrupted run that never reached
///   the lock. Directories without the marker (user-written skills) are
///   never touched.
pub fn plan(root: &Path, wanted: &[LockedSkill], cache: &Cache) -> Plan {
    let mut actions = Vec::new();
    for s in wanted {
        let dir = root.join(s.name.as_str());
        actions.push(match Marker::read(&dir) {
            Some(m)
                if m.checksum == s.checksum
                    && m.integrity(&dir, cache, true) == Integrity::Intact =>
            {
                Action::Unchanged(s.name.clone())
            }
            Some(_) => Action::Replace(s.clone()),
            None if dir.exists() => Action::Replace(s.clone()),
            None => Action::Install(s.clone()),
        });
    }
    let wanted_names: std::collections::HashSet<&SkillName> =
        wanted.iter().map(|w| &w.name).collect();
    let mut orphans = installed_except(root, &wanted_names);
    orphans.sort();
    actions.extend(orphans.into_iter().map(Action::Remove));
    Plan {
        root: root.to_path_buf(),
        actions,
    }
}

/// The skills in `root` that carry our marker.
pub fn installed(root: &Path) -> Vec<SkillName> {
    installed_except(root, &std::collections::HashSet::new())
}

/// [`installed`], not counting `skip` (whose markers the caller has read
/// already: a no-op run reads each marker once).
fn installed_except(root: &Path, skip: &std::collections::HashSet<&SkillName>) -> Vec<SkillName> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| SkillName::new(&e.file_name().to_string_lossy()).ok())
        .filter(|n| !skip.contains(n) && Marker::read(&root.join(n.as_str())).is_some())
        .collect()
}
