//! Fetching over https in this process, not through `git`.
//!
//! `git fetch` over https costs three processes (git, git-remote-https,
//! index-pack) and an OpenSSL start-up before the first byte; for a small
//! repository that was most of an `add`. Here every fetch speaks protocol
//! v2 ([`v2`]) through the same rustls stack, timeouts and user agent as
//! the registry client, reads each answer through a cap, and writes the
//! received pack and its index straight into the bare clone, so what
//! reads objects afterwards cannot tell which way they came.
//!
//! Anything this path does not do (a server before v2, a redirect to
//! another host, credentials in the URL, credential helpers, proxies set in git config,
//! ssh, file) is left to the `git` command, which the caller falls back
//! to.

use super::SourceError;
use super::{is_repo, objects, v2};
use crate::project::lockfile::is_full_commit;
use crate::project::spec::{GitScheme, GitUrl};
use crate::source::registry::client::{chain, one_line};
use gix::hash::ObjectId;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, OnceLock};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

/// The refs every fetch maps into the bare clone, as the `git` path does.
pub(super) const REFSPECS: [&str; 3] = [
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+HEAD:refs/skillpm/HEAD",
];

/// Whether `url` can be fetched here rather than by `git`: https without
/// credentials in it (those belong to git's credential machinery).
pub(super) fn handles(url: &GitUrl) -> bool {
    url.scheme() == GitScheme::Https && !url.has_credentials()
}

/// How much history a whole fetch asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum History {
    /// The commit each ref names and its tree (`deepen 1`): what `add`
    /// and `update` read. A repository with years of history sent all of
    /// it for that: 3.7x skillcask's time, which fetches tips alone, for
    /// 100 skills with 200 earlier commits.
    Tips,
    /// Everything the refs reach, for a revision behind the tips
    /// (`HEAD~2`, an abbreviated or older commit id).
    Full,
}

/// Has a termination signal (Ctrl-C, SIGTERM) remove the temporary files
/// of a fetch (the pack coming in, a ref's lock) before the process dies
/// as it would have. Set up on the first fetch, so commands that fetch
/// nothing keep the default handlers; it must come before the first
/// temporary file.
fn remove_locks_on_signal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| gix::tempfile::signal::setup(Default::default()));
}

/// Starts what a fetch needs before its first request on another thread:
/// the signal handlers and the client (its TLS roots and its runtime
/// thread, about 0.3 ms). Decided once, when a restore first asks a git
/// source about a URL, so the set-up runs beside the cache lookups rather
/// than in front of the request; a fetch that gets there first waits for
/// it rather than doing it twice. Only for an https URL, and only when
/// `fetches` says a fetch is coming: a restore whose clone exists answers
/// from disk, which would leave the client unused. Resolving a ref
/// fetches at once, with nothing to overlap: [`fetch`] sets up there.
pub(super) fn warm(url: &GitUrl, fetches: impl FnOnce() -> bool) {
    WARMING.call_once(|| {
        if handles(url) && fetches() {
            let _ = std::thread::Builder::new().spawn(set_up);
        }
    });
}

/// [`warm`]'s set-up done on this thread, which is about to fetch from
/// `url`, with the warm-up decided so no other thread starts it: on two
/// cores a thread of its own started after this one and held up the
/// request it was meant to speed (0.4 ms of a 10-skill restore).
pub(super) fn warm_here(url: &GitUrl, fetches: impl FnOnce() -> bool) {
    let mut decided = false;
    WARMING.call_once(|| decided = true);
    if decided && handles(url) && fetches() {
        set_up();
    }
}

/// Whether a warm-up was decided in this run ([`warm`], [`warm_here`]).
static WARMING: std::sync::Once = std::sync::Once::new();

