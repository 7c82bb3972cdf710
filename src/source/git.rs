//! Git sources: one bare clone per URL in the cache, read in process.
//!
//! Fetches ask for what the spec or the lock names and no more: the ref,
//! or the locked commit, without history (`remote::Want`). They go
//! through gitoxide's client (`remote`), which reads git's
//! configuration as `git` does; ssh goes through the `git` command
//! (`command`). A locked commit that is already in the clone needs no
//! network at all.
//!
//! Refs and commits are resolved in process (`objects`), and each
//! skill's tree is read from the raw objects (`export`: no
//! `.gitattributes` rewriting, caps before memory) through the unpacker's
//! own checks (so symlinks and odd entries in a repository are refused),
//! then written as its canonical tar (`pack`).

mod command;
mod discover;
mod export;
mod fetching;
mod objects;
mod pack;
mod process;
mod remote;
mod resolving;
pub mod signing;

pub use discover::FoundSkill;

use super::{marketplace, memo, Memo, Package, Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::parallel::Workers;
use crate::project::lockfile::{is_full_commit, LockedSkill, LockedSource, PluginPin};
use crate::project::manifest::Dependency;
use crate::project::spec::{GitRef, GitScheme, GitUrl};
use discover::{found_packed, found_skills, listing_limits, top_skill_dirs};
use pack::{pack_commit, pack_tree, Packed};
use remote::Want;
use skillpm_core::archive::Limits;
use skillpm_core::name::SkillName;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// How many fetches run at once: enough to overlap network waits, few
/// enough not to thrash a small machine.
pub const GIT_CONCURRENCY: usize = 8;

/// Whether a repository is at `dir`: its `HEAD` is written last, so an
/// init cut short counts as none and is simply done again.
pub(super) fn is_repo(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
}

/// The bare clone of `url` in the cache, keyed by the URL without its
/// credentials.
fn clone_dir(cache: &Cache, url: &GitUrl) -> PathBuf {
    cache.git_dir(url.redacted().as_str())
}

/// Fetches `want` from `url` into its clone, holding the clone for the
/// fetch ([`fetching::Fetching`]).
fn fetch_into(cache: &Cache, url: &GitUrl, want: &Want) -> Result<PathBuf, SourceError> {
    let repo = clone_dir(cache, url);
    let _fetching = fetching::Fetching::start(&repo).map_err(|e| {
        SourceError::from(crate::fs::fs_err("lock", &fetching::lock_path(&repo))(e))
    })?;
    match url.scheme() {
        GitScheme::Ssh | GitScheme::Scp => {
            if !is_repo(&repo) {
                remote::init_bare(&repo).map_err(crate::fs::fs_err("create", &repo))?;
            }
            command::fetch(&repo, url, want)?
        }
        GitScheme::Https | GitScheme::File => remote::fetch(&repo, url, want)?,
    }
    Ok(repo)
}

/// What to fetch to resolve `reference`: the ref alone where it names
/// one, the commit alone for a full id, and everything for a revision
/// only the history can resolve (`HEAD~2`, an abbreviated id, which may
/// also be a branch's name).
fn want_of(reference: Option<&GitRef>) -> Want {
    let named = |x: &str| vec![format!("refs/tags/{x}"), format!("refs/heads/{x}")];
    match reference {
        None => Want::Head,
        Some(GitRef::Rev(x) | GitRef::Unspecified(x)) if is_full_commit(x) => {
            Want::Commit(x.clone())
        }
        r if may_be_behind_tips(r) => Want::Everything,
        Some(GitRef::Tag(t)) => Want::Refs(vec![format!("refs/tags/{t}")]),
        Some(GitRef::Branch(b)) => Want::Refs(vec![format!("refs/heads/{b}")]),
        Some(GitRef::Unspecified(x) | GitRef::Rev(x)) => Want::Refs(named(x)),
        // Every tag's tip, to choose among ([`version_tag`]).
        Some(GitRef::Version(_)) => Want::Refs(vec!["refs/tags/*".into()]),
    }
}

/// Whether `reference` may name a commit behind the tips (a revision, an
/// abbreviated commit id, `HEAD~2`), which only the whole history can
/// resolve.
fn may_be_behind_tips(reference: Option<&GitRef>) -> bool {
    match reference {
        Some(GitRef::Rev(_)) => true,
        Some(GitRef::Unspecified(x)) => {
            (x.len() >= 4 && x.bytes().all(|b| b.is_ascii_hexdigit())) || x.contains(['~', '^'])
        }
        _ => false,
    }
}

/// Resolves `r` to a full commit id in the bare clone.
fn resolve_ref(repo: &Path, url: &GitUrl, r: Option<&GitRef>) -> Result<String, SourceError> {
    let candidates: Vec<String> = match r {
        None => vec!["refs/skillpm/HEAD".into()],
        Some(GitRef::Tag(t)) => vec![format!("refs/tags/{t}")],
        Some(GitRef::Branch(b)) => vec![format!("refs/heads/{b}")],
        Some(GitRef::Rev(c)) => vec![c.clone()],
        Some(GitRef::Version(_)) => Vec::new(),
        Some(GitRef::Unspecified(x)) => vec![
            format!("refs/tags/{x}"),
            format!("refs/heads/{x}"),
            x.clone(),
        ],
    };
    if is_repo(repo) {
        let opened = objects::open(repo, url)?.to_thread_local();
        if let Some(c) = candidates
            .iter()
            .find_map(|c| objects::commit_of(&opened, c))
        {
            return Ok(c);
        }
    }
    let shown = r
        .map(|r| r.as_str().to_string())
        .unwrap_or_else(|| "HEAD".into());
    Err(SourceError::UnknownRef {
        reference: shown,
        url: url.redacted(),
    })
}

/// Whether the clone of `url` holds `commit` and its tree.
fn holds(cache: &Cache, url: &GitUrl, commit: &str) -> bool {
    let repo = clone_dir(cache, url);
    is_repo(&repo)
        && objects::open(&repo, url)
            .is_ok_and(|r| objects::tree_of(&r.to_thread_local(), commit).is_some())
}

/// Git dependencies, fetched through one bare clone per URL in the cache.
/// Fetches run on threads of their own, at most [`GIT_CONCURRENCY`] at
/// once, and reading and packing on the pool (`crate::parallel`). Each
/// (url, want) is fetched at most once per run, so `add` of many skills
/// from one repository (or `add` followed by its install) costs one
/// fetch; every skill of one (url, commit) shares one listing and one
/// object reader (`export::Shared`), and each (url, commit, path) is
/// packed once, whether `resolve` or `fetch` asks.
pub struct GitSource {
    cache: Cache,
    offline: bool,
    limits: Limits,
    /// The run's threads, for reading and packing.
    workers: Workers,
    permits: Arc<Semaphore>,
    /// `url#want` → the clone, fetched.
    fetched: Memo<PathBuf>,
    resolved: Memo<Resolution>,
    /// `url#ref` → commit.
    refs: Memo<String>,
    /// `url#commit` → whether this run asked the server for the commit
    /// (`false`: the clone held it).
    present: Memo<bool>,
    /// `url#commit` → what its skills share, listed.
    trees: Memo<Arc<export::Shared>>,
    /// `url#commit` → its object reader, for trees the lock names.
    readers: Memo<Arc<export::Shared>>,
    /// Idle handles on the clones, shared by every commit's reader.
    handles: Arc<export::Handles>,
    /// `url#commit:path` → the packed skill.
    packs: Memo<Packed>,
    /// skills.toml's `[trust] git-allowed-signers`, read: every locked
    /// commit must be signed by one of them.
    signers: Option<Arc<signing::AllowedSigners>>,
    /// `url#commit` → who signed it, checked against `signers`.
    signed: Memo<String>,
    /// `url#commit` → its plugin marketplaces, read once however many
    /// skills of its plugins resolve.
    markets: Memo<Arc<Vec<marketplace::Marketplace>>>,
}

impl GitSource {
    pub fn new(cache: Cache, offline: bool, workers: Workers) -> Self {
        GitSource {
            cache,
            offline,
            limits: Limits::default(),
            workers,
            permits: Arc::new(Semaphore::new(GIT_CONCURRENCY)),
            fetched: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            refs: Mutex::new(HashMap::new()),
            present: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            readers: Mutex::new(HashMap::new()),
            handles: Arc::default(),
            packs: Mutex::new(HashMap::new()),
            signers: None,
            signed: Mutex::new(HashMap::new()),
            markets: Mutex::new(HashMap::new()),
        }
    }

    /// Requires every commit this source resolves or fetches to be signed
    /// by one of `signers`.
    pub fn require_signers(&mut self, signers: signing::AllowedSigners) {
        self.signers = Some(Arc::new(signers));
    }

    /// Whether `[trust]` requires signed commits.
    pub fn requires_signers(&self) -> bool {
        self.signers.is_some()
    }

    /// With `[trust]` set, checks the locked commit's signature (fetching
    /// the commit if the clone lacks it); who signed it.
    pub async fn check_locked(&self, locked: &LockedSkill) -> Result<Option<String>, SourceError> {
        let LockedSource::Git { url, commit } = &locked.source else {
            return Ok(None);
        };
        if self.signers.is_none() {
            return Ok(None);
        }
        self.present(url, commit).await?;
        self.check_signed(locked.name.as_str(), url, commit).await
    }

    /// Who signed `commit` of `url`, when this run checked it.
    pub fn signer(&self, url: &GitUrl, commit: &str) -> Option<String> {
        let key = format!("{}#{commit}", url.redacted());
        let map = self.signed.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&key).and_then(|c| c.get().cloned())
    }

    /// With `[trust]` set, who signed `commit` of `url` (once per run),
    /// or the refusal of the skill `name`; `None` without `[trust]`.
    async fn check_signed(
        &self,
        name: &str,
        url: &GitUrl,
        commit: &str,
    ) -> Result<Option<String>, SourceError> {
        let Some(signers) = self.signers.clone() else {
            return Ok(None);
        };
        let key = format!("{}#{commit}", url.redacted());
        let signer = memo(&self.signed, key)
            .get_or_try_init(|| {
                let (u, c, n) = (url.clone(), commit.to_string(), name.to_string());
                self.blocking(move |cache| {
                    let repo = clone_dir(cache, &u);
                    let data =
                        objects::commit_data(&objects::open(&repo, &u)?.to_thread_local(), &c);
                    let refused = |reason: String| SourceError::UnsignedCommit {
                        name: n.clone(),
                        commit: c.chars().take(12).collect(),
                        url: u.redacted(),
                        reason,
                    };
                    let data = data.ok_or_else(|| refused("is not in the clone".into()))?;
                    signers.check(&data).map_err(|r| refused(r.to_string()))
                })
            })
            .await?
            .clone();
        Ok(Some(signer))
    }

    /// Runs git work that keeps a core busy (reading, packing) on the
    /// run's threads ([`crate::parallel::on_pool`]).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Cache) -> Result<T, SourceError> + Send + 'static,
    ) -> Result<T, SourceError> {
        let cache = self.cache.clone();
        crate::parallel::on_pool(&self.workers, move || f(&cache)).await
    }

    /// Runs a fetch on a thread of its own, at most [`GIT_CONCURRENCY`]
    /// at once: on the pool it would hold one of its few threads (one per
    /// core) for whole round trips.
    async fn on_own_thread<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Cache) -> Result<T, SourceError> + Send + 'static,
    ) -> Result<T, SourceError> {
        // The semaphore is never closed, so this always yields a permit.
        let _permit = self.permits.acquire().await.ok();
        let cache = self.cache.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("skillpm-fetch".into())
            .spawn(move || {
                let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                    || f(&cache),
                )));
            })
            .map_err(SourceError::Thread)?;
        match rx.await {
            Ok(Ok(done)) => done,
            // A panic there is a bug, re-raised here as the pool would.
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => Err(SourceError::Thread(std::io::Error::other(
                "a fetch thread ended without an answer",
            ))),
        }
    }

    /// The clone of `url` with `want` fetched into it, once per run.
    async fn fetched(&self, url: &GitUrl, want: Want) -> Result<PathBuf, SourceError> {
        let cell = memo(&self.fetched, format!("{}#{want:?}", url.redacted()));
        cell.get_or_try_init(|| {
            let url = url.clone();
            self.on_own_thread(move |cache| fetch_into(cache, &url, &want))
        })
        .await
        .cloned()
    }

    /// `reference` of `url` as a commit, fetched and resolved once per
    /// run. A commit asked for by id that the server will not send alone,
    /// and a revision the fetched tips do not reach, are looked for in
    /// the whole history.
    async fn commit_of(
        &self,
        url: &GitUrl,
        reference: Option<&GitRef>,
    ) -> Result<String, SourceError> {
        let key = format!(
            "{}#{}",
            url.redacted(),
            reference.map(|r| r.as_str()).unwrap_or("")
        );
        let resolve = |repo: PathBuf| {
            let (u, r) = (url.clone(), reference.cloned());
            self.blocking(move |_| resolve_ref(&repo, &u, r.as_ref()))
        };
        memo(&self.refs, key)
            .get_or_try_init(|| async {
                let want = want_of(reference);
                let whole = want == Want::Everything;
                let by_id = matches!(want, Want::Commit(_));
                let fetched = self.fetched(url, want).await;
                let resolved = match fetched {
                    Ok(repo) => resolve(repo).await,
                    Err(e) if by_id => Err(e),
                    Err(e) => return Err(e),
                };
                match resolved {
                    Err(_) if !whole && (by_id || may_be_behind_tips(reference)) => {
                        resolve(self.fetched(url, Want::Everything).await?).await
                    }
                    other => other,
                }
            })
            .await
            .cloned()
    }

    /// The highest tag of `url` that `r` (a [`GitRef::Version`]) matches,
    /// for the skill `name`: every tag's tip is fetched (without history),
    /// then chosen among in the clone.
    async fn version_tag(
        &self,
        url: &GitUrl,
        r: &GitRef,
        name: Option<&str>,
    ) -> Result<(String, semver::Version), SourceError> {
        let req = r.version_req().unwrap_or(semver::VersionReq::STAR);
        let repo = self.fetched(url, want_of(Some(r))).await?;
        let u = url.clone();
        let tags = self
            .blocking(move |_| {
                if !is_repo(&repo) {
                    return Ok(Vec::new());
                }
                Ok(objects::tags(&objects::open(&repo, &u)?.to_thread_local()))
            })
            .await?;
        version_tag(&tags, name, &req).ok_or_else(|| {
            let mut available: Vec<&str> = tags.iter().map(String::as_str).collect();
            available.sort_unstable();
            SourceError::NoMatch {
                name: format!(
                    "{} (tags of {})",
                    name.unwrap_or("the skill"),
                    url.redacted()
                ),
                req: req.to_string(),
                available: match available.is_empty() {
                    true => "no tags".into(),
                    false => available.join(", "),
                },
            }
        })
    }

    /// Makes sure the clone of `url` holds `commit`, fetching it once per
    /// run when it does not; says whether it asked the server.
    async fn present(&self, url: &GitUrl, commit: &str) -> Result<bool, SourceError> {
        let key = format!("{}#{commit}", url.redacted());
        memo(&self.present, key)
            .get_or_try_init(|| async {
                if self.holds(url, commit).await? {
                    return Ok(false);
                }
                if self.offline {
                    return Err(SourceError::Offline(format!(
                        "fetching {commit} from {}",
                        url.redacted()
                    )));
                }
                let alone = self.fetched(url, Want::Commit(commit.into())).await;
                if alone.is_err() || !self.holds(url, commit).await? {
                    self.fetched(url, Want::Everything).await?;
                }
                match self.holds(url, commit).await? {
                    true => Ok(true),
                    false => Err(SourceError::UnknownRef {
                        reference: commit.to_string(),
                        url: url.redacted(),
                    }),
                }
            })
            .await
            .copied()
    }

    async fn holds(&self, url: &GitUrl, commit: &str) -> Result<bool, SourceError> {
        let (u, c) = (url.clone(), commit.to_string());
        self.blocking(move |cache| Ok(holds(cache, &u, &c))).await
    }

    /// What the skills of `commit` share: listed once per run.
    async fn shared(&self, url: &GitUrl, commit: &str) -> Result<Arc<export::Shared>, SourceError> {
        self.opened(&self.trees, url, commit, true).await
    }

    /// The object reader of `commit`, without a listing: the lock names
    /// each skill's tree.
    async fn reader(&self, url: &GitUrl, commit: &str) -> Result<Arc<export::Shared>, SourceError> {
        self.opened(&self.readers, url, commit, false).await
    }

    /// `commit` of the clone of `url`, opened once per run into `memo`,
    /// `listed` or not.
    async fn opened(
        &self,
        memo_of: &Memo<Arc<export::Shared>>,
        url: &GitUrl,
        commit: &str,
        listed: bool,
    ) -> Result<Arc<export::Shared>, SourceError> {
        let cell = memo(memo_of, format!("{}#{commit}", url.redacted()));
        cell.get_or_try_init(|| {
            let (u, c) = (url.clone(), commit.to_string());
            let handles = self.handles.clone();
            self.blocking(move |cache| {
                let repo = clone_dir(cache, &u);
                let shared = match listed {
                    true => export::Shared::new(&repo, &u, &c, &listing_limits(), &handles)?,
                    false => export::Shared::trees_only(&repo, &u, &c, &handles)?,
                };
                Ok(Arc::new(shared))
            })
        })
        .await
        .cloned()
    }

    async fn pack(
        &self,
        url: &GitUrl,
        commit: &str,
        subpath: Option<&str>,
    ) -> Result<Packed, SourceError> {
        let cell = memo(&self.packs, pack_key(url, commit, subpath));
        cell.get_or_try_init(|| async {
            let shared = self.shared(url, commit).await?;
            let (url, commit, sub, limits) = (
                url.clone(),
                commit.to_string(),
                subpath.map(str::to_string),
                self.limits.clone(),
            );
            self.blocking(move |_| pack_commit(&shared, &url, &commit, sub.as_deref(), &limits))
                .await
        })
        .await
        .cloned()
    }

    /// Every skill in `url` at `reference` (default: the remote HEAD), for
    /// `add` without `--path`. Uses the run's one fetch of `url`. With
    /// `pack_all` (`add --all`), every skill is packed as it is found
    /// (`found_packed`), and resolving it later finds it packed.
    pub async fn discover(
        &self,
        url: &GitUrl,
        reference: Option<&GitRef>,
        pack_all: bool,
    ) -> Result<(String, Vec<FoundSkill>), SourceError> {
        if self.offline {
            return Err(SourceError::Offline(format!("listing {}", url.redacted())));
        }
        // A range lists the repository at its highest plain version tag;
        // each skill is then resolved by its own name.
        let tagged = match reference {
            Some(r @ GitRef::Version(_)) => {
                Some(GitRef::Tag(self.version_tag(url, r, None).await?.0))
            }
            _ => None,
        };
        let commit = self.commit_of(url, tagged.as_ref().or(reference)).await?;
        let shared = self.shared(url, &commit).await?;
        let (u, c, limits) = (url.clone(), commit.clone(), self.limits.clone());
        let workers = self.workers.clone();
        let found = self
            .blocking(move |_| {
                if let Some(done) = pack_all
                    .then(|| found_packed(&workers, &shared, &u, &c, &limits))
                    .flatten()
                {
                    return Ok(done);
                }
                let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
                let files = export::skill_files(&workers, &shared, &u, &listing_limits(), max)?;
                Ok(found_skills(&workers, files)
                    .into_iter()
                    .map(|f| (f, None))
                    .collect())
            })
            .await?;
        let found = found
            .into_iter()
            .map(|(found, packed)| {
                if let Some(p) = packed {
                    let key = pack_key(url, &commit, found.dir.as_deref());
                    let _ = memo(&self.packs, key).set(p);
                }
                found
            })
            .collect();
        Ok((commit, found))
    }
}

