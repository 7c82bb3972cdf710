//! Agent Skills discovery via well-known URIs (RFC v0.2.0, and the legacy
//! v0.1.0 layout).
//!
//! A site publishes `/.well-known/agent-skills/index.json`:
//! `{"$schema": ..., "skills": [{name, type, description, url, digest}]}`
//! where `type` is `skill-md` (the artifact is one `SKILL.md`) or
//! `archive` (a `.tar.gz` or `.zip` of the skill directory). `url` is
//! resolved against the index URL (RFC 3986). The legacy layout,
//! `/.well-known/skills/index.json`, lists `files` per skill instead, served
//! under `{index dir}/{name}/`; entries may carry a per-file `digest`, and
//! a `package: {url, digest}` archive is used when present.
//!
//! Everything here is untrusted: the index and every artifact are read
//! with a cap, only `https://` (and `http://` to loopback) is ever
//! fetched, redirects included, and an artifact's digest is checked (in
//! [`super::verify`]) before a single byte of it is unpacked. Archives go
//! through the hardened unpacker; then the tree is packed
//! deterministically like a git skill, so the lock's `checksum` proves the
//! installed tree and its `digest` proves what the site served.

mod client;
mod error;
mod index;
mod materialize;

pub use error::WellKnownError;
pub use index::{parse_index, Artifact, EntryError, Index, IndexError, Listed};

