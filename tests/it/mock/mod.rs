//! A deliberately misbehaving registry for the hostile-input tests: a
//! `std::net::TcpListener` speaking just enough HTTP/1.1 (one request per
//! connection, `Connection: close`) to serve `config.json`, `index/NAME`
//! and downloads, with full control over every byte it sends. Also builds
//! hostile tarballs byte by byte.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One parsed request.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub path: String,
    /// Whether the request carried an `Authorization` header.
    pub authorized: bool,
}

/// What the server does with a request.
pub enum Reply {
    /// A normal response with a correct `Content-Length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Bytes written verbatim, then the connection is closed.
    Raw(Vec<u8>),
    /// Writes `head`, then every chunk the iterator yields until it ends
    /// or the client hangs up.
    Stream {
        head: Vec<u8>,
        chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>,
    },
    /// Writes `head` at once, then `body` one byte every `every`.
    Trickle {
        head: Vec<u8>,
        body: Vec<u8>,
        every: Duration,
    },
}

pub fn json(v: &serde_json::Value) -> Reply {
    Reply::Full {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: serde_json::to_vec(v).expect("json"),
    }
}

pub fn bytes(body: Vec<u8>) -> Reply {
    Reply::Full {
        status: 200,
        headers: vec![("Content-Type".into(), "application/gzip".into())],
        body,
    }
}

pub fn status(code: u16) -> Reply {
    Reply::Full {
        status: code,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: format!(r#"{{"errors":[{{"detail":"mock says {code}"}}]}}"#).into_bytes(),
    }
}

pub fn redirect(to: &str) -> Reply {
    Reply::Full {
        status: 302,
        headers: vec![("Location".into(), to.into())],
        body: Vec::new(),
    }
}

type Handler = dyn Fn(&Req, &str) -> Reply + Send + Sync;

/// A running mock server; stops accepting when dropped.
pub struct MockServer {
    pub url: String,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl MockServer {
    /// Serves every request with `handler(request, base_url)`.
    pub fn start(handler: impl Fn(&Req, &str) -> Reply + Send + Sync + 'static) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let url = format!("http://{addr}");
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let (hits, stop, url) = (hits.clone(), stop.clone(), url.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (hits, handler, url) = (hits.clone(), handler.clone(), url.clone());
                    std::thread::spawn(move || serve(conn, &hits, &*handler, &url));
                }
            });
        }
        MockServer {
            url,
            hits,
            stop,
            addr,
        }
    }

    /// How many requests asked for exactly `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits")
            .iter()
            .filter(|p| *p == path)
            .count()
    }

    pub fn all_hits(&self) -> Vec<String> {
        self.hits.lock().expect("hits").clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn serve(mut conn: TcpStream, hits: &Mutex<Vec<String>>, handler: &Handler, base: &str) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&buf);
    let mut first = text.lines().next().unwrap_or("").split_whitespace();
    let req = Req {
        method: first.next().unwrap_or("").to_string(),
        path: first.next().unwrap_or("").to_string(),
        authorized: text
            .lines()
            .any(|l| l.to_ascii_lowercase().starts_with("authorization:")),
    };
    hits.lock().expect("hits").push(req.path.clone());
    match handler(&req, base) {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        }
        Reply::Raw(bytes) => {
            let _ = conn.write_all(&bytes);
        }
        Reply::Stream { head, chunks } => {
            let _ = conn.write_all(&head);
            for c in chunks {
                if conn.write_all(&c).is_err() {
                    return;
                }
            }
        }
        Reply::Trickle { head, body, every } => {
            let _ = conn.write_all(&head);
            for b in body {
                std::thread::sleep(every);
                if conn.write_all(&[b]).is_err() {
                    return;
                }
            }
        }
    }
    let _ = conn.flush();
    let _ = conn.shutdown(std::net::Shutdown::Write);
    // Drain whatever the client still sends so it never sees a reset
    // before it has read the response.
    let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = conn.read(&mut chunk);
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The `GET /index/NAME` document listing `versions` as `(version, tarball)`.
pub fn index_json(name: &str, versions: &[(&str, &[u8])]) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "versions": versions.iter().map(|(v, t)| serde_json::json!({
            "name": name,
            "vers": v,
            "cksum": sha256(t),
            "yanked": false,
            "description": format!("{name} {v}"),
        })).collect::<Vec<_>>(),
    })
}

