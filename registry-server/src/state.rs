//! What every handler shares: the stores, upload limits, the public URL,
//! a cache of checksums already served and one of rendered indexes.

use crate::store::{BlobStore, MetaStore, POLL_EVERY};
use bytes::Bytes;
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// Cheap to clone: axum clones the state into every request.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    inner: Inner,
    /// Rendered `GET /index/NAME` bodies (see [`IndexCache`]).
    pub index: IndexCache,
}

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
    /// Digests of the npm packages derived from published versions
    /// (`crate::npm`), which derives them deterministically.
    pub npm: VersionCache<crate::npm::Dist>,
    /// The signing keys (`--keys`); `None` for a registry that does not
    /// sign.
    pub keys: Option<Arc<crate::keys::Keys>>,
}

impl AppState {
    pub fn new(inner: Inner) -> Self {
        AppState(Arc::new(Shared {
            inner,
            index: IndexCache::default(),
        }))
    }

    /// The rendered-index cache, after making sure this process watches
    /// the store for other replicas' changes (started on first use, from
    /// inside the runtime, before anything is cached).
    pub async fn index_cache(&self) -> &IndexCache {
        let db = self.db.clone();
        self.0
            .index
            .watching
            .get_or_init(|| async move {
                let gens = db.generations();
                if let Ok(top) = db.max_generation().await {
                    gens.start_at(top);
                }
                tokio::spawn(poll_generations(db));
            })
            .await;
        &self.0.index
    }
}

/// Asks the store for other replicas' changes every [`POLL_EVERY`]. A
/// failed poll leaves the last one's time, so cached indexes stop being
/// served once it is too old (`Generations::fresh`).
async fn poll_generations(db: Arc<dyn MetaStore>) {
    let mut tick = tokio::time::interval(POLL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let gens = db.generations();
        if let Ok(changes) = db.changed_since(gens.watermark()).await {
            gens.polled(&changes);
        }
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0.inner
    }
}

/// One rendered index: the body, its `ETag`, and the package's index
/// generation it was rendered from.
#[derive(Clone)]
pub struct RenderedIndex {
    pub gen: i64,
    pub body: Bytes,
    pub etag: axum::http::HeaderValue,
}

/// Rendered index bodies by package name, so a request for an unchanged
/// package reads no database row and hashes nothing. An entry is served
/// only while its generation is the newest this process knows for the
/// package and polling is recent (see `store/generations.rs`); anything
/// else is rendered again from the store.
#[derive(Default)]
pub struct IndexCache {
    entries: RwLock<HashMap<String, RenderedIndex>>,
    bytes: Mutex<usize>,
    watching: tokio::sync::OnceCell<()>,
}

impl IndexCache {
    /// Bodies kept in all; past this the cache starts over.
    const MAX_BYTES: usize = 64 << 20;

    /// The cached rendering of `name` if it is still current.
    pub fn get(&self, db: &dyn MetaStore, name: &str) -> Option<RenderedIndex> {
        let gens = db.generations();
        if !gens.fresh() {
            return None;
        }
        let hit = self.entries.read().ok()?.get(name).cloned()?;
        (hit.gen >= gens.latest(name)).then_some(hit)
    }

    /// Keeps a rendering made from generation `r.gen` (unless a newer one
    /// is already known, which makes it stale on arrival).
    pub fn put(&self, db: &dyn MetaStore, name: &str, r: RenderedIndex) {
        if r.gen < db.generations().latest(name) {
            return;
        }
        let (Ok(mut entries), Ok(mut bytes)) = (self.entries.write(), self.bytes.lock()) else {
            return;
        };
        if *bytes + r.body.len() > Self::MAX_BYTES {
            entries.clear();
            *bytes = 0;
        }
        *bytes += r.body.len();
        if let Some(old) = entries.insert(name.to_string(), r) {
            *bytes -= old.body.len();
        }
    }
}

/// Something derived from one published version, by `(name, version)`:
/// a published version's bytes never change (republishing is 409, yanking
/// keeps downloads), so an entry can never be stale. Bounded: past
/// [`VersionCache::MAX`] entries it starts over.
pub struct VersionCache<V>(Mutex<HashMap<(String, String), V>>);

/// Checksums of versions already served.
pub type ChecksumCache = VersionCache<Checksum>;

impl<V> Default for VersionCache<V> {
    fn default() -> Self {
        VersionCache(Mutex::new(HashMap::new()))
    }
}

impl<V: Clone> VersionCache<V> {
    const MAX: usize = 100_000;

    pub fn get(&self, name: &str, vers: &str) -> Option<V> {
        let map = self.0.lock().ok()?;
        map.get(&(name.to_string(), vers.to_string())).cloned()
    }

    pub fn insert(&self, name: &str, vers: &str, value: V) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::MAX {
                map.clear();
            }
            map.insert((name.to_string(), vers.to_string()), value);
        }
    }
}
