//! `skillpm mcp`: an MCP server for the project's skills.
//!
//! It serves what `status` calls eligible (minus `user_invocable_only`
//! skills), from the same discovery roots, over stdio or Streamable HTTP,
//! through the official Rust SDK (`rmcp`): every file as a `skill://`
//! resource, the Skills extension (`skills/list`, `skills/get`,
//! `resources/directory/read`), `skill://index.json`, and three tools for
//! hosts without the extension. It uses the engine only and installs
//! nothing.
//!
//! - [`uri`]: `skill://` URIs and the refusal of hostile spellings
//! - [`resources`]: the snapshot of served files, with digests and caps
//! - [`skills_ext`]: SEP-2640 entries and directory listings
//! - [`tools`]: `list_skills`, `search_skills`, `load_skill`
//! - [`prompts`]: skill commands as MCP prompts
//! - [`server`]: the handler and change notifications for both eras
//! - [`named`]: the server's name in every result's `_meta`
//! - [`sessions`]: the bound on live Streamable HTTP sessions
//! - [`stdio`]: the stdio transport, answering lines that are not JSON
//! - [`watch`]: live reload
//! - [`kept`]: what is kept between starts
//!
//! Logs go to stderr only: on stdio, stdout carries the protocol.

pub mod early;
pub mod kept;
pub mod loaded;
pub mod named;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod sessions;
pub mod skills_ext;
pub mod stdio;
pub mod tools;
pub mod uri;
pub mod watch;

use crate::engine::config::Environment;
use server::{Shared, SkillServer};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Where the server talks to its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// JSON-RPC over stdin/stdout (the default).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`.
    Http(SocketAddr),
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot read the skills")]
    Catalog(#[source] crate::engine::config::ConfigError),
    #[error("cannot watch the skill roots: {0}")]
    Watch(#[from] notify::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("refusing to serve MCP on {0}: --http takes a loopback address (127.0.0.1:PORT or [::1]:PORT); the server has no authentication")]
    NotLoopback(SocketAddr),
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// One line on stderr, sanitized (it may carry skill paths and names).
fn log(line: &str) {
    eprintln!("skillpm mcp: {}", skillpm_core::text::sanitize(line));
}

/// Serves until the host closes stdin (stdio) or the process is stopped.
/// `kept` is where the start-up cache is kept ([`kept`]); `None` keeps
/// nothing.
pub fn run(
    env: Environment,
    transport: Transport,
    kept: Option<PathBuf>,
) -> Result<(), ServeError> {
    // Anyone who can reach the port reads every served skill, and the SDK's
    // DNS-rebinding guard admits loopback `Host` headers only, so a wider
    // bind would be both unsafe and useless.
    if let Transport::Http(addr) = transport {
        if !addr.ip().is_loopback() {
            return Err(ServeError::NotLoopback(addr));
        }
    }
    let mut store = kept::Store::open(kept, &env.workers);
    let snap = watch::build_settled(&env, None, &mut store).map_err(ServeError::Catalog)?;
    let read = snap.read;
    for n in &snap.notes {
        log(n);
    }
    log(&format!(
        "serving {} skill(s); {} file(s) read, {} SKILL.md parsed, the rest known unchanged",
        snap.skills.len(),
        snap.read,
        store.kept().parses.parsed
    ));
    let shared = Shared::new(snap);
    store.owe(read);
    let closer = store.closer();
    let _reloader = watch::start(env, shared.clone(), store, read, log)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = rt.block_on(async move {
        match transport {
            Transport::Stdio => serve_stdio(shared).await,
            Transport::Http(addr) => serve_http(shared, addr).await,
        }
    });
    closer.close();
    served
}

async fn serve_stdio(shared: std::sync::Arc<Shared>) -> Result<(), ServeError> {
    use rmcp::ServiceExt;
    let (stdin, stdout) = rmcp::transport::stdio();
    let (sdk_in, sdk_out, relay) = stdio::pipes(stdin, stdout, MAX_MESSAGE_BYTES);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(sdk_in, sdk_out)
        .with_max_line_length(MAX_MESSAGE_BYTES);
    let service = match SkillServer::new(shared).serve(transport).await {
        Ok(s) => s,
        // The host went away before saying anything: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(ServeError::Session(e.to_string())),
    };
    let ended = service.waiting().await;
    // The session's last answers may still be on their way to stdout.
    let _ = relay.await;
    ended.map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}

/// Refuses (400) a request carrying two `Host` or two `Origin` headers
/// before the SDK sees it: its DNS-rebinding check reads one of them, and
/// whatever else reads the request may read the other. Then refuses (403)
/// an `Origin` that is not [`loopback_origin`], as the MCP transport
/// (2025-06-18 and 2025-11-25) requires servers to: the SDK validates
/// `Origin` only against a list of exact origins or ports, and a local web
/// UI (the MCP Inspector's among them) runs on a port of its own. And
/// answers a session's DELETE as the SDKs expect (below).
async fn one_of_each_guarded_header(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    for name in [header::HOST, header::ORIGIN] {
        if req.headers().get_all(&name).iter().nth(1).is_some() {
            let why = format!("more than one {name} header");
            return (StatusCode::BAD_REQUEST, why).into_response();
        }
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        if !loopback_origin(origin.as_bytes()) {
            let why = "Origin not allowed: only a page served from this machine \
                       (localhost, 127.x.x.x or [::1]) may call this server";
            return (StatusCode::FORBIDDEN, why).into_response();
        }
    }
    let delete = req.method() == axum::http::Method::DELETE;
    let mut res = next.run(req).await;
    // rmcp answers a session's DELETE with 202; the SDKs' own servers answer
    // 200, and the Python SDK's client logs anything but 200 or 204 as a
    // failed termination.
    if delete && res.status() == StatusCode::ACCEPTED {
        *res.status_mut() = StatusCode::OK;
    }
    res
}

/// Answers a POSTed message the SDK would misread ([`early::refusal`])
/// before it reaches the SDK. The body is read up to the same cap the SDK
/// applies (413 beyond it, as the SDK answers) and handed on unchanged.
async fn early_answers(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "message too large").into_response();
    };
    if let Some(answer) = early::refusal(&bytes) {
        return ([(header::CONTENT_TYPE, "application/json")], answer).into_response();
    }
    let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
    next.run(req).await
}

