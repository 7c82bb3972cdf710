//! Sources turn a dependency into a verified tarball.
//!
//! Whatever the origin (registry, git, local path), the result is the same:
//! the deterministic `.tar.gz` of the skill tree and its sha256. Each kind
//! implements [`Source`]; [`Sources`] holds one of each for a run and is the
//! only place that dispatches on the kind. Checksums and package identity
//! are checked in [`verify`] and nowhere else: a [`Verified`] tarball can
//! only be made there, and the cache and installer accept nothing else.

pub mod git;
pub mod http;
pub mod marketplace;
pub mod path;
pub mod registry;
pub mod tls;
mod verify;
pub mod wellknown;

pub use skillpm_core::checksum::Verified;
pub use verify::{check_identity, identify, identify_named, verify, verify_made};

use crate::cache::Cache;
use crate::parallel::Workers;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::report::Reporter;
use skillpm_core::archive::{PackError, UnpackError};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// What to resolve: a manifest dependency, with what the caller already
/// knows about it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The manifest key; `None` when the package names itself (`add` of a
    /// git URL or a path).
    pub name: Option<&'a SkillName>,
    pub dep: &'a Dependency,
    /// The registry base URL, for registry dependencies.
    pub registry_url: Option<&'a str>,
}

/// A dependency pinned to one exact package. Git, path and well-known
/// sources make the tree's canonical tar while resolving; it is kept so
/// installing needs no second export.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub locked: LockedSkill,
    pub packed: Option<Verified>,
}

/// What a source offers for a dependency: a registry every version its
/// index lists (the resolver chooses among them), any other source the one
/// package its ref, path or site pins.
#[derive(Debug, Clone)]
pub enum Offer {
    Versions(Vec<skillpm_core::protocol::IndexVersion>),
    Pinned(Box<Resolution>),
}

/// A locked package's bytes as its source hands them over.
#[derive(Debug)]
pub enum Package {
    /// Downloaded, not yet checked against the lock, with the share of
    /// the run's download budget its bytes hold, if its source keeps one.
    Downloaded(Vec<u8>, Option<Reservation>),
    /// The canonical tar of a tree made here, hashed as it was made.
    Made(Verified),
    /// [`Package::Made`] from what the cache held before this run, without
    /// a request (a git tree read from the cache's clone).
    Cached(Verified),
}

/// A locked package, checked against the lock.
#[derive(Debug)]
pub struct Fetched {
    pub tree: Verified,
    /// Whether it was made from the cache alone, without a request.
    pub from_cache: bool,
    /// Held until the tree is staged: the bytes count against the run's
    /// download budget until then.
    pub reservation: Option<Reservation>,
}

/// Bytes of a download counted against a budget until dropped.
pub type Reservation = tokio::sync::OwnedSemaphorePermit;

/// One kind of origin. Dispatch is static (through [`Sources`]), so the
/// futures need not be `Send` or boxed.
#[allow(async_fn_in_trait)]
pub trait Source {
    /// Pins a dependency to one exact package (version, commit, checksum).
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError>;
    /// A locked package, not yet checked against the lock (see [`verify`]).
    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError>;
}

/// One source of each kind, sharing the cache and what they learned during
/// this run (each git URL is fetched and each dependency resolved at most
/// once per run).
pub struct Sources {
    pub registry: registry::RegistrySource,
    pub git: git::GitSource,
    pub path: path::PathSource,
    pub wellknown: wellknown::WellKnownSource,
}

impl Sources {
    /// The sources of one run; git's reading and packing run on
    /// `workers`, the run's threads.
    pub fn new(cache: Cache, project_dir: PathBuf, offline: bool, workers: &Workers) -> Self {
        Sources {
            registry: registry::RegistrySource::new(cache.clone(), offline),
            git: git::GitSource::new(cache.clone(), offline, workers.clone()),
            path: path::PathSource::new(project_dir, cache.clone()),
            wellknown: wellknown::WellKnownSource::new(cache, offline),
        }
    }

    /// Holds git sources to skills.toml's `[trust]`: with
    /// `git-allowed-signers` set (a path relative to `project_dir`), every
    /// git commit resolved or fetched must be signed by a key it lists.
    pub fn trust(
        &mut self,
        policy: &crate::project::manifest::TrustPolicy,
        project_dir: &std::path::Path,
    ) -> Result<(), SourceError> {
        let Some(file) = &policy.git_allowed_signers else {
            return Ok(());
        };
        let path = project_dir.join(file);
        let text =
            skillpm_core::bounded::read_to_string(&path, git::signing::MAX_ALLOWED_SIGNERS_BYTES)
                .map_err(|e| SourceError::Trust(format!("cannot read {}: {e}", path.display())))?;
        let signers = git::signing::AllowedSigners::parse(&text)
            .map_err(|e| SourceError::Trust(format!("{}: {e}", path.display())))?;
        if signers.is_empty() {
            return Err(SourceError::Trust(format!(
                "{} lists no signers, so no commit could be accepted; add a line `PRINCIPAL ssh-ed25519 AAAA...`",
                path.display()
            )));
        }
        self.git.require_signers(signers);
        Ok(())
    }

