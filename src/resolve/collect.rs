//! Collecting what the solver chooses from: the skills reachable from
//! skills.toml, one level of the graph at a time, every request of a level
//! sent together, so a deep graph costs round trips per level, not per
//! skill.
//!
//! A registry skill brings every version its index lists, with each
//! version's dependencies; any other skill is pinned by its source and
//! brings the dependencies its `skill.toml` declares. A skill the old lock
//! still satisfies is either held as locked (its version and its recorded
//! edges, no request at all) or, when holding everything had no solution,
//! loaded in full with its locked version preferred.

use super::req::{self, Set};
use super::solve::{Candidate, NoSolution, Universe};
use super::{still_matches, Refresh, Resolved};
use crate::error::{Error, Result};
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile};
use crate::project::manifest::{Dependency, Manifest};
use crate::project::package::{PackageManifest, PackageManifestError};
use crate::project::spec::GitRef;
use crate::project::Project;
use crate::report::Reporter;
use crate::source::{Offer, Request, Sources};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use semver::{Version, VersionReq};
use skillpm_core::checksum::Verified;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::IndexVersion;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How many skills of one level are loaded at once when each may mean
/// a download (git fetches, which are further bounded by their own
/// limit; well-known archives; local trees to pack).
const CONCURRENCY: usize = 16;

/// How many registry index reads of one level are in flight at once. An
/// index file is small and bounded, and over HTTP/2 the reads share one
/// connection (the server's stream limit queues the rest), so a level
/// costs one round trip, not one per 16 packages (BENCHMARKS.md,
/// "deps_registry.py").
const INDEX_CONCURRENCY: usize = 256;

/// The most skills one graph may hold: packages choose what else is
/// fetched, so a hostile one must not be able to fan out without end.
pub const MAX_GRAPH: usize = 10_000;

/// How skills the old lock still satisfies are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kept {
    /// As locked: one version, the lock's edges; no request.
    Held,
    /// In full, the locked version preferred.
    Loaded,
}

/// Why a skill is wanted, as one edge of the graph says it.
// One per edge, short-lived; boxing `dep` would end the patterns that
// match through it (`dep: Dependency::Registry { .. }`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub(super) enum Want {
    /// As skills.toml or a package declares it.
    Declared {
        dep: Dependency,
        registry_url: Option<String>,
    },
    /// An edge the old lock records from a skill held as locked.
    Locked,
}

impl Want {
    /// Whether loading it reads a registry's index (and nothing more).
    fn reads_index(&self) -> bool {
        matches!(
            self,
            Want::Declared {
                dep: Dependency::Registry { .. },
                ..
            }
        )
    }
}

/// A dependency graph that cannot be installed as declared.
#[derive(Debug, thiserror::Error)]
pub enum DependencyError {
    #[error("no versions of the skills satisfy every requirement:\n{0}")]
    NoSolution(#[from] NoSolution),
    #[error("`{name}` is wanted from {first} by {first_by} and from {second} by {second_by}; a project installs each skill from one source")]
    TwoOrigins {
        name: SkillName,
        first: String,
        first_by: String,
        second: String,
        second_by: String,
    },
    #[error("{skill} ({origin}) names `{dependency}` by path; only a skill from git or a local directory has siblings to name")]
    PathFromElsewhere {
        skill: SkillName,
        origin: String,
        dependency: SkillName,
    },
    #[error("{skill}: the path of `{dependency}` ({path}) leaves the repository")]
    PathOutsideRepository {
        skill: SkillName,
        dependency: SkillName,
        path: String,
    },
    #[error("{skill} ({origin}) names `{dependency}` at {target}, on this machine; only a skill from this machine may")]
    LocalFromRemote {
        skill: SkillName,
        origin: String,
        dependency: SkillName,
        target: String,
    },
    #[error("the dependency graph holds more than {MAX_GRAPH} skills; refusing to fetch more")]
    TooLarge,
    #[error("{skill}: {source}")]
    Manifest {
        skill: SkillName,
        #[source]
        source: PackageManifestError,
    },
}

/// What one collection needs from the run.
pub(super) struct Collect<'a> {
    pub project: &'a Project,
    pub manifest: &'a Manifest,
    pub sources: &'a Sources,
    pub reporter: &'a dyn Reporter,
    pub old: &'a Lockfile,
    pub refresh: &'a Refresh,
}

/// One skill as collected.
enum Node {
    Registry {
        url: String,
        versions: Vec<IndexVersion>,
        prefer: Option<Version>,
    },
    Pinned {
        locked: Box<LockedSkill>,
        packed: Option<Verified>,
        deps: Vec<(SkillName, Want)>,
        held: bool,
    },
}

