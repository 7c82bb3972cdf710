//! A TLS front for a plain-HTTP server on 127.0.0.1, as nginx or a CDN
//! stands before a registry: it offers HTTP/2 and HTTP/1.1 by ALPN,
//! forwards every request to the upstream, and counts the connections
//! and the protocol of each request, so a test can see how a client used
//! them. The certificate comes from a CA made at start-up
//! ([`TlsFront::ca_file`], for `SSL_CERT_FILE`).

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A running front; stops on drop.
pub struct TlsFront {
    _server: crate::background::Background,
    addr: SocketAddr,
    dir: tempfile::TempDir,
    shared: Arc<Shared>,
}

struct Shared {
    upstream: Mutex<Option<String>>,
    connections: AtomicUsize,
    /// `HTTP/2.0` or `HTTP/1.1`, per request in arrival order.
    versions: Mutex<Vec<String>>,
    http: reqwest::Client,
}

impl TlsFront {
    /// Listens on an ephemeral port at once (so its URL can be given to
    /// the upstream as its public URL); requests get 502 until
    /// [`TlsFront::forward_to`] names the upstream.
    pub fn start() -> TlsFront {
        let dir = tempfile::tempdir().expect("tempdir");
        let tls = crate::tls::acceptor(&dir.path().join("ca.pem"), &[b"h2", b"http/1.1"]);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        // skillpm builds reqwest without a crypto provider of its own
        // (`rustls-no-provider`); a client needs the process's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let shared = Arc::new(Shared {
            upstream: Mutex::new(None),
            connections: AtomicUsize::new(0),
            versions: Mutex::new(Vec::new()),
            http: reqwest::Client::new(),
        });
        let s = shared.clone();
        let server =
            crate::background::Background::start(listener, move |l| accept_loop(l, tls, s));
        TlsFront {
            _server: server,
            addr,
            dir,
            shared,
        }
    }

    /// Forwards every request from now on to `url` (`http://host:port`).
    pub fn forward_to(&self, url: &str) {
        *self.shared.upstream.lock().expect("upstream") = Some(url.trim_end_matches('/').into());
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The CA that signed the front's certificate, for `SSL_CERT_FILE`.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// TLS connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// The protocol of every request so far (`HTTP/2.0`, `HTTP/1.1`).
    pub fn versions(&self) -> Vec<String> {
        self.shared.versions.lock().expect("versions").clone()
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
) {
    let counted = shared.clone();
    let on_connection = move || {
        counted.connections.fetch_add(1, Ordering::SeqCst);
    };
    let handle = move |req, _peer| {
        let shared = shared.clone();
        async move { forward(&shared, req).await }
    };
    crate::tls::serve(listener, tls, on_connection, handle).await
}

async fn forward(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let status = |code: StatusCode| {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = code;
        r
    };
    let (parts, body) = req.into_parts();
    shared
        .versions
        .lock()
        .expect("versions")
        .push(format!("{:?}", parts.version));
    let Some(upstream) = shared.upstream.lock().expect("upstream").clone() else {
        return status(StatusCode::BAD_GATEWAY);
    };
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return status(StatusCode::BAD_REQUEST);
    };
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let mut out = shared
        .http
        .request(parts.method, format!("{upstream}{path}"))
        .body(body);
    for (name, value) in &parts.headers {
        if name != hyper::header::HOST {
            out = out.header(name, value);
        }
    }
    let Ok(resp) = out.send().await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    let mut back = Response::builder().status(resp.status());
    for (name, value) in resp.headers() {
        // Connection-specific headers are HTTP/1.1's, not HTTP/2's.
        if !matches!(
            name.as_str(),
            "connection" | "transfer-encoding" | "keep-alive"
        ) {
            back = back.header(name, value);
        }
    }
    match resp.bytes().await {
        Ok(bytes) => back
            .body(Full::new(bytes))
            .unwrap_or_else(|_| status(StatusCode::BAD_GATEWAY)),
        Err(_) => status(StatusCode::BAD_GATEWAY),
    }
}