    /// With `[trust]` set, checks the signature of every git commit of
    /// `lock`, each once per run, before anything is installed: a lock
    /// written before `[trust]` was, or edited, is held to it too.
    pub async fn check_signed_commits(
        &self,
        lock: &crate::project::lockfile::Lockfile,
    ) -> Result<(), SourceError> {
        for s in &lock.skills {
            self.git.check_locked(s).await?;
        }
        Ok(())
    }

    /// For a git package, what skills.lock records as having signed its
    /// commit: the signer this run checked under `[trust]` (every locked
    /// commit is, by [`Sources::check_signed_commits`]), else what the
    /// lock said; nothing without `[trust]`. `None` for any other source,
    /// whose `signed-by` is its own.
    pub fn commit_signer(&self, locked: &LockedSkill) -> Option<Option<String>> {
        let LockedSource::Git { url, commit } = &locked.source else {
            return None;
        };
        Some(match self.git.requires_signers() {
            true => self
                .git
                .signer(url, commit)
                .or_else(|| locked.signed_by.clone()),
            false => None,
        })
    }

    /// Resolves `req` with the source of its kind and checks that the
    /// package is the one the manifest names.
    pub async fn resolve(
        &self,
        req: Request<'_>,
        reporter: &dyn Reporter,
    ) -> Result<Resolution, SourceError> {
        if let Some(name) = req.name {
            reporter.report(crate::report::Event::Resolving {
                name: name.to_string(),
            });
        }
        let r = match req.dep {
            Dependency::Registry { .. } => self.registry.resolve(req).await?,
            Dependency::Git { .. } => self.git.resolve(req).await?,
            Dependency::Path { .. } => self.path.resolve(req).await?,
            Dependency::WellKnown { .. } => self.wellknown.resolve(req).await?,
        };
        match req.name {
            Some(key) if *key != r.locked.name => Err(SourceError::NameMismatch {
                key: key.to_string(),
                found: r.locked.name.to_string(),
                origin: r.locked.origin(),
            }),
            _ => Ok(r),
        }
    }

    /// What `req`'s source offers: every version of a registry package,
    /// or the one package any other source pins (checked as
    /// [`Sources::resolve`] checks it).
    pub async fn offer(
        &self,
        req: Request<'_>,
        reporter: &dyn Reporter,
    ) -> Result<Offer, SourceError> {
        match (req.dep, req.name, req.registry_url) {
            (Dependency::Registry { .. }, Some(name), Some(url)) => {
                reporter.report(crate::report::Event::Resolving {
                    name: name.to_string(),
                });
                Ok(Offer::Versions(self.registry.versions(url, name).await?))
            }
            _ => Ok(Offer::Pinned(Box::new(self.resolve(req, reporter).await?))),
        }
    }

    /// Fetches a locked package from its origin and verifies it against the
    /// lock's checksum.
    pub async fn fetch(&self, locked: &LockedSkill) -> Result<Fetched, SourceError> {
        let package = match &locked.source {
            LockedSource::Registry { .. } => self.registry.fetch(locked).await?,
            LockedSource::Git { .. } => self.git.fetch(locked).await?,
            LockedSource::Path { .. } => self.path.fetch(locked).await?,
            LockedSource::WellKnown { .. } => self.wellknown.fetch(locked).await?,
        };
        let (tree, from_cache, reservation) = match package {
            Package::Downloaded(bytes, held) => (verify(locked, bytes)?, false, held),
            Package::Made(tree) => (verify_made(locked, tree)?, false, None),
            Package::Cached(tree) => (verify_made(locked, tree)?, true, None),
        };
        Ok(Fetched {
            tree,
            from_cache,
            reservation,
        })
    }
}

impl From<wellknown::WellKnownError> for SourceError {
    fn from(e: wellknown::WellKnownError) -> Self {
        SourceError::WellKnown(Box::new(e))
    }
}

/// Results of this run by key, each computed once (shared by the sources).
pub(crate) type Memo<T> = Mutex<HashMap<String, Arc<OnceCell<T>>>>;

/// The once-cell for `key`, created on first use.
pub(crate) fn memo<T>(map: &Memo<T>, key: String) -> Arc<OnceCell<T>> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(key).or_default().clone()
}

/// The error and its causes, which is where reqwest keeps the useful part
/// ("connection refused", "dns error").
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}

/// Server text goes to terminals: no newlines, no escape sequences.
pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `ChooseSkills`' note of the plugins listed beside the skills.
fn plugins_held(plugins: usize) -> String {
    match plugins {
        0 => String::new(),
        n => format!(" and {n} plugins"),
    }
}

