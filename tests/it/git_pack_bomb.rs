//! A git server that answers with a small, well-formed pack whose one
//! delta declares a 1.5 GiB object. A received pack whose deltas may take
//! more than 512 MiB to resolve is refused before they are resolved (and
//! gitoxide allocates at most 1 GiB per object, its `allocLimit`), so both
//! fetch paths (the one-request fetch of a locked commit, and the whole
//! fetch `add` runs) refuse it with a clean error. Without the caps the
//! allocator grants the buffer and zero-filling it makes the process
//! resident for the whole declared size (a few kilobytes on the wire
//! buy gigabytes of memory). The server is a few lines here, behind the
//! test-support TLS front (skillpm fetches git over https only).
//!
//! The same server, told to, lists more refs than a fetch takes, or marks
//! more commits shallow than were asked for: both are refused by count,
//! before memory grows with them. Told to, it answers with a "delta comb"
//! whose deltas would keep many large objects in memory at once: refused
//! by its worst case, worked out before anything is resolved.

use crate::common;
use common::{stderr, Fixture};
use skillpm_test_support::tls_front::TlsFront;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A pkt-line holding `data`.
fn pkt(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:04x}", data.len() + 4).into_bytes();
    out.extend_from_slice(data);
    out
}

/// A pack entry's header: type and (uncompressed) size, little-endian
/// groups of seven bits after the first four.
fn entry_header(kind: u8, mut size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
    out
}

/// A delta's size field: little-endian groups of seven bits.
fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

/// What the delta declares: past the 1 GiB cap, and small enough that the
/// allocator grants it (overcommit) and zero-filling it costs real memory.
const DECLARED: u64 = 3 << 29;

/// A well-formed version 2 pack of two entries: a four-byte blob, and an
/// offset delta against it whose instructions declare a [`DECLARED`]-byte
/// result.
/// Every entry inflates to the size its header gives and the trailer is
/// the pack's real SHA-1, so the pack streams in whole; what it costs is
/// resolving the delta, which would allocate the declared result.
fn bomb_pack() -> Vec<u8> {
    let mut p = pack_header(2);
    let base_at = p.len();
    p.extend(entry_header(3, 4));
    p.extend(zlib(b"tiny"));
    let mut delta = varint(4);
    delta.extend(varint(DECLARED));
    delta.extend([4, b'b', b'o', b'o', b'm']);
    push_ofs_delta(&mut p, base_at, &delta);
    with_trailer(p)
}

/// A version 2 pack's header, for `n` entries.
fn pack_header(n: u32) -> Vec<u8> {
    let mut p = b"PACK".to_vec();
    p.extend(2u32.to_be_bytes());
    p.extend(n.to_be_bytes());
    p
}

/// Appends an offset delta against the entry at `base_at`.
fn push_ofs_delta(p: &mut Vec<u8>, base_at: usize, delta: &[u8]) {
    let delta_at = p.len();
    p.extend(entry_header(6, delta.len() as u64));
    // The distance back to the base, big-endian, with git's "minus one
    // per continuation" encoding.
    let mut distance = (delta_at - base_at) as u64;
    let mut ofs = vec![(distance & 0x7f) as u8];
    distance >>= 7;
    while distance > 0 {
        distance -= 1;
        ofs.insert(0, 0x80 | (distance & 0x7f) as u8);
        distance >>= 7;
    }
    p.extend(ofs);
    p.extend(zlib(delta));
}

/// `p` with its trailer, the SHA-1 of everything before it.
fn with_trailer(mut p: Vec<u8>) -> Vec<u8> {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&p);
    p.extend(hasher.try_finalize().unwrap().as_bytes());
    p
}

/// The size of every object of the comb.
const COMB_OBJECT: u64 = 8 << 20;

/// How many bases of the comb wait at once.
const COMB_LEVELS: u32 = 72;

