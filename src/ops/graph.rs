//! `tree` and `why`: the dependency graph the lock records, read without
//! the network. The roots are skills.toml's entries; every edge is one the
//! resolver chose, so what is printed is what is installed.

use super::{parse_name, Options};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::lockfile::{LockedSkill, Lockfile};
use crate::project::Project;
use skillpm_core::name::SkillName;
use std::collections::{BTreeMap, BTreeSet};

/// The project's skills and the edges between them.
pub struct Graph {
    /// skills.toml's entries that the lock holds.
    pub roots: BTreeSet<SkillName>,
    pub lock: Lockfile,
    /// Who depends on each skill.
    dependents: BTreeMap<SkillName, BTreeSet<SkillName>>,
}

/// One line of `tree`: a skill at a depth, and whether it was printed
/// above already (its subtree is then not repeated, as `cargo tree` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeLine {
    pub depth: usize,
    pub name: SkillName,
    pub version: String,
    pub source: String,
    pub repeated: bool,
    /// Whether it is the last child of its parent, per level down to it
    /// (for the drawing).
    pub last: Vec<bool>,
}

/// One skill of `tree --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GraphNode {
    pub name: String,
    pub version: String,
    pub source: String,
    /// Named in skills.toml (not only pulled in by another skill).
    pub direct: bool,
    pub dependencies: Vec<String>,
    pub dependents: Vec<String>,
}

/// Reads the project's graph from skills.toml and skills.lock.
pub fn graph(env: &Environment, opts: &Options) -> Result<Graph> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let roots = manifest
        .skills
        .keys()
        .filter(|n| lock.get(n).is_some())
        .cloned()
        .collect();
    Ok(Graph::new(roots, lock))
}

impl Graph {
    pub fn new(roots: BTreeSet<SkillName>, lock: Lockfile) -> Graph {
        let mut dependents: BTreeMap<SkillName, BTreeSet<SkillName>> = BTreeMap::new();
        for s in &lock.skills {
            for d in &s.dependencies {
                dependents
                    .entry(d.clone())
                    .or_default()
                    .insert(s.name.clone());
            }
        }
        Graph {
            roots,
            lock,
            dependents,
        }
    }

    fn entry(&self, name: &SkillName) -> Result<&LockedSkill> {
        self.lock
            .get(name)
            .ok_or_else(|| Error::NotInstalled(name.to_string()))
    }

    /// `tree`: from skills.toml down, or with `invert` from one skill up
    /// to skills.toml; at most `depth` levels below the first.
    pub fn tree(&self, invert: Option<&str>, depth: Option<usize>) -> Result<Vec<TreeLine>> {
        let (starts, up): (Vec<SkillName>, bool) = match invert {
            Some(n) => {
                let name = parse_name(n)?;
                self.entry(&name)?;
                (vec![name], true)
            }
            None => (self.roots.iter().cloned().collect(), false),
        };
        let mut out = Vec::new();
        let mut printed = BTreeSet::new();
        for (i, s) in starts.iter().enumerate() {
            let last = vec![i + 1 == starts.len()];
            self.walk(s, up, depth, last, &mut printed, &mut out)?;
        }
        Ok(out)
    }

    fn walk(
        &self,
        name: &SkillName,
        up: bool,
        depth: Option<usize>,
        last: Vec<bool>,
        printed: &mut BTreeSet<SkillName>,
        out: &mut Vec<TreeLine>,
    ) -> Result<()> {
        let e = self.entry(name)?;
        let level = last.len() - 1;
        let repeated = !printed.insert(name.clone());
        out.push(TreeLine {
            depth: level,
            name: name.clone(),
            version: e.version.to_string(),
            source: e.source.to_string(),
            repeated,
            last: last.clone(),
        });
        if repeated || depth.is_some_and(|d| level >= d) {
            return Ok(());
        }
        let next: Vec<&SkillName> = if up {
            self.dependents
                .get(name)
                .map(|s| s.iter().collect())
                .unwrap_or_default()
        } else {
            e.dependencies.iter().collect()
        };
        for (i, n) in next.iter().enumerate() {
            let mut l = last.clone();
            l.push(i + 1 == next.len());
            self.walk(n, up, depth, l, printed, out)?;
        }
        Ok(())
    }

    /// `why NAME`: every chain from a skills.toml entry down to `name`,
    /// shortest first (a skill on a cycle is not passed twice).
    pub fn why(&self, name: &str) -> Result<Vec<Vec<SkillName>>> {
        let target = parse_name(name)?;
        self.entry(&target)?;
        let mut chains = Vec::new();
        let mut path = vec![target.clone()];
        self.up(&target, &mut path, &mut chains);
        chains.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        Ok(chains)
    }

    fn up(&self, at: &SkillName, path: &mut Vec<SkillName>, chains: &mut Vec<Vec<SkillName>>) {
        if self.roots.contains(at) {
            chains.push(path.iter().rev().cloned().collect());
        }
        for p in self.dependents.get(at).into_iter().flatten() {
            if !path.contains(p) {
                path.push(p.clone());
                self.up(p, path, chains);
                path.pop();
            }
        }
    }

    /// `tree --json`: every locked skill with its edges both ways.
    pub fn nodes(&self) -> Vec<GraphNode> {
        let names = |s: &BTreeSet<SkillName>| s.iter().map(|n| n.to_string()).collect();
        self.lock
            .skills
            .iter()
            .map(|s| GraphNode {
                name: s.name.to_string(),
                version: s.version.to_string(),
                source: s.source.to_string(),
                direct: self.roots.contains(&s.name),
                dependencies: s.dependencies.iter().map(|n| n.to_string()).collect(),
                dependents: self.dependents.get(&s.name).map(names).unwrap_or_default(),
            })
            .collect()
    }
}
