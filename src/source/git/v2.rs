//! The little of git's protocol v2 over smart HTTP that skillpm speaks
//! itself: `ls-refs`, and a `fetch` of named commits, with or without
//! their history. Each command is one POST. A v2 server answers a command
//! sent without the capability advertisement first, which git's and
//! gitoxide's clients always ask for: one more round trip, and a whole
//! `upload-pack` run on the server, before every fetch.
//!
//! Everything a server sends is untrusted: ref names are checked by
//! gitoxide's rules and kept only under `refs/heads/` and `refs/tags/`,
//! object ids are parsed, the response is capped before it is read, and
//! the pack is indexed under the allocation limit of every fetch.

use crate::source::registry::client::{chain, one_line};
use gix::hash::ObjectId;
use gix_packetline::blocking_io::encode;
use gix_packetline::blocking_io::StreamingPeekableIter;
use gix_packetline::PacketLineRef;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// The client of every command: an HTTP/1.1 client and the runtime its
/// requests run on, driven by the thread that waits for an answer.
/// reqwest's blocking client kept a thread of its own that every request
/// and every part of every answer passed through, and that the first
/// request waited for to start (0.3 ms in front of a fetch's first
/// request, a thread hop each way after it).
pub(super) struct Client {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
}

impl Client {
    pub(super) fn new(http: reqwest::Client) -> std::io::Result<Client> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Client { rt, http })
    }
}

/// A server's answer, its body read as it arrives.
pub(super) struct Answer {
    client: &'static Client,
    response: reqwest::Response,
    /// What has arrived and not been read yet.
    chunk: bytes::Bytes,
}

impl Answer {
    fn status(&self) -> reqwest::StatusCode {
        self.response.status()
    }

    fn headers(&self) -> &reqwest::header::HeaderMap {
        self.response.headers()
    }

    /// Reads the rest of an answer whose last packet has been read (its
    /// end, a few bytes, is usually in already), so its connection is
    /// idle when the next request goes out. A connection still in the
    /// middle of an answer is not reused: the client opens a second one
    /// beside it, a TLS handshake on both ends while the server prepares
    /// the pack. An answer that goes on past its flush (more than 64 KiB)
    /// is dropped, and its connection with it.
    fn finish(self) {
        const ENOUGH: u64 = 64 * 1024;
        let _ = std::io::copy(&mut self.take(ENOUGH), &mut std::io::sink());
    }
}

impl Read for Answer {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.client.rt.block_on(self.response.chunk()) {
                Ok(Some(chunk)) => self.chunk = chunk,
                Ok(None) => return Ok(0),
                Err(e) => return Err(std::io::Error::other(one_line(&chain(&e)))),
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk[..n]);
        self.chunk = self.chunk.slice(n..);
        Ok(n)
    }
}

/// Why a command failed: the server does not speak v2 (only `git` may
/// get further), it speaks v2 but refused this command's arguments (a
/// `deepen` without the `shallow` feature: asking for less may work), or
/// the exchange itself failed (asking again would fail the same, or time
/// out twice).
#[derive(Debug)]
pub(super) enum Failure {
    Unsupported(String),
    Refused(String),
    Failed(String),
}

impl Failure {
    pub(super) fn detail(self) -> String {
        match self {
            Failure::Unsupported(d) | Failure::Refused(d) | Failure::Failed(d) => d,
        }
    }
}

/// The most a server may send in answer to one command: a skills
/// repository's pack is megabytes; this only stops a hostile server from
/// filling the disk.
pub(super) const MAX_RESPONSE_BYTES: u64 = 2 << 30;

/// The largest allocation indexing a received pack may make: one object
/// (or delta result). A small pack may declare a huge object; this keeps
/// such a bomb from taking the machine's memory, in every fetch path.
pub(super) const MAX_OBJECT_BYTES: usize = 1 << 30;