/// A "delta comb": a blob of [`COMB_OBJECT`] zeros, then, for each of
/// [`COMB_LEVELS`] levels, two deltas against the level's object: a leaf,
/// and the next level. Each is one copy of its base and eight bytes of
/// its own, so every object is as large and each delta a few bytes. The
/// leaf comes first, so a resolver working depth first takes the next
/// level before it and keeps every level's object for its waiting leaf:
/// hundreds of times the pack's size in memory.
fn comb_pack() -> Vec<u8> {
    let mut p = pack_header(1 + 2 * COMB_LEVELS);
    let mut base_at = p.len();
    p.extend(entry_header(3, COMB_OBJECT));
    p.extend(zlib(&vec![0; COMB_OBJECT as usize]));
    for level in 0..COMB_LEVELS {
        let mut next_at = 0;
        for (mark, leaf) in [(0xffu8, true), (0, false)] {
            let mut delta = varint(COMB_OBJECT);
            delta.extend(varint(COMB_OBJECT));
            // Copy the first `COMB_OBJECT - 8` bytes (offset 0, three
            // size bytes), then insert eight bytes naming the object.
            let copied = COMB_OBJECT - 8;
            delta.push(0x80 | 0x70);
            delta.extend(&copied.to_le_bytes()[..3]);
            delta.push(8);
            delta.extend([mark, 0, 0, 0]);
            delta.extend(level.to_le_bytes());
            if !leaf {
                next_at = p.len();
            }
            push_ofs_delta(&mut p, base_at, &delta);
        }
        base_at = next_at;
    }
    with_trailer(p)
}

/// A well-formed pack of `n` empty blobs: nine bytes each on the wire,
/// about 130 bytes each in memory once indexed.
fn many_objects_pack(n: u32) -> Vec<u8> {
    let mut p = pack_header(n);
    let empty = zlib(b"");
    for _ in 0..n {
        p.extend(entry_header(3, 0));
        p.extend(&empty);
    }
    with_trailer(p)
}

/// The body of a protocol v2 answer to `command=fetch`: the pack section,
/// its bytes on side band 1.
fn fetch_answer() -> Vec<u8> {
    pack_answer(&bomb_pack())
}

fn pack_answer(pack: &[u8]) -> Vec<u8> {
    let mut out = pkt(b"packfile\n");
    for chunk in pack.chunks(8192) {
        let mut band = vec![1u8];
        band.extend_from_slice(chunk);
        out.extend(pkt(&band));
    }
    out.extend(b"0000");
    out
}

/// What the server does wrong besides the bomb.
#[derive(Clone, Copy, PartialEq)]
enum Also {
    Nothing,
    /// `ls-refs` lists one branch more than a client takes (100 000).
    TooManyRefs,
    /// `fetch` marks two commits shallow for the one wanted.
    TooManyShallow,
    /// `fetch` with `deepen` is refused with an `ERR` line, as by a
    /// server without the `shallow` feature.
    RefusesDeepen,
    /// `fetch` answers with a pack of more objects than a client takes.
    ManyObjects,
    /// `fetch` answers with a delta comb ([`comb_pack`]).
    DeltaComb,
}

/// The `shallow-info` section of a fetch answer marking `COMMIT` and
/// another commit shallow, then a delimiter before the pack section.
fn too_many_shallow() -> Vec<u8> {
    let mut out = pkt(b"shallow-info\n");
    out.extend(pkt(format!("shallow {COMMIT}\n").as_bytes()));
    out.extend(pkt(format!("shallow {}\n", "fe".repeat(20)).as_bytes()));
    out.extend(b"0001");
    out
}

