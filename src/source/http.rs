//! The one place HTTP clients are configured: timeouts, user agent and the
//! TLS crypto provider, shared by the registry client and the well-known
//! source.

use crate::project::spec::{is_local_ip, WellKnownUrl};
use crate::source::tls::TlsError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::Duration;

/// Connect and per-read timeout; `SKILLPM_HTTP_TIMEOUT` (seconds, may be
/// fractional) overrides it. A whole request (body included) may take at
/// most [`TOTAL_FACTOR`] times as long, so a server trickling one byte
/// at a time cannot hold a client forever.
const TIMEOUT: Duration = Duration::from_secs(30);
const TOTAL_FACTOR: u32 = 10;

/// The configured per-read timeout.
pub fn timeout() -> Duration {
    std::env::var("SKILLPM_HTTP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(TIMEOUT)
}

/// A client builder with the shared timeouts, user agent and TLS trust
/// ([`crate::source::tls`]), offering `alpn` in its handshake. Fails when
/// the system has no authorities to trust, saying where they are looked
/// for.
fn configured(alpn: Vec<Vec<u8>>) -> Result<reqwest::ClientBuilder, TlsError> {
    use_ring();
    let t = timeout();
    crate::source::tls::client_config().map(|mut tls| {
        tls.alpn_protocols = alpn;
        reqwest::Client::builder()
            .connect_timeout(t)
            .timeout(t * TOTAL_FACTOR)
            .user_agent(concat!("skillpm/", env!("CARGO_PKG_VERSION")))
            .tls_backend_preconfigured(tls)
    })
}

/// A client builder with the shared settings (`configured`); callers
/// add their redirect policy.
pub fn builder() -> Result<reqwest::ClientBuilder, TlsError> {
    let alpn = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    configured(alpn).map(|b| b.read_timeout(timeout()))
}

/// A client for URLs that came from someone else (a well-known index, a
/// download a skill declares): every redirect hop must pass the first
/// URL's rules ([`WellKnownUrl::allows`]: https, or http to loopback only,
/// never from remote to this machine), and with `remote` the resolver
/// refuses this machine's addresses ([`RemoteOnly`]).
pub fn untrusted(remote: bool) -> Result<reqwest::ClientBuilder, TlsError> {
    let builder = builder()?.redirect(reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= 5 {
            return attempt.error("too many redirects");
        }
        let first = attempt
            .previous()
            .first()
            .and_then(|u| WellKnownUrl::from_url(u.clone()).ok());
        match first.map(|f| f.allows(attempt.url().clone())) {
            Some(Ok(_)) => attempt.follow(),
            Some(Err(why)) => attempt.error(why.to_string()),
            None => attempt.error("redirect from an unusable URL refused"),
        }
    }));
    Ok(match remote {
        true => builder.dns_resolver(std::sync::Arc::new(RemoteOnly)),
        false => builder,
    })
}