/// For a command sure to fetch `url` (`add` of a git spec): sets up the
/// client and asks the server for its refs on another thread, while the
/// command finds its project, takes its lock and starts its runtime. The
/// request is the first of a fetch's two and reads nothing local, so it
/// is out about 1 ms sooner; [`fetch`] takes its answer ([`listed`]).
/// When `clone` (where the clone of `url` lives) does not exist yet, the
/// second request follows the answer at once, from the same thread: a new
/// clone wants every tip the server listed, without history, which is
/// what [`fetch_refs`] would ask for once it had the answer in hand (0.4
/// ms later: the hand-over between threads, opening the clone).
pub(super) fn expect(url: &GitUrl, clone: Option<PathBuf>) {
    if !handles(url) {
        return;
    }
    WARMING.call_once(|| {});
    // Looked at now: the fetch makes the clone ready while the refs come.
    let new = clone.is_some_and(|clone| !is_repo(&clone));
    let (tx, rx) = std::sync::mpsc::channel();
    let url = url.as_str().to_string();
    EARLY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((url.clone(), rx));
    // A thread that cannot start drops `tx`: the fetch asks itself.
    let _ = std::thread::Builder::new().spawn(move || {
        set_up();
        let client = client();
        let listed = match &client {
            Ok(client) => v2::ls_refs(client, &url),
            Err(e) => Err(failed(e)),
        };
        let wants = match &listed {
            Ok(listing) if new => Some(listing.tips()),
            _ => None,
        };
        let (pack_tx, pack_rx) = std::sync::mpsc::channel();
        let pack = wants.is_some().then_some(pack_rx);
        let _ = tx.send(Early {
            listed,
            at: Instant::now(),
            pack,
        });
        if let (Some(wants), Ok(client)) = (wants, client) {
            let ask = v2::Ask {
                wants: &wants,
                tips_only: true,
            };
            let _ = pack_tx.send(v2::ask_fetch(client, &url, &ask));
        }
    });
    // Built here while that thread starts (about 0.25 ms before it runs
    // on two cores), rather than by it once it has: it takes the client
    // from here. This thread only sets the project up until the refs come.
    let _ = client();
}

/// What [`expect`] asked for: the `ls-refs` answer and when it came, and
/// for a clone that did not exist, the `fetch` asked for right after it.
struct Early {
    listed: Result<v2::Listing, v2::Failure>,
    at: Instant,
    pack: Option<Receiver<EarlyPack>>,
}

/// The server's answer, not read yet, to the `fetch` [`expect`] asked
/// for: every tip of the listing it came with, without history.
type EarlyPack = Result<v2::Answer, v2::Failure>;

/// The answers [`expect`] asked for, by URL, each taken by the first fetch
/// of it.
static EARLY: Mutex<Vec<(String, Receiver<Early>)>> = Mutex::new(Vec::new());

/// How old an early answer may be when its fetch starts: older means the
/// run waited (on another run's lock), and the refs are asked for again.
const EARLY_FOR: Duration = Duration::from_secs(1);

/// The answer [`expect`] asked for about `url`, if any; the first fetch
/// of `url` takes it.
fn early(url: &str) -> Option<Receiver<Early>> {
    let mut early = EARLY.lock().unwrap_or_else(|p| p.into_inner());
    let at = early.iter().position(|(u, _)| u == url)?;
    Some(early.swap_remove(at).1)
}

/// The refs of `url`: the `early` answer if it is recent, else a new
/// request; with the early `fetch`, if one was asked for.
fn listed(
    client: &'static v2::Client,
    url: &str,
    early: Receiver<Early>,
) -> (
    Result<v2::Listing, v2::Failure>,
    Option<Receiver<EarlyPack>>,
) {
    match early.recv() {
        Ok(early) if early.at.elapsed() <= EARLY_FOR => (early.listed, early.pack),
        _ => (v2::ls_refs(client, url), None),
    }
}

/// What a fetch needs before its first request: the signal handlers and
/// the client.
fn set_up() {
    remove_locks_on_signal();
    let _ = client();
}

