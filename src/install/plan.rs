//! The diff of wanted (the lock) against installed (the markers on disk),
//! so a no-op run touches nothing.

use super::marker::{Integrity, Marker};
use crate::cache::{Cache, Stamps};
use crate::fs::write_dir::WriteDir;
use crate::parallel::Workers;
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
    /// In a linked root: point `root/name` at the written tree (a relative
    /// symlink, or a copy of it when the root copies).
    Link(LockedSkill),
    /// In a linked root: remove our link (or copy) of a skill the lock no
    /// longer lists.
    Unlink(SkillName),
}

/// A plan for one install root.
#[derive(Debug, Clone)]
pub struct Plan {
    pub root: WriteDir,
    pub actions: Vec<Action>,
    /// For every root but the first: the root holding the written trees,
    /// which this one links to. Several agents' directories are served by
    /// one tree per skill.
    pub links_to: Option<PathBuf>,
    /// This machine's stamps of the trees in `root`, updated as the plan
    /// is made and applied; saved by the caller.
    pub stamps: Stamps,
}

impl Plan {
    /// Whether applying the plan changes anything in its root.
    pub fn changes(&self) -> bool {
        self.actions
            .iter()
            .any(|a| !matches!(a, Action::Unchanged(_)))
    }

    /// Skills whose trees must be prepared before they are applied.
    pub fn needed(&self) -> impl Iterator<Item = &LockedSkill> {
        self.actions.iter().filter_map(|a| match a {
            Action::Install(s) | Action::Replace(s) => Some(s),
            _ => None,
        })
    }
}

/// Plans every root: the first holds the trees ([`plan`]), the others link
/// to it ([`plan_links`]).
pub fn plan_all(
    workers: &Workers,
    roots: &[WriteDir],
    wanted: &[LockedSkill],
    cache: &Cache,
    mode: LinkMode,
) -> Vec<Plan> {
    let Some((first, rest)) = roots.split_first() else {
        return Vec::new();
    };
    let mut plans = vec![plan(workers, first, wanted, cache)];
    plans.extend(
        rest.iter()
            .map(|r| plan_links(r, first, wanted, cache, mode)),
    );
    plans
}

/// How a linked root holds a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkMode {
    /// A relative symlink to the written tree (`../../.agents/skills/x`):
    /// one tree on disk, and the link stays valid wherever the project is
    /// cloned.
    #[default]
    Symlink,
    /// A full copy with its own marker, for tools or filesystems that do
    /// not follow symlinks.
    Copy,
}

/// The link target for `name` in `root`: the path of `primary/name`
/// relative to `root`.
pub fn link_target(root: &Path, primary: &Path, name: &str) -> PathBuf {
    let from: Vec<_> = root.components().collect();
    let to: Vec<_> = primary.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for c in &to[common..] {
        rel.push(c);
    }
    rel.join(name)
}

/// Plans a linked root: a wanted skill is unchanged when its entry is the
/// right link (or, in copy mode, an intact copy); anything else of ours is
/// relinked, and our links and copies the lock no longer wants are
/// removed. A link left dangling by an interrupted run still counts as
/// ours when it points where we would point it.
pub fn plan_links(
    root: &WriteDir,
    primary: &Path,
    wanted: &[LockedSkill],
    cache: &Cache,
    mode: LinkMode,
) -> Plan {
    let mut actions = Vec::new();
    let mut stamps = cache.installed_stamps(root);
    for s in wanted {
        let dir = root.join(s.name.as_str());
        let ok = match mode {
            LinkMode::Symlink => is_link_to(&dir, &link_target(root, primary, s.name.as_str())),
            LinkMode::Copy => {
                !is_symlink(&dir)
                    && Marker::read(&dir).is_some_and(|m| {
                        m.checksum == s.checksum
                            && m.integrity(&dir, s.name.as_str(), cache, &mut stamps, true)
                                == Integrity::Intact
                    })
            }
        };
        actions.push(if ok {
            Action::Unchanged(s.name.clone())
        } else {
            Action::Link(s.clone())
        });
    }
    let wanted_names: std::collections::HashSet<&SkillName> =
        wanted.iter().map(|w| &w.name).collect();
    let mut orphans: Vec<SkillName> = read_names(root)
        .into_iter()
        .filter(|n| !wanted_names.contains(n))
        .filter(|n| {
            let dir = root.join(n.as_str());
            // A link is ours only if it is exactly the link we write: a
            // user's link to some other installed tree (which carries a
            // marker) is theirs.
            if is_symlink(&dir) {
                is_link_to(&dir, &link_target(root, primary, n.as_str()))
            } else {
                Marker::read(&dir).is_some()
            }
        })
        .collect();
    orphans.sort();
    actions.extend(orphans.into_iter().map(Action::Unlink));
    Plan {
        root: root.clone(),
        actions,
        links_to: Some(primary.to_path_buf()),
        stamps,
    }
}

