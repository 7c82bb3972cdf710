//! Fetching over https in this process (gitoxide), not through `git`.
//!
//! `git fetch` over https costs three processes (git, git-remote-https,
//! index-pack) and an OpenSSL start-up before the first byte; for a small
//! repository that was most of an `add`. Here the fetch speaks the smart
//! HTTP protocol through the same rustls stack, timeouts and user agent as
//! the registry client, and writes the received pack and its index
//! straight into the bare clone, so what reads objects afterwards cannot
//! tell which way they came.
//!
//! The repository is opened isolated: no system, user or environment
//! configuration is read, only `protocol.allow` overrides that admit https
//! and nothing else. Anything this path does not do (credentials in the
//! URL, credential helpers, proxies set in git config, ssh, file) is left
//! to the `git` command, which the caller falls back to.

use super::SourceError;
use super::{objects, v2};
use crate::project::lockfile::is_full_commit;
use crate::project::spec::{GitScheme, GitUrl};
use crate::source::registry::client::{chain, one_line};
use gix::protocol::transport::client::blocking_io::http;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ScopedJoinHandle;

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

/// Has a termination signal (Ctrl-C, SIGTERM) remove gitoxide's lock and
/// temporary files before the process dies as it would have. A fetch
/// holds `shallow.lock` from before it asks for the pack until the pack
/// is in; left behind, every later fetch of that URL in process failed
/// at once (gitoxide does not wait for a lock), leaving it to `git`. Set up
/// on the first fetch, so commands that fetch nothing keep the default
/// handlers; it must come before gitoxide's first temporary file.
fn remove_locks_on_signal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| gix::tempfile::signal::setup(Default::default()));
}

/// Starts what a fetch of [`v2`] needs before its first request on
/// another thread: the signal handlers and the client (its TLS roots and
/// its runtime thread, about 0.3 ms). Decided once, when a run first asks
/// a git source about a URL, so the set-up runs beside the cache lookups
/// rather than in front of the request; a fetch that gets there first
/// waits for it rather than doing it twice. Only for an https URL whose
/// `clone` does not exist yet: that client fetches a new clone and a
/// lone locked commit, while an existing clone answers from disk or
/// through gitoxide's own client, which would leave this one unused.
pub(super) fn warm(url: &GitUrl, clone: impl FnOnce() -> std::path::PathBuf) {
    static DECIDED: std::sync::Once = std::sync::Once::new();
    DECIDED.call_once(|| {
        if handles(url) && !clone().join("HEAD").is_file() {
            let _ = std::thread::Builder::new().spawn(|| {
                remove_locks_on_signal();
                let _ = client();
            });
        }
    });
}

/// Fetches [`REFSPECS`] of `url` into the bare repository at `repo`
/// (created when missing), with as much `history` as asked; a clone made
/// shallow by an earlier fetch of tips is made whole by [`History::Full`].
pub(super) fn fetch(repo: &Path, url: &GitUrl, history: History) -> Result<(), SourceError> {
    // The whole chain: gitoxide keeps the reason ("invalid peer
    // certificate: UnknownIssuer") below "Transport handshake failed".
    let err = |e: &dyn std::error::Error| fetch_error(url, one_line(&chain(e)));
    remove_locks_on_signal();
    if history == History::Tips && !repo.join("HEAD").is_file() {
        match fetch_new_clone(repo, url) {
            Ok(()) => return Ok(()),
            // Not v2, a redirect, a refused argument: gitoxide's own
            // negotiation gets its turn.
            Err(v2::Failure::Unsupported(_)) => {}
            Err(v2::Failure::Failed(detail)) => return Err(fetch_error(url, detail)),
        }
    }
    // Only gitoxide's fetch stamps its ref updates with the local time.
    warm_local_time_zone();
    let repo = open(repo).map_err(|e| err(&*e))?;
    let remote = repo
        .remote_at(url.as_str())
        .and_then(|r| r.with_refspecs(REFSPECS, gix::remote::Direction::Fetch))
        .map_err(|e| err(&e))?;
    let mut conn = remote
        .connect(gix::remote::Direction::Fetch)
        .map_err(|e| err(&e))?;
    let backend = http::reqwest::Options {
        configure_client: Some(Box::new(|builder| {
            crate::source::http::blocking(builder)
                .map_err(|e| gix::Error::from_error(std::io::Error::other(e)))
        })),
        configure_request: None,
    };
    let options = http::Options {
        backend: Some(Arc::new(Mutex::new(backend))),
        ..Default::default()
    };
    conn.set_transport_options(Box::new(options));
    let shallow = match history {
        History::Tips => gix::remote::fetch::Shallow::DepthAtRemote(std::num::NonZeroU32::MIN),
        History::Full if repo.is_shallow().map_err(|e| err(&e))? => {
            gix::remote::fetch::Shallow::undo()
        }
        History::Full => gix::remote::fetch::Shallow::NoChange,
    };
    let interrupt = AtomicBool::new(false);
    conn.prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(|e| err(&e))?
        .with_shallow(shallow)
        .receive(gix::progress::Discard, &interrupt)
        .map_err(|e| err(&e))?;
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
    let err = |detail: String| fetch_error(url, detail);
    if !is_full_commit(commit) {
        return Err(err(format!("{commit:?} is not a commit id")));
    }
    let want = gix::hash::ObjectId::from_hex(commit.as_bytes()).map_err(|e| err(e.to_string()))?;
    remove_locks_on_signal();
    let client = client().map_err(err)?;
    // The commits `deepen` cut are not recorded: this repository claims
    // no history to any server (see `holder` in the parent module).
    std::thread::scope(|s| {
        let ready = s.spawn(|| prepare(repo));
        v2::fetch(client, url.as_str(), &[want], || joined(ready))
    })
    .map(drop)
    .map_err(|f| err(f.detail()))
}