/// Most refs an `ls-refs` answer may list: far more than any skills
/// repository has, few enough that the list costs little memory.
const MAX_REFS: usize = 100_000;

const RESULT_TYPE: &str = "application/x-git-upload-pack-result";

/// What `ls-refs` found: the commit `HEAD` names, and each branch and tag
/// (a tag as the object its ref names, annotated or not).
#[derive(Debug, Default)]
pub(super) struct Listing {
    pub head: Option<ObjectId>,
    pub refs: Vec<(gix::refs::FullName, ObjectId)>,
}

impl Listing {
    /// Every object a ref or `HEAD` names, sorted, once each.
    pub(super) fn tips(&self) -> Vec<ObjectId> {
        let mut tips: Vec<ObjectId> = self.refs.iter().map(|(_, oid)| *oid).collect();
        tips.extend(self.head);
        tips.sort_unstable();
        tips.dedup();
        tips
    }

    /// Records one line of an `ls-refs` answer: `<oid> <name>[ <attribute>]...`.
    /// A name outside `refs/heads/` and `refs/tags/`, or one git itself
    /// would refuse (`..`, a control character), is skipped, not written.
    fn take(&mut self, text: &[u8]) -> Result<(), Failure> {
        let mut words = text.split(|b| *b == b' ');
        let (Some(oid), Some(name)) = (words.next(), words.next()) else {
            return Err(unexpected(text));
        };
        let oid = ObjectId::from_hex(oid).map_err(|_| unexpected(text))?;
        if name == b"HEAD" {
            self.head = Some(oid);
        } else if name.starts_with(b"refs/heads/") || name.starts_with(b"refs/tags/") {
            if let Ok(name) = gix::refs::FullName::try_from(gix::bstr::BString::from(name)) {
                self.refs.push((name, oid));
            }
        }
        Ok(())
    }
}

/// Runs one command against `url` unless its server refused one earlier
/// in this run, and remembers a refusal: a server before v2 is then not
/// asked again (a lock pinning many of its commits, or a restore that
/// goes on to a whole fetch of the clone), and `git` gets its turn at
/// once.
fn unless_refused<T>(
    url: &str,
    command: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    static REFUSED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let refused = || REFUSED.lock().unwrap_or_else(|e| e.into_inner());
    if refused().contains(url) {
        return Err(Failure::Unsupported(
            "the server refused protocol v2 earlier in this run".into(),
        ));
    }
    let outcome = command();
    if let Err(Failure::Unsupported(_)) = outcome {
        refused().insert(url.to_string());
    }
    outcome
}

/// Lists `HEAD`, the branches and the tags of `url`.
pub(super) fn ls_refs(client: &'static Client, url: &str) -> Result<Listing, Failure> {
    unless_refused(url, || list(client, url))
}

fn list(client: &'static Client, url: &str) -> Result<Listing, Failure> {
    let body = command(
        "ls-refs",
        &[
            "symrefs",
            "ref-prefix HEAD",
            "ref-prefix refs/heads/",
            "ref-prefix refs/tags/",
        ],
    );
    let response = post(client, url, body)?;
    let mut lines = packet_lines(response);
    let mut listing = Listing::default();
    let mut listed = 0usize;
    while let Some(line) = lines.read_line() {
        let text = data(line)?;
        if text.is_empty() {
            continue;
        }
        listed += 1;
        if listed > MAX_REFS {
            return Err(Failure::Failed(format!(
                "the server listed more than {MAX_REFS} refs"
            )));
        }
        listing.take(text)?;
    }
    // A v2 answer ends with a flush, an empty repository's too. Without
    // one, the server did not run the command (an old one answers with
    // nothing), and its silence must not read as "no refs".
    if lines.stopped_at() != Some(PacketLineRef::Flush) {
        return Err(Failure::Unsupported(
            "the server's answer to ls-refs ended without a flush".into(),
        ));
    }
    lines.into_inner().into_inner().finish();
    Ok(listing)
}