/// Answers git's smart HTTP protocol v2 for any repository: capabilities,
/// `ls-refs` (HEAD and main at [`COMMIT`]), and `fetch` with the bomb.
/// Records each request line and the v2 command it carried.
fn serve(listener: TcpListener, seen: Arc<Mutex<Vec<String>>>, also: Also) {
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            continue;
        }
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; len];
        let _ = reader.read_exact(&mut body);
        let body = String::from_utf8_lossy(&body).to_string();
        let command = ["ls-refs", "fetch"]
            .into_iter()
            .find(|c| body.contains(&format!("command={c}")));
        let deepen = if body.contains("deepen") {
            " deepen"
        } else {
            ""
        };
        seen.lock()
            .unwrap()
            .push(format!("{}{deepen} {}", line.trim(), command.unwrap_or("")));
        let (kind, answer) = if line.starts_with("GET ") && line.contains("/info/refs") {
            let mut a = pkt(b"# service=git-upload-pack\n");
            a.extend(b"0000");
            for cap in [
                "version 2\n",
                "ls-refs\n",
                "fetch\n",
                "object-format=sha1\n",
            ] {
                a.extend(pkt(cap.as_bytes()));
            }
            a.extend(b"0000");
            ("application/x-git-upload-pack-advertisement", a)
        } else if command == Some("ls-refs") {
            let mut a = pkt(format!("{COMMIT} HEAD symref-target:refs/heads/main\n").as_bytes());
            a.extend(pkt(format!("{COMMIT} refs/heads/main\n").as_bytes()));
            if also == Also::TooManyRefs {
                for i in 0..100_000 {
                    a.extend(pkt(format!("{COMMIT} refs/heads/b{i}\n").as_bytes()));
                }
            }
            a.extend(b"0000");
            ("application/x-git-upload-pack-result", a)
        } else if also == Also::RefusesDeepen && !deepen.is_empty() {
            let mut a = pkt(b"ERR unexpected line: 'deepen 1'");
            a.extend(b"0000");
            ("application/x-git-upload-pack-result", a)
        } else if also == Also::ManyObjects {
            let pack = many_objects_pack(MANY_OBJECTS);
            ("application/x-git-upload-pack-result", pack_answer(&pack))
        } else if also == Also::DeltaComb {
            (
                "application/x-git-upload-pack-result",
                pack_answer(&comb_pack()),
            )
        } else if also == Also::TooManyShallow {
            let mut a = too_many_shallow();
            a.extend(fetch_answer());
            ("application/x-git-upload-pack-result", a)
        } else {
            ("application/x-git-upload-pack-result", fetch_answer())
        };
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            answer.len()
        );
        let _ = conn.write_all(&answer);
    }
}

struct BombServer {
    front: TlsFront,
    seen: Arc<Mutex<Vec<String>>>,
}

impl BombServer {
    fn start() -> BombServer {
        Self::start_also(Also::Nothing)
    }

    fn start_also(also: Also) -> BombServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        std::thread::spawn(move || serve(listener, s, also));
        let front = TlsFront::start();
        front.forward_to(&upstream);
        BombServer { front, seen }
    }

    fn url(&self) -> String {
        format!("{}/bomb.git", self.front.url())
    }

    /// How many `fetch` commands reached the server.
    fn fetches(&self) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|l| l.ends_with(" fetch")).count()
    }

    /// The `fetch` commands that asked for `deepen`, of those counted by
    /// [`Self::fetches`].
    fn deepened(&self) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|l| l.ends_with(" deepen fetch")).count()
    }

    fn fixture(&self) -> Fixture {
        let mut f = Fixture::new();
        let ca = self.front.ca_file().display().to_string();
        f.extra_env.push(("SSL_CERT_FILE".into(), ca.clone()));
        f.extra_env.push(("GIT_SSL_CAINFO".into(), ca));
        f
    }
}

/// Runs skillpm under python3, which reports the child's peak resident
/// memory (`ru_maxrss`, KiB): what the cap saves is memory the allocator
/// would have granted, so only the peak tells a refusal from a fill.
fn skillpm_peak(f: &Fixture, args: &[&str]) -> (std::process::Output, u64) {
    let report = f.root().join("maxrss");
    let out = f
        .command(&common::python())
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             code = subprocess.call(sys.argv[2:])\n\
             open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
             sys.exit(code)",
        ])
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_skillpm"))
        .args(args)
        .output()
        .expect("run python3");
    let peak = std::fs::read_to_string(&report)
        .expect("peak report")
        .parse()
        .expect("a number");
    (out, peak)
}

