//! Tarball storage: files on the local file system (`DIR/blobs/<sha256
//! hex>`, the embedded default) or S3-compatible object storage
//! (`s3://bucket/prefix` → `prefix/blobs/<sha256 hex>`).
//!
//! A blob is written to `tmp/`, fsynced and renamed into place before the
//! database row that points at it commits, so after a crash every indexed
//! version has its bytes (at worst an unreferenced blob is left behind).

use super::{BlobStore, BlobStream, StoreError, StoreResult, StoredBlob};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload};
use skillpm_core::checksum::Checksum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[async_trait]
impl BlobStore for Blobs {
    fn describe(&self) -> String {
        format!("files in {}", self.dir.display())
    }
    async fn put(&self, sum: &Checksum, bytes: Bytes) -> StoreResult<()> {
        let (me, sum) = (self.clone(), *sum);
        tokio::task::spawn_blocking(move || me.store(&sum, &bytes))
            .await?
            .map_err(|source| StoreError::Io { sum, source })
    }
    async fn get(&self, sum: &Checksum) -> StoreResult<Option<Bytes>> {
        match tokio::fs::read(self.path(sum)).await {
            Ok(b) => Ok(Some(Bytes::from(b))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { sum: *sum, source }),
        }
    }
    /// Small blobs come from memory after their first read (no open, stat
    /// or read on the blocking pool per download); larger ones are
    /// streamed from the file.
    async fn open(&self, sum: &Checksum) -> StoreResult<Option<BlobStream>> {
        if let Some(b) = self.small.get(sum) {
            return Ok(Some(whole(b)));
        }
        let io = |source| StoreError::Io { sum: *sum, source };
        let mut file = match tokio::fs::File::open(self.path(sum)).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().await.map_err(io)?.len();
        if len <= CACHE_ITEM as u64 {
            let mut buf = Vec::with_capacity(len as usize);
            tokio::io::AsyncReadExt::read_to_end(&mut file, &mut buf)
                .await
                .map_err(io)?;
            let bytes = Bytes::from(buf);
            self.small.remember(sum, &bytes);
            return Ok(Some(whole(bytes)));
        }
        Ok(Some(BlobStream {
            len,
            chunks: tokio_util::io::ReaderStream::with_capacity(file, CHUNK).boxed(),
        }))
    }
    async fn list(&self) -> StoreResult<Vec<StoredBlob>> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.list_files())
            .await?
            .map_err(|source| StoreError::Dir {
                dir: self.dir.clone(),
                source,
            })
    }
    async fn stat(&self, sum: &Checksum) -> StoreResult<Option<StoredBlob>> {
        match tokio::fs::metadata(self.path(sum)).await {
            Ok(m) => Ok(Some(file_blob(*sum, &m))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { sum: *sum, source }),
        }
    }
    async fn delete(&self, sum: &Checksum) -> StoreResult<()> {
        match tokio::fs::remove_file(self.path(sum)).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(StoreError::Io { sum: *sum, source }),
        }
    }
}

/// The checksum a blob's file or object name is exactly the hex of.
fn blob_name(name: &str) -> Option<Checksum> {
    Checksum::parse(name).ok().filter(|s| s.hex() == name)
}

/// A blob file's size and modification time.
fn file_blob(sum: Checksum, m: &std::fs::Metadata) -> StoredBlob {
    let modified = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    StoredBlob {
        sum,
        size: m.len(),
        modified,
    }
}

/// Bytes read from a blob file per chunk of a download.
const CHUNK: usize = 64 * 1024;

/// S3-compatible object storage through `object_store` (AWS S3, MinIO,
/// Garage, Ceph RGW, R2, s3s-fs).
pub struct S3Blobs {
    store: Arc<dyn ObjectStore>,
    url: String,
    prefix: String,
    small: SmallBlobs,
}

/// Bytes held in the read cache at most; past that it starts over.
const CACHE_BYTES: usize = 64 << 20;
/// Larger blobs are not cached.
const CACHE_ITEM: usize = 1 << 20;