/// Fetches [`REFSPECS`] of `url` into the bare repository at `repo`
/// (created when missing), with as much `history` as asked, in two
/// requests (`ls-refs`, then `fetch`; one when the clone holds every tip
/// already) where git's and gitoxide's clients take three. A server that
/// refuses `deepen` (no `shallow` feature) is asked for the whole
/// history. Refs that are gone from the server are removed, as
/// `git fetch --prune` does. Sends no `have`: a fetch here is of a few
/// trees, and the clone's commits may lack their parents. The caller
/// holds the repository for the fetch ([`super::fetching`]), which is
/// what keeps two runs from each dropping the other's `shallow` lines.
pub(super) fn fetch(repo: &Path, url: &GitUrl, history: History) -> Result<(), Unfetched> {
    // Set up here, on the fetch's own thread: no warm-up thread need start.
    WARMING.call_once(|| {});
    remove_locks_on_signal();
    fetch_refs(repo, url, history).map_err(|f| Unfetched {
        needs_git: matches!(f, v2::Failure::Unsupported(_)),
        error: Box::new(fetch_error(url, f.detail())),
    })
}

/// Why [`fetch`] failed, and whether the server is one only `git` can
/// fetch from (not protocol v2, a redirect to another host).
#[derive(Debug)]
pub(super) struct Unfetched {
    pub error: Box<SourceError>,
    pub needs_git: bool,
}

impl Unfetched {
    /// The error for a user without `git`: what to install, when that is
    /// what it takes.
    pub(super) fn without_git(self) -> SourceError {
        match *self.error {
            SourceError::Git { what, url, detail } if self.needs_git => SourceError::Git {
                what,
                url,
                detail: format!("{detail}; fetching from it needs `git`"),
            },
            error => error,
        }
    }
}

fn fetch_refs(dir: &Path, url: &GitUrl, history: History) -> Result<(), v2::Failure> {
    let client = client().map_err(|e| failed(&e))?;
    // A new clone holds no object and no ref: nothing to look up (each
    // object it misses would have the store rescan its pack directory).
    let new = !is_repo(dir);
    let (listing, mut early_pack, pack_dir) = match early(url.as_str()) {
        // The request is out already: the clone is made ready meanwhile,
        // here rather than on a thread started for it.
        Some(early) => {
            let ready = prepare(dir).map_err(v2::Failure::Failed);
            let (listing, pack) = listed(client, url.as_str(), early);
            (listing, pack, ready)
        }
        None => std::thread::scope(|s| {
            let ready = s.spawn(|| prepare(dir));
            (v2::ls_refs(client, url.as_str()), None, joined(ready))
        }),
    };
    let (listing, pack_dir) = (listing?, pack_dir?);
    let repo = open(dir).map_err(|e| failed(&e))?;
    let present = |oid: &ObjectId| !new && repo.has_object(oid);
    let mut history = history;
    let keep = loop {
        // A tip the clone holds is whole or listed as shallow, which is
        // all a fetch of tips needs; for the whole history a shallow
        // clone takes everything again (it has no `have` to offer that
        // does not claim a missing parent).
        let mut wants = listing.tips();
        if history == History::Tips || !dir.join("shallow").is_file() {
            wants.retain(|oid| !present(oid));
        }
        if wants.is_empty() {
            break None;
        }
        let ask = v2::Ask {
            wants: &wants,
            tips_only: history == History::Tips,
        };
        let to = |cut: &[ObjectId]| {
            record_shallow(dir, cut)?;
            Ok(pack_dir.clone())
        };
        // The early request, if it asked for exactly this (looked at
        // before waiting on its answer).
        let asked = early_pack
            .take()
            .filter(|_| ask.tips_only && wants == listing.tips())
            .and_then(|pack| pack.recv().ok());
        let fetched = match asked {
            Some(answer) => v2::fetched(url.as_str(), answer, &ask, to),
            None => v2::fetch(client, url.as_str(), &ask, to),
        };
        match fetched {
            Ok(keep) => break keep,
            Err(v2::Failure::Refused(_)) if history == History::Tips => history = History::Full,
            Err(e) => return Err(e),
        }
    };
    if history == History::Full {
        settle_shallow(&repo, dir)?;
    }
    match new {
        true => write_packed_refs(dir, &listing).map_err(|e| failed(&e))?,
        false => update_refs(&repo, listing)?,
    }
    // Refs reach the pack now; a `.keep` would only stop `git gc` (run
    // there by hand) from ever repacking it.
    if let Some(keep) = keep {
        let _ = std::fs::remove_file(keep);
    }
    Ok(())
}

