//! The diff of wanted (the lock) against installed (the markers on disk),
//! so a no-op run touches nothing.

use super::Marker;
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