impl GitSource {
    /// The plugin marketplaces of `commit` of `url`, with each plugin's
    /// skills among the skills `discover` would list there; read once per
    /// run.
    pub async fn marketplaces(
        &self,
        url: &GitUrl,
        commit: &str,
    ) -> Result<Arc<Vec<marketplace::Marketplace>>, SourceError> {
        let cell = memo(&self.markets, format!("{}#{commit}", url.redacted()));
        cell.get_or_try_init(|| async {
            let origin = format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]);
            self.in_tree(url, commit, move |files, dirs| {
                marketplace::read(files, dirs)
                    .map(Arc::new)
                    .map_err(|source| SourceError::Marketplace { origin, source })
            })
            .await
        })
        .await
        .cloned()
    }

    /// `read` over the files of `commit` of `url`, with the directories
    /// of its skills; an empty answer when the commit is too large to list.
    async fn in_tree<T: Default + Send + 'static>(
        &self,
        url: &GitUrl,
        commit: &str,
        read: impl FnOnce(&export::Files<'_>, &[&str]) -> Result<T, SourceError> + Send + 'static,
    ) -> Result<T, SourceError> {
        let shared = self.shared(url, commit).await?;
        let u = url.clone();
        self.blocking(move |_| {
            let Some(files) = export::Files::new(&shared, &u) else {
                return Ok(T::default());
            };
            let dirs = top_skill_dirs(&shared, &u)?;
            let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
            read(&files, &dirs)
        })
        .await
    }

    /// The plugin a marketplace elsewhere names at `root` of `commit` of
    /// `url`, with its skills there.
    pub async fn plugin_at(
        &self,
        url: &GitUrl,
        commit: &str,
        root: &str,
        listed: Option<&[String]>,
    ) -> Result<marketplace::Held, SourceError> {
        let (root, listed) = (root.to_string(), listed.map(<[String]>::to_vec));
        let origin = format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]);
        self.in_tree(url, commit, move |files, dirs| {
            marketplace::held(files, &root, listed.as_deref(), dirs)
                .map(Some)
                .map_err(|message| SourceError::BadSkill {
                    dir: origin,
                    message,
                })
        })
        .await?
        .ok_or_else(|| SourceError::BadSkill {
            dir: format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]),
            message: "the commit is too large to list".into(),
        })
    }

    /// The plugin `name` (`NAME` or `NAME@MARKETPLACE`) of `commit`, which
    /// must hold the skill at `sub`, as the lock records it.
    async fn plugin_pin(
        &self,
        url: &GitUrl,
        commit: &str,
        name: &str,
        sub: Option<&str>,
    ) -> Result<PluginPin, SourceError> {
        let markets = self.marketplaces(url, commit).await?;
        let refused = |message: String| SourceError::BadSkill {
            dir: format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]),
            message,
        };
        let dir = sub.unwrap_or_default();
        let Some(plugin) = marketplace::find(&markets, name) else {
            // A plugin in its own repository, which a marketplace elsewhere
            // named: its manifest here, if any, declares its version.
            let name = SkillName::new(name).map_err(|e| refused(e.to_string()))?;
            let version = self.in_tree(url, commit, {
                let (name, dir) = (name.to_string(), dir.to_string());
                move |files, _| Ok(marketplace::declared_above(files, &dir, &name))
            });
            return Ok(PluginPin {
                name,
                version: version.await?,
            });
        };
        if !plugin.skills.iter().any(|s| s == dir) {
            let shown = skillpm_core::text::sanitize(dir);
            return Err(refused(format!(
                "the plugin `{name}` does not hold the skill at `{shown}`"
            )));
        }
        Ok(PluginPin {
            name: SkillName::new(&plugin.name).map_err(|e| refused(e.to_string()))?,
            version: plugin.version.clone(),
        })
    }
}