/// What one `fetch` asks for.
#[derive(Debug)]
pub(super) struct Ask<'a> {
    pub wants: &'a [ObjectId],
    /// `deepen 1`: the wanted commits and their trees, no history.
    pub tips_only: bool,
}

/// The `.keep` file gitoxide writes beside a new pack, which guards it
/// until refs reach it.
pub(super) type Keep = Option<PathBuf>;

/// Fetches what `ask` names and writes the pack and its index into the
/// directory `pack_dir` returns. That is called once the server has
/// answered, with the commits it marked shallow (their parents were not
/// sent): the caller may still be making the directory while the server
/// works, and records those commits before the pack that holds them is
/// in, so no commit is ever in the repository without its parents and
/// without the record that says so.
pub(super) fn fetch(
    client: &'static Client,
    url: &str,
    ask: &Ask<'_>,
    pack_dir: impl FnOnce(&[ObjectId]) -> Result<PathBuf, Failure>,
) -> Result<Keep, Failure> {
    unless_refused(url, || {
        receive(post(client, url, fetch_command(ask))?, ask, pack_dir)
    })
}

/// The server's answer to the `fetch` command for `ask`, not read yet:
/// [`fetch`] in two halves, for a caller that asks on one thread and
/// receives the pack on another ([`fetched`]).
pub(super) fn ask_fetch(
    client: &'static Client,
    url: &str,
    ask: &Ask<'_>,
) -> Result<Answer, Failure> {
    unless_refused(url, || post(client, url, fetch_command(ask)))
}

/// [`fetch`] of `ask` whose request [`ask_fetch`] made: `answer` is
/// read and its pack written as [`fetch`] does.
pub(super) fn fetched(
    url: &str,
    answer: Result<Answer, Failure>,
    ask: &Ask<'_>,
    pack_dir: impl FnOnce(&[ObjectId]) -> Result<PathBuf, Failure>,
) -> Result<Keep, Failure> {
    unless_refused(url, || receive(answer?, ask, pack_dir))
}

