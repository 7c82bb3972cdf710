//! Version selection: from the manifest and the old lock to the new lock.
//!
//! The old lock wins wherever it still satisfies the manifest, so
//! `install` changes nothing that does not need changing and needs no
//! network for what is locked. Only dependencies the lock lacks, that no
//! longer match, or that the caller asked to refresh (`update`, `add`) are
//! resolved again, all at once: registry ones to the highest non-yanked
//! matching version, git ones to the commit their ref points at now.

use crate::error::{Error, Result};
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile};
use crate::project::manifest::{Dependency, Manifest};
use crate::project::spec::GitRef;
use crate::project::Project;
use crate::report::Reporter;
use crate::source::{Request, Sources};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use std::collections::{BTreeSet, HashMap};

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
    fn wants(&self, name: &SkillName) -> bool {
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

/// How many dependencies resolve at once (index requests, git fetches;
/// git is further bounded by its own limit).
const RESOLVE_CONCURRENCY: usize = 16;

/// Whether the old lock entry still satisfies the manifest's dependency.
fn still_matches(
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
            },
            LockedSource::Git { url: u, commit },
        ) => {
            u.redacted() == url.redacted()
                && match reference {
                    Some(GitRef::Rev(r)) => commit.starts_with(r.as_str()),
                    _ => true,
                }
                && locked.path.as_deref() == path.as_deref()
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
    let mut lock = Lockfile::default();
    let mut jobs = Vec::new();
    for (name, dep) in &manifest.skills {
        let registry_url = match dep {
            Dependency::Registry { registry, .. } => Some(project.registry_url_or_locked(
                manifest,
                registry.as_deref(),
                old.get(name),
            )?),
            _ => None,
        };
        match old.get(name).filter(|_| !refresh.wants(name)) {
            Some(l) if still_matches(l, dep, registry_url.as_deref(), sources) => {
                lock.upsert(l.clone());
            }
            _ => jobs.push((name, dep, registry_url)),
        }
    }
    // `--locked` must not change the lock: say which entry is out of date
    // before anything goes to the network. (Path dependencies are packed
    // anyway; the caller compares their checksums with the lock.)
    if let Some(flag) = locked {
        if let Some((name, _, _)) = jobs
            .iter()
            .find(|(_, dep, _)| !matches!(dep, Dependency::Path { .. }))
        {
            let detail = match old.get(name) {
                None => format!("{name} is in skills.toml but not in skills.lock"),
                Some(l) => format!(
                    "{name} is locked at {} ({}), which skills.toml no longer allows",
                    l.version, l.source
                ),
            };
            return Err(Error::LockedMismatch { detail, flag });
        }
    }
    let resolved: Vec<_> = stream::iter(jobs)
        .map(|(name, dep, url)| async move {
            let req = Request {
                name: Some(name),
                dep,
                registry_url: url.as_deref(),
            };
            sources.resolve(req, reporter).await
        })
        .buffer_unordered(RESOLVE_CONCURRENCY)
        .try_collect()
        .await?;
    let mut packed = HashMap::new();
    for r in resolved {
        let kept = old
            .get(&r.locked.name)
            .and_then(|o| sources.path.as_locked(o, &r));
        let r = kept.unwrap_or(r);
        if let Some(bytes) = r.packed {
            packed.insert(r.locked.checksum, bytes);
        }
        lock.upsert(r.locked);
    }
    Ok(Resolved { lock, packed })
}