/// The key of the skill at `subpath` of `commit` in [`GitSource::pack`]'s
/// memo.
/// The highest of `tags` whose version `req` matches, with that version.
/// A tag is read as `v1.2.3` or `1.2.3`, or, in a repository that tags
/// its skills one by one, as `NAME-v1.2.3`, `NAME-1.2.3`, `NAME@1.2.3` or
/// `NAME/v1.2.3` for the skill `name`: when any tag names the skill that
/// way, only those count. Pre-releases match as semver matches them
/// (only when the requirement names that pre-release series).
fn version_tag(
    tags: &[String],
    name: Option<&str>,
    req: &semver::VersionReq,
) -> Option<(String, semver::Version)> {
    let plain = |t: &str| semver::Version::parse(t.strip_prefix('v').unwrap_or(t)).ok();
    let own = |t: &str| {
        let rest = t.strip_prefix(name?)?;
        let rest = ["-", "@", "/"].iter().find_map(|s| rest.strip_prefix(s))?;
        plain(rest)
    };
    let mut versioned: Vec<(&String, semver::Version)> =
        tags.iter().filter_map(|t| Some((t, own(t)?))).collect();
    if versioned.is_empty() {
        versioned = tags.iter().filter_map(|t| Some((t, plain(t)?))).collect();
    }
    versioned
        .into_iter()
        .filter(|(_, v)| req.matches(v))
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(t, v)| (t.clone(), v))
}

