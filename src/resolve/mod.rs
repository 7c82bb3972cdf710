//! Version selection: from the manifest and the old lock to the new lock.
//!
//! The old lock wins wherever it still satisfies the manifest, so
//! `install` changes nothing that does not need changing and needs no
//! network for what is locked: when every skills.toml entry matches its
//! lock entry and the lock's graph below them is whole, the lock (less
//! what nothing needs any more) is the answer. Otherwise the skills and
//! what they depend on are collected level by level ([`collect`]), every
//! request of a level at once, and one version of each is solved for
//! ([`solve`]): registry skills among their index's versions, git ones at
//! the commit their ref points at now, locked ones kept as they are.
//! Kept skills are first held to their locked versions and dependencies;
//! only when that has no solution are they loaded in full and solved
//! again, so a conflict is always explained from the real requirements.

mod collect;
pub mod req;
pub mod solve;

use crate::error::{Error, Result};
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile};
use crate::project::manifest::{Dependency, Manifest};
use crate::project::spec::GitRef;
use crate::project::Project;
use crate::report::Reporter;
use crate::source::Sources;
use collect::Want;
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use std::collections::{BTreeSet, HashMap};

pub use collect::DependencyError;

/// Which locked entries may be replaced.
#[derive(Debug, Clone, Default)]
pub enum Refresh {
    /// Keep every lock entry that still matches (`install`).
    #[default]
    Nothing,
    /// Re-resolve these names (`add`, `update NAME`).
    Only(BTreeSet<SkillName>),
    /// Re-resolve everything (`update`).
    All,
}

impl Refresh {
    pub(crate) fn wants(&self, name: &SkillName) -> bool {
        match self {
            Refresh::Nothing => false,
            Refresh::Only(set) => set.contains(name),
            Refresh::All => true,
        }
    }
}

/// The new lock, and the trees made while resolving git, path and
/// well-known dependencies, by checksum (so installing them needs no
/// second export).
pub struct Resolved {
    pub lock: Lockfile,
    pub packed: HashMap<Checksum, Verified>,
}

/// Whether the old lock entry still satisfies the manifest's dependency.
pub(crate) fn still_matches(
    locked: &LockedSkill,
    dep: &Dependency,
    registry_url: Option<&str>,
    sources: &Sources,
) -> bool {
    match (dep, &locked.source) {
        (Dependency::Registry { req, .. }, LockedSource::Registry { url }) => {
            Some(url.as_str()) == registry_url && req.matches(&locked.version)
        }
        (
            Dependency::Git {
                url,
                reference,
                path,
                plugin,
                plugin_version,
            },
            LockedSource::Git { url: u, commit },
        ) => {
            u.redacted() == url.redacted()
                && match reference {
                    Some(GitRef::Rev(r)) => commit.starts_with(r.as_str()),
                    Some(r @ GitRef::Version(_)) => {
                        r.version_req().is_some_and(|q| q.matches(&locked.version))
                    }
                    _ => true,
                }
                && locked.path.as_deref() == path.as_deref()
                && locked.plugin.as_ref().map(|p| p.name.as_str()) == plugin.as_deref()
                && match (plugin_version, &locked.plugin) {
                    (None, _) => true,
                    (Some(req), Some(p)) => p.version.as_ref().is_some_and(|v| req.matches(v)),
                    (Some(_), None) => false,
                }
        }
        // A well-known skill stays pinned to its locked artifact and digest
        // until `update` re-reads the index.
        (Dependency::WellKnown { index }, LockedSource::WellKnown { index: i, .. }) => {
            index.index_candidates().contains(i)
        }
        // A path dependency is kept while its directory's fingerprint says
        // it still packs to the locked checksum; otherwise it is packed
        // again (the directory may have changed since it was locked).
        (Dependency::Path { path }, LockedSource::Path { path: p }) => {
            path == p && sources.path.unchanged(path, &locked.checksum)
        }
        _ => false,
    }
}

pub async fn resolve(
    project: &Project,
    manifest: &Manifest,
    sources: &Sources,
    reporter: &dyn Reporter,
    old: &Lockfile,
    refresh: &Refresh,
    locked: Option<&'static str>,
) -> Result<Resolved> {
    let mut roots = Vec::with_capacity(manifest.skills.len());
    let mut stale = None;
    for (name, dep) in &manifest.skills {
        let registry_url = match dep {
            Dependency::Registry { registry, .. } => Some(project.registry_url_or_locked(
                manifest,
                registry.as_deref(),
                old.get(name),
            )?),
            _ => None,
        };
        let kept = old.get(name).filter(|l| {
            !refresh.wants(name) && still_matches(l, dep, registry_url.as_deref(), sources)
        });
        // Path dependencies are packed anyway; the caller compares their
        // checksums with the lock.
        if kept.is_none() && stale.is_none() && !matches!(dep, Dependency::Path { .. }) {
            stale = Some(name);
        }
        roots.push((
            name.clone(),
            Want::Declared {
                dep: dep.clone(),
                registry_url,
            },
        ));
    }
    // `--locked` must not change the lock: say which entry is out of date
    // before anything goes to the network.
    if let (Some(flag), Some(name)) = (locked, stale) {
        let detail = match old.get(name) {
            None => format!("{name} is in skills.toml but not in skills.lock"),
            Some(l) => format!(
                "{name} is locked at {} ({}), which skills.toml no longer allows",
                l.version, l.source
            ),
        };
        return Err(Error::LockedMismatch { detail, flag });
    }
    if stale.is_none() {
        if let Some(lock) = lock_closure(manifest, old, refresh, sources) {
            return Ok(Resolved {
                lock,
                packed: HashMap::new(),
            });
        }
    }
    let cx = collect::Collect {
        project,
        manifest,
        sources,
        reporter,
        old,
        refresh,
    };
    let held = cx.run(&roots, collect::Kept::Held).await?;
    let done = match held.solve() {
        Ok(done) => done,
        Err(_) if held.held_any() && locked.is_none() => {
            let full = cx.run(&roots, collect::Kept::Loaded).await?;
            full.solve()?
        }
        Err(e) => return Err(e.into()),
    };
    // A skill the old lock records as signed stays signed.
    crate::source::registry::check_pins(old, &done.lock)?;
    Ok(done)
}

/// The old lock's entries reachable from skills.toml, when every one is
/// kept as it is: none asked to refresh, every local directory unchanged.
/// (The caller checked that each skills.toml entry matches its own.)
fn lock_closure(
    manifest: &Manifest,
    old: &Lockfile,
    refresh: &Refresh,
    sources: &Sources,
) -> Option<Lockfile> {
    let mut lock = Lockfile::default();
    let mut todo: Vec<&SkillName> = manifest.skills.keys().collect();
    while let Some(name) = todo.pop() {
        if lock.get(name).is_some() {
            continue;
        }
        let entry = old.get(name)?;
        if refresh.wants(name) {
            return None;
        }
        if let LockedSource::Path { path } = &entry.source {
            if !sources.path.unchanged(path, &entry.checksum) {
                return None;
            }
        }
        todo.extend(entry.dependencies.iter());
        lock.upsert(entry.clone());
    }
    Some(lock)
}