/// Whether `origin` is `http` or `https` on a loopback host (`localhost`,
/// any `127.x.x.x`, `[::1]`), with any port or none. The server binds
/// loopback only, so a page from anywhere else is another site using the
/// visitor's browser to reach it (DNS rebinding, cross-site requests);
/// requests without `Origin` come from clients that are not browsers, and
/// `Origin: null` (sandboxed or opaque pages) is no known place.
fn loopback_origin(origin: &[u8]) -> bool {
    let Ok(origin) = std::str::from_utf8(origin) else {
        return false;
    };
    let origin = origin.to_ascii_lowercase();
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    // An origin is scheme, host and port: nothing after the port.
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((ip, port)) => (ip, port),
            None => return false,
        },
        None => rest.split_at(rest.find(':').unwrap_or(rest.len())),
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok());
    let host_ok = if rest.starts_with('[') {
        host.parse::<std::net::Ipv6Addr>()
            .is_ok_and(|ip| ip.is_loopback())
    } else {
        host == "localhost"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    port_ok && host_ok
}

/// The largest message a client may send, a stdio line or an HTTP body.
/// Requests to this server are small (a URI, a query, a skill's name);
/// what a message costs while parsed grows with its size (a body of
/// `[0,0,...]` is an array of as many values), so the cap bounds it. The
/// SDK's own defaults (16 MiB a line, 4 MiB a body) let one message cost
/// hundreds of megabytes.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// How long a request head may take to arrive, and how long a connection
/// may sit without a new request or with its response stalled on the
/// client. Streams of change notifications are kept moving by the SDK's
/// pings every 15 s, so they stay open.
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
const IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Streamable HTTP, served by the same connection handling as the
/// registry (`skillpm_serve::conns`): header and idle timeouts, silent
/// connections evicted when the open-files limit is near, small response
/// buffers, and at most [`sessions::MAX_SESSIONS`] sessions.
async fn serve_http(shared: std::sync::Arc<Shared>, addr: SocketAddr) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use skillpm_serve::{conns, listen};
    let service = StreamableHttpService::new(
        move || Ok(SkillServer::new(shared.clone())),
        sessions::Capped::new(sessions::MAX_SESSIONS).into(),
        StreamableHttpServerConfig::default().with_max_request_body_bytes(MAX_MESSAGE_BYTES),
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(early_answers))
        .layer(axum::middleware::from_fn(one_of_each_guarded_header));
    let listener = listen::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    log(&format!("listening on http://{bound}/mcp"));
    let max_requests = listen::default_max_connections();
    let limits = conns::Limits {
        name: "skillpm mcp",
        max_requests,
        max_open: listen::max_open_connections(max_requests),
        header_timeout: HEADER_TIMEOUT,
        idle_timeout: IDLE_TIMEOUT,
    };
    conns::serve(listener, router, limits, std::future::pending()).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::loopback_origin;

    #[test]
    fn only_loopback_origins_are_allowed() {
        for ok in [
            "http://localhost",
            "http://localhost:6274",
            "HTTPS://LocalHost:443",
            "http://127.0.0.1:3000",
            "http://127.1.2.3",
            "http://[::1]:8080",
            "https://[::1]",
        ] {
            assert!(loopback_origin(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.example.com",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example",
            "http://evil.example#@localhost",
            "http://user@localhost",
            "http://localhost/path",
            "http://localhost:",
            "http://localhost:+80",
            "http://localhost:65536",
            "ftp://localhost",
            "localhost",
            "http://[::2]",
            "http://[::1",
            "http://[::1]x",
            "http://10.0.0.1",
            "http://0.0.0.0",
            "",
        ] {
            assert!(!loopback_origin(bad.as_bytes()), "{bad}");
        }
        assert!(!loopback_origin(b"http://localhost\xff"));
    }
}