/// Whether the version `pin`'s plugin declares meets `req`
/// (skills.toml's `plugin-version`), or why not.
fn check_plugin_version(pin: &PluginPin, req: Option<&semver::VersionReq>) -> Result<(), String> {
    match (req, &pin.version) {
        (None, _) => Ok(()),
        (Some(req), Some(v)) if req.matches(v) => Ok(()),
        (Some(req), Some(v)) => Err(format!(
            "the plugin `{}` declares version {v} here, which does not meet `{req}`",
            pin.name
        )),
        (Some(req), None) => Err(format!(
            "the plugin `{}` declares no version here, so it cannot meet `{req}`",
            pin.name
        )),
    }
}

fn pack_key(url: &GitUrl, commit: &str, subpath: Option<&str>) -> String {
    format!("{}#{commit}:{}", url.redacted(), subpath.unwrap_or("."))
}

impl Source for GitSource {
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let Dependency::Git {
            url,
            reference,
            path: sub,
            plugin,
            plugin_version,
        } = req.dep
        else {
            unreachable!("GitSource is only handed git dependencies")
        };
        if self.offline {
            return Err(SourceError::Offline(format!(
                "resolving {} from {}",
                req.name.map(|n| n.to_string()).unwrap_or_default(),
                url.redacted()
            )));
        }
        let key = format!(
            "{}#{}:{}",
            url.redacted(),
            reference.as_ref().map(|r| r.as_str()).unwrap_or(""),
            sub.as_deref().unwrap_or(".")
        );
        let cell = memo(&self.resolved, key);
        cell.get_or_try_init(|| async {
            let (reference, tagged) = match reference {
                Some(r @ GitRef::Version(_)) => {
                    let name = req
                        .name
                        .map(|n| n.as_str())
                        .or_else(|| sub.as_deref().and_then(|s| s.rsplit('/').next()));
                    let (tag, version) = self.version_tag(url, r, name).await?;
                    (Some(GitRef::Tag(tag)), Some(version))
                }
                // A plugin's version requirement with no ref of its own
                // chooses among the repository's release tags (`v6.2.0`,
                // `superpowers-v6.2.0`), as `version` does for a skill;
                // without a matching tag it follows the default branch,
                // and either way the declared version is checked below.
                None => match (plugin, plugin_version) {
                    (Some(name), Some(req)) => {
                        let wanted = GitRef::Version(req.to_string());
                        match self.version_tag(url, &wanted, Some(name.as_str())).await {
                            Ok((tag, _)) => (Some(GitRef::Tag(tag)), None),
                            Err(SourceError::NoMatch { .. }) => (None, None),
                            Err(e) => return Err(e),
                        }
                    }
                    _ => (None, None),
                },
                other => (other.clone(), None),
            };
            let commit = self.commit_of(url, reference.as_ref()).await?;
            let p = self.pack(url, &commit, sub.as_deref()).await?;
            let signed_by = self.check_signed(p.name.as_str(), url, &commit).await?;
            let plugin = match plugin {
                Some(name) => {
                    let pin = self.plugin_pin(url, &commit, name, sub.as_deref()).await?;
                    check_plugin_version(&pin, plugin_version.as_ref()).map_err(|message| {
                        SourceError::BadSkill {
                            dir: format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]),
                            message,
                        }
                    })?;
                    Some(pin)
                }
                None => None,
            };
            Ok(Resolution {
                locked: LockedSkill {
                    name: p.name,
                    // Chosen by its tag's version, the skill is locked at
                    // it, so the requirement can be checked against the
                    // lock.
                    version: tagged.unwrap_or(p.version),
                    source: LockedSource::Git {
                        url: url.clone(),
                        commit,
                    },
                    checksum: *p.tree.checksum(),
                    path: sub.clone(),
                    tree: Some(p.tree_id),
                    dependencies: Vec::new(),
                    signed_by,
                    plugin,
                },
                packed: Some(p.tree),
            })
        })
        .await
        .cloned()
    }

    /// The locked commit's skill, packed from the tree the lock names
    /// when it records one (no listing of the commit), else from its
    /// path.
    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::Git { url, commit } = &locked.source else {
            unreachable!("GitSource is only handed git packages")
        };
        let asked = self.present(url, commit).await?;
        self.check_signed(locked.name.as_str(), url, commit).await?;
        let made = |tree| match asked {
            true => Package::Made(tree),
            false => Package::Cached(tree),
        };
        let sub = locked.path.clone();
        if let Some(tree) = &locked.tree {
            let reader = self.reader(url, commit).await?;
            let (u, c, t, limits) = (
                url.clone(),
                commit.clone(),
                tree.clone(),
                self.limits.clone(),
            );
            let s = sub.clone();
            let packed = self
                .blocking(move |_| pack_tree(&reader, &u, &c, &t, s.as_deref(), &limits))
                .await?;
            if let Some(tree) = packed {
                return Ok(made(tree));
            }
        }
        let p = self.pack(url, commit, sub.as_deref()).await?;
        Ok(made(p.tree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_takes_the_highest_matching_tag_and_a_skills_own_tags_first() {
        let tags: Vec<String> = [
            "v1.0.0",
            "1.4.0",
            "v2.0.0",
            "v1.5.0-rc.1",
            "latest",
            "pdf-v0.3.0",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        let req = |r: &str| semver::VersionReq::parse(r).unwrap();
        let pick = |name: Option<&str>, r: &str| version_tag(&tags, name, &req(r)).map(|(t, _)| t);
        assert_eq!(pick(None, "^1").as_deref(), Some("1.4.0"));
        assert_eq!(
            pick(None, ">=1.5.0-rc.1, <2").as_deref(),
            Some("v1.5.0-rc.1")
        );
        assert_eq!(pick(Some("docx"), "*").as_deref(), Some("v2.0.0"));
        assert_eq!(pick(Some("pdf"), "*").as_deref(), Some("pdf-v0.3.0"));
        assert_eq!(pick(Some("pdf"), "^1"), None);
        assert_eq!(pick(None, "^3"), None);
    }

    #[test]
    fn only_what_may_name_a_commit_asks_for_the_whole_history() {
        let unspecified = |s: &str| GitRef::Unspecified(s.into());
        for r in [
            GitRef::Rev("main".into()),
            unspecified("0123abcd"),
            unspecified("HEAD~2"),
            unspecified("main^"),
        ] {
            assert!(may_be_behind_tips(Some(&r)), "{r:?}");
            assert_eq!(want_of(Some(&r)), Want::Everything, "{r:?}");
        }
        for r in [
            unspecified("no-such-branch"),
            unspecified("abc"),
            GitRef::Tag("0123abcd".into()),
            GitRef::Branch("main".into()),
        ] {
            assert!(!may_be_behind_tips(Some(&r)), "{r:?}");
            assert!(matches!(want_of(Some(&r)), Want::Refs(_)), "{r:?}");
        }
        assert!(!may_be_behind_tips(None));
    }

    #[test]
    fn a_ref_is_fetched_alone_and_a_full_id_as_a_commit() {
        assert_eq!(want_of(None), Want::Head);
        assert_eq!(
            want_of(Some(&GitRef::Tag("v1".into()))),
            Want::Refs(vec!["refs/tags/v1".into()])
        );
        assert_eq!(
            want_of(Some(&GitRef::Unspecified("main".into()))),
            Want::Refs(vec!["refs/tags/main".into(), "refs/heads/main".into()])
        );
        let id = "0123456789abcdef0123456789abcdef01234567";
        for r in [GitRef::Rev(id.into()), GitRef::Unspecified(id.into())] {
            assert_eq!(want_of(Some(&r)), Want::Commit(id.into()));
        }
    }
}