/// Everything collected, ready to solve.
pub(super) struct Collected<'a> {
    roots: Vec<(SkillName, Want)>,
    nodes: BTreeMap<SkillName, Node>,
    /// Every registry requirement seen per skill: they decide which
    /// pre-releases may be chosen.
    reqs: HashMap<SkillName, Vec<VersionReq>>,
    old: &'a Lockfile,
}

/// Who asked for a skill, for messages.
fn by(parent: Option<&SkillName>) -> String {
    match parent {
        Some(p) => p.to_string(),
        None => "skills.toml".to_string(),
    }
}

impl<'a> Collect<'a> {
    pub async fn run(&self, roots: &[(SkillName, Want)], kept: Kept) -> Result<Collected<'a>> {
        let mut origins: HashMap<SkillName, (Option<SkillName>, Want)> = HashMap::new();
        let mut nodes = BTreeMap::new();
        let mut reqs: HashMap<SkillName, Vec<VersionReq>> = HashMap::new();
        let mut level: Vec<(Option<SkillName>, SkillName, Want)> = roots
            .iter()
            .map(|(n, w)| (None, n.clone(), w.clone()))
            .collect();
        while !level.is_empty() {
            let mut jobs = Vec::new();
            for (parent, name, want) in level.drain(..) {
                if let Want::Declared {
                    dep: Dependency::Registry { req, .. },
                    ..
                } = &want
                {
                    reqs.entry(name.clone()).or_default().push(req.clone());
                }
                match origins.get(&name) {
                    Some((first_parent, first)) => {
                        if !self.same_origin(&name, first, &want) {
                            return Err(DependencyError::TwoOrigins {
                                first: self.origin(&name, first),
                                first_by: by(first_parent.as_ref()),
                                second: self.origin(&name, &want),
                                second_by: by(parent.as_ref()),
                                name,
                            }
                            .into());
                        }
                    }
                    None => {
                        if origins.len() >= MAX_GRAPH {
                            return Err(DependencyError::TooLarge.into());
                        }
                        origins.insert(name.clone(), (parent, want.clone()));
                        jobs.push((name, want));
                    }
                }
            }
            let (reads, others): (Vec<_>, Vec<_>) =
                jobs.into_iter().partition(|(_, want)| want.reads_index());
            let load = |(name, want): (SkillName, Want)| async move {
                let node = self.load(&name, &want, kept).await?;
                Ok::<_, Error>((name, node))
            };
            let (mut loaded, others): (Vec<(SkillName, Node)>, Vec<_>) = futures_util::try_join!(
                stream::iter(reads)
                    .map(load)
                    .buffer_unordered(INDEX_CONCURRENCY)
                    .try_collect(),
                stream::iter(others)
                    .map(load)
                    .buffer_unordered(CONCURRENCY)
                    .try_collect(),
            )?;
            loaded.extend(others);
            // Completion order varies; the next level (and so which edge
            // names a skill first) must not.
            loaded.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, node) in loaded {
                match &node {
                    Node::Registry { url, versions, .. } => {
                        let mut seen = BTreeSet::new();
                        for d in versions.iter().flat_map(|v| &v.deps) {
                            if seen.insert((&d.name, d.req.to_string())) {
                                let dep = Dependency::Registry {
                                    req: d.req.clone(),
                                    registry: None,
                                };
                                let registry_url = Some(url.clone());
                                let want = Want::Declared { dep, registry_url };
                                level.push((Some(name.clone()), d.name.clone(), want));
                            }
                        }
                    }
                    Node::Pinned { deps, .. } => {
                        for (d, want) in deps {
                            level.push((Some(name.clone()), d.clone(), want.clone()));
                        }
                    }
                }
                nodes.insert(name, node);
            }
        }
        Ok(Collected {
            roots: roots.to_vec(),
            nodes,
            reqs,
            old: self.old,
        })
    }

    async fn load(&self, name: &SkillName, want: &Want, kept: Kept) -> Result<Node> {
        let (dep, registry_url) = match want {
            Want::Locked => {
                let l = self
                    .old
                    .get(name)
                    .expect("a held skill's edges end in the lock");
                return Ok(held(l));
            }
            Want::Declared { dep, registry_url } => (dep, registry_url.as_deref()),
        };
        let old = self.old.get(name).filter(|l| {
            !self.refresh.wants(name) && still_matches(l, dep, registry_url, self.sources)
        });
        if let (Some(l), Kept::Held) = (old, kept) {
            return Ok(held(l));
        }
        let req = Request {
            name: Some(name),
            dep,
            registry_url,
        };
        if let (Some(l), Dependency::Git { .. } | Dependency::WellKnown { .. }) = (old, dep) {
            // Kept at its commit or artifact, whose skill.toml is the one
            // read when it was locked: a lock recording no edges means
            // none, and only one recording some needs the tree again.
            let deps = match l.dependencies.is_empty() {
                true => Vec::new(),
                false => self.declared(l, None).await?,
            };
            return Ok(pinned(l.clone(), None, deps));
        }
        match self.sources.offer(req, self.reporter).await? {
            Offer::Versions(versions) => Ok(Node::Registry {
                url: registry_url.unwrap_or_default().to_string(),
                versions,
                prefer: old.map(|l| l.version.clone()),
            }),
            Offer::Pinned(r) => {
                let r = *r;
                let r = self
                    .old
                    .get(name)
                    .and_then(|o| self.sources.path.as_locked(o, &r))
                    .unwrap_or(r);
                let deps = self.declared(&r.locked, r.packed.as_ref()).await?;
                Ok(pinned(r.locked, r.packed, deps))
            }
        }
    }

    /// The dependencies `skill`'s `skill.toml` declares, read from `tree`
    /// or, without it, from the package as the cache holds it.
    async fn declared(
        &self,
        skill: &LockedSkill,
        tree: Option<&Verified>,
    ) -> Result<Vec<(SkillName, Want)>> {
        let fetched;
        let tree = match tree {
            Some(t) => t,
            None => {
                fetched = self.sources.fetch(skill).await?.tree;
                &fetched
            }
        };
        let github_base = self
            .manifest
            .github_base
            .as_deref()
            .unwrap_or(crate::project::spec::DEFAULT_GITHUB_BASE);
        let manifest = PackageManifest::of_package(
            tree,
            &skill.origin(),
            &self.manifest.registries,
            github_base,
        )
        .map_err(|source| DependencyError::Manifest {
            skill: skill.name.clone(),
            source,
        })?;
        let Some(manifest) = manifest else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(manifest.dependencies.len());
        for (name, dep) in manifest.dependencies {
            let want = self.as_wanted(skill, &name, dep)?;
            out.push((name, want));
        }
        Ok(out)
    }

    /// A package's dependency as the project wants it: a registry one
    /// from the project's registry of that name, a sibling by path at the
    /// same commit of the same repository (or beside a local skill).
    fn as_wanted(&self, of: &LockedSkill, name: &SkillName, dep: Dependency) -> Result<Want> {
        let dep = match dep {
            Dependency::Registry { req, registry } => {
                let url = self
                    .project
                    .registry_url(self.manifest, registry.as_deref())?;
                return Ok(Want::Declared {
                    dep: Dependency::Registry { req, registry },
                    registry_url: Some(url),
                });
            }
            Dependency::Path { path } => match &of.source {
                LockedSource::Git { url, commit } => {
                    let outside = || DependencyError::PathOutsideRepository {
                        skill: of.name.clone(),
                        dependency: name.clone(),
                        path: path.clone(),
                    };
                    let sub =
                        join(of.path.as_deref().unwrap_or(""), &path, false).ok_or_else(outside)?;
                    Dependency::Git {
                        url: url.clone(),
                        reference: Some(GitRef::Rev(commit.clone())),
                        path: (!sub.is_empty()).then_some(sub),
                        plugin: None,
                        plugin_version: None,
                    }
                }
                LockedSource::Path { path: base } => Dependency::Path {
                    path: join(base, &path, true).unwrap_or(path),
                },
                _ => {
                    return Err(DependencyError::PathFromElsewhere {
                        skill: of.name.clone(),
                        origin: of.origin(),
                        dependency: name.clone(),
                    }
                    .into())
                }
            },
            other => other,
        };
        // A package from elsewhere may not point the project at this
        // machine's repositories or services, as a cloned repository's
        // lock may not (SECURITY.md, "A repository's files are not the
        // user's word"); a sibling by path stays in its own repository.
        let target = match &dep {
            Dependency::Git { url, .. } if url.is_local() => Some(url.redacted()),
            Dependency::WellKnown { index } if index.is_local() => Some(index.to_string()),
            _ => None,
        };
        if let (Some(target), false) = (target, is_local(&of.source)) {
            return Err(DependencyError::LocalFromRemote {
                skill: of.name.clone(),
                origin: of.origin(),
                dependency: name.clone(),
                target,
            }
            .into());
        }
        Ok(Want::Declared {
            dep,
            registry_url: None,
        })
    }

    fn same_origin(&self, name: &SkillName, a: &Want, b: &Want) -> bool {
        match (a, b) {
            (Want::Locked, Want::Locked) => true,
            (
                Want::Declared {
                    dep: da,
                    registry_url: ua,
                },
                Want::Declared {
                    dep: db,
                    registry_url: ub,
                },
            ) => match (da, db) {
                (Dependency::Registry { .. }, Dependency::Registry { .. }) => ua == ub,
                _ => da.same_origin(db),
            },
            (Want::Locked, Want::Declared { dep, registry_url })
            | (Want::Declared { dep, registry_url }, Want::Locked) => self
                .old
                .get(name)
                .is_some_and(|l| from_same(l, dep, registry_url)),
        }
    }

    fn origin(&self, name: &SkillName, want: &Want) -> String {
        match want {
            Want::Declared {
                dep: Dependency::Registry { .. },
                registry_url: Some(url),
            } => format!("the registry {url}"),
            Want::Declared { dep, .. } => dep.origin(),
            Want::Locked => self
                .old
                .get(name)
                .map_or_else(String::new, LockedSkill::origin),
        }
    }
}

