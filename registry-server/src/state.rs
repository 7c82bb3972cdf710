//! What every handler shares: the stores, upload limits, the public URL
//! and a cache of checksums already served.

use crate::store::{BlobStore, MetaStore};
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Cheap to clone: axum clones the state into every request.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: Arc<dyn MetaStore>,
    pub blobs: Arc<dyn BlobStore>,
    /// Local scratch space for unpacking uploads (never shared).
    pub scratch: std::path::PathBuf,
    pub limits: Limits,
    pub max_upload: u64,
    /// URL clients should use: `--public-url`, else the bound address;
    /// `None` when bound to an unspecified address without `--public-url`
    /// (never derived from a request).
    pub base_url: Option<String>,
    /// `name@version` → checksum of versions already served. A published
    /// version's bytes never change (republishing is 409, yanking keeps
    /// downloads), so an entry can never be stale; it spares the metadata
    /// store one query per download.
    pub checksums: ChecksumCache,
}

impl AppState {
    pub fn new(inner: Inner) -> Self {
        AppState(Arc::new(inner))
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// Bounded: past [`ChecksumCache::MAX`] entries it starts over.
#[derive(Default)]
pub struct ChecksumCache(Mutex<HashMap<(String, String), Checksum>>);

impl ChecksumCache {
    const MAX: usize = 100_000;

    pub fn get(&self, name: &str, vers: &str) -> Option<Checksum> {
        let map = self.0.lock().ok()?;
        map.get(&(name.to_string(), vers.to_string())).copied()
    }

    pub fn insert(&self, name: &str, vers: &str, sum: Checksum) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::MAX {
                map.clear();
            }
            map.insert((name.to_string(), vers.to_string()), sum);
        }
    }
}