/// `resp`'s body, or `None` once it passes `cap` bytes (announced or
/// read), so a hostile server cannot make the client buffer without bound.
pub async fn read_capped(
    mut resp: reqwest::Response,
    cap: u64,
) -> reqwest::Result<Option<Vec<u8>>> {
    if resp.content_length().is_some_and(|n| n > cap) {
        return Ok(None);
    }
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if out.len() as u64 + chunk.len() as u64 > cap {
            return Ok(None);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(Some(out))
}

/// The TLS configuration of the git client: the shared trust, or the
/// bundle git's configuration names (`http.sslCAInfo`). It offers only
/// HTTP/1.1: a fetch is a few requests in turn on one connection, where
/// HTTP/2's frames cost both ends more than they share.
pub fn git_tls(ca_file: Option<&std::path::Path>) -> Result<rustls::ClientConfig, TlsError> {
    use_ring();
    let mut tls = match ca_file {
        Some(file) => crate::source::tls::client_config_of(file)?,
        None => crate::source::tls::client_config()?,
    };
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}

/// Makes `ring` the process's rustls provider before the first client is
/// built. reqwest's default, aws-lc-rs, seeds its generator on every
/// thread with CPU-jitter entropy: that was half the CPU time of a cold
/// 10-package install. `ring` reads the kernel's generator instead, and
/// reqwest is built without a provider of its own (`rustls-no-provider`),
/// so aws-lc is not linked at all: its start-up CPU probe ran in every
/// command.
fn use_ring() {
    // A process fact: rustls has one default provider per process.
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only if a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// How many requests one client has in flight over HTTP/1.1, where each
/// takes a connection of its own (and a file of the server's).
const HTTP1_IN_FLIGHT: usize = 16;

/// How many once the server answered over HTTP/2: the requests share one
/// connection, and the server's stream limit queues what is over it.
const HTTP2_IN_FLIGHT: usize = 256;

/// Sends a client's first request alone, then as many at once as the
/// protocol the server answered with allows. Until one connection to the
/// server exists, reqwest cannot know the server speaks HTTP/2, so every
/// request started meanwhile opens its own connection and TLS handshake:
/// ten concurrent index queries made ten handshakes, to use one
/// connection. Once the first request has its answer (or has failed),
/// the rest go [`HTTP2_IN_FLIGHT`] at a time over that one HTTP/2
/// connection, so a level of a dependency graph costs one round trip, or
/// [`HTTP1_IN_FLIGHT`] at a time over as many HTTP/1.1 connections, so
/// many clients of one registry do not run its open files out
/// (tests/it/load.rs).
/// A request holds its place until its answer's headers are in.
#[derive(Debug)]
pub struct FirstAlone {
    opened: AtomicBool,
    gate: tokio::sync::Mutex<()>,
    in_flight: tokio::sync::Semaphore,
}

impl Default for FirstAlone {
    fn default() -> Self {
        FirstAlone {
            opened: AtomicBool::new(false),
            gate: tokio::sync::Mutex::new(()),
            in_flight: tokio::sync::Semaphore::new(HTTP1_IN_FLIGHT),
        }
    }
}

impl FirstAlone {
    pub async fn send(&self, req: reqwest::RequestBuilder) -> reqwest::Result<reqwest::Response> {
        if !self.opened.load(Ordering::Acquire) {
            let _alone = self.gate.lock().await;
            if !self.opened.load(Ordering::Acquire) {
                let resp = req.send().await;
                if resp
                    .as_ref()
                    .is_ok_and(|r| r.version() == reqwest::Version::HTTP_2)
                {
                    self.in_flight
                        .add_permits(HTTP2_IN_FLIGHT - HTTP1_IN_FLIGHT);
                }
                self.opened.store(true, Ordering::Release);
                return resp;
            }
        }
        let _place = self.in_flight.acquire().await;
        req.send().await
    }
}

/// The resolver of requests to a host named by DNS where the name came
/// from someone else (a well-known index and whatever it points at): it
/// drops every address [`is_local_ip`] calls this machine or link-local,
/// and fails when none is left. A literal address in a URL is checked
/// where the URL is parsed ([`crate::project::spec::WellKnownUrl`]); a
/// name can only be checked here, and the connection goes to exactly the
/// addresses checked, so a name that resolves to a public address once
/// and to 127.0.0.1 the next time (DNS rebinding) gains nothing.
#[derive(Debug, Default)]
pub struct RemoteOnly;

impl reqwest::dns::Resolve for RemoteOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let found = tokio::task::spawn_blocking(move || {
                std::net::ToSocketAddrs::to_socket_addrs(&(lookup.as_str(), 0))
            })
            .await??;
            let kept: Vec<std::net::SocketAddr> = found.filter(|a| !is_local_ip(a.ip())).collect();
            if kept.is_empty() {
                return Err(format!(
                    "{} resolves only to this machine or a link-local address; \
                     name it as 127.0.0.1 or localhost to fetch from this machine",
                    skillpm_core::text::sanitize(&host)
                )
                .into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}