/// A well-behaved registry serving `packages` (name -> [(version, tarball)]),
/// with `config.json` pointing downloads back at itself. `override_`
/// gets the first say on every request.
pub fn registry(
    packages: Vec<(String, String, Vec<u8>)>,
    override_: impl Fn(&Req, &str) -> Option<Reply> + Send + Sync + 'static,
) -> MockServer {
    MockServer::start(move |req, base| {
        if let Some(r) = override_(req, base) {
            return r;
        }
        let p = req.path.as_str();
        if p == "/config.json" {
            return json(&serde_json::json!({
                "dl": format!("{base}/api/v1/skills"),
                "api": base,
                "auth-required": false,
            }));
        }
        if let Some(name) = p.strip_prefix("/index/") {
            let vs: Vec<(&str, &[u8])> = packages
                .iter()
                .filter(|(n, _, _)| n == name)
                .map(|(_, v, t)| (v.as_str(), t.as_slice()))
                .collect();
            if vs.is_empty() {
                return status(404);
            }
            return json(&index_json(name, &vs));
        }
        if let Some(rest) = p.strip_prefix("/api/v1/skills/") {
            let parts: Vec<&str> = rest.split('/').collect();
            if let [name, vers, "download"] = parts.as_slice() {
                if let Some((_, _, t)) = packages.iter().find(|(n, v, _)| n == name && v == vers) {
                    return bytes(t.clone());
                }
            }
        }
        status(404)
    })
}

// ---------------------------------------------------------------- tarballs

pub fn gz(tar: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(tar).expect("gz");
    e.finish().expect("gz")
}

/// A raw tar stream assembled entry by entry, with full control over the
/// header bytes (names are written into the ustar field untouched).
#[derive(Default)]
pub struct RawTar {
    out: Vec<u8>,
}

impl RawTar {
    pub fn new() -> Self {
        RawTar::default()
    }

    /// An entry with raw `name` bytes (at most 100), type `ty`, optional
    /// link target, and `data`.
    pub fn entry(
        &mut self,
        name: &[u8],
        ty: tar::EntryType,
        link: &[u8],
        data: &[u8],
    ) -> &mut Self {
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(ty);
        h.set_mode(if ty.is_dir() { 0o755 } else { 0o644 });
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h.set_size(data.len() as u64);
        {
            let old = h.as_old_mut();
            assert!(name.len() <= 100, "use long names via pax/gnu");
            old.name = [0; 100];
            old.name[..name.len()].copy_from_slice(name);
            old.linkname = [0; 100];
            old.linkname[..link.len()].copy_from_slice(link);
        }
        h.set_cksum();
        self.out.extend_from_slice(h.as_bytes());
        self.out.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        self.out.extend(std::iter::repeat_n(0u8, pad));
        self
    }

    pub fn file(&mut self, name: &str, data: &[u8]) -> &mut Self {
        self.entry(name.as_bytes(), tar::EntryType::Regular, b"", data)
    }

    pub fn dir(&mut self, name: &str) -> &mut Self {
        self.entry(name.as_bytes(), tar::EntryType::Directory, b"", b"")
    }

    /// A PAX extended header whose `path` record overrides the next entry's
    /// ustar name.
    pub fn pax_path(&mut self, path: &[u8]) -> &mut Self {
        let mut rec = Vec::new();
        // "LEN path=VALUE\n" where LEN counts the whole record.
        let body_len = b" path=".len() + path.len() + 1;
        let mut len = body_len + 1;
        while format!("{len}").len() + body_len != len {
            len += 1;
        }
        rec.extend_from_slice(format!("{len} path=").as_bytes());
        rec.extend_from_slice(path);
        rec.push(b'\n');
        self.entry(b"PaxHeaders/x", tar::EntryType::XHeader, b"", &rec)
    }

    /// A GNU long-name record (`././@LongLink`) for the next entry.
    pub fn gnu_long_name(&mut self, path: &[u8]) -> &mut Self {
        let mut data = path.to_vec();
        data.push(0);
        self.entry(b"././@LongLink", tar::EntryType::GNULongName, b"", &data)
    }

