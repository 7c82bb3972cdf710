//! A real HTTPS git server on 127.0.0.1 for tests: every request runs the
//! real `git http-backend` as a CGI program, behind a TLS listener whose
//! certificate comes from a CA made at start-up.
//!
//! Why not a mock: what the client must get right (the smart-HTTP
//! handshake, pkt-lines, pack negotiation, error statuses) is exactly what
//! `git http-backend` implements, so the tests meet the server real users
//! meet. The CA is written to a PEM file ([`GitHttps::ca_file`]); a client
//! trusts it through `SSL_CERT_FILE`, which rustls-native-certs (under
//! reqwest's platform verifier) reads on Linux, and nothing else does.
//!
//! Each request is recorded ([`GitHttps::requests`]) so a test can assert
//! how many fetches reached the network and which protocol they spoke.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    /// The path, e.g. `/skills.git/info/refs`.
    pub path: String,
    pub query: String,
    /// The `Git-Protocol` header (`version=2`), empty when absent.
    pub git_protocol: String,
    /// Whether the request body came with `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// The CGI status the backend answered with.
    pub status: u16,
    /// The HTTP version the request came in, e.g. `HTTP/1.1`.
    pub version: String,
}

/// A running server; stops (and forgets its repositories) on drop.
pub struct GitHttps {
    /// First, so it stops before the directory it serves goes.
    _server: crate::background::Background,
    addr: SocketAddr,
    dir: tempfile::TempDir,
    seen: Arc<Mutex<Vec<Seen>>>,
    v0_only: Arc<AtomicBool>,
    stall: Arc<AtomicBool>,
    moved: Moved,
    private: Moved,
}

/// Repositories that answer with a redirect: old name -> new name; or
/// that need an `Authorization` header: name -> its value.
type Moved = Arc<Mutex<BTreeMap<String, String>>>;