/// Recently read small blobs. Keys are content addresses and blobs are
/// immutable, so a cached copy can never be stale.
#[derive(Default, Debug)]
struct SmallBlobs(std::sync::Mutex<Cache>);

#[derive(Default, Debug)]
struct Cache {
    map: std::collections::HashMap<Checksum, Bytes>,
    bytes: usize,
}

impl SmallBlobs {
    fn get(&self, sum: &Checksum) -> Option<Bytes> {
        self.0.lock().ok()?.map.get(sum).cloned()
    }

    /// Keeps a small blob that hashes to its key.
    fn remember(&self, sum: &Checksum, bytes: &Bytes) {
        if bytes.len() > CACHE_ITEM || Checksum::of_bytes(bytes) != *sum {
            return;
        }
        if let Ok(mut c) = self.0.lock() {
            if c.bytes + bytes.len() > CACHE_BYTES {
                c.map.clear();
                c.bytes = 0;
            }
            c.bytes += bytes.len();
            c.map.insert(*sum, bytes.clone());
        }
    }
}

/// A blob held whole, as one chunk.
fn whole(bytes: Bytes) -> BlobStream {
    BlobStream {
        len: bytes.len() as u64,
        chunks: stream::once(async move { Ok(bytes) }).boxed(),
    }
}

impl S3Blobs {
    /// `s3://bucket[/prefix]`; endpoint, region and credentials come from
    /// the usual `AWS_*` environment variables (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_ALLOW_HTTP`).
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        let parsed = url::Url::parse(url)
            .map_err(|e| anyhow::anyhow!("invalid blob store URL {url:?}: {e}"))?;
        if parsed.scheme() != "s3" {
            anyhow::bail!("blob store URL {url:?} must start with s3://");
        }
        let bucket = parsed
            .host_str()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| anyhow::anyhow!("blob store URL {url:?} names no bucket"))?;
        let prefix = parsed.path().trim_matches('/').to_string();
        let mut builder = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
        {
            builder = builder.with_region("us-east-1");
        }
        let store = builder
            .build()
            .map_err(|e| anyhow::anyhow!("cannot configure S3 for {url}: {e}"))?;
        Ok(S3Blobs {
            store: Arc::new(store),
            url: url.to_string(),
            prefix,
            small: Default::default(),
        })
    }

    fn key(&self, sum: &Checksum) -> ObjectPath {
        self.blob_dir().child(sum.hex())
    }

    /// `prefix/blobs`, the "directory" every blob is under.
    fn blob_dir(&self) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from("blobs")
        } else {
            ObjectPath::from(format!("{}/blobs", self.prefix))
        }
    }

    /// Fails unless the bucket answers (a missing object is fine).
    pub async fn check(&self) -> anyhow::Result<()> {
        let probe = ObjectPath::from(if self.prefix.is_empty() {
            "blobs/.probe".to_string()
        } else {
            format!("{}/blobs/.probe", self.prefix)
        });
        match self.store.head(&probe).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(anyhow::anyhow!("cannot reach {}: {e}", self.url)),
        }
    }
}