use super::{memo, Memo};
use super::{verify, Package, Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::project::spec::WellKnownUrl;
use skillpm_core::archive::{self, Limits};
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use skillpm_core::text::sanitize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Largest index accepted.
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// Largest artifact (archive, or all files of a legacy skill together).
pub const MAX_ARTIFACT_BYTES: u64 = 10 * 1024 * 1024;

/// Well-known sources: one HTTP client, each index read at most once per
/// run.
pub struct WellKnownSource {
    cache: Cache,
    offline: bool,
    limits: Limits,
    /// For URLs that name a host by DNS or a remote address.
    http: OnceCell<reqwest::Client>,
    /// For URLs that name this machine by literal (`127.0.0.1`,
    /// `localhost`).
    http_local: OnceCell<reqwest::Client>,
    /// Index URL → the index there (`None`: 404), read once per run.
    indexes: Memo<Option<Arc<Index>>>,
    /// Resolutions of this run: `add` resolves to learn what it adds, then
    /// installs the same, with one download.
    resolved: Memo<Resolution>,
}

impl WellKnownSource {
    pub fn new(cache: Cache, offline: bool) -> Self {
        WellKnownSource {
            cache,
            offline,
            limits: Limits {
                max_compressed: MAX_ARTIFACT_BYTES,
                ..Limits::default()
            },
            http: OnceCell::new(),
            http_local: OnceCell::new(),
            indexes: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// The index for `site`: the URL itself if it names an `index.json`,
    /// else the RFC location, then the legacy one. Read once per run.
    pub async fn discover(&self, site: &WellKnownUrl) -> Result<Arc<Index>, SourceError> {
        let candidates = site.index_candidates();
        for url in &candidates {
            if let Some(index) = self.index_at(url).await? {
                return Ok(index);
            }
        }
        let tried: Vec<String> = candidates
            .iter()
            .map(|u| sanitize(u.as_str()).into_owned())
            .collect();
        Err(WellKnownError::NoIndex {
            tried: tried.join(" or "),
        }
        .into())
    }

    /// The index at exactly `url`, or `None` when the server has none
    /// there; each URL is read at most once per run.
    async fn index_at(&self, url: &WellKnownUrl) -> Result<Option<Arc<Index>>, SourceError> {
        let cell = memo(&self.indexes, url.to_string());
        cell.get_or_try_init(|| async {
            let Some(body) = self.get(url, MAX_INDEX_BYTES).await? else {
                return Ok(None);
            };
            let index = parse_index(url, &body).map_err(|source| WellKnownError::Index {
                url: sanitize(url.as_str()).into_owned(),
                source,
            })?;
            Ok(Some(Arc::new(index)))
        })
        .await
        .cloned()
    }

    /// The digest `index` lists for `name` now, for `outdated`: `None`
    /// when the skill is gone or, for a legacy entry without per-file
    /// digests, when only a download would tell.
    pub async fn listed_digest(
        &self,
        index: &WellKnownUrl,
        name: &SkillName,
    ) -> Result<Option<Checksum>, SourceError> {
        let idx = self.discover(index).await?;
        Ok(match idx.get(name).map(|l| &l.artifact) {
            Some(Artifact::Single { digest, .. }) => Some(*digest),
            Some(Artifact::Files { files, .. }) => files
                .iter()
                .map(|(p, d)| d.map(|d| (p.clone(), d)))
                .collect::<Option<Vec<_>>>()
                .map(|all| verify::files_digest(&all)),
            None => None,
        })
    }
}

impl Source for WellKnownSource {
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let Dependency::WellKnown { index } = req.dep else {
            unreachable!("WellKnownSource is only handed well-known dependencies")
        };
        let Some(name) = req.name else {
            return Err(WellKnownError::Unnamed {
                index: sanitize(index.as_str()).into_owned(),
            }
            .into());
        };
        let cell = memo(&self.resolved, format!("{index}#{name}"));
        cell.get_or_try_init(|| self.resolve_uncached(index, name))
            .await
            .cloned()
    }

    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        self.fetch_locked(locked).await
    }
}

impl WellKnownSource {
    async fn resolve_uncached(
        &self,
        index: &WellKnownUrl,
        name: &SkillName,
    ) -> Result<Resolution, SourceError> {
        let idx = self.discover(index).await?;
        let listed = idx.get(name).ok_or_else(|| WellKnownError::NotListed {
            index: sanitize(idx.url.as_str()).into_owned(),
            name: name.clone(),
        })?;
        let m = self.materialize(name, &listed.artifact, None).await?;
        Ok(Resolution {
            locked: LockedSkill {
                name: name.clone(),
                version: m.version,
                source: LockedSource::WellKnown {
                    index: idx.url.clone(),
                    artifact: m.artifact,
                    digest: m.digest,
                },
                checksum: *m.tree.checksum(),
                path: None,
                tree: None,
                dependencies: Vec::new(),
                signed_by: None,
                plugin: None,
            },
            packed: Some(m.tree),
        })
    }

    async fn fetch_locked(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::WellKnown {
            index,
            artifact,
            digest,
        } = &locked.source
        else {
            unreachable!("WellKnownSource is only handed well-known packages")
        };
        // Fetched by the locked URL; only a legacy skill (a list of files,
        // locked as its directory URL) needs its index again, for the list.
        let art = if !artifact.as_url().path().ends_with('/') {
            Artifact::Single {
                url: artifact.clone(),
                digest: *digest,
            }
        } else {
            let idx = self.discover(index).await?;
            match idx.get(&locked.name).map(|l| &l.artifact) {
                Some(a @ Artifact::Files { .. }) => a.clone(),
                _ => {
                    return Err(WellKnownError::NoLongerFiles {
                        index: sanitize(index.as_str()).into_owned(),
                        name: locked.name.clone(),
                    }
                    .into())
                }
            }
        };
        // An artifact that is a canonical pack (a skillpm-registry
        // download, a `skillpm pack` output) holds the locked tree's tar,
        // gzipped: read in memory, it is the package, with no trip through
        // a directory. (A lock from before trees were locked by their tar
        // names the artifact itself: digest == checksum.)
        if let Artifact::Single { url, .. } = &art {
            let bytes = self.get_found(url, MAX_ARTIFACT_BYTES).await?;
            verify::verify_artifact(&locked.name, url.as_str(), digest, &bytes)?;
            if *digest == locked.checksum {
                return Ok(Package::Downloaded(bytes, None));
            }
            let tree = archive::unpack_to_memory(&bytes, &self.limits)
                .ok()
                .and_then(|entries| archive::tar_entries(entries).ok())
                .map(Verified::of);
            if let Some(tree) = tree.filter(|t| *t.checksum() == locked.checksum) {
                return Ok(Package::Made(tree));
            }
            let m = self.unpack_single(&locked.name, url, *digest, bytes)?;
            return Ok(Package::Made(m.tree));
        }
        let m = self.materialize(&locked.name, &art, Some(digest)).await?;
        Ok(Package::Made(m.tree))
    }
}
