//! Git sources: one bare clone per URL in the cache, read in process.
//!
//! An https URL without credentials is fetched in process ([`fetch`]);
//! everything else, and an https fetch that fails there, goes through the
//! `git` command, run without a shell, with every user value after `--` or
//! `--end-of-options`, with `GIT_ALLOW_PROTOCOL` and `protocol.allow`
//! limited to the transports the spec allowlist accepts (`file` only when
//! the user asked for a `file://` URL), and with prompts disabled;
//! everything it prints is read through a cap ([`process`]). A locked
//! commit that is already in the clone needs no network at all; one that
//! is not is fetched alone, and when the lock records the skills' trees,
//! those trees alone, one request per commit.
//!
//! Refs and commits are resolved in process ([`objects`]), and each skill's
//! tree is read from the raw objects ([`export`]: no `.gitattributes`
//! rewriting, caps before memory) through the unpacker's own checks (so
//! symlinks and odd entries in a repository are refused), then written as
//! its canonical tar (the bytes `tar_dir` gives for that tree on disk):
//! the lock's checksum is the sha256 of that tar, which makes a git skill
//! verifiable exactly like a registry one.

mod export;
mod fetch;
mod fetching;
mod objects;
mod process;
mod v2;

use super::{Package, Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::project::lockfile::{is_full_commit, LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use crate::project::spec::{GitRef, GitUrl};
use fetch::History;
use skillpm_core::archive::{self, Limits};
use skillpm_core::checksum::Verified;
use skillpm_core::name::SkillName;
use skillpm_core::skill::{SkillDoc, SkillError};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use tokio::sync::{OnceCell, Semaphore};

/// How many git processes run at once: enough to overlap network waits,
/// few enough not to thrash a small machine.
pub const GIT_CONCURRENCY: usize = 8;

fn git_cmd(url: Option<&GitUrl>) -> Command {
    let allow = match url {
        Some(u) if u.is_file() => "https:ssh:file",
        _ => "https:ssh",
    };
    let mut c = Command::new("git");
    c.env("GIT_ALLOW_PROTOCOL", allow)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .args(["-c", "protocol.allow=never"])
        .args(["-c", "protocol.https.allow=always"])
        .args(["-c", "protocol.ssh.allow=always"])
        // Git for Windows refuses paths over 260 characters without it;
        // other builds of git ignore the key.
        .args(["-c", "core.longpaths=true"]);
    if url.is_some_and(GitUrl::is_file) {
        c.args(["-c", "protocol.file.allow=always"]);
    }
    c.stdin(std::process::Stdio::null());
    c
}

/// Most a git command other than the export may print: commit ids and
/// the like, never contents.
const MAX_GIT_OUTPUT: u64 = 64 * 1024;

fn run(c: Command, what: &'static str, url: &GitUrl) -> Result<Vec<u8>, SourceError> {
    process::run(c, what, url, MAX_GIT_OUTPUT)
}

/// The bare clone of `url` in the cache, keyed by the URL without its
/// credentials.
/// Whether a repository is at `dir`: its `HEAD` is written last, by
/// `git init` and by [`fetch`]'s own init alike, so an init cut short
/// counts as none and is simply done again.
pub(super) fn is_repo(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
}

fn clone_dir(cache: &Cache, url: &GitUrl) -> PathBuf {
    cache.git_dir(url.redacted().as_str())
}

/// Makes sure the bare clone of `url` exists and is up to date, with as
/// much `history` as asked: in this process when [`fetch::handles`] the
/// URL, else (or when that fails, so git's credential helpers, proxy
/// settings and older protocols still get their chance) through `git`,
/// which fetches all of it. A failure is not retried in process (a
/// server that timed out would only time out again).
fn fetch_repo(cache: &Cache, url: &GitUrl, history: History) -> Result<PathBuf, SourceError> {
    let repo = clone_dir(cache, url);
    let _fetching = fetching(&repo, url)?;
    let in_process = match fetch::handles(url) {
        true => match fetch::fetch(&repo, url, history) {
            Ok(()) => return Ok(repo),
            Err(e) => Some(e),
        },
        false => None,
    };
    match (git_fetch(&repo, url), in_process) {
        (Ok(()), _) => Ok(repo),
        (Err(e), None) => Err(e),
        // Without git, its absence is not the news: why the fetch failed
        // is (and that git is what it takes, when it is).
        (Err(SourceError::GitMissing(_)), Some(first)) => Err(first.without_git()),
        // Both failed: git's reason, and ours when it says something else
        // (rustls's view of a certificate, say).
        (Err(SourceError::Git { what, url, detail }), Some(first)) => match *first.error {
            SourceError::Git { detail: first, .. } if first != detail => Err(SourceError::Git {
                what,
                url,
                detail: format!("{detail} (in process: {first})"),
            }),
            _ => Err(SourceError::Git { what, url, detail }),
        },
        (Err(e), Some(_)) => Err(e),
    }
}

/// Holds `repo` for one fetch from `url` ([`fetching::Fetching`]), and
/// records that this run asks `url`'s server: every request goes through
/// here first.
fn fetching(repo: &Path, url: &GitUrl) -> Result<fetching::Fetching, SourceError> {
    let held = fetching::Fetching::start(repo)
        .map_err(|e| SourceError::from(crate::fs::fs_err("lock", &fetching::lock_path(repo))(e)))?;
    ASKED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(url.redacted());
    Ok(held)
}

/// Repositories (by URL without credentials) whose server this run has
/// asked for something: what a package of theirs was made from did not
/// all come from the cache.
static ASKED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Whether this run asked the server of `url` for anything so far: a
/// package of it made before any request, or made without one, came from
/// the cache's repositories alone.
pub fn asked(url: &GitUrl) -> bool {
    let asked = ASKED.lock().unwrap_or_else(|p| p.into_inner());
    asked.contains(&url.redacted())
}

/// Whether `reference` may name a commit behind the tips (a commit id,
/// `HEAD~2`), which only the whole history can resolve. A tag or branch
/// that is missing is missing at any depth: every ref is fetched.
fn may_be_behind_tips(reference: Option<&GitRef>) -> bool {
    match reference {
        Some(GitRef::Rev(_)) => true,
        Some(GitRef::Unspecified(x)) => {
            (x.len() >= 4 && x.bytes().all(|b| b.is_ascii_hexdigit())) || x.contains(['~', '^'])
        }
        _ => false,
    }
}

/// [`fetch_repo`] through the `git` command.
fn git_fetch(repo: &Path, url: &GitUrl) -> Result<(), SourceError> {
    if !is_repo(repo) {
        std::fs::create_dir_all(repo).map_err(crate::fs::fs_err("create", repo))?;
        let mut c = git_cmd(Some(url));
        // No template: a cache clone needs no sample hooks or description.
        c.args(["init", "--bare", "--quiet", "--template=", "--"])
            .arg(repo);
        run(c, "init for", url)?;
    }
    let mut c = git_cmd(Some(url));
    // Keep what arrives as one pack (not a loose file per object), and
    // skip FETCH_HEAD and background maintenance: nothing here reads them,
    // and each costs files or a process. (Settings a git too old to know
    // them ignores.) An https server that stops sending is given up on
    // once it has sent nothing for the in-process client's timeout
    // (`SKILLPM_HTTP_TIMEOUT`, whole seconds here), where git would wait
    // without end.
    let stalled = crate::source::http::timeout().as_secs_f64().ceil().max(1.0) as u64;
    c.args(["-c", "fetch.unpackLimit=1"])
        .args(["-c", "http.lowSpeedLimit=1"])
        .arg("-c")
        .arg(format!("http.lowSpeedTime={stalled}"))
        .args(["-c", "fetch.writeFetchHEAD=false"])
        .args(["-c", "maintenance.auto=false"])
        .args(["-c", "gc.auto=0"])
        .arg("--git-dir")
        .arg(repo)
        .args(["fetch", "--quiet", "--force", "--prune", "--no-tags"]);
    // All of it, even where an earlier fetch in process took tips alone.
    if repo.join("shallow").is_file() {
        c.arg("--unshallow");
    }
    c.arg("--").arg(url.as_str()).args(fetch::REFSPECS);
    run(c, "fetch from", url)?;
    Ok(())
}

/// Resolves `r` to a full commit id in the bare clone.
fn resolve_ref(repo: &Path, url: &GitUrl, r: Option<&GitRef>) -> Result<String, SourceError> {
    let candidates: Vec<String> = match r {
        None => vec!["refs/skillpm/HEAD".into()],
        Some(GitRef::Tag(t)) => vec![format!("refs/tags/{t}")],
        Some(GitRef::Branch(b)) => vec![format!("refs/heads/{b}")],
        Some(GitRef::Rev(c)) => vec![c.clone()],
        Some(GitRef::Unspecified(x)) => vec![
            format!("refs/tags/{x}"),
            format!("refs/heads/{x}"),
            x.clone(),
        ],
    };
    // In this process first; `git rev-parse` only for what that does not
    // read (`HEAD~2` and other revision syntax).
    if let Ok(r) = objects::open(repo, url) {
        let r = r.to_thread_local();
        if let Some(c) = candidates.iter().find_map(|c| objects::commit_of(&r, c)) {
            return Ok(c);
        }
    }
    for cand in &candidates {
        if let Some(c) = rev_parse(repo, url, cand)? {
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

fn rev_parse(repo: &Path, url: &GitUrl, rev: &str) -> Result<Option<String>, SourceError> {
    let mut c = git_cmd(Some(url));
    c.arg("--git-dir")
        .arg(repo)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"));
    let out = match run(c, "rev-parse in", url) {
        Ok(out) => out,
        // Not found (or not a commit): the caller tries the next candidate.
        Err(SourceError::Git { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let id = String::from_utf8_lossy(&out).trim().to_string();
    Ok(is_full_commit(&id).then_some(id))
}

/// Where a restore keeps the commits and trees it fetched alone: a bare
/// repository beside the clone of `url`. Those commits arrive without
/// their history (the protocol's `deepen 1`), and those trees without a
/// commit, so they stay out of the clone, whose `shallow` file lists each
/// commit of its own that lacks its parents (`git`, which may fetch into
/// the clone too, trusts that list); nothing but [`fetch_commit`] and
/// [`tree_holder`] writes here and nothing reads more than a commit's
/// tree or a tree.
fn commits_dir(cache: &Cache, url: &GitUrl) -> PathBuf {
    let mut dir = clone_dir(cache, url).into_os_string();
    dir.push(".commits");
    dir.into()
}

/// The repository in the cache that holds `commit` of `url`, if one does
/// (so `--frozen` can work): the clone, or the commits fetched alone.
fn holder(cache: &Cache, url: &GitUrl, commit: &str) -> Option<PathBuf> {
    [clone_dir(cache, url), commits_dir(cache, url)]
        .into_iter()
        .find(|repo| holds(repo, url, commit))
}

/// Whether the cache holds no repository of `url`: neither the clone
/// nor the commits fetched alone (one that does answers a restore from
/// disk, most often).
fn lacks_repos(cache: &Cache, url: &GitUrl) -> bool {
    [clone_dir(cache, url), commits_dir(cache, url)]
        .iter()
        .all(|repo| !is_repo(repo))
}

fn holds(repo: &Path, url: &GitUrl, commit: &str) -> bool {
    is_repo(repo)
        && objects::open(repo, url)
            .is_ok_and(|r| objects::tree_of(&r.to_thread_local(), commit).is_some())
}

/// Fetches `commit` alone, without its history, in one request
/// ([`fetch::fetch_commit`]), when the URL is one this process fetches;
/// returns the repository that now holds it. `None` means "do the whole
/// fetch": its errors (and the `git` fallback) are the ones worth
/// reporting.
fn fetch_commit(cache: &Cache, url: &GitUrl, commit: &str) -> Option<PathBuf> {
    let repo = commits_dir(cache, url);
    if !fetch::handles(url) {
        return None;
    }
    let _fetching = fetching(&repo, url).ok()?;
    (fetch::fetch_commit(&repo, url, commit).is_ok() && holds(&repo, url, commit)).then_some(repo)
}

/// A skill packed from a commit: what it says it is, its canonical tar,
/// and the id of the git tree it was packed from.
#[derive(Clone)]
struct Packed {
    name: SkillName,
    version: semver::Version,
    tree: Verified,
    tree_id: String,
}

/// Exports `subpath` of `commit` (through the commit's shared listing and
/// object reader) and packs it.
fn pack_commit(
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    subpath: Option<&str>,
    limits: &Limits,
) -> Result<Packed, SourceError> {
    let shown = shown(url, commit, subpath);
    let entries = export::tree(shared, url, subpath, limits).map_err(refused(&shown))?;
    let tree_id = shared.tree_id(url, subpath)?;
    packed(entries, &shown, tree_id.to_string())
}

/// Exports the tree `tree` of `commit` (a skill's directory the lock
/// records, fetched alone) and packs it; `None` when the repository does
/// not hold that tree. Not identified: the lock names the skill and its
/// checksum pins these bytes, so reading `SKILL.md`'s frontmatter again
/// (a YAML parse per skill, a tenth of a 10-skill restore's packing)
/// would only be thrown away.
fn pack_tree(
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    tree: &str,
    subpath: Option<&str>,
    limits: &Limits,
) -> Result<Option<Verified>, SourceError> {
    let shown = shown(url, commit, subpath);
    let id = gix::ObjectId::from_hex(tree.as_bytes())
        .map_err(|e| objects::error("reading", url, format!("tree {tree:?}: {e}")))?;
    match export::tree_by_id(shared, url, id, limits).map_err(refused(&shown))? {
        Some(entries) => Ok(Some(Verified::of(archive::tar_entries(entries)?))),
        None => Ok(None),
    }
}

/// How a skill of a commit is named in errors.
fn shown(url: &GitUrl, commit: &str, subpath: Option<&str>) -> String {
    let short = &commit[..12.min(commit.len())];
    format!("{}@{short}:{}", url.redacted(), subpath.unwrap_or("."))
}

/// A tree over a cap is named, as a refused registry package is.
fn refused(shown: &str) -> impl Fn(SourceError) -> SourceError + '_ {
    move |e| match e {
        SourceError::Unpack(source) => SourceError::Refused {
            package: shown.to_string(),
            source,
        },
        other => other,
    }
}

/// The exported `entries` (already within the unpacked-size and entry
/// caps) as a skill: identified by its `SKILL.md`, and packed.
fn packed(
    entries: Vec<archive::MemEntry>,
    shown: &str,
    tree_id: String,
) -> Result<Packed, SourceError> {
    let doc = super::verify::entries_doc(&entries);
    packed_with(entries, doc, shown, tree_id)
}

/// [`packed`] of a tree whose `SKILL.md` is parsed already.
fn packed_with(
    entries: Vec<archive::MemEntry>,
    doc: Option<Result<SkillDoc, SkillError>>,
    shown: &str,
    tree_id: String,
) -> Result<Packed, SourceError> {
    let (name, version) = super::verify::identify_doc(doc, shown)?;
    Ok(Packed {
        name,
        version,
        tree: Verified::of(archive::tar_entries(entries)?),
        tree_id,
    })
}

/// The repository in the cache that holds every tree in `wanted` (the
/// clone, or the one [`fetch_commit`] fills), fetching there those it
/// lacks, in one request, unless `offline`. `None`: the commit is
/// fetched instead (as it is for a tree the fetch did not bring).
fn tree_holder(cache: &Cache, url: &GitUrl, wanted: &[String], offline: bool) -> Option<PathBuf> {
    let lacking = |repo: &Path| -> Vec<&str> {
        let opened = match is_repo(repo) {
            true => objects::open(repo, url).ok(),
            false => None,
        };
        let Some(opened) = opened else {
            return wanted.iter().map(String::as_str).collect();
        };
        let r = opened.to_thread_local();
        wanted
            .iter()
            .filter(|t| !gix::ObjectId::from_hex(t.as_bytes()).is_ok_and(|id| r.has_object(id)))
            .map(String::as_str)
            .collect()
    };
    let (clone, alone) = (clone_dir(cache, url), commits_dir(cache, url));
    if lacking(&clone).is_empty() {
        return Some(clone);
    }
    let missing = lacking(&alone);
    if missing.is_empty() {
        return Some(alone);
    }
    if offline || !fetch::handles(url) {
        return None;
    }
    let _fetching = fetching(&alone, url).ok()?;
    fetch::fetch_trees(&alone, url, &missing).ok()?;
    // Not checked again: a tree the server left out is missed where it
    // is read ([`export::tree_by_id`]), and that skill's commit is
    // fetched instead.
    Some(alone)
}

/// The repository that holds a commit's trees, opened to read them
/// ([`holding_trees`]).
type TreeSet = Result<Option<Arc<export::Shared>>, SourceError>;

/// [`tree_holder`], with the repository it names opened for the skills
/// of `commit` to be read from, in the same task rather than one more
/// trip to the pool.
fn holding_trees(
    cache: &Cache,
    url: &GitUrl,
    commit: &str,
    wanted: &[String],
    offline: bool,
) -> TreeSet {
    let Some(repo) = tree_holder(cache, url, wanted, offline) else {
        return Ok(None);
    };
    Ok(Some(Arc::new(export::Shared::trees_only(
        &repo, url, commit,
    )?)))
}

/// What the skills of `commit` share ([`export::Shared`]), read from the
/// repository that holds it (`held`), else from the clone of `url`.
fn listed(
    cache: &Cache,
    held: Option<PathBuf>,
    url: &GitUrl,
    commit: &str,
) -> Result<Arc<export::Shared>, SourceError> {
    let repo = held.unwrap_or_else(|| clone_dir(cache, url));
    let shared = export::Shared::new(&repo, url, commit, &listing_limits())?;
    Ok(Arc::new(shared))
}

/// A skill found in a repository by [`GitSource::discover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// Its directory in the repository; `None` for the repository root.
    pub dir: Option<String>,
    /// Its path below the discovery root it sits in (`pdf`,
    /// `document-skills/pdf`), as `status` would show it.
    pub command: String,
    /// The package name: frontmatter `name`, else the directory name.
    pub name: String,
    pub description: String,
}

/// Directories that hold skills in the layouts agents read, longest
/// first: a skill's command is its path below the first that matches.
const SKILL_ROOTS: [&str; 4] = [
    ".claude/skills/",
    ".agents/skills/",
    ".github/skills/",
    "skills/",
];

/// A listing of a whole repository may be larger than one skill's tree.
fn listing_limits() -> Limits {
    Limits {
        max_entries: 200_000,
        max_path_len: 4096,
        ..Limits::default()
    }
}

/// The command a skill at `dir` gets: its path below the discovery root
/// it sits in, with a leading dot-directory (openai's `.curated/`,
/// `.system/`) dropped as well.
fn command_of(dir: &str) -> String {
    let mut rest = dir;
    for root in SKILL_ROOTS {
        if let Some(r) = dir.strip_prefix(root) {
            rest = r;
            break;
        }
    }
    match rest.split_once('/') {
        Some((first, tail)) if first.starts_with('.') && !tail.is_empty() => tail.to_string(),
        _ => rest.to_string(),
    }
}

/// Which of the directories holding a `SKILL.md` (sorted by path; the
/// root is `""`) are the skills a user can pick, by index: the root alone
/// if it is a skill; otherwise every one that is not inside another (a
/// nested skill ships with its parent).
fn top_dirs(dirs: &[&str]) -> Vec<usize> {
    if let Some(root) = dirs.iter().position(|d| d.is_empty()) {
        return vec![root];
    }
    let mut tops = Vec::new();
    let mut top_dirs: HashSet<&str> = HashSet::new();
    // Sorted by path, so a parent comes before everything below it; each
    // directory's ancestors are looked up, not every top so far.
    for (i, dir) in dirs.iter().enumerate() {
        let nested = dir
            .match_indices('/')
            .any(|(at, _)| top_dirs.contains(&dir[..at]));
        if !nested {
            top_dirs.insert(dir);
            tops.push(i);
        }
    }
    tops
}

/// The skill directory `dir` names in a listing (`None` for the root).
fn skill_dir(dir: &str) -> Option<String> {
    (!dir.is_empty()).then(|| dir.to_string())
}

/// Turns the `SKILL.md` files of a tree into the skills a user can pick
/// ([`top_dirs`]).
fn found_skills(files: Vec<(String, Vec<u8>)>) -> Vec<FoundSkill> {
    let dirs: Vec<&str> = files.iter().map(|(d, _)| d.as_str()).collect();
    let tops: Vec<&(String, Vec<u8>)> = top_dirs(&dirs).into_iter().map(|i| &files[i]).collect();
    // A thousand frontmatters to parse: spread over the cores.
    let mut out = crate::parallel::chunked(&tops, 64, |part| {
        part.iter()
            .map(|(d, body)| {
                let doc = skillpm_core::skill::parse(body).ok();
                found(skill_dir(d), doc.as_ref())
            })
            .collect()
    });
    out.sort_by(found_order);
    out
}

/// The order `add` lists skills in: by command, then directory.
fn found_order(a: &FoundSkill, b: &FoundSkill) -> std::cmp::Ordering {
    a.command.cmp(&b.command).then(a.dir.cmp(&b.dir))
}

/// Every skill of the shared commit found ([`top_dirs`]) and packed, in
/// one pass, for `add --all`, which packs each of them anyway: each tree
/// is read once and its `SKILL.md` parsed once, for the listing and the
/// lock both, where listing the skills and then resolving them read and
/// parsed every `SKILL.md` twice. A skill whose `SKILL.md` does not
/// identify it is found unpacked: resolving it says why, as before.
/// `None` when a tree cannot be read whole (over a cap): the skills are
/// then found as for a pick, and that one is refused when resolved.
fn found_packed(
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    limits: &Limits,
) -> Option<Vec<(FoundSkill, Option<Packed>)>> {
    let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
    let dirs = export::skill_dirs(shared, url, &listing_limits(), max).ok()?;
    let names: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let tops: Vec<Option<String>> = top_dirs(&names)
        .into_iter()
        .map(|i| skill_dir(&dirs[i]))
        .collect();
    let done = crate::parallel::each(&tops, 2, |dir| {
        let sub = dir.as_deref();
        let entries = export::tree(shared, url, sub, limits).ok()?;
        let tree_id = shared.tree_id(url, sub).ok()?.to_string();
        let doc = super::verify::entries_doc(&entries);
        let found = found(dir.clone(), doc.as_ref().and_then(|d| d.as_ref().ok()));
        let packed = packed_with(entries, doc, &shown(url, commit, sub), tree_id);
        Some((found, packed.ok()))
    });
    let mut done: Vec<(FoundSkill, Option<Packed>)> = done.into_iter().collect::<Option<_>>()?;
    done.sort_by(|a, b| found_order(&a.0, &b.0));
    Some(done)
}

/// The skill at `dir`, described by its parsed `SKILL.md` (`None` when it
/// does not parse: named after its directory, undescribed).
fn found(dir: Option<String>, doc: Option<&SkillDoc>) -> FoundSkill {
    let base = dir
        .as_deref()
        .map(|d| d.rsplit('/').next().unwrap_or(d).to_string())
        .unwrap_or_default();
    FoundSkill {
        command: dir.as_deref().map(command_of).unwrap_or_default(),
        name: doc
            .and_then(|d| d.name().map(str::to_string))
            .unwrap_or(base),
        description: doc.map(|d| d.description().to_string()).unwrap_or_default(),
        dir,
    }
}

/// Git dependencies, fetched through one bare clone per URL in the cache.
/// Fetches run on threads of their own, at most [`GIT_CONCURRENCY`] at
/// once, and reading and packing on the pool ([`crate::parallel`]); each
/// URL is fetched at most once per run, so `add` of many skills from one
/// repository (or `add` followed by its install) costs one fetch.
/// Every skill of one (url, commit) shares one listing and one object
/// reader ([`export::Shared`]), each ref is resolved once, and each
/// (url, commit, path) is packed once, whether `resolve` or `fetch` asks.
pub struct GitSource {
    cache: Cache,
    offline: bool,
    limits: Limits,
    permits: Arc<Semaphore>,
    /// `url` → its clone, fetched with the commits its refs name.
    fetched: Memo<PathBuf>,
    /// `url` → its clone, fetched with all its history.
    deepened: Memo<PathBuf>,
    resolved: Memo<Resolution>,
    /// `url#ref` → commit.
    refs: Memo<String>,
    /// `url#commit` → the repository in the cache that holds it (fetching
    /// it alone when none does); `None`: only a whole fetch can tell.
    present: Memo<Option<PathBuf>>,
    /// `url#commit` → what its skills share.
    trees: Memo<Arc<export::Shared>>,
    /// `url#commit:path` → the packed skill.
    packs: Memo<Packed>,
    /// `url#commit` → the trees of that commit the lock records for the
    /// packages this run fetches ([`GitSource::will_fetch`]).
    planned: Mutex<HashMap<String, BTreeSet<String>>>,
    /// `url#commit` → the repository holding those trees (fetched alone
    /// when none does), opened to read them; `None`: the commit is
    /// fetched instead.
    tree_sets: Memo<Option<Arc<export::Shared>>>,
    /// `url#tree` → the skill packed from that tree; `None` when the
    /// repository that holds its commit's trees lacks it.
    by_tree: Memo<Option<Verified>>,
    /// `url#commit` → the fetch of that commit's planned trees, started
    /// by [`GitSource::will_fetch`] on a thread of its own.
    prefetched: Mutex<HashMap<String, tokio::sync::oneshot::Receiver<TreeSet>>>,
}

impl GitSource {
    /// For a command sure to fetch from `url`: `add` of a git spec calls
    /// this before it finds the project, takes its lock and starts the
    /// runtime, and the fetch's set-up and first request overlap those
    /// ([`fetch::expect`]). When `cache` holds no clone of `url` yet, the
    /// pack is asked for right behind the refs.
    pub fn expect_fetch(url: &GitUrl, cache: Option<&Cache>) {
        fetch::expect(url, cache.map(|cache| clone_dir(cache, url)));
    }

    pub fn new(cache: Cache, offline: bool) -> Self {
        GitSource {
            cache,
            offline,
            limits: Limits::default(),
            permits: Arc::new(Semaphore::new(GIT_CONCURRENCY)),
            fetched: Mutex::new(HashMap::new()),
            deepened: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            refs: Mutex::new(HashMap::new()),
            present: Mutex::new(HashMap::new()),
            trees: Mutex::new(HashMap::new()),
            packs: Mutex::new(HashMap::new()),
            planned: Mutex::new(HashMap::new()),
            tree_sets: Mutex::new(HashMap::new()),
            by_tree: Mutex::new(HashMap::new()),
            prefetched: Mutex::new(HashMap::new()),
        }
    }

    /// Runs git work that keeps a core busy (reading, packing) on the
    /// pool ([`crate::parallel::on_pool`]).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Cache) -> Result<T, SourceError> + Send + 'static,
    ) -> Result<T, SourceError> {
        let cache = self.cache.clone();
        crate::parallel::on_pool(move || f(&cache)).await
    }

    /// Runs git work that may wait on the network (a fetch, or a look in
    /// the cache that fetches what it lacks) on a thread of its own, at
    /// most [`GIT_CONCURRENCY`] at once: on the pool it would hold one of
    /// its few threads (one per core, at most eight) for a whole round
    /// trip.
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

    /// The bare clone of `url` with the commits its refs name, fetched
    /// once per run.
    async fn repo(&self, url: &GitUrl) -> Result<PathBuf, SourceError> {
        self.fetched_once(&self.fetched, url, History::Tips).await
    }

    /// The bare clone of `url` with all its history, for a revision the
    /// tips do not hold; fetched at most once per run.
    async fn whole_repo(&self, url: &GitUrl) -> Result<PathBuf, SourceError> {
        self.fetched_once(&self.deepened, url, History::Full).await
    }

    async fn fetched_once(
        &self,
        memo_of: &Memo<PathBuf>,
        url: &GitUrl,
        history: History,
    ) -> Result<PathBuf, SourceError> {
        let cell = memo(memo_of, url.redacted());
        cell.get_or_try_init(|| {
            let url = url.clone();
            self.on_own_thread(move |cache| fetch_repo(cache, &url, history))
        })
        .await
        .cloned()
    }

    /// [`GitSource::repo`], and `then` of the clone on the fetch's own
    /// thread right after it, when this call is the one that fetches:
    /// what reads the clone first then starts without waiting twice for a
    /// thread (the runtime's, then the pool's), about 0.5 ms of an `add`.
    /// `None` when the clone was fetched before, or `then` gave nothing.
    async fn repo_then<T: Send + 'static>(
        &self,
        url: &GitUrl,
        then: impl FnOnce(&Cache, &Path) -> Option<T> + Send + 'static,
    ) -> Result<(PathBuf, Option<T>), SourceError> {
        let cell = memo(&self.fetched, url.redacted());
        let mut early = None;
        let repo = cell
            .get_or_try_init(|| async {
                let url = url.clone();
                let (repo, out) = self
                    .on_own_thread(move |cache| {
                        let repo = fetch_repo(cache, &url, History::Tips)?;
                        let out = then(cache, &repo);
                        Ok((repo, out))
                    })
                    .await?;
                early = out;
                Ok::<_, SourceError>(repo)
            })
            .await?
            .clone();
        Ok((repo, early))
    }

    /// `reference` of `url` as a commit, resolved once per run.
    async fn commit_of(
        &self,
        url: &GitUrl,
        reference: Option<&GitRef>,
    ) -> Result<String, SourceError> {
        let (commit, _) = self.commit_then(url, reference, |_, _| None::<()>).await?;
        Ok(commit)
    }

    /// [`GitSource::commit_of`], and `then` of the clone and the commit,
    /// when this call fetches the clone and finds the commit on the
    /// fetch's thread ([`GitSource::repo_then`]).
    async fn commit_then<T: Send + 'static>(
        &self,
        url: &GitUrl,
        reference: Option<&GitRef>,
        then: impl FnOnce(&Cache, &str) -> Option<T> + Send + 'static,
    ) -> Result<(String, Option<T>), SourceError> {
        let key = format!(
            "{}#{}",
            url.redacted(),
            reference.map(|r| r.as_str()).unwrap_or("")
        );
        let cell = memo(&self.refs, key);
        let resolve = |repo: PathBuf| {
            let (u, r) = (url.clone(), reference.cloned());
            self.blocking(move |_| resolve_ref(&repo, &u, r.as_ref()))
        };
        let mut early = None;
        let commit = cell.get_or_try_init(|| async {
            let (u, r) = (url.clone(), reference.cloned());
            let (repo, found) = self
                .repo_then(url, move |cache, repo| {
                    // Failing here is told (or mended) the usual way below.
                    let commit = resolve_ref(repo, &u, r.as_ref()).ok()?;
                    let out = then(cache, &commit);
                    Some((commit, out))
                })
                .await?;
            if let Some((commit, out)) = found {
                early = out;
                return Ok(commit);
            }
            let shallow = repo.join("shallow").is_file();
            match resolve(repo).await {
                // Whatever failed reading the shallow clone (`git`
                // missing included), the whole history can tell.
                Err(_) if shallow && may_be_behind_tips(reference) => {
                    resolve(self.whole_repo(url).await?).await
                }
                other => other,
            }
        });
        let commit = commit.await?.clone();
        Ok((commit, early))
    }

    /// What the skills of `commit` share: listed once per run.
    async fn shared(&self, url: &GitUrl, commit: &str) -> Result<Arc<export::Shared>, SourceError> {
        let key = format!("{}#{commit}", url.redacted());
        let held = memo(&self.present, key.clone()).get().cloned().flatten();
        let cell = memo(&self.trees, key);
        cell.get_or_try_init(|| {
            let (u, c) = (url.clone(), commit.to_string());
            self.blocking(move |cache| listed(cache, held, &u, &c))
        })
        .await
        .cloned()
    }

    /// [`GitSource::shared`] with `then` run on it in the same trip
    /// through the pool: one wait for a pool thread and for the runtime's
    /// thread fewer, for a caller that reads the listing once (`discover`).
    async fn with_shared<T: Send + 'static>(
        &self,
        url: &GitUrl,
        commit: &str,
        then: impl FnOnce(&export::Shared) -> Result<T, SourceError> + Send + 'static,
    ) -> Result<T, SourceError> {
        let key = format!("{}#{commit}", url.redacted());
        let held = memo(&self.present, key.clone()).get().cloned().flatten();
        let cell = memo(&self.trees, key);
        let known = cell.get().cloned();
        let (u, c) = (url.clone(), commit.to_string());
        let (shared, out) = self
            .blocking(move |cache| {
                let shared = match known {
                    Some(shared) => shared,
                    None => listed(cache, held, &u, &c)?,
                };
                let out = then(&shared)?;
                Ok((shared, out))
            })
            .await?;
        // Listed twice only if another task raced this one here.
        let _ = cell.set(shared);
        Ok(out)
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
}

impl GitSource {
    /// Told which locked packages this run must fetch (those whose
    /// tarballs the cache lacks). Groups the trees the lock records by
    /// commit, so each commit's trees are fetched in one request, and
    /// starts getting the first commit's trees now
    /// ([`GitSource::prefetch`]). Without trees to plan (a lock from
    /// before trees were locked), starts the fetch client for the first
    /// git package when the cache holds no repository of its URL either,
    /// so a restore sets the client up (TLS roots, its thread) beside its
    /// other set-up rather than in front of its one request. Called once
    /// per run.
    pub fn will_fetch<'a>(&self, to_fetch: impl IntoIterator<Item = &'a LockedSkill>) {
        if self.offline {
            return;
        }
        let mut first = None;
        let mut planned = self.planned.lock().unwrap_or_else(|p| p.into_inner());
        for s in to_fetch {
            let LockedSource::Git { url, commit } = &s.source else {
                continue;
            };
            let key = format!("{}#{commit}", url.redacted());
            if let Some(tree) = &s.tree {
                planned.entry(key.clone()).or_default().insert(tree.clone());
            }
            first.get_or_insert((url, key, commit));
        }
        let wanted: Option<Vec<String>> = first
            .as_ref()
            .and_then(|(_, key, _)| Some(planned.get(key)?.iter().cloned().collect()));
        drop(planned);
        if let Some((url, key, commit)) = first {
            match wanted {
                Some(wanted) => self.prefetch(key, url, commit, wanted),
                None => fetch::warm(url, || lacks_repos(&self.cache, url)),
            }
        }
    }

    /// Starts finding (in the cache) or fetching the trees `wanted` of the
    /// commit `key` names on a thread of its own, now rather than when
    /// the first of those skills is staged: the request is out while the
    /// run sweeps leftovers and sets up its staging, which stood in front
    /// of it. The thread sets the fetch client up first when the cache
    /// lacks the repository ([`fetch::warm_here`]). Only the first
    /// commit's: others wait for a fetch permit as before, so the bound
    /// on fetches at once is kept, give or take this one.
    fn prefetch(&self, key: String, url: &GitUrl, commit: &str, wanted: Vec<String>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let (cache, url, commit) = (self.cache.clone(), url.clone(), commit.to_string());
        let started = std::thread::Builder::new().spawn(move || {
            fetch::warm_here(&url, || lacks_repos(&cache, &url));
            let _ = tx.send(holding_trees(&cache, &url, &commit, &wanted, false));
        });
        if started.is_ok() {
            let mut prefetched = self.prefetched.lock().unwrap_or_else(|p| p.into_inner());
            prefetched.insert(key, rx);
        }
    }

    /// The skill at `tree` of `commit`, packed from that tree alone: from
    /// the repository in the cache that holds it, else fetched with the
    /// other trees of the commit this run needs. `None` when it cannot be
    /// had that way (offline and not cached, a server that refuses the
    /// ids), and the commit is fetched instead.
    async fn pack_of_tree(
        &self,
        url: &GitUrl,
        commit: &str,
        tree: &str,
        subpath: Option<&str>,
    ) -> Result<Option<Verified>, SourceError> {
        let Some(shared) = self.trees_of(url, commit, tree).await? else {
            return Ok(None);
        };
        memo(&self.by_tree, format!("{}#{tree}", url.redacted()))
            .get_or_try_init(|| {
                let (u, c, t) = (url.clone(), commit.to_string(), tree.to_string());
                let (sub, limits) = (subpath.map(str::to_string), self.limits.clone());
                self.blocking(move |_| pack_tree(&shared, &u, &c, &t, sub.as_deref(), &limits))
            })
            .await
            .cloned()
    }

    /// [`Source::fetch`] of a package whose tree the lock records, packed
    /// from that tree alone and checked against the lock, with `then` run
    /// on it on the pool thread that packed it: staging a skill takes one
    /// trip through the pool rather than two, each with a wait for the
    /// runtime's thread between (a 10-skill restore: twenty such trips
    /// on three threads). `then` comes back when the tree cannot be had
    /// alone; the caller fetches the package the usual way.
    pub async fn fetch_tree_then<T, F>(
        &self,
        locked: &LockedSkill,
        then: F,
    ) -> Result<Result<T, F>, SourceError>
    where
        T: Send + 'static,
        F: FnOnce(Verified) -> Result<T, SourceError> + Send + 'static,
    {
        let (LockedSource::Git { url, commit }, Some(tree)) = (&locked.source, &locked.tree) else {
            return Ok(Err(then));
        };
        if !self.offline {
            fetch::warm(url, || lacks_repos(&self.cache, url));
        }
        let Some(shared) = self.trees_of(url, commit, tree).await? else {
            return Ok(Err(then));
        };
        let (u, c, t) = (url.clone(), commit.clone(), tree.clone());
        let (locked, limits) = (locked.clone(), self.limits.clone());
        self.blocking(move |_| {
            let sub = locked.path.as_deref();
            match pack_tree(&shared, &u, &c, &t, sub, &limits)? {
                Some(tree) => then(super::verify::verify_made(&locked, tree)?).map(Ok),
                None => Ok(Err(then)),
            }
        })
        .await
    }

    /// The repository holding the trees of `commit` this run needs
    /// (`tree` among them), found in the cache or fetched alone, opened
    /// to read them; once per commit. `None` when they cannot be had that
    /// way.
    async fn trees_of(
        &self,
        url: &GitUrl,
        commit: &str,
        tree: &str,
    ) -> Result<Option<Arc<export::Shared>>, SourceError> {
        let key = format!("{}#{commit}", url.redacted());
        let offline = self.offline;
        memo(&self.tree_sets, key.clone())
            .get_or_try_init(|| async {
                let started = {
                    let mut prefetched = self.prefetched.lock().unwrap_or_else(|p| p.into_inner());
                    prefetched.remove(&key)
                };
                if let Some(rx) = started {
                    if let Ok(held) = rx.await {
                        return held;
                    }
                }
                let mut wanted: BTreeSet<String> = {
                    let planned = self.planned.lock().unwrap_or_else(|p| p.into_inner());
                    planned.get(&key).cloned().unwrap_or_default()
                };
                wanted.insert(tree.to_string());
                let (u, c, wanted) = (url.clone(), commit.to_string(), Vec::from_iter(wanted));
                self.on_own_thread(move |cache| holding_trees(cache, &u, &c, &wanted, offline))
                    .await
            })
            .await
            .cloned()
    }

    /// Every skill in `url` at `reference` (default: the remote HEAD), for
    /// `add` without `--path`. Uses the run's one fetch of `url`. With
    /// `pack_all` (`add --all`), every skill is packed as it is found
    /// ([`found_packed`]), and resolving it later finds it packed.
    pub async fn discover(
        &self,
        url: &GitUrl,
        reference: Option<&GitRef>,
        pack_all: bool,
    ) -> Result<(String, Vec<FoundSkill>), SourceError> {
        if self.offline {
            return Err(SourceError::Offline(format!("listing {}", url.redacted())));
        }
        let (u, limits) = (url.clone(), self.limits.clone());
        let skills = move |shared: &export::Shared, commit: &str| {
            if let Some(done) = pack_all
                .then(|| found_packed(shared, &u, commit, &limits))
                .flatten()
            {
                return Ok(done);
            }
            let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
            let files = export::skill_files(shared, &u, &listing_limits(), max)?;
            Ok(found_skills(files).into_iter().map(|f| (f, None)).collect())
        };
        // Listed on the fetch's thread when this call fetches.
        let (list_there, u) = (skills.clone(), url.clone());
        let (commit, early) = self
            .commit_then(url, reference, move |cache, commit| {
                let shared = listed(cache, None, &u, commit).ok()?;
                let found = list_there(&shared, commit).ok()?;
                Some((shared, found))
            })
            .await?;
        let found = match early {
            Some((shared, found)) => {
                let _ = memo(&self.trees, format!("{}#{commit}", url.redacted())).set(shared);
                found
            }
            None => {
                let c = commit.clone();
                let listing = move |shared: &export::Shared| skills(shared, &c);
                self.with_shared(url, &commit, listing).await?
            }
        };
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

/// The key of the skill at `subpath` of `commit` in [`GitSource::pack`]'s
/// memo.
fn pack_key(url: &GitUrl, commit: &str, subpath: Option<&str>) -> String {
    format!("{}#{commit}:{}", url.redacted(), subpath.unwrap_or("."))
}

/// Results of this run by key, each computed once (shared by the sources).
pub(super) type Memo<T> = Mutex<HashMap<String, Arc<OnceCell<T>>>>;

/// The once-cell for `key`, created on first use.
pub(super) fn memo<T>(map: &Memo<T>, key: String) -> Arc<OnceCell<T>> {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(key).or_default().clone()
}

impl Source for GitSource {
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let Dependency::Git {
            url,
            reference,
            path: sub,
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
            let commit = self.commit_of(url, reference.as_ref()).await?;
            let p = self.pack(url, &commit, sub.as_deref()).await?;
            Ok(Resolution {
                locked: LockedSkill {
                    name: p.name,
                    version: p.version,
                    source: LockedSource::Git {
                        url: url.clone(),
                        commit,
                    },
                    checksum: *p.tree.checksum(),
                    path: sub.clone(),
                    tree: Some(p.tree_id),
                },
                packed: Some(p.tree),
            })
        })
        .await
        .cloned()
    }

    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::Git { url, commit } = &locked.source else {
            unreachable!("GitSource is only handed git packages")
        };
        if !self.offline {
            fetch::warm(url, || lacks_repos(&self.cache, url));
        }
        if let Some(tree) = &locked.tree {
            let sub = locked.path.as_deref();
            if let Some(tree) = self.pack_of_tree(url, commit, tree, sub).await? {
                return Ok(Package::Made(tree));
            }
        }
        let cell = memo(&self.present, format!("{}#{commit}", url.redacted()));
        let held = cell
            .get_or_try_init(|| {
                let (u, c, offline) = (url.clone(), commit.clone(), self.offline);
                self.on_own_thread(move |cache| {
                    Ok(holder(cache, &u, &c).or_else(|| match offline {
                        true => None,
                        false => fetch_commit(cache, &u, &c),
                    }))
                })
            })
            .await?;
        if held.is_none() {
            if self.offline {
                return Err(SourceError::Offline(format!(
                    "fetching {} from {}",
                    locked.name,
                    url.redacted()
                )));
            }
            // The tips first; a locked commit behind them needs the rest.
            let repo = self.repo(url).await?;
            let (u, c) = (url.clone(), commit.clone());
            if !self.blocking(move |_| Ok(holds(&repo, &u, &c))).await? {
                self.whole_repo(url).await?;
            }
        }
        let p = self.pack(url, commit, locked.path.as_deref()).await?;
        Ok(Package::Made(p.tree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
        for r in [
            unspecified("no-such-branch"),
            unspecified("abc"),
            GitRef::Tag("0123abcd".into()),
            GitRef::Branch("main".into()),
        ] {
            assert!(!may_be_behind_tips(Some(&r)), "{r:?}");
        }
        assert!(!may_be_behind_tips(None));
    }

    #[test]
    fn commands_drop_discovery_roots_and_dot_dirs() {
        assert_eq!(command_of("skills/pdf"), "pdf");
        assert_eq!(command_of(".claude/skills/a/b"), "a/b");
        assert_eq!(command_of("skills/.curated/gh-fix-ci"), "gh-fix-ci");
        assert_eq!(command_of(".curated/x"), "x");
        assert_eq!(command_of("document-skills/pdf"), "document-skills/pdf");
    }

    #[test]
    fn nested_skills_ship_with_their_parent() {
        let md = |n: &str| format!("---\nname: {n}\ndescription: d {n}\n---\n").into_bytes();
        let files = vec![
            ("skills/a".to_string(), md("a")),
            ("skills/a-b".to_string(), md("a-b")),
            ("skills/a/sub".to_string(), md("sub")),
            ("skills/a/sub/deeper".to_string(), md("deeper")),
            ("skills/b".to_string(), md("bee")),
        ];
        let found = found_skills(files);
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "a-b", "bee"]);
        let root = found_skills(vec![(String::new(), md("r")), ("x".into(), md("x"))]);
        assert_eq!(root.len(), 1);
        assert_eq!(root[0].dir, None);
    }

    /// A commit of a real repository, made by `git`, with `files` in it
    /// and the symlinks `links` (path, target).
    fn repository_with(
        files: &[(&str, &str)],
        links: &[(&str, &str)],
    ) -> (tempfile::TempDir, GitUrl, String) {
        let work = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = work.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for (path, target) in links {
            std::os::unix::fs::symlink(target, work.path().join(path)).unwrap();
        }
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &["commit", "-qm", "skills"],
        ] {
            export::tests::git(work.path(), args);
        }
        let commit = export::tests::head_of(work.path());
        let url = GitUrl::parse(&format!("file://{}", work.path().display())).unwrap();
        (work, url, commit)
    }

    /// `add --all` finds and packs every skill in one pass; what it finds
    /// and packs must be exactly what listing the skills and then packing
    /// each one the usual way gives, skills that cannot be packed
    /// included (found, not packed).
    #[test]
    fn finding_and_packing_in_one_pass_matches_doing_each_apart() {
        let md = |n: &str| format!("---\nname: {n}\ndescription: about {n}\n---\nbody\n");
        let (work, url, commit) = repository_with(
            &[
                ("skills/a/SKILL.md", &md("a")),
                ("skills/a/scripts/run.sh", "echo a\n"),
                ("skills/a/sub/SKILL.md", &md("nested")),
                ("skills/b/skill.md", &md("bee")),
                ("skills/c/SKILL.md", "---\ndescription: no name\n---\n"),
                ("skills/d/SKILL.md", "---\nname: [not, closed\n"),
                ("README.md", "not a skill\n"),
            ],
            &[],
        );
        let limits = Limits::default();
        let dir = work.path().join(".git");
        let shared = export::Shared::new(&dir, &url, &commit, &listing_limits()).unwrap();
        let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
        let files = export::skill_files(&shared, &url, &listing_limits(), max).unwrap();
        let apart = found_skills(files);
        let one_pass = found_packed(&shared, &url, &commit, &limits).unwrap();
        let found: Vec<FoundSkill> = one_pass.iter().map(|(f, _)| f.clone()).collect();
        assert_eq!(found, apart);
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "bee", "c", "d"]);
        for (f, packed) in &one_pass {
            let alone = pack_commit(&shared, &url, &commit, f.dir.as_deref(), &limits);
            match (packed, alone) {
                (Some(p), Ok(a)) => {
                    assert_eq!((&p.name, &p.version), (&a.name, &a.version));
                    assert_eq!(p.tree.checksum(), a.tree.checksum());
                    assert_eq!(p.tree_id, a.tree_id);
                }
                (None, Err(_)) => {}
                (p, a) => panic!(
                    "{}: one pass {:?}, apart {:?}",
                    f.name,
                    p.is_some(),
                    a.is_ok()
                ),
            }
        }
        let packed: Vec<bool> = one_pass.iter().map(|(_, p)| p.is_some()).collect();
        assert_eq!(packed, [true, true, false, false]);
    }

    /// A tree that cannot be read whole (a symlink in it) makes the one
    /// pass give up: the skills are then listed the usual way.
    #[test]
    fn a_tree_that_cannot_be_packed_leaves_finding_to_the_listing() {
        let (work, url, commit) = repository_with(
            &[("skills/a/SKILL.md", "---\nname: a\n---\n")],
            &[("skills/a/link", "SKILL.md")],
        );
        let dir = work.path().join(".git");
        let shared = export::Shared::new(&dir, &url, &commit, &listing_limits()).unwrap();
        let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
        let files = export::skill_files(&shared, &url, &listing_limits(), max).unwrap();
        assert_eq!(found_skills(files).len(), 1);
        assert!(found_packed(&shared, &url, &commit, &Limits::default()).is_none());
    }
}