/// Whether `p` is a symlink whose text is exactly `target`.
pub fn is_link_to(p: &Path, target: &Path) -> bool {
    is_symlink(p) && std::fs::read_link(p).is_ok_and(|t| t == target)
}

pub(super) fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// The entries of `root` whose names are skill names.
fn read_names(root: &Path) -> Vec<SkillName> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| SkillName::new(&e.file_name().to_string_lossy()).ok())
        .collect()
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
pub fn plan(workers: &Workers, root: &WriteDir, wanted: &[LockedSkill], cache: &Cache) -> Plan {
    let mut stamps = cache.installed_stamps(root);
    // Each tree is checked on its own (a marker read and a fingerprint,
    // a few `stat`s), so a no-op run over many skills checks them on
    // every core; stamps are recorded afterwards, in order.
    let seen = workers.chunked(wanted, 64, |part| {
        part.iter()
            .map(|s| {
                let dir = root.join(s.name.as_str());
                match Marker::read(&dir) {
                    Some(m) if m.checksum == s.checksum => {
                        match m.check(&dir, s.name.as_str(), cache, &stamps, true) {
                            (Integrity::Intact, stamp) => Seen::Intact(stamp),
                            _ => Seen::Changed,
                        }
                    }
                    Some(_) => Seen::Changed,
                    None if dir.exists() => Seen::Changed,
                    None => Seen::Absent,
                }
            })
            .collect()
    });
    let mut actions = Vec::new();
    for (s, seen) in wanted.iter().zip(seen) {
        actions.push(match seen {
            Seen::Intact(stamp) => {
                if let Some(f) = stamp {
                    stamps.set(s.name.as_str(), &s.checksum, &f);
                }
                Action::Unchanged(s.name.clone())
            }
            Seen::Changed => Action::Replace(s.clone()),
            Seen::Absent => Action::Install(s.clone()),
        });
    }
    let wanted_names: std::collections::HashSet<&SkillName> =
        wanted.iter().map(|w| &w.name).collect();
    let mut orphans = installed_except(root, &wanted_names);
    orphans.sort();
    actions.extend(orphans.into_iter().map(Action::Remove));
    Plan {
        root: root.clone(),
        actions,
        links_to: None,
        stamps,
    }
}

/// What [`plan`] found where a wanted skill goes.
enum Seen {
    /// Ours, from the locked checksum, intact; with the fingerprint to
    /// stamp when only a re-hash could tell.
    Intact(Option<String>),
    /// Ours from another checksum, edited, or not ours at all.
    Changed,
    Absent,
}

/// The skills in `root` that carry our marker.
pub fn installed(root: &Path) -> Vec<SkillName> {
    installed_except(root, &std::collections::HashSet::new())
}

/// [`installed`], not counting `skip` (whose markers the caller has read
/// already: a no-op run reads each marker once).
fn installed_except(root: &Path, skip: &std::collections::HashSet<&SkillName>) -> Vec<SkillName> {
    read_names(root)
        .into_iter()
        .filter(|n| !skip.contains(n) && Marker::read(&root.join(n.as_str())).is_some())
        .collect()
}
