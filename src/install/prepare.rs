//! Preparing a plan: make sure the cache holds a verified, unpacked tree
//! for every skill the plan installs — from the cache, from a tarball made
//! while resolving, or fetched from its source, in parallel.

use crate::cache::{Cache, CacheError};
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::report::{Event, Reporter};
use crate::source::{check_identity, verify, SourceError, Sources, Verified};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use std::collections::HashMap;
use std::path::PathBuf;

/// How many fetches run at once.
pub const FETCH_CONCURRENCY: usize = 16;

/// Each needed checksum's tree in the cache, and whether it was there
/// without fetching.
pub type Prepared = HashMap<Checksum, (PathBuf, bool)>;

pub async fn prepare(
    cache: &Cache,
    sources: &Sources,
    needed: &[&LockedSkill],
    packed: &HashMap<Checksum, Vec<u8>>,
    reporter: &dyn Reporter,
) -> Result<Prepared, SourceError> {
    let mut out = HashMap::new();
    let mut work = Vec::new();
    for &s in needed {
        if let Some(tree) = cache.verified_tree(&s.checksum) {
            out.insert(s.checksum, (tree, true));
            continue;
        }
        // A tarball packed while resolving was made this run: not "from
        // cache". A cached tarball that no longer verifies is fetched again.
        let local = packed
            .get(&s.checksum)
            .map(|b| (b.clone(), false))
            .or_else(|| cache.read_tarball(&s.checksum).map(|b| (b, true)));
        work.push((s, local));
    }
    if work.is_empty() {
        return Ok(out);
    }
    let downloads = work
        .iter()
        .filter(|(s, local)| local.is_none() && matches!(s.source, LockedSource::Registry { .. }))
        .count();
    if downloads > 0 {
        reporter.downloads_starting(downloads);
    }
    // Each package is verified, unpacked and cached as soon as its bytes
    // are here, on the blocking pool, while other downloads go on: the
    // network and the disk work overlap instead of taking turns.
    let done: Vec<(Checksum, PathBuf, bool)> = stream::iter(work)
        .map(|(s, local)| async move {
            let mut verified = None;
            if let Some((bytes, cached)) = local {
                let locked = s.clone();
                if let Ok(v) = blocking(move || verify(&locked, bytes)).await {
                    verified = Some((v, cached));
                }
            }
            let (v, from_cache) = match verified {
                Some(v) => v,
                None => (fetch_one(sources, s, reporter).await?, false),
            };
            let (cache, locked) = (cache.clone(), s.clone());
            let tree = blocking(move || {
                // Unpack and check before caching the tarball, so a refused
                // package leaves nothing behind that a later run could trust.
                let tree = unpack(&cache, &locked, &v, &Limits::default())?;
                if !from_cache {
                    cache.store_tarball(&v)?;
                }
                Ok::<_, SourceError>(tree)
            })
            .await?;
            Ok::<_, SourceError>((s.checksum, tree, from_cache))
        })
        .buffer_unordered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    if downloads > 0 {
        reporter.downloads_finished();
    }
    for (sum, tree, from_cache) in done {
        out.insert(sum, (tree, from_cache));
    }
    Ok(out)
}

/// Runs CPU- and disk-bound work (hashing, gunzip, file creation) on the
/// blocking pool. A panic there is a bug and is re-raised here.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(t) => t,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Fetches one package; registry downloads are reported, and a yanked
/// locked version gets a warning (the lock still wins).
async fn fetch_one(
    sources: &Sources,
    s: &LockedSkill,
    reporter: &dyn Reporter,
) -> Result<Verified, SourceError> {
    let LockedSource::Registry { url } = &s.source else {
        return sources.fetch(s).await;
    };
    reporter.report(Event::Downloading {
        name: s.name.to_string(),
        version: s.version.to_string(),
    });
    let (tarball, versions) =
        futures_util::join!(sources.fetch(s), sources.registry.versions(url, &s.name));
    let tarball = tarball?;
    if let Ok(vs) = versions {
        if vs.iter().any(|v| v.vers == s.version && v.yanked) {
            reporter.report(Event::Warning {
                message: format!(
                    "{}@{} is yanked; installing it because the lock pins it",
                    s.name, s.version
                ),
            });
        }
    }
    reporter.report(Event::Downloaded {
        name: s.name.to_string(),
        bytes: tarball.bytes().len() as u64,
    });
    Ok(tarball)
}

/// Unpacks a verified tarball into the cache, refusing a registry package
/// whose `SKILL.md` is not the package the lock names.
fn unpack(
    cache: &Cache,
    s: &LockedSkill,
    v: &Verified,
    limits: &Limits,
) -> Result<PathBuf, SourceError> {
    cache
        .ensure_tree(v, limits, |dir| check_identity(s, dir))
        .map_err(|e| match e {
            CacheError::Unpack(source) => SourceError::Refused {
                package: format!("{}@{}", s.name, s.version),
                source,
            },
            e => e.into(),
        })
}
