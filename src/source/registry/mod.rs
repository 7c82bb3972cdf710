//! Registry sources: the sparse index (cached with `ETag`) and tarball
//! downloads; [`client`] speaks the HTTP protocol, [`credentials`] keeps
//! tokens.

pub mod client;
pub mod credentials;

use super::{Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::project::spec::mask_userinfo;
use crate::source::registry::client::{IndexResponse, RegistryClient, RegistryError};
use skillpm_core::name::SkillName;
use skillpm_core::protocol::IndexVersion;
use std::collections::HashMap;
use std::sync::Mutex;

/// Largest tarball the client will download.
pub const MAX_DOWNLOAD: u64 = 10 * 1024 * 1024;

/// One client per registry URL, and the index entries already read in
/// this run (each index is fetched at most once per run).
pub struct RegistrySource {
    cache: Cache,
    clients: Mutex<HashMap<String, RegistryClient>>,
    seen: Mutex<HashMap<(String, String), Vec<IndexVersion>>>,
    offline: bool,
}

impl RegistrySource {
    pub fn new(cache: Cache, offline: bool) -> Self {
        RegistrySource {
            cache,
            clients: Mutex::new(HashMap::new()),
            seen: Mutex::new(HashMap::new()),
            offline,
        }
    }

    fn client(&self, url: &str) -> Result<RegistryClient, SourceError> {
        if self.offline {
            return Err(SourceError::Offline(mask_userinfo(url)));
        }
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(url) {
            return Ok(c.clone());
        }
        let c = RegistryClient::new(url, None).map_err(SourceError::RegistryUrl)?;
        clients.insert(url.to_string(), c.clone());
        Ok(c)
    }

    /// Every version of `name`, revalidating the cached copy with the
    /// server (`If-None-Match`), so an unchanged index costs one 304.
    pub async fn versions(
        &self,
        url: &str,
        name: &SkillName,
    ) -> Result<Vec<IndexVersion>, SourceError> {
        let key = (url.to_string(), name.to_string());
        if let Some(v) = self.seen.lock().ok().and_then(|s| s.get(&key).cloned()) {
            return Ok(v);
        }
        let dir = self.cache.index_dir(url);
        let body_path = dir.join(format!("{name}.json"));
        let etag_path = dir.join(format!("{name}.etag"));
        // The cache is on disk where anything may have changed it.
        let cached_etag = skillpm_core::bounded::read_to_string(&etag_path, 1024).ok();
        let cached_body = skillpm_core::bounded::read(&body_path, client::MAX_JSON_BYTES).ok();
        let etag = cached_body.as_ref().and(cached_etag.as_deref());
        let client = self.client(url)?;
        let versions = match client
            .index(name.as_str(), etag)
            .await
            .map_err(registry_err(format!("reading the index of {name}")))?
        {
            IndexResponse::NotModified => {
                let body = cached_body.unwrap_or_default();
                serde_json::from_slice::<skillpm_core::protocol::IndexFile>(&body)
                    .map_err(|source| SourceError::CorruptIndex {
                        name: name.to_string(),
                        source,
                    })?
                    .versions
            }
            IndexResponse::Fresh { index, etag, body } => {
                // Best effort: a failed or torn cache write only costs a
                // refetch (the body is parsed before use and the ETag is
                // dropped first), so no fsync here.
                let _ = std::fs::remove_file(&etag_path);
                if std::fs::create_dir_all(&dir).is_ok()
                    && crate::fs::replace_file(&body_path, &body).is_ok()
                {
                    if let Some(e) = etag {
                        let _ = crate::fs::replace_file(&etag_path, e.as_bytes());
                    }
                }
                index.versions
            }
        };
        if let Ok(mut s) = self.seen.lock() {
            s.insert(key, versions.clone());
        }
        Ok(versions)
    }
}

/// Wraps a client error with what was being done.
fn registry_err(context: String) -> impl FnOnce(RegistryError) -> SourceError {
    move |source| SourceError::Registry { context, source }
}

impl Source for RegistrySource {
    /// The highest non-yanked version matching the requirement.
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let (Dependency::Registry { req: wanted, .. }, Some(name), Some(url)) =
            (req.dep, req.name, req.registry_url)
        else {
            unreachable!("RegistrySource is handed registry dependencies with name and URL")
        };
        let versions = self.versions(url, name).await?;
        let best = versions
            .iter()
            .filter(|v| !v.yanked && wanted.matches(&v.vers))
            .max_by(|a, b| a.vers.cmp(&b.vers));
        let Some(best) = best else {
            let mut available: Vec<String> = versions
                .iter()
                .map(|v| {
                    if v.yanked {
                        format!("{} (yanked)", v.vers)
                    } else {
                        v.vers.to_string()
                    }
                })
                .collect();
            if available.is_empty() {
                available.push("none".into());
            }
            return Err(SourceError::NoMatch {
                name: name.to_string(),
                req: wanted.to_string(),
                available: available.join(", "),
            });
        };
        Ok(Resolution {
            locked: LockedSkill {
                name: name.clone(),
                version: best.vers.clone(),
                source: LockedSource::Registry {
                    url: url.to_string(),
                },
                checksum: best.cksum,
                path: None,
            },
            packed: None,
        })
    }

    async fn fetch(&self, locked: &LockedSkill) -> Result<Vec<u8>, SourceError> {
        let LockedSource::Registry { url } = &locked.source else {
            unreachable!("RegistrySource is only handed registry packages")
        };
        let (name, version) = (&locked.name, &locked.version);
        self.client(url)?
            .download(name.as_str(), &version.to_string(), MAX_DOWNLOAD)
            .await
            .map_err(registry_err(format!("downloading {name}@{version}")))
    }
}
