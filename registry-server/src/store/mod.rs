//! Storage seams: `MetaStore` (packages, versions, owners, tokens) and
//! `BlobStore` (tarballs), with the row types they exchange and the one
//! error type every implementation returns.
//!
//! Failures are reported as what went wrong (`StoreError`), never as an
//! HTTP status: deciding what a caller sees is `error.rs`'s job.

mod blobs;
mod generations;
mod postgres;
mod sqlite;

pub use blobs::{Blobs, S3Blobs};
pub use generations::{Generations, POLL_EVERY};
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
    /// A first publish whose name could pass for an existing package's
    /// (see `typosquat.rs`).
    #[error(
        "`{name}` is too similar to the existing skill `{existing}` (confusable characters or one edit apart); choose a clearly different name, or publish it as an owner of `{existing}`"
    )]
    Confusable { name: String, existing: String },
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
    #[error("blob directory {}", dir.display())]
    Dir {
        dir: std::path::PathBuf,
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
    /// Every token ever issued (hashes only), oldest first.
    async fn tokens(&self) -> StoreResult<Vec<TokenRow>>;
    /// The versions of `name` and its index generation, read in one
    /// snapshot (see `generations.rs`).
    async fn index_rows(&self, name: &str) -> StoreResult<(i64, Vec<VersionRow>)>;
    /// Packages whose index generation is above `gen`, with theirs.
    async fn changed_since(&self, gen: i64) -> StoreResult<Vec<(String, i64)>>;
    /// The largest index generation stored.
    async fn max_generation(&self) -> StoreResult<i64>;
    /// This process's record of index generations; the store's own writes
    /// land in it as they commit.
    fn generations(&self) -> &Generations;
    async fn cksum_of(&self, name: &str, vers: &str) -> StoreResult<Option<String>>;
    /// `NoSkill`/`NoVersion` when unknown, `NotOwner` unless `user` owns it.
    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yank: bool) -> StoreResult<()>;
    /// `NoSkill` when the package is unknown.
    async fn owners(&self, name: &str) -> StoreResult<Vec<String>>;
    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()>;
    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()>;
    /// Ownership, version clash and (for a new name) the typosquat guard,
    /// without writing, so a doomed upload is refused before its blob is
    /// stored.
    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> StoreResult<()>;
    /// `VersionExists` when the version (or a build-metadata twin) exists,
    /// `Confusable` when a new name fails the typosquat guard; the first
    /// publisher of a name becomes its owner. Also brings the package's
    /// search entry up to date.
    async fn insert_version(&self, v: &NewVersion, user: &str) -> StoreResult<()>;
    /// One entry per listed package, prepared at publish time so a search
    /// reads no SKILL.md bodies.
    async fn search_rows(&self) -> StoreResult<Vec<SearchRow>>;
    /// Every version's signed fields and signature, by name, for
    /// `key resign`.
    async fn signing_rows(&self) -> StoreResult<Vec<SigningRow>>;
    /// Replaces the signatures of versions of `name` in one transaction
    /// and moves its index generation, so every replica serves them.
    async fn set_signatures(&self, name: &str, sigs: &[NewSignature]) -> StoreResult<()>;
    /// Every version's checksum and stored audit record, by name, for
    /// `rescan`.
    async fn audit_rows(&self) -> StoreResult<Vec<AuditRow>>;
    /// Replaces the audit records of versions of `name` (`(vers, json)`)
    /// in one transaction, brings its search entry up to date and moves
    /// its index generation, so every replica serves them.
    async fn set_audits(&self, name: &str, audits: &[(String, String)]) -> StoreResult<()>;
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
    /// The bytes stored under `sum`, `None` when absent. Whole in memory:
    /// for tools (migrate), never for serving.
    async fn get(&self, sum: &Checksum) -> StoreResult<Option<Bytes>>;
    /// The bytes stored under `sum` as a stream of bounded chunks, so
    /// serving a download holds one chunk, not the tarball, per client.
    async fn open(&self, sum: &Checksum) -> StoreResult<Option<BlobStream>>;
    /// Every stored blob with its size and age, in no particular order,
    /// for `gc`. Objects whose names are not checksums are left out.
    async fn list(&self) -> StoreResult<Vec<StoredBlob>>;
    /// One blob's size and age, `None` when absent: `gc` looks again
    /// right before deleting, in case a publish has just stored the same
    /// bytes (which makes the blob new again).
    async fn stat(&self, sum: &Checksum) -> StoreResult<Option<StoredBlob>>;
    /// Deletes the blob stored under `sum`; absent is fine.
    async fn delete(&self, sum: &Checksum) -> StoreResult<()>;
}