impl GitHttps {
    /// Makes a CA and a certificate for 127.0.0.1, and starts serving the
    /// (so far empty) project root on an ephemeral port.
    pub fn start() -> GitHttps {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("repos")).expect("mkdir repos");
        std::fs::create_dir(dir.path().join("home")).expect("mkdir home");
        // Both, as nginx with `http2` offers them: the client chooses.
        let tls = crate::tls::acceptor(&dir.path().join("ca.pem"), &[b"h2", b"http/1.1"]);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let v0_only = Arc::new(AtomicBool::new(false));
        let stall = Arc::new(AtomicBool::new(false));
        let moved = Moved::default();
        let private = Moved::default();
        let backend = Arc::new(Backend {
            root: dir.path().join("repos"),
            home: dir.path().join("home"),
            seen: seen.clone(),
            v0_only: v0_only.clone(),
            stall: stall.clone(),
            moved: moved.clone(),
            private: private.clone(),
            addr,
        });
        let server = crate::background::Background::start(listener, move |listener| {
            accept_loop(listener, tls, backend)
        });
        GitHttps {
            _server: server,
            addr,
            dir,
            seen,
            v0_only,
            stall,
            moved,
            private,
        }
    }

    /// From now on, answers every request under `<name>.git/` that lacks
    /// the `Authorization` header `authorization` with a 401 asking for
    /// Basic credentials, as a host does for a private repository.
    pub fn make_private(&self, name: &str, authorization: &str) {
        let mut private = self.private.lock().expect("private");
        private.insert(name.to_string(), authorization.to_string());
    }

    /// From now on, answers every request under `<from>.git/` with a 301
    /// to the same path under `<to>.git/`, as a host does for a renamed
    /// repository.
    pub fn move_repository(&self, from: &str, to: &str) {
        let mut moved = self.moved.lock().expect("moved");
        moved.insert(from.to_string(), to.to_string());
    }

    /// From now on, serves as a server older than git 2.18 (or behind a
    /// proxy that drops the `Git-Protocol` header) does: the backend never
    /// hears that a client asked for protocol v2.
    pub fn speak_only_v0(&self) {
        self.v0_only.store(true, Ordering::SeqCst);
    }

    /// From now on, never answers a protocol v0 fetch (a `git-upload-pack`
    /// request that is not a v2 command): what a client meets when a
    /// server or a proxy hangs mid-fetch. The advertisement and v2
    /// commands are answered as before.
    pub fn stall_v0_fetches(&self) {
        self.stall.store(true, Ordering::SeqCst);
    }

    /// Serves the repository at `repo` (a work tree with `.git`, or a bare
    /// repository) as `<name>.git`. It is linked, not copied: commits made
    /// to `repo` later are served too.
    pub fn serve(&self, name: &str, repo: &Path) {
        let git_dir = if repo.join(".git").is_dir() {
            repo.join(".git")
        } else {
            repo.to_path_buf()
        };
        let link = self.dir.path().join("repos").join(format!("{name}.git"));
        #[cfg(unix)]
        std::os::unix::fs::symlink(git_dir, link).expect("symlink repository");
        // The tests run on Linux; this keeps the crate building elsewhere.
        #[cfg(windows)]
        std::os::windows::fs::symlink_dir(git_dir, link).expect("symlink repository");
    }

    /// `https://127.0.0.1:PORT/<name>.git`.
    pub fn url(&self, name: &str) -> String {
        format!("https://{}/{name}.git", self.addr)
    }

    /// The PEM file holding the CA that signed the server's certificate;
    /// give it to a client as `SSL_CERT_FILE`.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().expect("log").clone()
    }

    /// How many requests each path received, sorted by path.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for s in self.seen.lock().expect("log").iter() {
            *counts.entry(s.path.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// How many requests went to repository `name`, any path in it.
    pub fn hits(&self, name: &str) -> usize {
        let prefix = format!("/{name}.git/");
        let seen = self.seen.lock().expect("log");
        seen.iter().filter(|s| s.path.starts_with(&prefix)).count()
    }

    /// Forgets the requests seen so far.
    pub fn clear(&self) {
        self.seen.lock().expect("log").clear();
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    backend: Arc<Backend>,
) {
    let handle = move |req, peer| {
        let backend = backend.clone();
        async move { backend.handle(req, peer).await }
    };
    crate::tls::serve(listener, tls, || {}, handle).await
}

/// Runs `git http-backend` for each request.
struct Backend {
    root: PathBuf,
    home: PathBuf,
    seen: Arc<Mutex<Vec<Seen>>>,
    v0_only: Arc<AtomicBool>,
    stall: Arc<AtomicBool>,
    moved: Moved,
    private: Moved,
    addr: SocketAddr,
}

impl Backend {
    /// Where a request for `path` in a moved repository goes instead.
    fn moved_to(&self, path: &str) -> Option<String> {
        let moved = self.moved.lock().expect("moved");
        moved.iter().find_map(|(from, to)| {
            let tail = path.strip_prefix(&format!("/{from}.git/"))?;
            Some(format!("https://{}/{to}.git/{tail}", self.addr))
        })
    }

    async fn handle(&self, req: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
        let (parts, body) = req.into_parts();
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let mut seen = Seen {
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or("").to_string(),
            git_protocol: header("git-protocol"),
            chunked: header("transfer-encoding")
                .to_ascii_lowercase()
                .contains("chunked"),
            status: 0,
            version: format!("{:?}", parts.version),
        };
        let wanted = self
            .private
            .lock()
            .expect("private")
            .iter()
            .find_map(|(name, auth)| {
                seen.path
                    .starts_with(&format!("/{name}.git/"))
                    .then(|| auth.clone())
            });
        if wanted.is_some_and(|auth| header("authorization") != auth) {
            seen.status = 401;
            self.seen.lock().expect("log").push(seen);
            let mut refused = plain(StatusCode::UNAUTHORIZED, String::new());
            let ask = hyper::header::HeaderValue::from_static("Basic realm=\"git\"");
            refused
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, ask);
            return refused;
        }
        if let Some(mut location) = self.moved_to(&seen.path) {
            // As hosts do: the query goes along.
            if !seen.query.is_empty() {
                location = format!("{location}?{}", seen.query);
            }
            seen.status = 301;
            self.seen.lock().expect("log").push(seen);
            let mut moved = plain(StatusCode::MOVED_PERMANENTLY, String::new());
            if let Ok(value) = hyper::header::HeaderValue::from_str(&location) {
                moved.headers_mut().insert(hyper::header::LOCATION, value);
            }
            return moved;
        }
        // hyper has already undone any chunked transfer encoding; CGI wants
        // the whole body and its length.
        let response = match body.collect().await {
            Ok(body) => {
                let body = body.to_bytes();
                if self.stalls(&seen, &body) {
                    self.seen.lock().expect("log").push(seen);
                    return std::future::pending().await;
                }
                let env = [
                    ("REQUEST_METHOD", seen.method.clone()),
                    ("PATH_INFO", seen.path.clone()),
                    ("QUERY_STRING", seen.query.clone()),
                    ("CONTENT_TYPE", header("content-type")),
                    ("CONTENT_LENGTH", body.len().to_string()),
                    ("GIT_PROTOCOL", self.git_protocol(&seen)),
                    ("HTTP_CONTENT_ENCODING", header("content-encoding")),
                    ("REMOTE_ADDR", peer.ip().to_string()),
                ];
                self.cgi(&env, body).await
            }
            Err(e) => plain(StatusCode::BAD_REQUEST, format!("body: {e}")),
        };
        seen.status = response.status().as_u16();
        self.seen.lock().expect("log").push(seen);
        response
    }

    /// Whether `stall_v0_fetches` holds this request forever.
    fn stalls(&self, seen: &Seen, body: &[u8]) -> bool {
        let v2 = body.windows(8).any(|w| w == b"command=");
        self.stall.load(Ordering::SeqCst) && seen.path.ends_with("/git-upload-pack") && !v2
    }

    /// The protocol the backend is told the client asked for.
    fn git_protocol(&self, seen: &Seen) -> String {
        match self.v0_only.load(Ordering::SeqCst) {
            true => String::new(),
            false => seen.git_protocol.clone(),
        }
    }

    /// Runs the backend with the CGI variables `env` and `body` on stdin,
    /// and turns its output (headers, blank line, body) into a response.
    async fn cgi(&self, env: &[(&str, String)], body: Bytes) -> Response<Full<Bytes>> {
        let mut cmd = tokio::process::Command::new("git");
        cmd.arg("http-backend")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_PROJECT_ROOT", &self.root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            if !v.is_empty() || *k == "CONTENT_LENGTH" {
                cmd.env(k, v);
            }
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("spawn git: {e}")),
        };
        let mut stdin = child.stdin.take().expect("piped stdin");
        // Write while the backend writes back, so neither pipe fills up.
        let writer = tokio::spawn(async move {
            let _ = stdin.write_all(&body).await;
        });
        let out = match child.wait_with_output().await {
            Ok(out) => out,
            Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("git: {e}")),
        };
        let _ = writer.await;
        parse_cgi(&out.stdout).unwrap_or_else(|| {
            plain(
                StatusCode::BAD_GATEWAY,
                format!(
                    "git http-backend gave no CGI response: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            )
        })
    }
}

/// A CGI response: header lines up to a blank line (`\r\n` or `\n`
/// endings), `Status: CODE REASON` setting the status (200 without it).
fn parse_cgi(out: &[u8]) -> Option<Response<Full<Bytes>>> {
    let (head, body) = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| {
            out.windows(sep.len())
                .position(|w| w == *sep)
                .map(|at| (at, sep.len()))
        })
        .min()
        .map(|(at, len)| (&out[..at], &out[at + len..]))?;
    let mut response = Response::builder();
    for line in std::str::from_utf8(head).ok()?.lines() {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split_whitespace().next()?.parse::<u16>().ok()?;
            response = response.status(code);
        } else {
            response = response.header(name.trim(), value);
        }
    }
    response.body(Full::new(Bytes::copy_from_slice(body))).ok()
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::parse_cgi;

    #[test]
    fn cgi_status_and_headers() {
        let r =
            parse_cgi(b"Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope").unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(r.headers()["content-type"], "text/plain");
        let r = parse_cgi(b"Content-Type: x\n\nbody\r\n\r\n").unwrap();
        assert_eq!(r.status(), 200);
        assert!(parse_cgi(b"no blank line").is_none());
    }
}
