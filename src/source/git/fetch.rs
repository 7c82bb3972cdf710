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
use crate::project::lockfile::is_full_commit;
use crate::project::spec::{GitScheme, GitUrl};
use crate::source::registry::client::{chain, one_line};
use gix::protocol::transport::client::blocking_io::http;
use gix::protocol::transport::packetline::blocking_io::encode;
use gix::protocol::transport::packetline::blocking_io::StreamingPeekableIter;
use gix::protocol::transport::packetline::PacketLineRef;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

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

/// Fetches [`REFSPECS`] of `url` into the bare repository at `repo`
/// (created when missing), with as much `history` as asked; a clone made
/// shallow by an earlier fetch of tips is made whole by [`History::Full`].
pub(super) fn fetch(repo: &Path, url: &GitUrl, history: History) -> Result<(), SourceError> {
    // The whole chain: gitoxide keeps the reason ("invalid peer
    // certificate: UnknownIssuer") below "Transport handshake failed".
    let err = |e: &dyn std::error::Error| SourceError::Git {
        what: "fetch from",
        url: url.redacted(),
        detail: one_line(&chain(e)).replace(url.as_str(), &url.redacted()),
    };
    remove_locks_on_signal();
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
            Ok(crate::source::http::blocking(builder))
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

/// The most a server may send in answer to [`fetch_commit`]: a skills
/// repository's pack is megabytes; this only stops a hostile server from
/// filling the disk.
const MAX_PACK_BYTES: u64 = 2 << 30;

/// The largest allocation resolving a received pack may make: one object
/// (or delta result). A small pack may declare a huge object; this keeps
/// such a bomb from taking the machine's memory, in both fetch paths.
const MAX_OBJECT_BYTES: usize = 1 << 30;

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
    let err = |detail: String| SourceError::Git {
        what: "fetch from",
        url: url.redacted(),
        detail: detail.replace(url.as_str(), &url.redacted()),
    };
    if !is_full_commit(commit) {
        return Err(err(format!("{commit:?} is not a commit id")));
    }
    remove_locks_on_signal();
    if !repo.join("HEAD").is_file() {
        init_bare(repo).map_err(|e| err(e.to_string()))?;
    }
    let client = commit_client().map_err(err)?;
    let endpoint = format!("{}/git-upload-pack", url.as_str().trim_end_matches('/'));
    let response = client
        .post(endpoint)
        .header(CONTENT_TYPE, "application/x-git-upload-pack-request")
        .header(ACCEPT, RESULT_TYPE)
        .header("Git-Protocol", "version=2")
        .body(fetch_request(commit))
        .send()
        .map_err(|e| err(one_line(&chain(&e))))?;
    let kind = response.headers().get(CONTENT_TYPE).map(|v| v.as_bytes());
    if !response.status().is_success() || kind != Some(RESULT_TYPE.as_bytes()) {
        return Err(err(format!(
            "the server answered {} to a protocol v2 fetch",
            response.status()
        )));
    }
    let capped = std::io::Read::take(response, MAX_PACK_BYTES);
    let mut lines = StreamingPeekableIter::new(capped, &[PacketLineRef::Flush], false);
    lines.fail_on_err_lines(true);
    // Sections before the pack (none, for a `done` without `have`s) are
    // skipped; a response without a pack ends at its flush.
    loop {
        match lines.read_line() {
            None => return Err(err("the server sent no pack".into())),
            Some(line) => {
                let line = line.map_err(|e| err(e.to_string()))?;
                let line = line.map_err(|e| err(e.to_string()))?;
                if line.as_bstr().map(|b| b.trim_ascii_end()) == Some(b"packfile".as_slice()) {
                    break;
                }
            }
        }
    }
    let mut refused = Vec::new();
    let mut pack = lines.as_read_with_sidebands(|is_error, text: &[u8]| {
        if is_error {
            refused = text.to_vec();
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    let written = gix::odb::pack::Bundle::write_to_directory(
        &mut pack,
        Some(&repo.join("objects").join("pack")),
        &mut gix::progress::Discard,
        &AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        gix::hash::Kind::Sha1,
        gix::odb::pack::bundle::write::Options {
            alloc_limit_bytes: Some(MAX_OBJECT_BYTES),
            ..Default::default()
        },
    );
    drop(pack);
    match written {
        Ok(_) => Ok(()),
        Err(_) if !refused.is_empty() => Err(err(one_line(&String::from_utf8_lossy(&refused)))),
        Err(e) => Err(err(one_line(&chain(&e)))),
    }
}

/// The client of every [`fetch_commit`] in this process. A lock that pins
/// many commits paid for a client per commit (TLS roots and a connection
/// pool, built and thrown away) and reused no connection, even to one
/// host. It follows no redirect.
fn commit_client() -> Result<&'static reqwest::blocking::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::blocking::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            crate::source::http::blocking(reqwest::blocking::Client::builder())
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| one_line(&chain(&e)))
        })
        .as_ref()
        .map_err(Clone::clone)
}

const RESULT_TYPE: &str = "application/x-git-upload-pack-result";

/// The body of a protocol v2 `fetch` of `commit` alone: `deepen 1`, so
/// the server sends the commit and its tree, not the history behind it
/// (a restore reads one tree; a repository with years of history would
/// otherwise send all of it), no `have`s (the repository may be empty),
/// `done` at once, and no progress text to skip. A server without the
/// `shallow` feature refuses the request, and the caller does the whole
/// fetch instead.
fn fetch_request(commit: &str) -> Vec<u8> {
    // No `object-format` capability: servers before git 2.28 refuse
    // capabilities they do not know, and sha1 is what they all assume.
    let mut body = Vec::new();
    let _ = encode::text_to_write(b"command=fetch", &mut body);
    let _ = encode::delim_to_write(&mut body);
    let want = format!("want {commit}");
    let args: [&[u8]; 5] = [
        b"ofs-delta",
        b"no-progress",
        want.as_bytes(),
        b"deepen 1",
        b"done",
    ];
    for line in args {
        let _ = encode::text_to_write(line, &mut body);
    }
    let _ = encode::flush_to_write(&mut body);
    body
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
/// but its own and the transport allowlist.
fn open(dir: &Path) -> Result<gix::Repository, Box<dyn std::error::Error + Send + Sync>> {
    if !dir.join("HEAD").is_file() {
        init_bare(dir)?;
    }
    let options = gix::open::Options::isolated().cli_overrides([
        "protocol.allow=never".to_string(),
        "protocol.https.allow=always".to_string(),
        // Version 2, though it takes three requests (capabilities,
        // ls-refs, fetch) where version 1 takes two: gitoxide's version 1
        // client announces every `deepen` feature the server offers, and
        // `deepen-relative` among them turns `deepen 1` into "one more
        // than the client has", which for an empty clone is everything.
        "protocol.version=2".to_string(),
        // No reflogs: the cache clone has no use for its refs' history.
        "core.logAllRefUpdates=false".to_string(),
        format!("gitoxide.objects.allocLimit={MAX_OBJECT_BYTES}"),
    ]);
    Ok(gix::open_opts(dir, options)?)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire form of a one-commit fetch, as git's protocol-v2 document
    /// spells it: the command, a delimiter, the arguments, a flush.
    #[test]
    fn a_commit_fetch_is_one_v2_command() {
        let commit = "0123456789abcdef0123456789abcdef01234567";
        let body = String::from_utf8(fetch_request(commit)).unwrap();
        assert_eq!(
            body,
            format!(
                "0012command=fetch\n0001000eofs-delta\n0010no-progress\n0032want {commit}\n000ddeepen 1\n0009done\n0000"
            )
        );
    }
}