/// Whether a locked entry came from where `dep` points (what picks the
/// version aside).
fn from_same(l: &LockedSkill, dep: &Dependency, registry_url: &Option<String>) -> bool {
    match (dep, &l.source) {
        (Dependency::Registry { .. }, LockedSource::Registry { url }) => {
            registry_url.as_deref() == Some(url.as_str())
        }
        (Dependency::Git { url, path, .. }, LockedSource::Git { url: u, .. }) => {
            u.redacted() == url.redacted() && l.path == *path
        }
        (Dependency::Path { path }, LockedSource::Path { path: p }) => path == p,
        (Dependency::WellKnown { index }, LockedSource::WellKnown { index: i, .. }) => {
            index.index_candidates().contains(i)
        }
        _ => false,
    }
}

/// Whether a skill came from this machine: a local directory, or a git
/// repository or site that [`GitUrl::is_local`] or
/// [`WellKnownUrl::is_local`] places here.
///
/// [`GitUrl::is_local`]: crate::project::spec::GitUrl::is_local
/// [`WellKnownUrl::is_local`]: crate::project::spec::WellKnownUrl::is_local
fn is_local(source: &LockedSource) -> bool {
    match source {
        LockedSource::Path { .. } => true,
        LockedSource::Git { url, .. } => url.is_local(),
        LockedSource::WellKnown { index, .. } => index.is_local(),
        LockedSource::Registry { .. } => false,
    }
}