/// Reads the answer to the `fetch` command for `ask` and writes its pack
/// to where `pack_dir` says, once the lines the server cut the history
/// at are known.
fn receive(
    response: Answer,
    ask: &Ask<'_>,
    pack_dir: impl FnOnce(&[ObjectId]) -> Result<PathBuf, Failure>,
) -> Result<Keep, Failure> {
    let mut lines = packet_lines(response);
    // Sections before the pack: `shallow-info` (what `deepen` cut), and
    // none other after `done` (no acknowledgments); a response without a
    // pack ends at its flush.
    let wants = ask.wants;
    let mut shallow = Vec::new();
    loop {
        let Some(line) = lines.read_line() else {
            return Err(Failure::Failed("the server sent no pack".into()));
        };
        let text = data(line)?;
        if text == b"packfile" {
            break;
        }
        if let Some(oid) = text.strip_prefix(b"shallow ") {
            // At depth 1 only a wanted commit can be cut from its
            // parents: more lines than wants is a server filling memory.
            if shallow.len() >= wants.len() {
                return Err(Failure::Failed(
                    "the server marked more commits shallow than were asked for".into(),
                ));
            }
            shallow.push(ObjectId::from_hex(oid).map_err(|_| unexpected(text))?);
        }
    }
    let pack_dir = pack_dir(&shallow)?;
    let mut refused = Vec::new();
    let mut pack = lines.as_read_with_sidebands(|is_error, text: &[u8]| {
        if is_error {
            refused = text.to_vec();
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    if let Some(count) = declared_objects(&mut pack).filter(|n| *n > MAX_PACK_OBJECTS) {
        return Err(Failure::Failed(format!(
            "the server sent a pack of {count} objects, more than the {MAX_PACK_OBJECTS} a skills repository may hold; refusing it before indexing"
        )));
    }
    let thread_limit = index_threads(&mut pack);
    let written = gix::odb::pack::Bundle::write_to_directory(
        &mut pack,
        Some(&pack_dir),
        &mut gix::progress::Discard,
        &AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        gix::hash::Kind::Sha1,
        gix::odb::pack::bundle::write::Options {
            alloc_limit_bytes: Some(MAX_OBJECT_BYTES),
            thread_limit,
            ..Default::default()
        },
    );
    drop(pack);
    match written {
        Ok(outcome) => {
            lines.into_inner().into_inner().finish();
            Ok(outcome.keep_path)
        }
        Err(_) if !refused.is_empty() => Err(Failure::Failed(one_line(&String::from_utf8_lossy(
            &refused,
        )))),
        Err(e) => Err(Failure::Failed(one_line(&chain(&e)))),
    }
}

/// Packs with fewer objects than this are indexed on one thread.
const SMALL_PACK_OBJECTS: u32 = 256;

/// How many threads to index the incoming pack with, from the object
/// count in its header (peeked, not consumed): one for a small pack (the
/// trees of a few skills, indexed in well under a millisecond, where each
/// thread started costs about a tenth of one), every core (`None`) for a
/// larger one or when the header is not there yet.
fn index_threads(pack: &mut dyn std::io::BufRead) -> Option<usize> {
    (declared_objects(pack)? < SMALL_PACK_OBJECTS).then_some(1)
}

/// The most objects a received pack may hold. Indexing costs memory per
/// object (about 130 bytes: a pack of six million empty blobs, 54 MB on
/// the wire, took the client to 789 MB); a depth-1 fetch of a skills
/// repository is its one tree, thousands of objects, and the largest
/// public collections hold tens of thousands.
pub(super) const MAX_PACK_OBJECTS: u32 = 1_000_000;

/// The object count a pack's header declares (peeked, not consumed);
/// `None` before the header is there or when it is not a pack's.
fn declared_objects(pack: &mut dyn std::io::BufRead) -> Option<u32> {
    let head = pack.fill_buf().ok()?;
    let count: [u8; 4] = head.get(8..12)?.try_into().ok()?;
    head.starts_with(b"PACK").then(|| u32::from_be_bytes(count))
}

/// The `fetch` command for `ask`: no `have`s (the repository may be
/// empty, and a commit without its parents must not claim them), `done`
/// at once, no progress text to skip, and no thin pack (every delta's
/// base is in the pack).
fn fetch_command(ask: &Ask<'_>) -> Vec<u8> {
    let lines: Vec<String> = ask.wants.iter().map(|w| format!("want {w}")).collect();
    let mut args: Vec<&str> = vec!["ofs-delta", "no-progress"];
    args.extend(lines.iter().map(String::as_str));
    if ask.tips_only {
        args.push("deepen 1");
    }
    args.push("done");
    command("fetch", &args)
}

/// The wire form of one v2 command: its name, a delimiter, the
/// arguments, a flush. No `object-format` capability: servers before git
/// 2.28 refuse capabilities they do not know, and sha1 is what they all
/// assume.
fn command(name: &str, args: &[&str]) -> Vec<u8> {
    let mut body = Vec::new();
    let _ = encode::text_to_write(format!("command={name}").as_bytes(), &mut body);
    let _ = encode::delim_to_write(&mut body);
    for arg in args {
        let _ = encode::text_to_write(arg.as_bytes(), &mut body);
    }
    let _ = encode::flush_to_write(&mut body);
    body
}

/// Most redirects the first request for a URL follows.
const MAX_REDIRECTS: usize = 5;

const ENDPOINT: &str = "/git-upload-pack";

/// Sends one command; an answer that is not a v2 result (a dumb server,
/// a login page, a 403, a redirect not followed) is
/// [`Failure::Unsupported`]. As git does (`http.followRedirects=initial`),
/// only the first request for a URL in a run follows redirects (a
/// repository renamed on its host answers with one), and every later one
/// goes straight to where that request landed: a server cannot send a
/// fetch somewhere else once it has answered for the repository.
fn post(client: &'static Client, url: &str, body: Vec<u8>) -> Result<Answer, Failure> {
    static LANDED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let landed = || LANDED.lock().unwrap_or_else(|e| e.into_inner());
    let known = landed().get(url).cloned();
    let first = known.is_none();
    let base = known.unwrap_or_else(|| url.trim_end_matches('/').to_string());
    let mut endpoint = format!("{base}{ENDPOINT}");
    let mut hops = 0;
    let response = loop {
        let request = client
            .http
            .post(&endpoint)
            .header(CONTENT_TYPE, "application/x-git-upload-pack-request")
            .header(ACCEPT, RESULT_TYPE)
            .header("Git-Protocol", "version=2")
            .body(body.clone());
        // Sent inside the runtime: the request's timer is made as it is.
        let response = Answer {
            client,
            response: client
                .rt
                .block_on(async { request.send().await })
                .map_err(|e| Failure::Failed(one_line(&chain(&e))))?,
            chunk: bytes::Bytes::new(),
        };
        if !response.status().is_redirection() || !first || hops == MAX_REDIRECTS {
            break response;
        }
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok());
        match location.and_then(|l| follow(&endpoint, l)) {
            Some(next) => endpoint = next,
            None => break response,
        }
        hops += 1;
    };
    if first && !response.status().is_redirection() {
        let base = endpoint.strip_suffix(ENDPOINT).unwrap_or(&endpoint);
        landed().insert(url.to_string(), base.to_string());
    }
    let kind = response.headers().get(CONTENT_TYPE).map(|v| v.as_bytes());
    if !response.status().is_success() || kind != Some(RESULT_TYPE.as_bytes()) {
        return Err(Failure::Unsupported(format!(
            "the server answered {} to a protocol v2 command",
            response.status()
        )));
    }
    Ok(response)
}

/// Where a redirect from `endpoint` to `location` leads, if it is one to
/// follow: the same origin (a repository renamed on its host; another
/// host, this machine or a cloud metadata address among them, is `git`'s
/// to decide under the user's git configuration), https, the same command
/// endpoint, and no credentials or query.
fn follow(endpoint: &str, location: &str) -> Option<String> {
    let from = url::Url::parse(endpoint).ok()?;
    let next = from.join(location).ok()?;
    let plain = next.origin() == from.origin()
        && next.scheme() == "https"
        && next.username().is_empty()
        && next.password().is_none()
        && next.query().is_none()
        && next.fragment().is_none()
        && next.path().ends_with(ENDPOINT);
    plain.then(|| next.to_string())
}

type Lines = StreamingPeekableIter<std::io::Take<Answer>>;

/// The response as packet lines, capped, ending at the first flush; an
/// `ERR` line (the server refused the command) is an error.
fn packet_lines(response: Answer) -> Lines {
    let capped = std::io::Read::take(response, MAX_RESPONSE_BYTES);
    let mut lines = StreamingPeekableIter::new(capped, &[PacketLineRef::Flush], false);
    lines.fail_on_err_lines(true);
    lines
}

/// The text of a data line, without its newline (empty for a
/// delimiter). The server's `ERR` (an argument it does not know, a
/// `deepen` without the `shallow` feature) is [`Failure::Refused`]: the
/// caller may ask for less. An answer that ends before its flush is
/// [`Failure::Unsupported`]: a server before v2 answers a command with
/// nothing at all.
fn data<E: std::fmt::Display>(
    line: std::io::Result<Result<PacketLineRef<'_>, E>>,
) -> Result<&[u8], Failure> {
    let line = match line {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => return Err(Failure::Failed(one_line(&e.to_string()))),
        Err(e) => {
            let detail = one_line(&e.to_string());
            let refused = e
                .get_ref()
                .is_some_and(|inner| inner.is::<gix_packetline::read::Error>());
            return Err(if refused {
                Failure::Refused(detail)
            } else if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Failure::Unsupported("the server did not answer in git protocol v2".into())
            } else {
                Failure::Failed(detail)
            });
        }
    };
    // A delimiter between sections carries no data.
    Ok(line
        .as_bstr()
        .map(|b| b.trim_ascii_end())
        .unwrap_or_default())
}

fn unexpected(line: &[u8]) -> Failure {
    Failure::Failed(format!(
        "the server sent an unexpected line: {}",
        skillpm_core::text::sanitize(&String::from_utf8_lossy(&line[..line.len().min(80)]))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The object count is read from the pack's header without taking
    /// those bytes from the stream the indexer reads next.
    #[test]
    fn small_packs_are_indexed_on_one_thread_and_nothing_is_consumed() {
        let pack = |count: u32| [&b"PACK\0\0\0\x02"[..], &count.to_be_bytes(), b"rest"].concat();
        for (count, want) in [(3, Some(1)), (SMALL_PACK_OBJECTS, None), (1 << 20, None)] {
            let bytes = pack(count);
            let mut reader = std::io::BufReader::new(&bytes[..]);
            assert_eq!(index_threads(&mut reader), want, "{count} objects");
            let mut rest = Vec::new();
            std::io::Read::read_to_end(&mut reader, &mut rest).unwrap();
            assert_eq!(rest, bytes);
        }
        // Not a pack header (yet): every core, as before.
        assert_eq!(index_threads(&mut &b"PAC"[..]), None);
        assert_eq!(index_threads(&mut &b"JUNKxxxxxxxxxxxx"[..]), None);
    }

    /// A server that streams its answers as nginx does in front of
    /// `git http-backend`: chunked, the end of the body sent a moment after
    /// its last packet. Counts the connections it accepts.
    fn late_ending_server(answer: &'static [u8]) -> (String, std::sync::mpsc::Receiver<()>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/skills.git", listener.local_addr().unwrap());
        let (accepted, connections) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = accepted.send(());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut stream = stream;
                    loop {
                        let mut length = 0usize;
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            if let Some((name, value)) = line.split_once(':') {
                                if name.eq_ignore_ascii_case("content-length") {
                                    length = value.trim().parse().unwrap();
                                }
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: {RESULT_TYPE}\r\n\
                             Transfer-Encoding: chunked\r\n\r\n{:x}\r\n",
                            answer.len()
                        );
                        stream.write_all(head.as_bytes()).unwrap();
                        stream.write_all(answer).unwrap();
                        stream.write_all(b"\r\n").unwrap();
                        stream.flush().unwrap();
                        std::thread::sleep(std::time::Duration::from_millis(100));
                        stream.write_all(b"0\r\n\r\n").unwrap();
                    }
                });
            }
        });
        (url, connections)
    }

    /// Two commands in turn go over one connection, though each answer's
    /// end comes after its last packet: the first is read to its end
    /// before the second is sent. Left unread, its connection was not
    /// free yet, and the client opened a second one beside it (a TLS
    /// handshake on both ends, in the middle of every `add`).
    #[test]
    fn commands_in_turn_share_one_connection() {
        let oid = "0123456789abcdef0123456789abcdef01234567";
        let answer: &'static [u8] = Box::leak(
            format!("0032{oid} HEAD\n0000")
                .into_bytes()
                .into_boxed_slice(),
        );
        let (url, connections) = late_ending_server(answer);
        let http = crate::source::http::http1().unwrap().build().unwrap();
        let client: &'static Client = Box::leak(Box::new(Client::new(http).unwrap()));
        for _ in 0..2 {
            let listing = list(client, &url).unwrap();
            assert_eq!(listing.head.map(|h| h.to_string()).as_deref(), Some(oid));
        }
        assert_eq!(connections.try_iter().count(), 1);
    }

    /// What a hostile `ls-refs` answer can name: only branches and tags
    /// with names git accepts reach the clone; a bad object id is an error.
    #[test]
    fn listed_refs_stay_under_heads_and_tags() {
        let oid = "0123456789abcdef0123456789abcdef01234567";
        let mut listing = Listing::default();
        for name in [
            "HEAD symref-target:refs/heads/main",
            "refs/heads/main",
            "refs/tags/v1 peeled:89abcdef0123456789abcdef0123456789abcdef",
            "refs/heads/../../config",
            "refs/heads/a/../../../../escape",
            "refs/tags/x..y",
            "refs/heads/lock.lock",
            "refs/remotes/origin/main",
            "refs/skillpm/HEAD",
            "config",
            "/etc/passwd",
            // Would forge a line of the new clone's `packed-refs`.
            "refs/heads/a\n0123456789abcdef0123456789abcdef01234567 refs/heads/forged",
            "refs/heads/b\r",
            "refs/tags/c\u{7f}",
        ] {
            listing.take(format!("{oid} {name}").as_bytes()).unwrap();
        }
        let names: Vec<String> = listing.refs.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(names, ["refs/heads/main", "refs/tags/v1"]);
        assert_eq!(listing.head.map(|h| h.to_string()).as_deref(), Some(oid));
        assert!(listing.take(b"not-an-id refs/heads/main").is_err());
        assert!(listing.take(oid.as_bytes()).is_err());
    }

    /// A redirect is followed only to the same command on the same https
    /// origin, without credentials or a query.
    #[test]
    fn redirects_followed_keep_https_and_the_endpoint() {
        let from = "https://old.example/team/skills.git/git-upload-pack";
        for (location, to) in [
            (
                "/team/renamed.git/git-upload-pack",
                Some("https://old.example/team/renamed.git/git-upload-pack"),
            ),
            (
                "https://old.example:443/team/renamed.git/git-upload-pack",
                Some("https://old.example/team/renamed.git/git-upload-pack"),
            ),
            ("https://new.example/skills.git/git-upload-pack", None),
            ("https://127.0.0.1/skills.git/git-upload-pack", None),
            ("https://old.example:8443/skills.git/git-upload-pack", None),
            ("http://old.example/team/skills.git/git-upload-pack", None),
            ("https://old.example/login", None),
            ("https://old.example/x/git-upload-pack?next=1", None),
            (
                "https://user:pw@new.example/skills.git/git-upload-pack",
                None,
            ),
            ("file:///etc/git-upload-pack", None),
        ] {
            assert_eq!(follow(from, location).as_deref(), to, "{location}");
        }
    }

    /// The wire form of a fetch of two commits, as git's protocol-v2
    /// document spells it: the command, a delimiter, the arguments, a
    /// flush.
    #[test]
    fn a_fetch_is_one_v2_command() {
        let (a, b) = (
            "0123456789abcdef0123456789abcdef01234567",
            "89abcdef0123456789abcdef0123456789abcdef",
        );
        let wants = [a, b].map(|h| ObjectId::from_hex(h.as_bytes()).unwrap());
        let tips = Ask {
            wants: &wants,
            tips_only: true,
        };
        let body = String::from_utf8(fetch_command(&tips)).unwrap();
        assert_eq!(
            body,
            format!(
                "0012command=fetch\n0001000eofs-delta\n0010no-progress\n0032want {a}\n0032want {b}\n000ddeepen 1\n0009done\n0000"
            )
        );
        // The whole history of `b`.
        let whole = Ask {
            wants: &wants[1..],
            tips_only: false,
        };
        let body = String::from_utf8(fetch_command(&whole)).unwrap();
        assert_eq!(
            body,
            format!(
                "0012command=fetch\n0001000eofs-delta\n0010no-progress\n0032want {b}\n0009done\n0000"
            )
        );
    }
}
