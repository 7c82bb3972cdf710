//! `skillpm verify`: compares every installed skill with the lock's
//! checksum, and names the files that differ.

use super::Options;
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::{self, Integrity, Marker};
use crate::project::Project;

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
        for s in &lock.skills {
            let dir = root.join(s.name.as_str());
            let name = s.name.as_str();
            // A root after the first may hold a link to the first's tree,
            // which is verified there; the link must point exactly there.
            if i > 0 && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                let want = install::link_target(root, &roots[0], name);
                if !install::is_link_to(&dir, &want) {
                    issues.push(issue(
                        name,
                        format!(
                            "is a link that does not point to {}; {REPAIR}",
                            want.display()
                        ),
                    ));
                }
                continue;
            }
            let m = match Marker::read(&dir) {
                None => {
                    issues.push(issue(name, format!("not installed; {REPAIR}")));
                    continue;
                }
                Some(m) if m.checksum != s.checksum => {
                    issues.push(issue(
                        name,
                        format!(
                            "installed {} differs from the lock's {}; {REPAIR}",
                            m.checksum, s.checksum
                        ),
                    ));
                    continue;
                }
                Some(m) => m,
            };
            match m.integrity(&dir, name, &cache, &mut stamps, false) {
                Integrity::Intact => {}
                Integrity::Differs(files) => {
                    issues.extend(files.into_iter().map(|p| issue(name, format!("{p}; {REPAIR}"))));
                }
                Integrity::Unknown => issues.push(issue(
                    name,
                    "differs from the lock's checksum and is not in the cache to compare; run `skillpm install` to fetch and restore it".into(),
                )),
            }
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

/// What every issue tells the user to do: `install` converges disk to the
/// lock, replacing modified trees and removing orphans.
const REPAIR: &str = "run `skillpm install` to restore the locked state";