fn held(l: &LockedSkill) -> Node {
    let deps = l
        .dependencies
        .iter()
        .map(|d| (d.clone(), Want::Locked))
        .collect();
    Node::Pinned {
        locked: Box::new(l.clone()),
        packed: None,
        deps,
        held: true,
    }
}

fn pinned(locked: LockedSkill, packed: Option<Verified>, deps: Vec<(SkillName, Want)>) -> Node {
    Node::Pinned {
        locked: Box::new(locked),
        packed,
        deps,
        held: false,
    }
}

/// `rel` (a `/`-separated relative path) from the directory `base`,
/// resolved lexically. Inside a repository (`keep_up` false) it may not
/// climb above the root; a local path may.
fn join(base: &str, rel: &str, keep_up: bool) -> Option<String> {
    if rel.starts_with('/') || rel.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut ups = 0usize;
    for seg in base.split('/').chain(rel.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    if !keep_up {
                        return None;
                    }
                    ups += 1;
                }
            }
            s => parts.push(s),
        }
    }
    let mut out: Vec<&str> = std::iter::repeat_n("..", ups).collect();
    out.extend(parts);
    Some(out.join("/"))
}

impl Collected<'_> {
    /// Whether a kept skill was held as locked (so a failure may be the
    /// holding's, not the requirements').
    pub fn held_any(&self) -> bool {
        self.nodes
            .values()
            .any(|n| matches!(n, Node::Pinned { held: true, .. }))
    }

    fn range(&self, target: &SkillName, want: &Want) -> Set {
        match want {
            Want::Declared {
                dep: Dependency::Registry { req, .. },
                ..
            } => req::ranges(req),
            Want::Declared {
                dep:
                    Dependency::Git {
                        reference: Some(r @ GitRef::Version(_)),
                        ..
                    },
                ..
            } => r.version_req().map_or_else(Set::full, |q| req::ranges(&q)),
            Want::Declared { .. } => Set::full(),
            Want::Locked => self
                .old
                .get(target)
                .map_or_else(Set::empty, |l| Set::singleton(l.version.clone())),
        }
    }

    /// Solves, and makes the lock of the chosen versions.
    pub fn solve(&self) -> Result<Resolved, DependencyError> {
        let mut universe = Universe {
            root: self
                .roots
                .iter()
                .map(|(n, w)| (n.clone(), self.range(n, w)))
                .collect(),
            ..Universe::default()
        };
        for (name, node) in &self.nodes {
            let candidates = match node {
                Node::Registry {
                    versions, prefer, ..
                } => {
                    let reqs = self.reqs.get(name).map_or(&[][..], Vec::as_slice);
                    let mut offered: Vec<&IndexVersion> = versions
                        .iter()
                        .filter(|v| {
                            Some(&v.vers) == prefer.as_ref()
                                || (!v.yanked
                                    && (v.vers.pre.is_empty()
                                        || req::allows_pre(reqs.iter(), &v.vers)))
                        })
                        .collect();
                    offered.sort_by(|a, b| {
                        let first = |v: &Version| Some(v) == prefer.as_ref();
                        first(&b.vers)
                            .cmp(&first(&a.vers))
                            .then_with(|| b.vers.cmp(&a.vers))
                    });
                    offered
                        .into_iter()
                        .map(|v| Candidate {
                            version: v.vers.clone(),
                            deps: v
                                .deps
                                .iter()
                                .map(|d| (d.name.clone(), req::ranges(&d.req)))
                                .collect(),
                        })
                        .collect()
                }
                Node::Pinned { locked, deps, .. } => vec![Candidate {
                    version: locked.version.clone(),
                    deps: deps
                        .iter()
                        .map(|(n, w)| (n.clone(), self.range(n, w)))
                        .collect(),
                }],
            };
            universe.skills.insert(name.clone(), candidates);
        }
        let chosen = universe.solve()?;
        let mut lock = Lockfile::default();
        let mut packed = HashMap::new();
        for (name, version) in chosen {
            let entry = match &self.nodes[&name] {
                Node::Registry { url, versions, .. } => {
                    let v = versions
                        .iter()
                        .find(|v| v.vers == version)
                        .expect("the solver chooses among the offered versions");
                    LockedSkill {
                        name: name.clone(),
                        version,
                        source: LockedSource::Registry { url: url.clone() },
                        checksum: v.cksum,
                        path: None,
                        tree: None,
                        dependencies: edges(&name, v.deps.iter().map(|d| &d.name)),
                        // Verified when the index was read
                        // (`RegistrySource::versions`).
                        signed_by: v.sig.as_ref().map(|s| s.keyid.clone()),
                        plugin: None,
                    }
                }
                Node::Pinned {
                    locked,
                    packed: tree,
                    deps,
                    ..
                } => {
                    if let Some(t) = tree {
                        packed.insert(locked.checksum, t.clone());
                    }
                    LockedSkill {
                        dependencies: edges(&name, deps.iter().map(|(d, _)| d)),
                        ..(**locked).clone()
                    }
                }
            };
            lock.upsert(entry);
        }
        Ok(Resolved { lock, packed })
    }
}

/// A lock entry's edges: sorted, unique, never to itself.
fn edges<'n>(of: &SkillName, names: impl Iterator<Item = &'n SkillName>) -> Vec<SkillName> {
    let set: BTreeSet<&SkillName> = names.filter(|n| *n != of).collect();
    set.into_iter().cloned().collect()
}

impl From<DependencyError> for Error {
    fn from(e: DependencyError) -> Self {
        Error::Dependency(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn sibling_paths_resolve_lexically_and_stay_in_the_repository() {
        assert_eq!(
            join("skills/a", "../helper", false).as_deref(),
            Some("skills/helper")
        );
        assert_eq!(
            join("skills/a", "./x/../y", false).as_deref(),
            Some("skills/a/y")
        );
        assert_eq!(join("a", "..", false).as_deref(), Some(""));
        assert_eq!(join("a", "../..", false), None);
        assert_eq!(join("a", "/etc", false), None);
        assert_eq!(join("./vendor/a", "../../b", true).as_deref(), Some("b"));
        assert_eq!(join("vendor", "../../b", true).as_deref(), Some("../b"));
    }
}