#[async_trait]
impl BlobStore for S3Blobs {
    fn describe(&self) -> String {
        self.url.clone()
    }
    async fn put(&self, sum: &Checksum, bytes: Bytes) -> StoreResult<()> {
        self.store
            .put(&self.key(sum), PutPayload::from_bytes(bytes))
            .await?;
        Ok(())
    }
    async fn get(&self, sum: &Checksum) -> StoreResult<Option<Bytes>> {
        if let Some(b) = self.small.get(sum) {
            return Ok(Some(b));
        }
        match self.store.get(&self.key(sum)).await {
            Ok(r) => {
                let bytes = r.bytes().await?;
                self.small.remember(sum, &bytes);
                Ok(Some(bytes))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
    /// Small blobs come whole (and are cached); larger ones stream from
    /// the object store as its response arrives, read no faster than the
    /// client takes them.
    async fn open(&self, sum: &Checksum) -> StoreResult<Option<BlobStream>> {
        if let Some(b) = self.small.get(sum) {
            return Ok(Some(whole(b)));
        }
        let r = match self.store.get(&self.key(sum)).await {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if r.meta.size <= CACHE_ITEM as u64 {
            let bytes = r.bytes().await?;
            self.small.remember(sum, &bytes);
            return Ok(Some(whole(bytes)));
        }
        Ok(Some(BlobStream {
            len: r.meta.size,
            chunks: r.into_stream().map_err(std::io::Error::other).boxed(),
        }))
    }
    async fn list(&self) -> StoreResult<Vec<StoredBlob>> {
        let dir = self.blob_dir();
        let mut out = Vec::new();
        let mut objects = self.store.list(Some(&dir));
        while let Some(meta) = objects.try_next().await? {
            if let Some(b) = object_blob(&meta) {
                out.push(b);
            }
        }
        Ok(out)
    }
    async fn stat(&self, sum: &Checksum) -> StoreResult<Option<StoredBlob>> {
        match self.store.head(&self.key(sum)).await {
            Ok(meta) => Ok(object_blob(&meta)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
    async fn delete(&self, sum: &Checksum) -> StoreResult<()> {
        match self.store.delete(&self.key(sum)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// An object's checksum (from its name), size and time of last write;
/// `None` for an object not named by a checksum.
fn object_blob(meta: &object_store::ObjectMeta) -> Option<StoredBlob> {
    let sum = blob_name(meta.location.filename()?)?;
    Some(StoredBlob {
        sum,
        size: meta.size,
        modified: meta.last_modified.timestamp(),
    })
}

#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
    tmp: PathBuf,
    small: Arc<SmallBlobs>,
}

impl Blobs {
    pub fn open(data: &Path) -> std::io::Result<Self> {
        let dir = data.join("blobs");
        let tmp = data.join("tmp");
        std::fs::create_dir_all(&dir)?;
        std::fs::create_dir_all(&tmp)?;
        Ok(Blobs {
            dir,
            tmp,
            small: Arc::default(),
        })
    }

    /// Scratch space on the same file system as the blobs, so renames
    /// into place are atomic.
    pub fn tmp_dir(&self) -> &Path {
        &self.tmp
    }

    /// Removes leftovers of uploads that a crash interrupted.
    pub fn clean_tmp(&self) -> std::io::Result<()> {
        for entry in std::fs::read_dir(&self.tmp)? {
            let path = entry?.path();
            let res = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            if let Err(e) = res {
                eprintln!("skillpm-registry: cannot remove {}: {e}", path.display());
            }
        }
        Ok(())
    }

    pub fn path(&self, sum: &Checksum) -> PathBuf {
        self.dir.join(sum.hex())
    }

    /// The blob files, skipping names that are not checksums. Blocking.
    fn list_files(&self) -> std::io::Result<Vec<StoredBlob>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let Some(sum) = entry.file_name().to_str().and_then(blob_name) else {
                continue;
            };
            match entry.metadata() {
                Ok(m) if m.is_file() => out.push(file_blob(sum, &m)),
                Ok(_) => {}
                // Deleted since the directory was read.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Stores `bytes` under `sum` durably. Blocking.
    pub fn store(&self, sum: &Checksum, bytes: &[u8]) -> std::io::Result<()> {
        let dest = self.path(sum);
        match std::fs::File::options().write(true).open(&dest) {
            // Same name, same content: only ever renamed into place whole.
            // Its time is renewed, so that `gc` sees a blob a publish is
            // about to reference as new, not as an old orphan.
            Ok(f) => return f.set_modified(std::time::SystemTime::now()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".blob-")
            .tempfile_in(&self.tmp)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&dest).map_err(|e| e.error)?;
        std::fs::File::open(&self.dir)?.sync_all()
    }
}
