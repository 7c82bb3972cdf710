//! `skillpm verify`: compares every installed skill, file by file, with
//! its verified tree in the cache.

use super::Options;
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::{self, Marker};
use crate::project::Project;
use skillpm_core::checksum::Checksum;
use std::collections::BTreeMap;
use std::path::Path;

/// A difference `verify` found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifyIssue {
    pub skill: String,
    pub root: String,
    pub problem: String,
}

/// `skillpm verify`: compares every installed skill, file by file, with
/// its verified tree in the cache.
pub fn verify(env: &Environment, opts: &Options) -> Result<Vec<VerifyIssue>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let cache = opts.cache()?;
    let mut issues = Vec::new();
    for root in project.targets(&manifest)? {
        for s in &lock.skills {
            let dir = root.join(s.name.as_str());
            let issue = |problem: String| VerifyIssue {
                skill: s.name.to_string(),
                root: root.display().to_string(),
                problem,
            };
            match Marker::read(&dir) {
                None => {
                    issues.push(issue("not installed".into()));
                    continue;
                }
                Some(m) if m.checksum != s.checksum => {
                    issues.push(issue(format!(
                        "installed {} differs from the lock's {}",
                        m.checksum, s.checksum
                    )));
                    continue;
                }
                Some(_) => {}
            }
            if !cache.has_tree(&s.checksum) {
                issues.push(issue(
                    "not in the cache; run `skillpm install` to fetch it, then verify again".into(),
                ));
                continue;
            }
            for p in diff_trees(&cache.tree_path(&s.checksum), &dir) {
                issues.push(issue(p));
            }
        }
    }
    Ok(issues)
}

/// Files that differ between the pristine tree and the installed one.
fn diff_trees(pristine: &Path, installed: &Path) -> Vec<String> {
    let a = files_with_hashes(pristine);
    let b = files_with_hashes(installed);
    let mut out = Vec::new();
    for (rel, h) in &a {
        match b.get(rel) {
            None => out.push(format!("missing file {rel}")),
            Some(h2) if h2 != h => out.push(format!("modified file {rel}")),
            _ => {}
        }
    }
    for rel in b.keys() {
        if !a.contains_key(rel) && rel != install::MARKER {
            out.push(format!("added file {rel}"));
        }
    }
    out
}

fn files_with_hashes(root: &Path) -> BTreeMap<String, Checksum> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match e.file_type() {
                Ok(ft) if ft.is_dir() => stack.push((e.path(), child)),
                Ok(_) => {
                    if let Ok(f) = std::fs::File::open(e.path()) {
                        if let Ok(c) = Checksum::of_reader(f) {
                            out.insert(child, c);
                        }
                    }
                }
                Err(_) => {}
            }
        }
    }
    out
}