/// A failed fetch of `url`, the URL's credentials kept out of `detail`.
fn fetch_error(url: &GitUrl, detail: impl std::fmt::Display) -> SourceError {
    super::objects::error("fetch from", url, detail)
}

/// The first fetch of tips into a new clone, in two requests where
/// gitoxide's client takes three (the capabilities, `ls-refs`, `fetch`):
/// every cold `add` of a git URL paid that round trip and the server's
/// `upload-pack` run behind it. Writes the pack, the `shallow` file for
/// the commits whose parents were not sent, then the refs of
/// [`REFSPECS`], so a fetch cut short leaves a clone without refs that
/// the next fetch fills the usual way. Only for a new clone: one with
/// refs has objects to negotiate, which gitoxide does.
fn fetch_new_clone(repo: &Path, url: &GitUrl) -> Result<(), v2::Failure> {
    let failed = |e: &dyn std::fmt::Display| v2::Failure::Failed(one_line(&e.to_string()));
    let client = client().map_err(|e| failed(&e))?;
    let (listing, pack_dir) = std::thread::scope(|s| {
        let ready = s.spawn(|| prepare(repo));
        (v2::ls_refs(client, url.as_str()), joined(ready))
    });
    let (listing, pack_dir) = (listing?, pack_dir?);
    let mut wants: Vec<gix::hash::ObjectId> = listing
        .refs
        .iter()
        .map(|(_, oid)| *oid)
        .chain(listing.head)
        .collect();
    wants.sort_unstable();
    wants.dedup();
    if wants.is_empty() {
        return Ok(());
    }
    let fetched = v2::fetch(client, url.as_str(), &wants, || Ok(pack_dir))?;
    let mut shallow = fetched.shallow;
    if !shallow.is_empty() {
        shallow.sort_unstable();
        shallow.dedup();
        let text: String = shallow.iter().map(|oid| format!("{oid}\n")).collect();
        crate::fs::replace_file(&repo.join("shallow"), text.as_bytes()).map_err(|e| failed(&e))?;
    }
    let edit = |name: gix::refs::FullName, oid| gix::refs::transaction::RefEdit {
        change: gix::refs::transaction::Change::Update {
            log: Default::default(),
            expected: gix::refs::transaction::PreviousValue::Any,
            new: gix::refs::Target::Object(oid),
        },
        name,
        deref: false,
    };
    let head = "refs/skillpm/HEAD".try_into().map_err(|e| failed(&e))?;
    let edits: Vec<_> = listing
        .refs
        .into_iter()
        .map(|(name, oid)| edit(name, oid))
        .chain(listing.head.map(|oid| edit(head, oid)))
        .collect();
    let repo = open(repo).map_err(|e| failed(&e))?;
    repo.edit_references_as(edits, None)
        .map_err(|e| failed(&chain(&e)))?;
    // Refs reach the pack now; a `.keep` would only stop `git gc` (run
    // there by hand) from ever repacking it, and gitoxide's own fetch
    // removes it here too.
    if let Some(keep) = fetched.keep {
        let _ = std::fs::remove_file(keep);
    }
    Ok(())
}

/// Makes `repo` ready for a pack while the first request is out, on
/// another thread: created when new ([`init_bare`]) and opened
/// ([`objects::opened`]) for the reads after the fetch, which see the
/// pack because the store rescans its directory for an object it does not
/// find. Both stood in front of the request: about 0.5 ms of a 10-skill
/// restore. Returns the pack directory; an open that fails here fails
/// again, with its error, where the clone is read.
fn prepare(repo: &Path) -> Result<PathBuf, String> {
    if !repo.join("HEAD").is_file() {
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
/// to one host. It follows no redirect: a server that redirects is left
/// to gitoxide, which follows git's rules.
fn client() -> Result<&'static reqwest::blocking::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::blocking::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            crate::source::http::blocking(reqwest::blocking::Client::builder())?
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| one_line(&chain(&e)))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Looks up the local time zone on another thread, so the lookup runs
/// while the fetch waits on the network. gitoxide stamps every ref update
/// with the local time even when no reflog is written, and the first
/// lookup walks the whole zoneinfo directory: about 1 ms that otherwise
/// sits between the received pack and the updated refs.
fn warm_local_time_zone() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::thread::spawn(|| {
            let _ = gix::date::Time::now_local_or_utc();
        });
    });
}

/// The bare clone, created on first use, opened without any configuration
/// but its own and the transport allowlist ([`objects::opened`]).
fn open(dir: &Path) -> Result<gix::Repository, Box<dyn std::error::Error + Send + Sync>> {
    if !dir.join("HEAD").is_file() {
        init_bare(dir)?;
    }
    Ok(objects::opened(dir)?.to_thread_local())
}

/// The least a bare repository needs, without the sample hooks, the
/// description and the file-system probes a full `init` writes (a cache
/// clone uses none of them). `HEAD` comes last, so an init cut short is
/// simply done again.
fn init_bare(dir: &Path) -> std::io::Result<()> {
    for sub in ["objects/pack", "objects/info", "refs/heads", "refs/tags"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )?;
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n")
}