/// A stored blob as `gc` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBlob {
    pub sum: Checksum,
    pub size: u64,
    /// When it was last stored (Unix seconds): storing bytes that are
    /// already there renews it.
    pub modified: i64,
}

/// A stored blob being read: its length and its chunks.
pub struct BlobStream {
    pub len: u64,
    pub chunks: futures_util::stream::BoxStream<'static, std::io::Result<Bytes>>,
}

pub struct TokenRow {
    pub hash: String,
    pub user: String,
    pub created: i64,
    pub revoked: Option<i64>,
}

pub struct VersionRow {
    pub vers: String,
    pub cksum: String,
    pub yanked: bool,
    pub description: String,
    pub requires: String,
    /// JSON array of `{name, req}`, as the index serves it.
    pub deps: String,
    pub published: i64,
    /// The registry's signature: the signing key's id and the base64
    /// signature (both or neither).
    pub sig_key: Option<String>,
    pub sig: Option<String>,
    /// The audit record (`crate::audit::Stored` as JSON); `None` for a
    /// version never scanned.
    pub audit: Option<String>,
}

/// A version's blob and audit record, for `rescan`.
pub struct AuditRow {
    pub name: String,
    pub vers: String,
    pub cksum: String,
    pub audit: Option<String>,
}

/// A version's signed fields and its signature, for `key resign`.
pub struct SigningRow {
    pub name: String,
    pub vers: String,
    pub cksum: String,
    pub deps: String,
    pub sig_key: Option<String>,
    pub sig: Option<String>,
}

/// A signature `key resign` stores.
pub struct NewSignature {
    pub vers: String,
    pub keyid: String,
    pub sig: String,
}

/// What a publish adds; everything already validated.
#[derive(Clone)]
pub struct NewVersion {
    pub name: String,
    pub vers: semver::Version,
    pub cksum: String,
    pub description: String,
    pub requires: String,
    /// JSON array of `{name, req}`, each naming a package of this registry.
    pub deps: String,
    pub body: String,
    /// The signature made at publish (key id, base64), when the registry
    /// has keys.
    pub sig_key: Option<String>,
    pub sig: Option<String>,
    /// The audit record made at publish (`crate::audit::Stored` as JSON).
    pub audit: String,
}

/// Newest non-yanked version of a package, for search.
pub struct SearchRow {
    pub name: String,
    pub vers: semver::Version,
    pub description: String,
    /// [`search_words`] of its SKILL.md body.
    pub words: String,
    /// That version's audit record, as stored.
    pub audit: Option<String>,
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
    pub deps: String,
    pub body: String,
    pub published: i64,
    pub sig_key: Option<String>,
    pub sig: Option<String>,
    pub audit: Option<String>,
}

pub(crate) fn now() -> i64 {
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

/// The newest version that is not yanked, from `(vers, yanked)` rows:
/// the one a package's search entry describes. `None` when every version
/// is yanked (the package is then not listed).
fn newest_listed(rows: &[(String, bool)]) -> Option<String> {
    rows.iter()
        .filter(|(_, yanked)| !yanked)
        .filter_map(|(v, _)| Some((semver::Version::parse(v).ok()?, v)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, v)| v.clone())
}

/// The text of a body that search matches terms against, computed once at
/// publish: its distinct lower-case words, space-separated, at most
/// [`SEARCH_WORDS_MAX`] bytes. Query terms never contain spaces, so a
/// substring match here finds exactly the terms that occur in the body
/// (within the cap), at a fraction of a 256 KiB body's size.
pub fn search_words(body: &str) -> String {
    let lower = body.to_lowercase();
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    for w in lower.split_whitespace() {
        if out.len() + w.len() + 1 > SEARCH_WORDS_MAX {
            continue;
        }
        if seen.insert(w) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

/// Body words kept per package for search.
const SEARCH_WORDS_MAX: usize = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_words_are_distinct_lower_case_and_capped() {
        assert_eq!(
            search_words("Export to PDF.\nexport\tto  pdf."),
            "export to pdf."
        );
        let long = "w".repeat(SEARCH_WORDS_MAX);
        assert_eq!(search_words(&format!("{long} short")), "short");
        let many: String = (0..10_000).map(|i| format!("word{i} ")).collect();
        assert!(search_words(&many).len() <= SEARCH_WORDS_MAX);
    }

    #[test]
    fn newest_listed_skips_yanked_and_orders_by_semver() {
        let rows = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
            v.iter().map(|(s, y)| (s.to_string(), *y)).collect()
        };
        assert_eq!(
            newest_listed(&rows(&[
                ("1.10.0", false),
                ("1.9.0", false),
                ("2.0.0", true)
            ])),
            Some("1.10.0".into())
        );
        assert_eq!(newest_listed(&rows(&[("1.0.0", true)])), None);
    }
}
