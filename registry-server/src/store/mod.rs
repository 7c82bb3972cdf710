//! Storage seams: `MetaStore` (packages, versions, owners, tokens) and
//! `BlobStore` (tarballs), with the row types they exchange and the one
//! error type every implementation returns.
//!
//! Failures are reported as what went wrong (`StoreError`), never as an
//! HTTP status: deciding what a caller sees is `error.rs`'s job.

mod blobs;
mod postgres;
mod sqlite;

pub use blobs::{Blobs, S3Blobs};
pub use postgres::PgStore;
pub use sqlite::Db;

use async_trait::async_trait;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use skillpm_core::checksum::Checksum;

/// Why a storage operation failed: a domain refusal the caller can act on,
/// or a backend failure carrying its cause.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no skill named `{0}`")]
    NoSkill(String),
    #[error("no version {vers} of `{name}`")]
    NoVersion { name: String, vers: String },
    #[error("no user named `{0}`")]
    NoUser(String),
    #[error("user `{user}` is not an owner of `{name}`")]
    NotOwner { name: String, user: String },
    #[error("cannot remove every owner of `{0}`; add another owner first")]
    LastOwner(String),
    #[error(
        "`{name}@{vers}` already exists; published versions are immutable, bump `version` in SKILL.md"
    )]
    VersionExists { name: String, vers: String },
    #[error("database")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database mutex poisoned")]
    Poisoned,
    #[error("postgres")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("postgres pool")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("object store")]
    ObjectStore(#[from] object_store::Error),
    #[error("blob {sum}")]
    Io {
        sum: Checksum,
        #[source]
        source: std::io::Error,
    },
    #[error("storage task")]
    Task(#[from] tokio::task::JoinError),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    fn not_owner(name: &str, user: &str) -> Self {
        StoreError::NotOwner {
            name: name.to_string(),
            user: user.to_string(),
        }
    }

    fn version_exists(name: &str, vers: &str) -> Self {
        StoreError::VersionExists {
            name: name.to_string(),
            vers: vers.to_string(),
        }
    }

    fn no_version(name: &str, vers: &str) -> Self {
        StoreError::NoVersion {
            name: name.to_string(),
            vers: vers.to_string(),
        }
    }
}

/// Every metadata operation a handler needs, each a whole unit of work
/// (checks and writes in one transaction), so the two implementations can
/// give the same answers under concurrency.
#[async_trait]
pub trait MetaStore: Send + Sync + 'static {
    /// Short description for start-up logs (no credentials).
    fn describe(&self) -> String;
    async fn token_user(&self, token: &str) -> StoreResult<Option<String>>;
    async fn create_token(&self, user: &str, token: &str) -> StoreResult<()>;
    async fn revoke_token(&self, token: &str) -> StoreResult<bool>;
    async fn versions(&self, name: &str) -> StoreResult<Vec<VersionRow>>;
    async fn cksum_of(&self, name: &str, vers: &str) -> StoreResult<Option<String>>;
    /// `NoSkill`/`NoVersion` when unknown, `NotOwner` unless `user` owns it.
    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yank: bool) -> StoreResult<()>;
    /// `NoSkill` when the package is unknown.
    async fn owners(&self, name: &str) -> StoreResult<Vec<String>>;
    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()>;
    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()>;
    /// Ownership and version clash, without writing, so a doomed upload is
    /// refused before its blob is stored.
    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> StoreResult<()>;
    /// `VersionExists` when the version (or a build-metadata twin) exists;
    /// the first publisher of a name becomes its owner.
    async fn insert_version(&self, v: &NewVersion, user: &str) -> StoreResult<()>;
    async fn search_rows(&self) -> StoreResult<Vec<SearchRow>>;
}

/// Content-addressed tarball storage. Keys are the sha256 of the bytes, so
/// two replicas uploading the same tarball at once write identical objects
/// and neither can corrupt the other.
#[async_trait]
pub trait BlobStore: Send + Sync + 'static {
    /// Short description for logs (no credentials).
    fn describe(&self) -> String;
    /// Stores `bytes` under `sum` durably; storing the same bytes twice,
    /// even at once from two processes, is harmless.
    async fn put(&self, sum: &Checksum, bytes: Bytes) -> StoreResult<()>;
    /// The bytes stored under `sum`, `None` when absent.
    async fn get(&self, sum: &Checksum) -> StoreResult<Option<Bytes>>;
}

pub struct VersionRow {
    pub vers: String,
    pub cksum: String,
    pub yanked: bool,
    pub description: String,
    pub requires: String,
    pub published: i64,
}

/// What a publish adds; everything already validated.
#[derive(Clone)]
pub struct NewVersion {
    pub name: String,
    pub vers: semver::Version,
    pub cksum: String,
    pub description: String,
    pub requires: String,
    pub body: String,
}

/// Newest non-yanked version of every package, for search.
pub struct SearchRow {
    pub name: String,
    pub vers: semver::Version,
    pub description: String,
    pub body: String,
}

/// Everything an embedded registry holds, for `migrate`.
pub struct Dump {
    pub packages: Vec<(String, i64)>,
    pub owners: Vec<(String, String)>,
    pub tokens: Vec<(String, String, i64, Option<i64>)>,
    pub versions: Vec<FullVersion>,
}

pub struct FullVersion {
    pub name: String,
    pub vers: String,
    pub cksum: String,
    pub yanked: bool,
    pub description: String,
    pub requires: String,
    pub body: String,
    pub published: i64,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Only hashes are stored, so a leaked database does not leak tokens.
fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The version as semver resolution sees it: build metadata dropped, so
/// versions differing only in build metadata clash.
fn vers_key(v: &semver::Version) -> String {
    let mut k = semver::Version::new(v.major, v.minor, v.patch);
    k.pre = v.pre.clone();
    k.to_string()
}

/// Keeps the newest version of each name from `(name, vers, description,
/// body)` rows sorted by name.
fn newest_per_name(rows: Vec<(String, String, String, String)>) -> Vec<SearchRow> {
    let mut out: Vec<SearchRow> = Vec::new();
    for (name, vers, description, body) in rows {
        let Ok(vers) = semver::Version::parse(&vers) else {
            continue;
        };
        let row = SearchRow {
            name,
            vers,
            description,
            body,
        };
        match out.last_mut() {
            Some(last) if last.name == row.name => {
                if row.vers > last.vers {
                    *last = row;
                }
            }
            _ => out.push(row),
        }
    }
    out
}
