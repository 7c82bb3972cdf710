//! Agent Skills discovery via well-known URIs (RFC v0.2.0, and the legacy
//! v0.1.0 layout).
//!
//! A site publishes `/.well-known/agent-skills/index.json`:
//! `{"$schema": ..., "skills": [{name, type, description, url, digest}]}`
//! where `type` is `skill-md` (the artifact is one `SKILL.md`) or
//! `archive` (a `.tar.gz` or `.zip` of the skill directory). `url` is
//! resolved against the index URL (RFC 3986). The legacy layout,
//! `/.well-known/skills/index.json`, lists `files` per skill instead, served
//! under `{index dir}/{name}/`; entries may carry a per-file `digest`, and
//! a `package: {url, digest}` archive is used when present.
//!
//! Everything here is untrusted: the index and every artifact are read
//! with a cap, only `https://` (and `http://` to loopback) is ever
//! fetched, redirects included, and an artifact's digest is checked (in
//! [`super::verify`]) before a single byte of it is unpacked. Archives go
//! through the hardened unpacker; then the tree is packed
//! deterministically like a git skill, so the lock's `checksum` proves the
//! installed tree and its `digest` proves what the site served.

use super::{chain, one_line};
use super::{identify_named, verify, Package, Request, Resolution, Source, SourceError};
use super::{memo, Memo};
use crate::cache::Cache;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::project::spec::{self, WellKnownUrl};
use skillpm_core::archive::{self, Format, Limits};
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use skillpm_core::text::sanitize;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Largest index accepted.
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// Largest artifact (archive, or all files of a legacy skill together).
pub const MAX_ARTIFACT_BYTES: u64 = 10 * 1024 * 1024;
/// Most files a legacy `files` entry may list.
const MAX_FILES: usize = 1000;

/// What a skill of an index is served as.
#[derive(Debug, Clone)]
pub enum Artifact {
    /// One file with a digest: a `SKILL.md` (type `skill-md`) or a
    /// `.tar.gz` / `.zip` of the skill directory (type `archive`). Which
    /// one is decided by the verified bytes themselves (see
    /// [`Format::sniff`]), so a lock needs no type and a server may name
    /// its URLs as it likes.
    Single { url: WellKnownUrl, digest: Checksum },
    /// Legacy: files under `dir`, each with its digest when the index
    /// gives one.
    Files {
        dir: WellKnownUrl,
        files: Vec<(String, Option<Checksum>)>,
    },
}

/// One usable skill of an index.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: SkillName,
    pub description: String,
    pub artifact: Artifact,
}

/// A fetched and checked index.
#[derive(Debug, Clone)]
pub struct Index {
    pub url: WellKnownUrl,
    /// Sorted by name, unique.
    pub skills: Vec<Listed>,
    /// Entries that could not be used, one sanitized line each.
    pub skipped: Vec<String>,
}

impl Index {
    pub fn get(&self, name: &SkillName) -> Option<&Listed> {
        self.skills.iter().find(|s| s.name == *name)
    }
}

#[derive(serde::Deserialize)]
struct RawIndex {
    #[serde(default, rename = "$schema")]
    schema: Option<String>,
    skills: Vec<RawSkill>,
}

/// The index schemas this client reads: any 0.x discovery schema (the
/// legacy v0.1.0 index has none).
fn known_schema(s: &str) -> bool {
    s.strip_prefix("https://schemas.agentskills.io/discovery/")
        .and_then(|rest| rest.split('/').next())
        .is_some_and(|v| v.starts_with("0."))
}

