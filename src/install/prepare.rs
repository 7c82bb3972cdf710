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
    let limits = Limits::default();
    let mut out = HashMap::new();
    let mut fetch = Vec::new();
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
            .or_else(|| cache.read_tarball(&s.checksum).map(|b| (b, true)))
            .and_then(|(bytes, cached)| verify(s, bytes).ok().map(|v| (v, cached)));
        match local {
            Some((v, cached)) => {
                let tree = unpack(cache, s, &v, &limits)?;
                if !cached {
                    cache.store_tarball(&v)?;
                }
                out.insert(s.checksum, (tree, cached));
            }
            None => fetch.push(s),
        }
    }
    if fetch.is_empty() {
        return Ok(out);
    }
    let downloads = fetch
        .iter()
        .filter(|s| matches!(s.source, LockedSource::Registry { .. }))
        .count();
    if downloads > 0 {
        reporter.downloads_starting(downloads);
    }
    let fetched: Vec<(&LockedSkill, Verified)> = stream::iter(fetch)
        .map(|s| async move { fetch_one(sources, s, reporter).await.map(|v| (s, v)) })
        .buffer_unordered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    if downloads > 0 {
        reporter.downloads_finished();
    }
    for (s, v) in fetched {
        // Unpack and check before caching the tarball, so a refused
        // package leaves nothing behind that a later run could trust.
        let tree = unpack(cache, s, &v, &limits)?;
        cache.store_tarball(&v)?;
        out.insert(s.checksum, (tree, false));
    }
    Ok(out)
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