fn plugin_hint(plugins: usize) -> &'static str {
    match plugins {
        0 => " or --all",
        _ => ", --plugin NAME... or --all",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot run git ({0}); is git installed?")]
    GitMissing(#[source] std::io::Error),
    #[error("git {what} {url} failed: {detail}")]
    Git {
        what: &'static str,
        url: String,
        detail: String,
    },
    #[error("`{reference}` is not a tag, branch or commit of {url}")]
    UnknownRef { reference: String, url: String },
    #[error("{dir}: {message}")]
    BadSkill { dir: String, message: String },
    #[error("{origin} holds a skill named `{found}`, but skills.toml calls it `{key}`")]
    NameMismatch {
        key: String,
        found: String,
        origin: String,
    },
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    #[error("refusing to install {package}: {source}")]
    Refused {
        package: String,
        #[source]
        source: UnpackError,
    },
    /// The package was fine; the disk was not (full, read-only, gone).
    #[error("cannot install {package}: {source}")]
    Staging {
        package: String,
        #[source]
        source: UnpackError,
    },
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    /// A package whose contents are not what the lock names.
    #[error(transparent)]
    NotTheLocked(#[from] verify::NotTheLocked),
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    #[error(transparent)]
    RegistryUrl(registry::client::RegistryError),
    #[error("{context}: {source}")]
    Registry {
        context: String,
        #[source]
        source: registry::client::RegistryError,
    },
    /// An index entry whose signature is refused.
    #[error("registry {registry}: {source}; refusing it")]
    Signature {
        registry: String,
        #[source]
        source: skillpm_core::signing::SignatureError,
    },
    #[error("refusing {name}@{version} from {registry}: its index entry is unsigned, but skills.lock records {name} as signed by key {keyid}; the registry or the connection to it may have been tampered with")]
    UnsignedAfterSigned {
        name: String,
        version: String,
        registry: String,
        keyid: String,
    },
    #[error("refusing {name}@{version} from {registry}: skills.lock records it as signed by key {keyid}, but the registry's index no longer lists that version")]
    SignedNotListed {
        name: String,
        version: String,
        registry: String,
        keyid: String,
    },
    #[error("refusing {package} from {registry}: skills.lock says {locked}, but the registry's index lists {listed}")]
    IndexDisagrees {
        /// `name@version`.
        package: String,
        registry: String,
        locked: Checksum,
        listed: Checksum,
    },
    #[error("cached index of {name} is corrupt: {source}")]
    CorruptIndex {
        name: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{registry} has no package `{name}`{hint}")]
    UnknownPackage {
        registry: String,
        name: String,
        /// ` (did you mean `x`?)`, or empty.
        hint: String,
    },
    #[error("no version of {name} matches {req} (available: {available})")]
    NoMatch {
        name: String,
        req: String,
        available: String,
    },
    #[error("{name}: the local directory {path} no longer matches the lock; run `skillpm install` to update it")]
    PathChanged { name: String, path: String },
    #[error("{0} needs network access, but --frozen forbids it")]
    Offline(String),
    #[error("checksum mismatch for {package}: the lock says {expected}, what was fetched is {actual}; refusing to install")]
    ChecksumMismatch {
        package: String,
        expected: Checksum,
        actual: Checksum,
    },
    #[error("digest mismatch for {package}: {artifact} should be {expected} but is {actual}; refusing to unpack it")]
    DigestMismatch {
        package: String,
        artifact: String,
        expected: Checksum,
        actual: Checksum,
    },
    #[error(transparent)]
    WellKnown(#[from] Box<wellknown::WellKnownError>),
    #[error("the plugin marketplace of {origin}: {source}")]
    Marketplace {
        origin: String,
        source: marketplace::MarketplaceError,
    },
    #[error("{origin} holds {count} skills{} (listed above); choose with --skill NAME...{}", plugins_held(*.plugins), plugin_hint(*.plugins))]
    ChooseSkills {
        origin: String,
        count: usize,
        /// One sanitized line per skill: command, name, description; then
        /// the plugins of its marketplaces, if it has any.
        listing: String,
        /// How many plugins the listing shows.
        plugins: usize,
    },
    #[error("{origin} has no plugin `{plugin}` (its {count} plugins are listed above); choose with --plugin NAME...")]
    ChoosePlugin {
        origin: String,
        plugin: String,
        count: usize,
        /// One sanitized line per plugin: name, version, description.
        listing: String,
    },
    /// A git commit `[trust]` refuses: unsigned, or not by a listed key.
    #[error("refusing {name}: commit {commit} of {url} {reason}; skills.toml's [trust] git-allowed-signers requires a signature by a key it lists")]
    UnsignedCommit {
        name: String,
        /// The first 12 hex digits.
        commit: String,
        url: String,
        reason: String,
    },
    /// skills.toml's `[trust]` names a file that cannot be used.
    #[error("[trust] git-allowed-signers: {0}")]
    Trust(String),
    #[error("a background task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("cannot run a fetch on a thread of its own: {0}")]
    Thread(std::io::Error),
}
