//! Where metadata and blobs live: flags, then environment, then an
//! optional TOML config file, then the embedded default (`--data DIR`:
//! `DIR/registry.db` and `DIR/blobs/`).

use crate::store::{BlobStore, Blobs, Db, MetaStore, PgStore, S3Blobs};
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const DEFAULT_DATA: &str = "./registry-data";

#[derive(Args, Clone, Debug, Default)]
pub struct StoreArgs {
    /// Data directory of the embedded default (SQLite database and blob
    /// files); also holds scratch space. [default: ./registry-data]
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Metadata database: `postgres://user:pass@host:port/db` for shared
    /// PostgreSQL; unset (or `sqlite`) for the embedded SQLite in --data.
    #[arg(long, env = "SKILLPM_REGISTRY_DATABASE")]
    pub database: Option<String>,
    /// Tarball storage: `s3://bucket/prefix` for S3-compatible object
    /// storage (endpoint, region and keys from AWS_* variables); unset (or
    /// `files`) for files in --data.
    #[arg(long, env = "SKILLPM_REGISTRY_BLOBS")]
    pub blobs: Option<String>,
    /// TOML file with any of: data, database, blobs, listen, public_url, keys.
    #[arg(long, env = "SKILLPM_REGISTRY_CONFIG")]
    pub config: Option<PathBuf>,
}

/// The config file's keys; flags and environment win over it.
#[derive(Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub data: Option<PathBuf>,
    pub database: Option<String>,
    pub blobs: Option<String>,
    pub listen: Option<SocketAddr>,
    pub public_url: Option<String>,
    /// The signing keys' directory (`keys.rs`).
    pub keys: Option<PathBuf>,
}

pub struct Resolved {
    pub data: PathBuf,
    pub data_given: bool,
    pub database: Option<String>,
    pub blobs: Option<String>,
    pub file: FileConfig,
}

impl StoreArgs {
    pub fn resolve(&self) -> Result<Resolved> {
        let file = match &self.config {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read config file {}", p.display()))?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("invalid config file {}", p.display()))?
            }
            None => FileConfig::default(),
        };
        let data = self.data.clone().or_else(|| file.data.clone());
        let nonempty = |s: &Option<String>| s.clone().filter(|v| !v.trim().is_empty());
        Ok(Resolved {
            data_given: data.is_some(),
            data: data.unwrap_or_else(|| PathBuf::from(DEFAULT_DATA)),
            database: nonempty(&self.database).or_else(|| nonempty(&file.database)),
            blobs: nonempty(&self.blobs).or_else(|| nonempty(&file.blobs)),
            file,
        })
    }
}

pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

fn ensure_dir(data: &Path) -> Result<()> {
    std::fs::create_dir_all(data).with_context(|| format!("cannot create {}", data.display()))
}

pub fn open_sqlite(data: &Path) -> Result<Db> {
    ensure_dir(data)?;
    let path = data.join("registry.db");
    Db::open(&path).with_context(|| format!("cannot open {}", path.display()))
}

impl Resolved {
    pub async fn open_meta(&self) -> Result<Arc<dyn MetaStore>> {
        match self.database.as_deref() {
            None | Some("sqlite") => Ok(Arc::new(open_sqlite(&self.data)?)),
            Some(url) if is_postgres(url) => Ok(Arc::new(PgStore::connect(url).await?)),
            Some(other) => bail!(
                "unsupported --database {other:?}: use postgres://... or leave it unset for SQLite in --data"
            ),
        }
    }

    /// The blob store alone, for offline tools (`rescan`): unlike
    /// [`Resolved::open_blobs`], it leaves the data dir's `tmp/` alone, so
    /// it is safe beside a running server.
    pub async fn open_blob_store(&self) -> Result<Arc<dyn BlobStore>> {
        match self.blobs.as_deref() {
            None | Some("files") => Ok(Arc::new(Blobs::open(&self.data).with_context(|| {
                format!("cannot open the blob dirs in {}", self.data.display())
            })?)),
            Some(url) if url.starts_with("s3://") => {
                let s3 = S3Blobs::from_url(url)?;
                s3.check().await?;
                Ok(Arc::new(s3))
            }
            Some(other) => bail!(
                "unsupported --blobs {other:?}: use s3://bucket/prefix or leave it unset for files in --data"
            ),
        }
    }

    /// The blob store and a local scratch dir for unpacking uploads (a
    /// temp dir, removed on drop, when nothing lives in --data).
    pub async fn open_blobs(&self) -> Result<(Arc<dyn BlobStore>, Scratch)> {
        match self.blobs.as_deref() {
            None | Some("files") => {
                let blobs = Blobs::open(&self.data).with_context(|| {
                    format!("cannot create blob dirs in {}", self.data.display())
                })?;
                blobs.clean_tmp().context("cannot clean the tmp dir")?;
                let scratch = Scratch::Dir(blobs.tmp_dir().to_path_buf());
                Ok((Arc::new(blobs), scratch))
            }
            Some(url) if url.starts_with("s3://") => {
                let s3 = S3Blobs::from_url(url)?;
                s3.check().await?;
                let scratch = if self.data_given {
                    let tmp = self.data.join("tmp");
                    std::fs::create_dir_all(&tmp)
                        .with_context(|| format!("cannot create {}", tmp.display()))?;
                    Scratch::Dir(tmp)
                } else {
                    Scratch::Temp(
                        tempfile::Builder::new()
                            .prefix("skillpm-registry-")
                            .tempdir()
                            .context("cannot create a scratch dir")?,
                    )
                };
                Ok((Arc::new(s3), scratch))
            }
            Some(other) => bail!(
                "unsupported --blobs {other:?}: use s3://bucket/prefix or leave it unset for files in --data"
            ),
        }
    }
}

pub enum Scratch {
    Dir(PathBuf),
    Temp(tempfile::TempDir),
}

impl Scratch {
    pub fn path(&self) -> &Path {
        match self {
            Scratch::Dir(p) => p,
            Scratch::Temp(t) => t.path(),
        }
    }
}