    /// The tar stream with its two zero end blocks.
    pub fn finish(&self) -> Vec<u8> {
        let mut out = self.out.clone();
        out.extend(std::iter::repeat_n(0u8, 1024));
        out
    }

    pub fn gz(&self) -> Vec<u8> {
        gz(&self.finish())
    }
}

/// A valid SKILL.md for `name@version`.
pub fn skill_md(name: &str, version: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\nversion: \"{version}\"\n---\nBody of {name}.\n")
}

/// A well-formed package for `name@version`.
pub fn good_package(name: &str, version: &str) -> Vec<u8> {
    RawTar::new()
        .file("SKILL.md", skill_md(name, version).as_bytes())
        .dir("scripts")
        .file("scripts/run.sh", b"echo hi\n")
        .gz()
}

pub fn gz_fast(tar: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(tar).expect("gz");
    e.finish().expect("gz")
}

const MIB: u64 = 1 << 20;
const HEAD_ZEROS: u64 = 64 * 1024;

/// A gzip bomb: a tar with `SKILL.md` and then `files` (name, size) full of
/// zeros, built without compressing the zeros one by one. One deflate
/// "unit" encoding 1 MiB of zeros (made with a zero history, so it only
/// back-references zeros) is repeated; deflate's best ratio (~1000:1) makes
/// 1 GiB about 1 MiB of gzip. Sizes are rounded down to 64 KiB + n MiB.
/// The gzip trailer's CRC is left zero: an unpacker that reads that far
/// has already failed.
pub fn bomb(skill_md: &str, files: &[(&str, u64)]) -> Vec<u8> {
    use flate2::write::DeflateEncoder;
    use flate2::Compression;
    let zeros = vec![0u8; MIB as usize];
    let unit = {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::best());
        e.write_all(&zeros).expect("deflate");
        e.flush().expect("flush");
        let mark = e.get_ref().len();
        e.write_all(&zeros).expect("deflate");
        e.flush().expect("flush");
        e.get_ref()[mark..].to_vec()
    };
    let header = |name: &str, size: u64| {
        let mut h = tar::Header::new_ustar();
        h.set_path(name).expect("name");
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(size);
        h.set_mtime(0);
        h.set_cksum();
        h.as_bytes().to_vec()
    };
    let mut main = DeflateEncoder::new(Vec::new(), Compression::best());
    let mut out = Vec::new();
    let take = |main: &mut DeflateEncoder<Vec<u8>>, out: &mut Vec<u8>| {
        main.flush().expect("flush");
        out.append(main.get_mut());
    };
    let md = skill_md.as_bytes();
    main.write_all(&header("SKILL.md", md.len() as u64))
        .expect("w");
    main.write_all(md).expect("w");
    main.write_all(&vec![0u8; (512 - md.len() % 512) % 512])
        .expect("w");
    for (name, size) in files {
        let n = size.saturating_sub(HEAD_ZEROS) / MIB;
        main.write_all(&header(name, HEAD_ZEROS + n * MIB))
            .expect("w");
        // The encoder sees only 64 KiB of zeros; the decoder gets n MiB
        // more. Both windows end in >= 32 KiB of zeros, so the encoder's
        // later back-references stay valid.
        main.write_all(&zeros[..HEAD_ZEROS as usize]).expect("w");
        take(&mut main, &mut out);
        for _ in 0..n {
            out.extend_from_slice(&unit);
        }
    }
    main.write_all(&[0u8; 1024]).expect("w");
    let rest = main.finish().expect("finish");
    out.extend_from_slice(&rest);
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend_from_slice(&out);
    gz.extend_from_slice(&[0, 0, 0, 0]);
    let isize = files.iter().map(|(_, s)| *s).sum::<u64>() as u32;
    gz.extend_from_slice(&isize.to_le_bytes());
    gz
}

pub fn zero_bomb(skill_md: &str, name: &str, size: u64) -> Vec<u8> {
    bomb(skill_md, &[(name, size)])
}

pub fn zero_bomb_files(skill_md: &str, count: usize, size_each: u64) -> Vec<u8> {
    let names: Vec<String> = (0..count).map(|i| format!("bomb{i}.bin")).collect();
    let files: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), size_each)).collect();
    bomb(skill_md, &files)
}