/// Exit 1 with a short error naming the repository, having used far less
/// memory than the pack declares.
fn assert_refused_cleanly(out: &std::process::Output, peak_kib: u64, url: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(url), "{err}");
    assert!(err.lines().count() <= 3, "{err}");
    assert!(
        peak_kib < 256 * 1024,
        "peak {peak_kib} KiB for a pack declaring {DECLARED} bytes: {err}"
    );
}

/// `add` of the server's repository, refused cleanly.
fn add_is_refused(server: &BombServer, f: &Fixture) -> std::process::Output {
    let url = server.url();
    let (out, peak) = skillpm_peak(f, &["add", &format!("git+{url}")]);
    assert_refused_cleanly(&out, peak, &url);
    out
}

#[test]
fn restoring_a_locked_commit_refuses_a_pack_that_declares_a_huge_object() {
    let server = BombServer::start();
    let f = server.fixture();
    let url = server.url();
    f.write(
        &f.project,
        "skills.toml",
        format!("[skills]\nbomb = {{ git = \"{url}\" }}\n"),
    );
    f.write(
        &f.project,
        "skills.lock",
        format!(
            "version = 1\n\n[[skill]]\nname = \"bomb\"\nversion = \"1.0.0\"\n\
             source = \"git+{url}#{COMMIT}\"\nchecksum = \"sha256:{}\"\n",
            "ab".repeat(32)
        ),
    );
    let (out, peak) = skillpm_peak(&f, &["install", "--locked"]);
    assert_refused_cleanly(&out, peak, &url);
    assert!(server.fetches() >= 1, "{:?}", server.seen.lock().unwrap());
    assert!(!f.project_root().join(".agents/skills/bomb").exists());
}

#[test]
fn adding_from_a_server_whose_pack_declares_a_huge_object_fails_cleanly() {
    let server = BombServer::start();
    let f = server.fixture();
    let url = server.url();
    f.ok(&["init"]);
    let (out, peak) = skillpm_peak(&f, &["add", &format!("git+{url}")]);
    assert_refused_cleanly(&out, peak, &url);
    assert!(server.fetches() >= 1, "{:?}", server.seen.lock().unwrap());
    let manifest = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    assert!(!manifest.contains("bomb"), "{manifest}");
}

/// A server listing more refs than any skills repository has is refused
/// by count with a one-line error saying so; one marking more commits
/// shallow than were asked for is refused cleanly (its pack's huge
/// object is). Either way the project is left as it was.
#[test]
fn a_server_listing_too_much_is_refused_by_count() {
    for (also, says) in [
        (Also::TooManyRefs, "listed more than 100000 refs"),
        (Also::TooManyShallow, "deltas may take"),
    ] {
        let server = BombServer::start_also(also);
        let f = server.fixture();
        let url = server.url();
        f.ok(&["init"]);
        let manifest = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
        let (out, peak) = skillpm_peak(&f, &["add", &format!("git+{url}")]);
        assert_refused_cleanly(&out, peak, &url);
        let err = stderr(&out);
        assert!(err.contains(says), "{err}");
        let fetched = server.fetches();
        match also {
            // Refused at the listing: no pack was asked for.
            Also::TooManyRefs => assert_eq!(fetched, 0, "{:?}", server.seen.lock().unwrap()),
            _ => assert!(fetched >= 1, "{:?}", server.seen.lock().unwrap()),
        }
        let after = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
        assert_eq!(after, manifest);
        assert!(!f.project.join("skills.lock").exists());
    }
}

/// One object more than a client indexes.
const MANY_OBJECTS: u32 = 1_000_001;