#[derive(serde::Deserialize)]
struct RawSkill {
    #[serde(default)]
    name: serde_json::Value,
    #[serde(default)]
    description: serde_json::Value,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    files: Option<Vec<RawFile>>,
    #[serde(default)]
    package: Option<RawPackage>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RawFile {
    Path(String),
    WithDigest {
        path: String,
        #[serde(default)]
        digest: Option<String>,
    },
}

#[derive(serde::Deserialize)]
struct RawPackage {
    url: String,
    digest: String,
}

/// Why an index document is refused as a whole.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("not a skills index")]
    NotAnIndex(#[source] serde_json::Error),
    /// The schema, sanitized.
    #[error("unsupported index schema {0:?}; upgrade skillpm")]
    Schema(String),
}

/// Why one entry of an index is skipped; every text from the index is
/// sanitized.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("no `{0}`")]
    Missing(&'static str),
    #[error("invalid name")]
    Name(#[source] skillpm_core::name::NameError),
    #[error("url {0:?}")]
    Url(String, #[source] url::ParseError),
    #[error(transparent)]
    Refused(#[from] crate::project::spec::SpecError),
    #[error("bad digest")]
    Digest(#[source] skillpm_core::checksum::ChecksumError),
    #[error("unknown type {0:?}")]
    Kind(String),
    #[error("neither `type` and `url` nor `files`")]
    Shape,
    #[error("more than {MAX_FILES} files")]
    TooManyFiles,
    #[error("unsafe file path {0:?}")]
    UnsafePath(String),
    #[error("`files` has no SKILL.md")]
    NoSkillMd,
}

/// Parses an index body fetched from `url`; bad entries are skipped with
/// a reason, a bad document is an error.
pub fn parse_index(url: &WellKnownUrl, body: &[u8]) -> Result<Index, IndexError> {
    let raw: RawIndex = serde_json::from_slice(body).map_err(IndexError::NotAnIndex)?;
    if let Some(schema) = raw.schema.as_deref().filter(|s| !known_schema(s)) {
        return Err(IndexError::Schema(sanitize(schema).into_owned()));
    }
    let mut skills: Vec<Listed> = Vec::new();
    let mut skipped = Vec::new();
    // Names seen so far: a duplicate is found in one lookup, not by
    // comparing every entry with every earlier one (quadratic in a
    // hostile index's length).
    let mut names: HashSet<SkillName> = HashSet::new();
    for entry in raw.skills {
        let shown = entry
            .name
            .as_str()
            .map(|n| sanitize(n).chars().take(64).collect::<String>())
            .unwrap_or_else(|| "(no name)".into());
        match listed(url, entry) {
            Ok(l) if !names.insert(l.name.clone()) => {
                skipped.push(format!("{shown}: listed more than once"))
            }
            Ok(l) => skills.push(l),
            Err(why) => skipped.push(format!("{shown}: {}", chain(&why))),
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Index {
        url: url.clone(),
        skills,
        skipped,
    })
}

/// Resolves `rel` against `base` (RFC 3986) and checks the result may be
/// fetched coming from `base`.
/// What went wrong with a well-known site, its index or an artifact.
/// Messages keep their causes' text (a reqwest error says little alone),
/// which the CLI's one-line printer then does not repeat.
#[derive(Debug, thiserror::Error)]
pub enum WellKnownError {
    #[error("cannot start HTTP: {}", chain(.0))]
    Client(#[source] super::tls::TlsError),
    #[error("cannot start HTTP: {0}")]
    Build(#[source] reqwest::Error),
    #[error("GET {url}: {}", one_line(&chain(.source)))]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("GET {url}: the server answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("GET {url}: more than {cap} bytes; refusing it")]
    TooLarge { url: String, cap: u64 },
    #[error("GET {url}: not found (404)")]
    NotFound { url: String },
    #[error(
        "no Agent Skills index at {tried} (404); if this is a git repository, write `git+URL`"
    )]
    NoIndex { tried: String },
    #[error("{url}: {}", chain(.source))]
    Index {
        url: String,
        #[source]
        source: IndexError,
    },
    #[error("{}", chain(.0))]
    Entry(#[source] EntryError),
    #[error("{index} lists no usable skill{}", skipped_note(.skipped))]
    NoneUsable { index: String, skipped: Vec<String> },
    #[error("{index}: a well-known skill needs a name")]
    Unnamed { index: String },
    #[error("{index} does not list a skill named `{name}`")]
    NotListed { index: String, name: SkillName },
    #[error("{index} no longer lists `{name}` as files; run `skillpm update {name}`")]
    NoLongerFiles { index: String, name: SkillName },
}

/// ` (N entries skipped; first: …)`, or nothing when none was.
fn skipped_note(skipped: &[String]) -> String {
    match skipped.first() {
        Some(first) => format!(
            " ({} entries skipped; first: {})",
            skipped.len(),
            sanitize(first)
        ),
        None => String::new(),
    }
}

fn join(base: &WellKnownUrl, rel: &str) -> Result<WellKnownUrl, EntryError> {
    let u = base
        .as_url()
        .join(rel)
        .map_err(|e| EntryError::Url(sanitize(rel).into_owned(), e))?;
    Ok(base.allows(u)?)
}

fn digest(s: Option<&str>) -> Result<Checksum, EntryError> {
    let s = s.ok_or(EntryError::Missing("digest"))?;
    Checksum::parse(s).map_err(EntryError::Digest)
}

fn listed(index: &WellKnownUrl, e: RawSkill) -> Result<Listed, EntryError> {
    let raw_name = e.name.as_str().ok_or(EntryError::Missing("name"))?;
    let name = SkillName::new(raw_name).map_err(EntryError::Name)?;
    let description = e.description.as_str().unwrap_or("").to_string();
    let artifact = match (e.kind.as_deref(), &e.url, &e.package, &e.files) {
        (Some("skill-md" | "archive"), Some(u), _, _) => Artifact::Single {
            url: join(index, u)?,
            digest: digest(e.digest.as_deref())?,
        },
        (Some("skill-md" | "archive"), None, _, _) => return Err(EntryError::Missing("url")),
        (Some(other), _, _, _) => return Err(EntryError::Kind(sanitize(other).into_owned())),
        (None, _, Some(p), _) => Artifact::Single {
            url: join(index, &p.url)?,
            digest: digest(Some(&p.digest))?,
        },
        (None, _, None, Some(files)) => files_artifact(index, &name, files)?,
        (None, _, None, None) => return Err(EntryError::Shape),
    };
    Ok(Listed {
        name,
        description,
        artifact,
    })
}

fn files_artifact(
    index: &WellKnownUrl,
    name: &SkillName,
    files: &[RawFile],
) -> Result<Artifact, EntryError> {
    if files.len() > MAX_FILES {
        return Err(EntryError::TooManyFiles);
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let (path, d) = match f {
            RawFile::Path(p) => (p.as_str(), None),
            RawFile::WithDigest { path, digest: d } => (path.as_str(), d.as_deref()),
        };
        // The RFC's path rules: relative, '/'-separated, printable ASCII
        // without `\ ? # [ ]`, no `..`.
        let printable = path
            .chars()
            .all(|c| (' '..='~').contains(&c) && !"\\?#[]".contains(c));
        if !printable || spec::check_subpath(path).is_err() || path.split('/').any(str::is_empty) {
            return Err(EntryError::UnsafePath(sanitize(path).into_owned()));
        }
        let d = d.map(|d| digest(Some(d))).transpose()?;
        out.push((path.to_string(), d));
    }
    if !out.iter().any(|(p, _)| p == "SKILL.md" || p == "skill.md") {
        return Err(EntryError::NoSkillMd);
    }
    Ok(Artifact::Files {
        dir: join(index, &format!("{name}/"))?,
        files: out,
    })
}

/// Well-known sources: one HTTP client, each index read at most once per
/// run.
pub struct WellKnownSource {
    cache: Cache,
    offline: bool,
    limits: Limits,
    /// For URLs that name a host by DNS or a remote address.
    http: OnceCell<reqwest::Client>,
    /// For URLs that name this machine by literal (`127.0.0.1`,
    /// `localhost`).
    http_local: OnceCell<reqwest::Client>,
    /// Index URL → the index there (`None`: 404), read once per run.
    indexes: Memo<Option<Arc<Index>>>,
    /// Resolutions of this run: `add` resolves to learn what it adds, then
    /// installs the same, with one download.
    resolved: Memo<Resolution>,
}

impl WellKnownSource {
    pub fn new(cache: Cache, offline: bool) -> Self {
        WellKnownSource {
            cache,
            offline,
            limits: Limits {
                max_compressed: MAX_ARTIFACT_BYTES,
                ..Limits::default()
            },
            http: OnceCell::new(),
            http_local: OnceCell::new(),
            indexes: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `url`: one whose resolver refuses this machine
    /// ([`super::http::RemoteOnly`]) unless the URL names this machine
    /// by literal, which only a user's own spec (or an index it led to on
    /// this machine) can do.
    async fn client(&self, url: &WellKnownUrl) -> Result<&reqwest::Client, SourceError> {
        if self.offline {
            return Err(SourceError::Offline("a well-known index".into()));
        }
        let (cell, remote) = if url.is_local() {
            (&self.http_local, false)
        } else {
            (&self.http, true)
        };
        cell.get_or_try_init(|| async {
            let builder = super::http::builder()
                .map_err(WellKnownError::Client)?
                // Every hop must satisfy the same rules as the first
                // URL: https, or http to loopback only.
                .redirect(reqwest::redirect::Policy::custom(|attempt| {
                    if attempt.previous().len() >= 5 {
                        return attempt.error("too many redirects");
                    }
                    let first = attempt
                        .previous()
                        .first()
                        .and_then(|u| WellKnownUrl::from_url(u.clone()).ok());
                    match first.map(|f| f.allows(attempt.url().clone())) {
                        Some(Ok(_)) => attempt.follow(),
                        Some(Err(why)) => attempt.error(why.to_string()),
                        None => attempt.error("redirect from an unusable URL refused"),
                    }
                }));
            let builder = if remote {
                builder.dns_resolver(Arc::new(super::http::RemoteOnly))
            } else {
                builder
            };
            builder.build().map_err(|e| WellKnownError::Build(e).into())
        })
        .await
    }

    /// GETs `url` with a cap; `Ok(None)` on 404/410 (so discovery can try
    /// the next location).
    async fn get(&self, url: &WellKnownUrl, cap: u64) -> Result<Option<Vec<u8>>, SourceError> {
        let shown = || sanitize(url.as_str()).into_owned();
        let failed = |source| WellKnownError::Request {
            url: shown(),
            source,
        };
        let too_large = || WellKnownError::TooLarge { url: shown(), cap };
        let client = self.client(url).await?;
        let mut resp = client
            .get(url.as_url().clone())
            .send()
            .await
            .map_err(failed)?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND || status == reqwest::StatusCode::GONE {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(WellKnownError::Status {
                url: shown(),
                status,
            }
            .into());
        }
        if resp.content_length().is_some_and(|n| n > cap) {
            return Err(too_large().into());
        }
        let mut out = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(failed)? {
            if out.len() as u64 + chunk.len() as u64 > cap {
                return Err(too_large().into());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Some(out))
    }

    async fn get_found(&self, url: &WellKnownUrl, cap: u64) -> Result<Vec<u8>, SourceError> {
        self.get(url, cap).await?.ok_or_else(|| {
            WellKnownError::NotFound {
                url: sanitize(url.as_str()).into_owned(),
            }
            .into()
        })
    }

    /// The index for `site`: the URL itself if it names an `index.json`,
    /// else the RFC location, then the legacy one. Read once per run.
    pub async fn discover(&self, site: &WellKnownUrl) -> Result<Arc<Index>, SourceError> {
        let candidates = site.index_candidates();
        for url in &candidates {
            if let Some(index) = self.index_at(url).await? {
                return Ok(index);
            }
        }
        let tried: Vec<String> = candidates
            .iter()
            .map(|u| sanitize(u.as_str()).into_owned())
            .collect();
        Err(WellKnownError::NoIndex {
            tried: tried.join(" or "),
        }
        .into())
    }

    /// The index at exactly `url`, or `None` when the server has none
    /// there; each URL is read at most once per run.
    async fn index_at(&self, url: &WellKnownUrl) -> Result<Option<Arc<Index>>, SourceError> {
        let cell = memo(&self.indexes, url.to_string());
        cell.get_or_try_init(|| async {
            let Some(body) = self.get(url, MAX_INDEX_BYTES).await? else {
                return Ok(None);
            };
            let index = parse_index(url, &body).map_err(|source| WellKnownError::Index {
                url: sanitize(url.as_str()).into_owned(),
                source,
            })?;
            Ok(Some(Arc::new(index)))
        })
        .await
        .cloned()
    }

    /// The digest `index` lists for `name` now, for `outdated`: `None`
    /// when the skill is gone or, for a legacy entry without per-file
    /// digests, when only a download would tell.
    pub async fn listed_digest(
        &self,
        index: &WellKnownUrl,
        name: &SkillName,
    ) -> Result<Option<Checksum>, SourceError> {
        let idx = self.discover(index).await?;
        Ok(match idx.get(name).map(|l| &l.artifact) {
            Some(Artifact::Single { digest, .. }) => Some(*digest),
            Some(Artifact::Files { files, .. }) => files
                .iter()
                .map(|(p, d)| d.map(|d| (p.clone(), d)))
                .collect::<Option<Vec<_>>>()
                .map(|all| verify::files_digest(&all)),
            None => None,
        })
    }

    /// Downloads a skill's artifact, checks its digest against `expected`
    /// (the index's, or the lock's) and turns it into a packed tree.
    async fn materialize(
        &self,
        name: &SkillName,
        artifact: &Artifact,
        expected: Option<&Checksum>,
    ) -> Result<Materialized, SourceError> {
        match artifact {
            Artifact::Single { url, digest } => {
                let want = expected.unwrap_or(digest);
                let bytes = self.get_found(url, MAX_ARTIFACT_BYTES).await?;
                verify::verify_artifact(name, url.as_str(), want, &bytes)?;
                self.unpack_single(name, url, *want, bytes)
            }
            Artifact::Files { dir: base, files } => {
                let mut fetched = Vec::with_capacity(files.len());
                let mut total: u64 = 0;
                for (path, file_digest) in files {
                    let url = join(base, path).map_err(WellKnownError::Entry)?;
                    let bytes = self.get_found(&url, MAX_ARTIFACT_BYTES - total).await?;
                    total += bytes.len() as u64;
                    if let Some(d) = file_digest {
                        verify::verify_artifact(name, url.as_str(), d, &bytes)?;
                    }
                    fetched.push((path.clone(), bytes));
                }
                let sums: Vec<(String, Checksum)> = fetched
                    .iter()
                    .map(|(p, b)| (p.clone(), Checksum::of_bytes(b)))
                    .collect();
                let got = verify::files_digest(&sums);
                if let Some(want) = expected {
                    if got != *want {
                        return Err(SourceError::DigestMismatch {
                            package: name.to_string(),
                            artifact: sanitize(base.as_str()).into_owned(),
                            expected: *want,
                            actual: got,
                        });
                    }
                }
                let dir = new_tmp(&self.tmp_parent()?)?;
                for (path, bytes) in &fetched {
                    write_new(dir.path(), path, bytes)?;
                }
                made(name, &dir, base.clone(), got)
            }
        }
    }

    /// The packed tree of a single-file artifact whose digest was checked:
    /// an archive (through the hardened unpacker) or a bare `SKILL.md`.
    fn unpack_single(
        &self,
        name: &SkillName,
        url: &WellKnownUrl,
        digest: Checksum,
        bytes: Vec<u8>,
    ) -> Result<Materialized, SourceError> {
        let tmp_parent = self.tmp_parent()?;
        let dir = match Format::sniff(&bytes) {
            Some(format) => {
                archive::unpack_to_new_dir_as(format, &bytes, None, &tmp_parent, &self.limits)
                    .map_err(|source| SourceError::Refused {
                        package: name.to_string(),
                        source,
                    })?
            }
            None if bytes.len() as u64 > skillpm_core::skill::MAX_SKILL_MD_BYTES => {
                return Err(SourceError::BadSkill {
                    dir: sanitize(url.as_str()).into_owned(),
                    message: "neither an archive nor a SKILL.md of at most 256 KiB".into(),
                })
            }
            None => {
                let dir = new_tmp(&tmp_parent)?;
                write_new(dir.path(), "SKILL.md", &bytes)?;
                dir
            }
        };
        made(name, &dir, url.clone(), digest)
    }

    fn tmp_parent(&self) -> Result<std::path::PathBuf, SourceError> {
        let tmp_parent = self.cache.root().join("tmp");
        std::fs::create_dir_all(&tmp_parent).map_err(crate::fs::fs_err("create", &tmp_parent))?;
        Ok(tmp_parent)
    }
}

/// The skill in `dir` (an artifact unpacked or written out), checked to be
/// the one the index lists as `name`, as its canonical tar.
fn made(
    name: &SkillName,
    dir: &tempfile::TempDir,
    artifact: WellKnownUrl,
    digest: Checksum,
) -> Result<Materialized, SourceError> {
    let root = skill_root(dir.path());
    let shown = sanitize(artifact.as_str()).into_owned();
    let (found, version) = identify_named(&root, &shown, Some(name))?;
    if found != *name {
        return Err(SourceError::BadSkill {
            dir: shown,
            message: format!("the index lists `{name}`, but the skill is named `{found}`"),
        });
    }
    Ok(Materialized {
        version,
        artifact,
        digest,
        tree: Verified::of(archive::tar_dir(&root)?),
    })
}

struct Materialized {
    version: semver::Version,
    artifact: WellKnownUrl,
    digest: Checksum,
    /// The canonical tar of the skill's tree.
    tree: Verified,
}

fn new_tmp(parent: &Path) -> Result<tempfile::TempDir, SourceError> {
    tempfile::Builder::new()
        .prefix(".skillpm-wellknown-")
        .tempdir_in(parent)
        .map_err(|e| crate::fs::fs_err("create a directory in", parent)(e).into())
}

/// Writes `rel` (already checked: relative, no `..`) under `dir`,
/// refusing to reuse any existing path.
fn write_new(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), SourceError> {
    use std::io::Write as _;
    let target = dir.join(rel);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(crate::fs::fs_err("create", parent))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .map_err(crate::fs::fs_err("create", &target))?;
    f.write_all(bytes)
        .map_err(|e| crate::fs::fs_err("write", &target)(e).into())
}

/// The skill directory inside an unpacked archive: its root, or the one
/// directory it wraps everything in (`name/SKILL.md`), as many archivers
/// make.
fn skill_root(dir: &Path) -> std::path::PathBuf {
    if skillpm_core::skill::find_skill_file(dir).is_some() {
        return dir.to_path_buf();
    }
    let entries: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).take(2).collect(),
        Err(_) => return dir.to_path_buf(),
    };
    match entries.as_slice() {
        [only] if only.file_type().is_ok_and(|t| t.is_dir()) => only.path(),
        _ => dir.to_path_buf(),
    }
}

impl Source for WellKnownSource {
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let Dependency::WellKnown { index } = req.dep else {
            unreachable!("WellKnownSource is only handed well-known dependencies")
        };
        let Some(name) = req.name else {
            return Err(WellKnownError::Unnamed {
                index: sanitize(index.as_str()).into_owned(),
            }
            .into());
        };
        let cell = memo(&self.resolved, format!("{index}#{name}"));
        cell.get_or_try_init(|| self.resolve_uncached(index, name))
            .await
            .cloned()
    }

    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        self.fetch_locked(locked).await
    }
}

impl WellKnownSource {
    async fn resolve_uncached(
        &self,
        index: &WellKnownUrl,
        name: &SkillName,
    ) -> Result<Resolution, SourceError> {
        let idx = self.discover(index).await?;
        let listed = idx.get(name).ok_or_else(|| WellKnownError::NotListed {
            index: sanitize(idx.url.as_str()).into_owned(),
            name: name.clone(),
        })?;
        let m = self.materialize(name, &listed.artifact, None).await?;
        Ok(Resolution {
            locked: LockedSkill {
                name: name.clone(),
                version: m.version,
                source: LockedSource::WellKnown {
                    index: idx.url.clone(),
                    artifact: m.artifact,
                    digest: m.digest,
                },
                checksum: *m.tree.checksum(),
                path: None,
                tree: None,
                dependencies: Vec::new(),
            },
            packed: Some(m.tree),
        })
    }

    async fn fetch_locked(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::WellKnown {
            index,
            artifact,
            digest,
        } = &locked.source
        else {
            unreachable!("WellKnownSource is only handed well-known packages")
        };
        // Fetched by the locked URL; only a legacy skill (a list of files,
        // locked as its directory URL) needs its index again, for the list.
        let art = if !artifact.as_url().path().ends_with('/') {
            Artifact::Single {
                url: artifact.clone(),
                digest: *digest,
            }
        } else {
            let idx = self.discover(index).await?;
            match idx.get(&locked.name).map(|l| &l.artifact) {
                Some(a @ Artifact::Files { .. }) => a.clone(),
                _ => {
                    return Err(WellKnownError::NoLongerFiles {
                        index: sanitize(index.as_str()).into_owned(),
                        name: locked.name.clone(),
                    }
                    .into())
                }
            }
        };
        // An artifact that is a canonical pack (a skillpm-registry
        // download, a `skillpm pack` output) holds the locked tree's tar,
        // gzipped: read in memory, it is the package, with no trip through
        // a directory. (A lock from before trees were locked by their tar
        // names the artifact itself: digest == checksum.)
        if let Artifact::Single { url, .. } = &art {
            let bytes = self.get_found(url, MAX_ARTIFACT_BYTES).await?;
            verify::verify_artifact(&locked.name, url.as_str(), digest, &bytes)?;
            if *digest == locked.checksum {
                return Ok(Package::Downloaded(bytes));
            }
            let tree = archive::unpack_to_memory(&bytes, &self.limits)
                .ok()
                .and_then(|entries| archive::tar_entries(entries).ok())
                .map(Verified::of);
            if let Some(tree) = tree.filter(|t| *t.checksum() == locked.checksum) {
                return Ok(Package::Made(tree));
            }
            let m = self.unpack_single(&locked.name, url, *digest, bytes)?;
            return Ok(Package::Made(m.tree));
        }
        let m = self.materialize(&locked.name, &art, Some(digest)).await?;
        Ok(Package::Made(m.tree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(n: usize) -> Vec<u8> {
        let entries: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"name":"s{i}","type":"skill-md","url":"s{i}/SKILL.md","digest":"sha256:{}"}}"#,
                    "0".repeat(64)
                )
            })
            .collect();
        format!(r#"{{"skills":[{}]}}"#, entries.join(",")).into_bytes()
    }

    /// A hostile index may list as many entries as its size cap allows:
    /// the work grows with their number, not with its square. Four times
    /// the entries cost about four times as long; comparing each with
    /// every earlier one cost sixteen.
    #[test]
    fn parsing_an_index_is_linear_in_its_entries() {
        let url = WellKnownUrl::parse("https://skills.example/.well-known/agent-skills/index.json")
            .unwrap();
        let (small, large) = (index_of(4_000), index_of(16_000));
        let time = |body: &[u8]| {
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let ix = parse_index(&url, body).unwrap();
                    assert!(ix.skipped.is_empty());
                    start.elapsed()
                })
                .min()
                .unwrap()
        };
        let ratio = time(&large).as_secs_f64() / time(&small).as_secs_f64();
        assert!(
            ratio < 9.0,
            "16 000 entries took {ratio:.1}x as long as 4 000"
        );
        let dup = br#"{"skills":[{"name":"a","type":"skill-md","url":"a/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"},{"name":"a","type":"skill-md","url":"b/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}"#;
        let ix = parse_index(&url, dup).unwrap();
        assert_eq!(ix.skills.len(), 1);
        assert_eq!(ix.skipped, ["a: listed more than once"]);
    }
}