/// Fetches one commit and its tree, without its history, into the bare
/// repository at `repo` (the caller keeps these apart from the whole
/// clone), in one request: protocol v2 lets a client ask for an object id
/// without listing refs first, which is what a restore from the lock
/// needs. [`fetch`] costs two round trips (the refs, then the pack), and
/// the first of them is a whole `upload-pack` run on the server. A server
/// that does not speak v2, refuses the id or answers anything else is an
/// error here, and the caller falls back to [`fetch`]. No ref is written
/// (nothing collects garbage in a cache clone: `git` runs there with
/// `gc.auto=0`), and the pack keeps the `.keep` file gitoxide writes
/// beside it, so a `git gc` run there by hand does not drop objects that
/// no ref reaches.
pub(super) fn fetch_commit(repo: &Path, url: &GitUrl, commit: &str) -> Result<(), SourceError> {
    fetch_alone(repo, url, &[commit], true)
}

/// Fetches the trees `trees` (with everything below them) alone, into
/// the repository at `repo`, in one request and without `deepen`: no
/// commit, so no history to cut. Protocol v2 lets a client want any
/// object id, not only what refs reach; a server that still refuses one
/// is an error here, and the caller fetches the commit instead.
pub(super) fn fetch_trees(repo: &Path, url: &GitUrl, trees: &[&str]) -> Result<(), SourceError> {
    fetch_alone(repo, url, trees, false)
}