/// A pack of a million empty blobs (9 MB on the wire) is refused from its
/// header's count, before indexing: indexing costs about 130 bytes an
/// object, so six million took a client to 789 MB.
#[test]
fn a_pack_of_too_many_objects_is_refused_before_indexing() {
    let server = BombServer::start_also(Also::ManyObjects);
    let f = server.fixture();
    let url = server.url();
    f.ok(&["init"]);
    let (out, peak) = skillpm_peak(&f, &["add", &format!("git+{url}")]);
    assert_refused_cleanly(&out, peak, &url);
    let err = stderr(&out);
    assert!(err.contains("1000001 objects"), "{err}");
    assert!(peak < 96 * 1024, "peak {peak} KiB");
    assert_no_pack_left(&f.cache);
}

/// A refused fetch leaves neither the pack nor an index in the cache.
fn assert_no_pack_left(cache: &std::path::Path) {
    let left = walk_files(cache);
    assert!(
        !left
            .iter()
            .any(|p| p.ends_with(".pack") || p.ends_with(".idx")),
        "{left:?}"
    );
}

/// Every file below `dir`, as paths.
fn walk_files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

/// A server without the `shallow` feature is asked for the whole
/// history, never for `deepen`: that fetch meets the bomb, and it is
/// refused as cleanly.
#[test]
fn a_server_refusing_deepen_is_asked_for_everything() {
    let server = BombServer::start_also(Also::RefusesDeepen);
    let f = server.fixture();
    f.ok(&["init"]);
    add_is_refused(&server, &f);
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!((server.fetches(), server.deepened()), (1, 0), "{seen:?}");
    assert!(seen[seen.len() - 1].ends_with(" fetch"), "{seen:?}");
    assert!(!seen[seen.len() - 1].ends_with(" deepen fetch"), "{seen:?}");
}

/// A fetch into a clone the cache already holds meets the same caps as
/// the first: a first `add` that fails leaves the clone created, and the
/// second, which fetches into it, is refused by count at the listing
/// again, before any pack is asked for.
#[test]
fn a_fetch_into_an_existing_clone_is_held_to_the_same_caps() {
    let server = BombServer::start_also(Also::TooManyRefs);
    let f = server.fixture();
    f.ok(&["init"]);
    for round in 0..2 {
        let out = add_is_refused(&server, &f);
        assert!(
            stderr(&out).contains("listed more than 100000 refs"),
            "{round}"
        );
        let clones = std::fs::read_dir(f.cache.join("skillpm/git-v1")).unwrap();
        let heads = clones.filter(|c| c.as_ref().unwrap().path().join("HEAD").is_file());
        assert_eq!(heads.count(), 1, "round {round}: the clone was made");
    }
    assert_eq!(server.fetches(), 0, "{:?}", server.seen.lock().unwrap());
}

/// A "delta comb" (see `comb_pack`) would have the resolver hold every level's object for its waiting
/// leaf. Its worst case is worked out from the pack's entry headers
/// before anything is resolved, and the pack refused in one line, with
/// the client's memory far below what the comb would hold; the kill
/// switch stops the child if that bound breaks.
#[test]
fn a_delta_comb_is_refused_before_its_deltas_are_resolved() {
    let server = BombServer::start_also(Also::DeltaComb);
    let f = server.fixture();
    let url = server.url();
    f.ok(&["init"]);
    let manifest = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    let mut add = f.command(env!("CARGO_BIN_EXE_skillpm"));
    add.args(["add", &format!("git+{url}")]);
    let (out, peak) = common::run_watched(add, 512 * 1024);
    let err = stderr(&out);
    assert!(peak < 128 * 1024, "peak {peak} KiB: {err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&url), "{err}");
    assert!(
        err.contains("deltas may take") && err.contains("536870912 bytes"),
        "{err}"
    );
    let after = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    assert_eq!(after, manifest);
    assert_no_pack_left(&f.cache);
}
