//! `skillpm verify`: compares every installed skill with the lock's
//! checksum, and names the files that differ.

use super::Options;
use crate::cache::{Cache, Stamps};
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::{self, Integrity, Marker};
use crate::parallel::Workers;
use crate::project::lockfile::LockedSkill;
use crate::project::Project;
use crate::source::Sources;
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
    let mut rebuild = None;
    for (i, root) in roots.iter().enumerate() {
        let issue = |skill: &str, problem: String| VerifyIssue {
            skill: skill.to_string(),
            root: root.display().to_string(),
            problem,
        };
        let mut stamps = cache.installed_stamps(root);
        // Each tree is re-hashed on its own, so on every core; stamps are
        // recorded afterwards, in lock order.
        let found = env.workers.chunked(&lock.skills, 8, |part| {
            part.iter()
                .map(|s| check_one(root, (i > 0).then_some(roots[0].path()), s, &cache, &stamps))
                .collect()
        });
        for (s, found) in lock.skills.iter().zip(found) {
            let problems = match found {
                Found::Intact(stamp) => {
                    if let Some(f) = stamp {
                        stamps.set(s.name.as_str(), &s.checksum, &f);
                    }
                    Vec::new()
                }
                Found::Problems(problems) => problems,
                Found::NotCached => {
                    let rebuild =
                        rebuild.get_or_insert_with(|| Rebuild::new(&project, &cache, &env.workers));
                    rebuild.compare(&root.join(s.name.as_str()), s)
                }
            };
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

/// What [`check_one`] found of one installed skill.
enum Found {
    /// As locked, with the fingerprint to stamp, if it is new.
    Intact(Option<String>),
    /// What is wrong, one line per problem.
    Problems(Vec<String>),
    /// Not as locked, and the cache holds no locked package to name the
    /// files that differ ([`Rebuild`] makes one).
    NotCached,
}

/// What is wrong with `s` as installed in `root`. In a root after the
/// first (`primary` is the first), the skill may be a link to the primary
/// tree, which is verified there.
fn check_one(
    root: &Path,
    primary: Option<&Path>,
    s: &LockedSkill,
    cache: &Cache,
    stamps: &Stamps,
) -> Found {
    let dir = root.join(s.name.as_str());
    let name = s.name.as_str();
    if let Some(primary) = primary {
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            let want = install::link_target(root, primary, name);
            if install::is_link_to(&dir, &want) {
                return Found::Intact(None);
            }
            let problem = format!(
                "is a link that does not point to {}; {REPAIR}",
                want.display()
            );
            return Found::Problems(vec![problem]);
        }
    }
    let m = match Marker::read(&dir) {
        None => return Found::Problems(vec![format!("not installed; {REPAIR}")]),
        Some(m) if m.checksum != s.checksum => {
            let problem = format!(
                "installed {} differs from the lock's {}; {REPAIR}",
                m.checksum, s.checksum
            );
            return Found::Problems(vec![problem]);
        }
        Some(m) => m,
    };
    match m.check(&dir, name, cache, stamps, false) {
        (Integrity::Intact, stamp) => Found::Intact(stamp),
        (Integrity::Differs(files), _) => Found::Problems(named(files)),
        (Integrity::Unknown, _) => Found::NotCached,
    }
}

fn named(files: Vec<String>) -> Vec<String> {
    files
        .into_iter()
        .map(|p| format!("{p}; {REPAIR}"))
        .collect()
}

/// The locked packages the cache does not hold as tarballs (git and path
/// skills: the cache keeps a git skill's commit in its clone, and a path
/// skill is its directory), made again from their sources without the
/// network, to name the files an installed tree changed.
struct Rebuild {
    sources: Sources,
    rt: Option<tokio::runtime::Runtime>,
    cache: Cache,
}

impl Rebuild {
    fn new(project: &Project, cache: &Cache, workers: &Workers) -> Self {
        Rebuild {
            sources: Sources::new(cache.clone(), project.dir.clone(), true, workers),
            rt: super::runtime().ok(),
            cache: cache.clone(),
        }
    }

    /// The problems of the installed tree `dir` of `s`, by file when its
    /// locked package can be made again.
    fn compare(&self, dir: &Path, s: &LockedSkill) -> Vec<String> {
        let fetched = self
            .rt
            .as_ref()
            .map(|rt| rt.block_on(self.sources.fetch(s)));
        let pristine = match fetched {
            Some(Ok(fetched)) => self.cache.unpack(&fetched.tree),
            Some(Err(_)) | None => None,
        };
        match pristine.as_ref().map(|tree| install::compare(tree.path(), dir)) {
            Some(Integrity::Differs(files)) => named(files),
            _ => vec![format!(
                "differs from the lock's checksum, and neither the cache nor its source has the locked files to compare; {REPAIR}"
            )],
        }
    }
}

/// What every issue tells the user to do: `install` converges disk to the
/// lock, replacing modified trees and removing orphans.
const REPAIR: &str = "run `skillpm install` to restore the locked state";