/// [`fetch_commit`] and [`fetch_trees`]: `ids` (full hex ids), and with
/// `tips_only` each commit without its history.
fn fetch_alone(
    repo: &Path,
    url: &GitUrl,
    ids: &[&str],
    tips_only: bool,
) -> Result<(), SourceError> {
    let err = |detail: String| fetch_error(url, detail);
    let wants = ids
        .iter()
        .map(|id| match is_full_commit(id) {
            true => ObjectId::from_hex(id.as_bytes()).map_err(|e| err(e.to_string())),
            false => Err(err(format!("{id:?} is not an object id"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    remove_locks_on_signal();
    let client = client().map_err(err)?;
    let ask = v2::Ask {
        wants: &wants,
        tips_only,
    };
    // The commits `deepen` cut are not recorded: this repository claims
    // no history to any server (see `holder` in the parent module).
    std::thread::scope(|s| {
        let ready = s.spawn(|| prepare(repo));
        v2::fetch(client, url.as_str(), &ask, |_| joined(ready))
    })
    .map(drop)
    .map_err(|f| err(f.detail()))
}

/// A failed fetch of `url`, the URL's credentials kept out of `detail`.
fn fetch_error(url: &GitUrl, detail: impl std::fmt::Display) -> SourceError {
    super::objects::error("fetch from", url, detail)
}

/// A fetch that failed on this side of the exchange.
fn failed(e: &dyn std::fmt::Display) -> v2::Failure {
    v2::Failure::Failed(one_line(&e.to_string()))
}

/// The clone's branches and tags, and what each names.
fn local_refs(repo: &gix::Repository) -> Vec<(gix::refs::FullName, ObjectId)> {
    let Ok(platform) = repo.references() else {
        return Vec::new();
    };
    let Ok(all) = platform.all() else {
        return Vec::new();
    };
    all.filter_map(Result::ok)
        .filter(|r| {
            let name = r.name().as_bstr();
            name.starts_with(b"refs/heads/") || name.starts_with(b"refs/tags/")
        })
        .filter_map(|r| Some((r.name().to_owned(), r.target().try_id()?.to_owned())))
        .collect()
}

/// The commits the clone's `shallow` file lists: those whose parents it
/// does not hold. A file that cannot be read fails the fetch: rewriting
/// it from nothing would drop what it lists.
fn read_shallow(dir: &Path) -> Result<BTreeSet<ObjectId>, v2::Failure> {
    let text = match skillpm_core::bounded::read_to_string(&dir.join("shallow"), 64 << 20) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(failed(&e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
        .collect())
}

fn write_shallow(dir: &Path, listed: &BTreeSet<ObjectId>) -> Result<(), v2::Failure> {
    let path = dir.join("shallow");
    let written = match listed.is_empty() {
        true => std::fs::remove_file(&path).or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(e),
        }),
        false => {
            let text: String = listed.iter().map(|oid| format!("{oid}\n")).collect();
            crate::fs::replace_file(&path, text.as_bytes())
        }
    };
    written.map_err(|e| failed(&e))
}

/// Adds the commits a fetch cut from their parents to the clone's
/// `shallow` file, before the pack that holds them is in: a commit the
/// clone holds is then either whole or listed, which is what lets a later
/// fetch of tips skip a commit it holds.
fn record_shallow(dir: &Path, cut: &[ObjectId]) -> Result<(), v2::Failure> {
    if cut.is_empty() {
        return Ok(());
    }
    let mut listed = read_shallow(dir)?;
    listed.extend(cut);
    write_shallow(dir, &listed)
}

/// After a fetch of the whole history, keeps in the `shallow` file only
/// the commits that still lack a parent (one no ref reaches any more, say).
fn settle_shallow(repo: &gix::Repository, dir: &Path) -> Result<(), v2::Failure> {
    if !dir.join("shallow").is_file() {
        return Ok(());
    }
    let before = read_shallow(dir)?;
    let whole = |oid: &ObjectId| {
        repo.find_commit(*oid)
            .is_ok_and(|c| c.parent_ids().all(|p| repo.has_object(p)))
    };
    let after: BTreeSet<ObjectId> = before.iter().copied().filter(|oid| !whole(oid)).collect();
    match after.len() == before.len() {
        true => Ok(()),
        false => write_shallow(dir, &after),
    }
}

/// The refs of a new clone ([`REFSPECS`]), written as one `packed-refs`
/// file, as `git clone` writes them. Loose refs cost a directory for each
/// prefix (`refs/heads`, `refs/skillpm`) and a lock file and a rename for
/// each ref, and a new directory is among the costliest things ext4
/// makes: each cost a cold 10-skill `add` about 0.7 ms of CPU. Later
/// fetches go through [`update_refs`], which reads and rewrites both
/// forms. The header claims no peeling: a reader peels an annotated tag
/// from its object. Names are what [`v2::Listing`] let through (git's
/// ref-name rules: no space, no control character), so a line cannot be
/// forged; sorted, as git's readers expect.
fn write_packed_refs(dir: &Path, listing: &v2::Listing) -> std::io::Result<()> {
    let head = listing
        .head
        .map(|oid| (b"refs/skillpm/HEAD".as_slice(), oid));
    let refs: BTreeMap<&[u8], ObjectId> = listing
        .refs
        .iter()
        .map(|(name, oid)| (name.as_bstr().as_ref(), *oid))
        .chain(head)
        .collect();
    let mut text = b"# pack-refs with: sorted \n".to_vec();
    for (name, oid) in refs {
        text.extend_from_slice(format!("{oid} ").as_bytes());
        text.extend_from_slice(name);
        text.push(b'\n');
    }
    crate::fs::replace_file(&dir.join("packed-refs"), &text)
}

/// Points the clone's refs where the server's are ([`REFSPECS`]), and
/// removes the branches and tags the server no longer lists. No reflog
/// and no committer: nothing reads the cache clone's ref history.
fn update_refs(repo: &gix::Repository, listing: v2::Listing) -> Result<(), v2::Failure> {
    use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
    let edit = |name: gix::refs::FullName, oid| RefEdit {
        change: Change::Update {
            log: Default::default(),
            expected: PreviousValue::Any,
            new: gix::refs::Target::Object(oid),
        },
        name,
        deref: false,
    };
    let listed: BTreeSet<&gix::refs::FullNameRef> =
        listing.refs.iter().map(|(name, _)| name.as_ref()).collect();
    let gone: Vec<RefEdit> = local_refs(repo)
        .into_iter()
        .filter(|(name, _)| !listed.contains(name.as_ref()))
        .map(|(name, _)| RefEdit {
            change: Change::Delete {
                expected: PreviousValue::Any,
                log: RefLog::AndReference,
            },
            name,
            deref: false,
        })
        .collect();
    let head = "refs/skillpm/HEAD".try_into().map_err(|e| failed(&e))?;
    let edits: Vec<RefEdit> = gone
        .into_iter()
        .chain(listing.refs.into_iter().map(|(name, oid)| edit(name, oid)))
        .chain(listing.head.map(|oid| edit(head, oid)))
        .collect();
    repo.edit_references_as(edits, None)
        .map(drop)
        .map_err(|e| failed(&chain(&e)))
}

/// Makes `repo` ready for a pack while the first request is out, on
/// another thread: created when new ([`init_bare`]) and opened
/// ([`objects::opened`]) for the reads after the fetch, which see the
/// pack because the store rescans its directory for an object it does not
/// find. Both stood in front of the request: about 0.5 ms of a 10-skill
/// restore. Returns the pack directory; an open that fails here fails
/// again, with its error, where the clone is read.
fn prepare(repo: &Path) -> Result<PathBuf, String> {
    if !is_repo(repo) {
        init_bare(repo).map_err(|e| one_line(&e.to_string()))?;
    }
    let _ = objects::opened(repo);
    Ok(repo.join("objects").join("pack"))
}

/// What [`prepare`] made of the clone, once it is done.
fn joined(ready: ScopedJoinHandle<'_, Result<PathBuf, String>>) -> Result<PathBuf, v2::Failure> {
    match ready.join() {
        Ok(made) => made.map_err(v2::Failure::Failed),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// The client of every request of [`v2`] in this process. A lock that
/// pins many commits paid for a client per commit (TLS roots and a
/// connection pool, built and thrown away) and reused no connection, even
/// to one host. reqwest follows no redirect: [`v2`] decides which to
/// follow, and leaves the rest to `git`. HTTP/1.1 with keep-alive, not
/// HTTP/2: a fetch is one or two requests in turn on one connection, and
/// HTTP/2's extra frames and flow control only cost (pairs against
/// HTTP/2 behind nginx: a 10-skill cold restore 0.93-0.95x, 100 skills
/// 0.97x; 20 repositories on one host, fetched six at a time on as
/// many connections, 0.98x).
fn client() -> Result<&'static v2::Client, String> {
    static CLIENT: OnceLock<Result<v2::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let http = crate::source::http::http1()?
                .redirect(reqwest::redirect::Policy::none())
                .http1_only()
                .build()
                .map_err(|e| one_line(&chain(&e)))?;
            v2::Client::new(http).map_err(|e| format!("cannot start the git client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The bare clone, created on first use, opened without any configuration
/// but its own and the transport allowlist ([`objects::opened`]).
fn open(dir: &Path) -> Result<gix::Repository, Box<dyn std::error::Error + Send + Sync>> {
    if !is_repo(dir) {
        init_bare(dir)?;
    }
    Ok(objects::opened(dir)?.to_thread_local())
}

/// The least a bare repository needs, without the sample hooks, the
/// description and the file-system probes a full `init` writes (a cache
/// clone uses none of them): `objects/pack`, and `refs`, which git looks
/// for to call a directory a repository. Not `objects/info` or
/// `refs/tags`: they are made if something writes there, and each new
/// directory cost a cold `add` about 0.7 ms of CPU. `HEAD` comes last, so
/// an init cut short is simply done again.
fn init_bare(dir: &Path) -> std::io::Result<()> {
    for sub in ["objects/pack", "refs"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )?;
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queues `listing` as [`expect`]'s answer for `url`, come `age` ago,
    /// with an early `fetch` whose answer never comes.
    fn answered_early(url: &str, listing: v2::Listing, age: Duration) -> Option<()> {
        let at = Instant::now().checked_sub(age)?;
        let (tx, rx) = std::sync::mpsc::channel();
        let (_, pack) = std::sync::mpsc::channel();
        let early = Early {
            listed: Ok(listing),
            at,
            pack: Some(pack),
        };
        tx.send(early).ok()?;
        EARLY.lock().ok()?.push((url.to_string(), rx));
        Some(())
    }

    /// The hand-written `packed-refs` of a new clone reads back through
    /// gitoxide alone: every branch and tag at its commit, in order, and
    /// the server's `HEAD` under `refs/skillpm/HEAD`.
    #[test]
    fn a_new_clones_packed_refs_read_back_through_gitoxide() {
        let dir = tempfile::tempdir().unwrap();
        init_bare(dir.path()).unwrap();
        let oid = |c: u8| ObjectId::from_hex(&[c; 40]).unwrap();
        let name = |n: &str| gix::refs::FullName::try_from(n).unwrap();
        let listing = v2::Listing {
            head: Some(oid(b'1')),
            refs: vec![
                (name("refs/tags/v1.0.0"), oid(b'2')),
                (name("refs/heads/main"), oid(b'1')),
                (name("refs/heads/feature/x"), oid(b'3')),
            ],
        };
        write_packed_refs(dir.path(), &listing).unwrap();
        let repo = gix::open(dir.path()).unwrap();
        let mut read = local_refs(&repo);
        read.sort();
        let mut want = listing.refs.clone();
        want.sort();
        assert_eq!(read, want);
        let head = repo.find_reference("refs/skillpm/HEAD").unwrap();
        assert_eq!(head.target().try_id(), Some(oid(b'1').as_ref()));
    }

    /// An early answer stands for the fetch's first request once, and
    /// only while recent, and so does the early `fetch` that came with it;
    /// otherwise the server is asked (here one that hangs up on every
    /// connection, so asking fails) and the early `fetch` is dropped.
    #[test]
    fn an_early_listing_is_taken_once_while_recent() {
        let client = client().unwrap();
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in server.incoming() {
                drop(conn);
            }
        });
        let oid = ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let listing = || v2::Listing {
            head: Some(oid),
            refs: Vec::new(),
        };
        let fresh = &format!("https://127.0.0.1:{port}/fresh.git");
        answered_early(fresh, listing(), Duration::ZERO).unwrap();
        let taken = early(fresh).unwrap();
        let (listing_taken, pack) = listed(client, fresh, taken);
        assert_eq!(listing_taken.unwrap().head, Some(oid));
        assert!(pack.is_some(), "the early fetch comes with it");
        assert!(early(fresh).is_none(), "taken by the first fetch");

        let stale = &format!("https://127.0.0.1:{port}/stale.git");
        if answered_early(stale, listing(), EARLY_FOR * 2).is_some() {
            let taken = early(stale).unwrap();
            let (listing_taken, pack) = listed(client, stale, taken);
            assert!(listing_taken.is_err(), "too old to stand");
            assert!(pack.is_none(), "nor does its early fetch");
        }
    }
}
