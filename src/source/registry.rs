//! Registry sources: the sparse index (cached with `ETag`) and tarball
//! downloads, verified against the checksum the lock or index names.

use super::SourceError;
use crate::cache::Cache;
use crate::registry::client::{IndexResponse, RegistryClient};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::IndexVersion;
use std::collections::HashMap;
use std::sync::Mutex;

/// Largest tarball the client will download.
pub const MAX_DOWNLOAD: u64 = 10 * 1024 * 1024;

/// One client per registry URL, and the index entries already read in
/// this run (each index is fetched at most once per run).
pub struct Registries {
    cache: Cache,
    clients: Mutex<HashMap<String, RegistryClient>>,
    seen: Mutex<HashMap<(String, String), Vec<IndexVersion>>>,
    offline: bool,
}

impl Registries {
    pub fn new(cache: Cache, offline: bool) -> Self {
        Registries {
            cache,
            clients: Mutex::new(HashMap::new()),
            seen: Mutex::new(HashMap::new()),
            offline,
        }
    }

    fn client(&self, url: &str) -> Result<RegistryClient, SourceError> {
        if self.offline {
            return Err(SourceError::Offline(url.to_string()));
        }
        let mut clients = self
            .clients
            .lock()
            .map_err(|_| SourceError::Io("client cache poisoned".into()))?;
        if let Some(c) = clients.get(url) {
            return Ok(c.clone());
        }
        let c = RegistryClient::new(url, None).map_err(|e| SourceError::Registry(e.to_string()))?;
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
        let cached_etag = std::fs::read_to_string(&etag_path).ok();
        let cached_body = std::fs::read(&body_path).ok();
        let etag = cached_body.as_ref().and(cached_etag.as_deref());
        let client = self.client(url)?;
        let versions = match client
            .index(name.as_str(), etag)
            .await
            .map_err(|e| SourceError::Registry(e.to_string()))?
        {
            IndexResponse::NotModified => {
                let body = cached_body.unwrap_or_default();
                serde_json::from_slice::<skillpm_core::protocol::IndexFile>(&body)
                    .map_err(|e| {
                        SourceError::Registry(format!("cached index of {name} is corrupt: {e}"))
                    })?
                    .versions
            }
            IndexResponse::Fresh { index, etag, body } => {
                // Best effort: a failed or torn cache write only costs a
                // refetch (the body is parsed before use and the ETag is
                // dropped first), so no fsync here.
                let _ = std::fs::remove_file(&etag_path);
                if std::fs::create_dir_all(&dir).is_ok()
                    && crate::lockfile::replace_file(&body_path, &body).is_ok()
                {
                    if let Some(e) = etag {
                        let _ = crate::lockfile::replace_file(&etag_path, e.as_bytes());
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

    /// Downloads a tarball and verifies it against `expected`. A mismatch
    /// is always fatal and names the package and both checksums.
    pub async fn download(
        &self,
        url: &str,
        name: &SkillName,
        version: &semver::Version,
        expected: &Checksum,
    ) -> Result<Vec<u8>, SourceError> {
        let client = self.client(url)?;
        let bytes = client
            .download(name.as_str(), &version.to_string(), MAX_DOWNLOAD)
            .await
            .map_err(|e| SourceError::Registry(format!("downloading {name}@{version}: {e}")))?;
        let actual = Checksum::of_bytes(&bytes);
        if actual != *expected {
            return Err(SourceError::ChecksumMismatch {
                package: format!("{name}@{version}"),
                expected: *expected,
                actual,
            });
        }
        Ok(bytes)
    }
}
