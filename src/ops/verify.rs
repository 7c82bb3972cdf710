//! `skillpm verify`: compares every installed skill with the lock's
//! checksum, and names the files that differ.

use super::Options;
use crate::cache::{Cache, Stamps};
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::{self, Integrity, Marker};
use crate::project::lockfile::LockedSkill;
use crate::project::Project;
use std::path::Path;

/// A difference `verify` found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifyIssue {
    pub skill: String,
    pub root: String,
    pub problem: String,
}

/// `skillpm verify`: re-hashes every installed skill against the lock's
/// checksum (the truth; neither the marker nor the cache is trusted), names
/// the files that differ from the verified cached tree, and reports
/// directories skillpm installed that the lock does not list.
pub fn verify(env: &Environment, opts: &Options) -> Result<Vec<VerifyIssue>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let cache = opts.cache()?;
    let mut issues = Vec::new();
    let roots = project.targets(&manifest)?;
    for (i, root) in roots.iter().enumerate() {
        let issue = |skill: &str, problem: String| VerifyIssue {
            skill: skill.to_string(),
            root: root.display().to_string(),
            problem,
        };
        let mut stamps = cache.installed_stamps(root);
        // Each tree is re-hashed on its own, so on every core; stamps are
        // recorded afterwards, in lock order.
        let found = crate::parallel::chunked(&lock.skills, 8, |part| {
            part.iter()
                .map(|s| check_one(root, (i > 0).then_some(roots[0].path()), s, &cache, &stamps))
                .collect()
        });
        for (s, (problems, stamp)) in lock.skills.iter().zip(found) {
            if let Some(f) = stamp {
                stamps.set(s.name.as_str(), &s.checksum, &f);
            }
            issues.extend(problems.into_iter().map(|p| issue(s.name.as_str(), p)));
        }
        stamps.save();
        for orphan in install::installed(root) {
            if lock.get(&orphan).is_none() {
                issues.push(issue(
                    orphan.as_str(),
                    format!("installed by skillpm but not in skills.lock; {REPAIR}"),
                ));
            }
        }
    }
    Ok(issues)
}

/// What is wrong with `s` as installed in `root` (one line per problem),
/// and the fingerprint to stamp when its tree was found intact. In a
/// root after the first (`primary` is the first), the skill may be a link
/// to the primary tree, which is verified there.
fn check_one(
    root: &Path,
    primary: Option<&Path>,
    s: &LockedSkill,
    cache: &Cache,
    stamps: &Stamps,
) -> (Vec<String>, Option<String>) {
    let dir = root.join(s.name.as_str());
    let name = s.name.as_str();
    if let Some(primary) = primary {
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            let want = install::link_target(root, primary, name);
            if install::is_link_to(&dir, &want) {
                return (Vec::new(), None);
            }
            let problem = format!(
                "is a link that does not point to {}; {REPAIR}",
                want.display()
            );
            return (vec![problem], None);
        }
    }
    let m = match Marker::read(&dir) {
        None => return (vec![format!("not installed; {REPAIR}")], None),
        Some(m) if m.checksum != s.checksum => {
            let problem = format!(
                "installed {} differs from the lock's {}; {REPAIR}",
                m.checksum, s.checksum
            );
            return (vec![problem], None);
        }
        Some(m) => m,
    };
    match m.check(&dir, name, cache, stamps, false) {
        (Integrity::Intact, stamp) => (Vec::new(), stamp),
        (Integrity::Differs(files), _) => (
            files.into_iter().map(|p| format!("{p}; {REPAIR}")).collect(),
            None,
        ),
        (Integrity::Unknown, _) => (
            vec!["differs from the lock's checksum and is not in the cache to compare; run `skillpm install` to fetch and restore it".into()],
            None,
        ),
    }
}

/// What every issue tells the user to do: `install` converges disk to the
/// lock, replacing modified trees and removing orphans.
const REPAIR: &str = "run `skillpm install` to restore the locked state";
