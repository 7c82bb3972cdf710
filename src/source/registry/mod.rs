//! Registry sources: the sparse index (cached with `ETag`) and tarball
//! downloads; [`client`] speaks the HTTP protocol, [`credentials`] keeps
//! tokens.
//!
//! Signatures (`skillpm_core::signing`): every index this source reads,
//! fresh or revalidated from the cache, has each entry checked against
//! the keys the registry's `config.json` lists before anything uses it:
//! an entry whose signature does not verify, or names a key the registry
//! does not list or has revoked, fails the read, naming the entry and the
//! key. An unsigned entry passes here; the lock decides whether it may
//! be used ([`check_pins`]: an entry skills.lock records as signed must
//! stay signed). A download first reads the package's index the same way
//! (this run's copy when it has one) and requires the locked version's
//! entry to list the locked checksum, and to be signed when the lock says
//! it was; the key that signed it is remembered ([`RegistrySource::signer`])
//! so the lock can record it.

pub mod client;
pub mod credentials;

use super::{Package, Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::project::spec::mask_userinfo;
use crate::source::registry::client::{IndexResponse, RegistryClient, RegistryError};
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{IndexVersion, PackageVersion, MAX_YANKED_QUERY};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Largest tarball the client will download.
pub const MAX_DOWNLOAD: u64 = 10 * 1024 * 1024;

/// How many bytes of downloaded packages one run holds in memory at once,
/// between the request and the staged tree: as much as 16 packages of the
/// largest size, so a hostile registry cannot make the client hold more,
/// while packages of usual sizes (kilobytes) all go at once and a cold
/// install waits for one round trip, not one per 16 packages. A download
/// reserves what its `Content-Length` announces (the body is cut there),
/// or [`MAX_DOWNLOAD`] without one.
const DOWNLOAD_BUDGET: u64 = 16 * MAX_DOWNLOAD;

/// The budget's unit: the semaphore counts KiB.
const KIB: u64 = 1024;

/// One client per registry URL, and the index entries already read in
/// this run (each index is fetched at most once per run).
pub struct RegistrySource {
    cache: Cache,
    clients: Mutex<HashMap<String, RegistryClient>>,
    seen: Mutex<HashMap<(String, String), Vec<IndexVersion>>>,
    /// The key that signed each version downloaded this run (`None`:
    /// unsigned), by registry, name and version.
    signers: Mutex<HashMap<(String, SkillName, semver::Version), Option<String>>>,
    offline: bool,
    /// [`DOWNLOAD_BUDGET`], in KiB.
    budget: Arc<tokio::sync::Semaphore>,
}

impl RegistrySource {
    pub fn new(cache: Cache, offline: bool) -> Self {
        RegistrySource {
            cache,
            clients: Mutex::new(HashMap::new()),
            seen: Mutex::new(HashMap::new()),
            signers: Mutex::new(HashMap::new()),
            offline,
            budget: Arc::new(tokio::sync::Semaphore::new(
                (DOWNLOAD_BUDGET / KIB) as usize,
            )),
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
        self.index_versions(url, name, true).await
    }

    /// Whether the registry at `url` signs: its `config.json` lists a key
    /// it has not revoked.
    pub async fn signs(&self, url: &str) -> Result<bool, SourceError> {
        let client = self.client(url)?;
        let keyring = client.keyring().await.map_err(registry_err(format!(
            "reading the signing keys of {}",
            mask_userinfo(url)
        )))?;
        Ok(keyring.signs())
    }

    /// The yanked ones among `packages` of the registry at `url`, for the
    /// warning of a locked install: one `POST /api/v1/yanked` per
    /// [`MAX_YANKED_QUERY`] packages; a registry without that endpoint is
    /// asked for each package's index instead (keeping no copy: the next
    /// install of that lock reads the cached tarball and asks nothing).
    /// Best effort: what cannot be asked is not reported.
    pub async fn yanked_among(
        &self,
        url: &str,
        packages: Vec<PackageVersion>,
    ) -> Vec<PackageVersion> {
        let Ok(client) = self.client(url) else {
            return Vec::new();
        };
        let mut yanked = Vec::new();
        for chunk in packages.chunks(MAX_YANKED_QUERY) {
            match client.yanked(chunk.to_vec()).await {
                Ok(reply) => {
                    // Only what was asked: a server cannot add warnings.
                    let found: Vec<PackageVersion> = reply
                        .yanked
                        .into_iter()
                        .filter(|p| chunk.contains(p))
                        .collect();
                    for p in chunk {
                        self.remember_yanked(url, &p.name, &p.vers, found.contains(p));
                    }
                    yanked.extend(found);
                }
                Err(e) if matches!(e.status(), Some(404 | 405)) => {
                    let each = chunk.iter().map(|p| async move {
                        let versions = self.index_versions(url, &p.name, false).await.ok()?;
                        let yanked = versions.iter().any(|v| v.vers == p.vers && v.yanked);
                        self.remember_yanked(url, &p.name, &p.vers, yanked);
                        yanked.then(|| p.clone())
                    });
                    let found = futures_util::future::join_all(each).await;
                    yanked.extend(found.into_iter().flatten());
                }
                Err(_) => {}
            }
        }
        yanked.sort();
        yanked.dedup();
        yanked
    }

    async fn index_versions(
        &self,
        url: &str,
        name: &SkillName,
        keep_copy: bool,
    ) -> Result<Vec<IndexVersion>, SourceError> {
        let key = (url.to_string(), name.to_string());
        if let Some(v) = self.seen.lock().ok().and_then(|s| s.get(&key).cloned()) {
            return Ok(v);
        }
        let path = self.cache.index_dir(url).join(format!("{name}.json"));
        // The cache is on disk where anything may have changed it; see
        // `cached_index` for its format.
        let cached = skillpm_core::bounded::read(&path, client::MAX_JSON_BYTES + 1024)
            .ok()
            .and_then(cached_index);
        let client = self.client(url)?;
        let answer = client
            .index(
                name.as_str(),
                cached.as_ref().map(|(etag, _)| etag.as_str()),
            )
            .await;
        let response = match answer {
            Err(e) if e.is_not_found() => {
                return Err(SourceError::UnknownPackage {
                    registry: mask_userinfo(url),
                    name: name.to_string(),
                    hint: did_you_mean(&client, name).await,
                })
            }
            other => other.map_err(registry_err(format!("reading the index of {name}")))?,
        };
        let (versions, fresh) = match response {
            IndexResponse::NotModified => {
                let body = cached.map(|(_, body)| body).unwrap_or_default();
                let index = serde_json::from_slice::<skillpm_core::protocol::IndexFile>(&body)
                    .map_err(|source| SourceError::CorruptIndex {
                        name: name.to_string(),
                        source,
                    })?;
                (index.versions, None)
            }
            IndexResponse::Fresh { index, etag, body } => (index.versions, Some((etag, body))),
        };
        // Checked on every read, the cached copy's too: the keys may have
        // changed (a revocation) and the cache is on disk.
        let keyring = client.keyring().await.map_err(registry_err(format!(
            "reading the signing keys of {}",
            mask_userinfo(url)
        )))?;
        for v in &versions {
            keyring.verify(v).map_err(|source| SourceError::Signature {
                registry: mask_userinfo(url),
                source,
            })?;
        }
        // Best effort: a failed cache write only costs a refetch (the body
        // is parsed and verified before use), so no fsync here. An index
        // without an ETag cannot be revalidated: not kept.
        if let Some((Some(e), body)) = fresh.filter(|_| keep_copy) {
            if !e.contains('\n') {
                let mut text = Vec::with_capacity(e.len() + 1 + body.len());
                text.extend_from_slice(e.as_bytes());
                text.push(b'\n');
                text.extend_from_slice(&body);
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let _ = crate::fs::replace_file(&path, &text);
            }
        }
        // A fresh index says which remembered yanks were undone.
        for v in versions.iter().filter(|v| !v.yanked) {
            let marker = self.yank_marker(url, name, &v.vers);
            if marker.is_file() {
                let _ = std::fs::remove_file(marker);
            }
        }
        if let Ok(mut s) = self.seen.lock() {
            s.insert(key, versions.clone());
        }
        Ok(versions)
    }
}

impl RegistrySource {
    /// Where the cache remembers that `name@vers` of `url` was yanked
    /// when last asked, so a warm install (which asks nothing) still warns.
    fn yank_marker(
        &self,
        url: &str,
        name: &SkillName,
        vers: &semver::Version,
    ) -> std::path::PathBuf {
        self.cache
            .index_dir(url)
            .join("yanked")
            .join(format!("{name}@{vers}"))
    }

    /// Records the answer about one locked version. Best effort: a marker
    /// that cannot be written costs a later warning, nothing else.
    fn remember_yanked(&self, url: &str, name: &SkillName, vers: &semver::Version, yanked: bool) {
        let marker = self.yank_marker(url, name, vers);
        if !yanked {
            let _ = std::fs::remove_file(&marker);
        } else if let Some(dir) = marker.parent() {
            let _ = std::fs::create_dir_all(dir);
            let _ = std::fs::write(&marker, b"");
        }
    }

    /// Whether `name@vers` of `url` was yanked when the cache last heard
    /// (a yank query, or an index read that listed it); no request.
    pub fn known_yanked(&self, url: &str, name: &SkillName, vers: &semver::Version) -> bool {
        self.yank_marker(url, name, vers).is_file()
    }

    /// Whether this run saw `name@vers` yanked in the index of `url`
    /// (what resolving read; never a request of its own).
    pub fn seen_yanked(&self, url: &str, name: &SkillName, vers: &semver::Version) -> bool {
        let key = (url.to_string(), name.to_string());
        self.seen.lock().ok().is_some_and(|s| {
            s.get(&key)
                .is_some_and(|vs| vs.iter().any(|v| v.vers == *vers && v.yanked))
        })
    }

    /// Before a download: the locked version's index entry, verified as
    /// every read is, must list the locked checksum and be signed if the
    /// lock says it was. Records the key that signed it.
    async fn check_locked(&self, url: &str, locked: &LockedSkill) -> Result<(), SourceError> {
        let (name, version) = (&locked.name, &locked.version);
        let versions = self.index_versions(url, name, true).await?;
        let Some(entry) = versions.iter().find(|v| v.vers == *version) else {
            return match &locked.signed_by {
                // Nothing vouches for it any more.
                Some(keyid) => Err(SourceError::SignedNotListed {
                    name: name.to_string(),
                    version: version.to_string(),
                    registry: mask_userinfo(url),
                    keyid: keyid.clone(),
                }),
                // As before signatures: the download's checksum decides.
                None => Ok(()),
            };
        };
        if entry.cksum != locked.checksum {
            return Err(SourceError::IndexDisagrees {
                package: format!("{name}@{version}"),
                registry: mask_userinfo(url),
                locked: locked.checksum,
                listed: entry.cksum,
            });
        }
        check_pin(locked, url, entry)?;
        let signer = entry.sig.as_ref().map(|s| s.keyid.clone());
        if let Ok(mut s) = self.signers.lock() {
            s.insert((url.to_string(), name.clone(), version.clone()), signer);
        }
        Ok(())
    }

    /// The key that signed `name@version` of `url` when it was downloaded
    /// this run: `Some(None)` for an unsigned entry, `None` when it was not
    /// downloaded.
    pub fn signer(
        &self,
        url: &str,
        name: &SkillName,
        version: &semver::Version,
    ) -> Option<Option<String>> {
        let s = self.signers.lock().ok()?;
        s.get(&(url.to_string(), name.clone(), version.clone()))
            .cloned()
    }
}

/// The trust-on-first-use pin: an entry of `url` for a skill the lock
/// records as signed (by any key: keys rotate) must be signed too. Its
/// signature itself was verified when the index was read.
pub fn check_pin(old: &LockedSkill, url: &str, entry: &IndexVersion) -> Result<(), SourceError> {
    let same_registry = matches!(&old.source, LockedSource::Registry { url: u } if u == url);
    match (&old.signed_by, &entry.sig) {
        (Some(keyid), None) if same_registry => Err(SourceError::UnsignedAfterSigned {
            name: entry.name.to_string(),
            version: entry.vers.to_string(),
            registry: mask_userinfo(url),
            keyid: keyid.clone(),
        }),
        _ => Ok(()),
    }
}

/// [`check_pin`] for every registry entry of a new lock against the old
/// lock's entry of the same name.
pub fn check_pins(
    old: &crate::project::lockfile::Lockfile,
    new: &crate::project::lockfile::Lockfile,
) -> Result<(), SourceError> {
    for n in &new.skills {
        let (LockedSource::Registry { url }, Some(o)) = (&n.source, old.get(&n.name)) else {
            continue;
        };
        if let (Some(keyid), None, LockedSource::Registry { url: u }) =
            (&o.signed_by, &n.signed_by, &o.source)
        {
            if u == url {
                return Err(SourceError::UnsignedAfterSigned {
                    name: n.name.to_string(),
                    version: n.version.to_string(),
                    registry: mask_userinfo(url),
                    keyid: keyid.clone(),
                });
            }
        }
    }
    Ok(())
}

/// A cached index copy is its `ETag`, a newline, then the body as served:
/// one file per package, written whole (temp file + rename), so the tag
/// always belongs to the body beside it.
fn cached_index(text: Vec<u8>) -> Option<(String, Vec<u8>)> {
    let nl = text.iter().position(|&b| b == b'\n')?;
    let etag = std::str::from_utf8(&text[..nl]).ok()?.to_string();
    Some((etag, text[nl + 1..].to_vec()))
}

/// ` (did you mean `x`?)` for a name the registry does not have, from its
/// search (for the name, then for its first word, since a search rarely
/// matches a typo whole); empty when nothing is near or search fails.
async fn did_you_mean(client: &client::RegistryClient, name: &SkillName) -> String {
    let mut names: Vec<String> = Vec::new();
    let first = name.as_str().split('-').next().unwrap_or_default();
    for q in [name.as_str(), first] {
        if let Ok(found) = client.search(q, 50).await {
            names.extend(found.skills.into_iter().map(|h| h.name.to_string()));
        }
        if q == first {
            break;
        }
    }
    match skillpm_core::text::nearest(name.as_str(), names.iter().map(String::as_str)) {
        Some(near) => format!(" (did you mean `{near}`?)"),
        None => String::new(),
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
                tree: None,
                dependencies: Vec::new(),
                signed_by: best.sig.as_ref().map(|s| s.keyid.clone()),
                plugin: None,
            },
            packed: None,
        })
    }

    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::Registry { url } = &locked.source else {
            unreachable!("RegistrySource is only handed registry packages")
        };
        let (name, version) = (&locked.name, &locked.version);
        self.check_locked(url, locked).await?;
        let what = || registry_err(format!("downloading {name}@{version}"));
        let client = self.client(url)?;
        let resp = client
            .download_response(name.as_str(), &version.to_string())
            .await
            .map_err(what())?;
        // Reading stops at the reserved size; one announced past the
        // limit is refused before any of it is read.
        let size = resp
            .content_length()
            .unwrap_or(MAX_DOWNLOAD)
            .min(MAX_DOWNLOAD);
        let held = self
            .budget
            .clone()
            .acquire_many_owned(size.div_ceil(KIB).max(1) as u32)
            .await
            .expect("the budget is never closed");
        let bytes = client.read_capped(resp, size).await.map_err(what())?;
        Ok(Package::Downloaded(bytes, Some(held)))
    }
}
