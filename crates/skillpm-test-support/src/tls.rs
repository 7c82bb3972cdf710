//! The test servers' TLS: a CA made at start-up and a certificate for
//! 127.0.0.1 it signed (also valid for `localhost` and for
//! [`loopback_name`], so a test can reach the same server by a DNS name).

use std::path::Path;
use std::sync::Arc;

/// A name other than `localhost` that this machine resolves to loopback
/// addresses only, through `/etc/hosts`: `skillpm-loopback.test` (which
/// `.ci/run` adds) or the machine's own host name, as many images map it;
/// `None` if neither does. Tests of what skillpm does with a DNS name that
/// leads to this machine need one: no DNS server runs here.
pub fn loopback_name() -> Option<String> {
    // A fact of the machine (its /etc/hosts), looked up once: every test
    // server's certificate names it, and a name missing there goes to DNS.
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(find_loopback_name).clone()
}

fn find_loopback_name() -> Option<String> {
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let found = ["skillpm-loopback.test", hostname.trim()]
        .into_iter()
        .filter(|n| !n.is_empty())
        .find(|n| {
            std::net::ToSocketAddrs::to_socket_addrs(&(*n, 0))
                .map(|addrs| {
                    let addrs: Vec<_> = addrs.collect();
                    !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
                })
                .unwrap_or(false)
        })
        .map(str::to_string);
    found
}

/// A CA made for one test and a leaf for 127.0.0.1 (and `localhost` and
/// [`loopback_name`]) it signed. The leaf is not the CA itself: webpki
/// refuses a CA certificate presented as the server's.
pub struct Issued {
    pub ca_pem: String,
    pub leaf: rustls::pki_types::CertificateDer<'static>,
    key: rustls::pki_types::PrivateKeyDer<'static>,
}

pub fn issued() -> Issued {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // Each CA its own name: two of the same name in one trust store
    // make webpki try the wrong one's key (BadSignature, not UnknownIssuer).
    // Counts across the test process, where the names must differ.
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca.distinguished_name.push(
        DnType::CommonName,
        format!("skillpm test CA {} {n}", std::process::id()),
    );
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().expect("ca key");
    let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
    let ca_pem = ca_cert.pem();
    let issuer = Issuer::new(ca, ca_key);

    let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    names.extend(loopback_name());
    let mut leaf = CertificateParams::new(names).expect("leaf params");
    leaf.distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate().expect("leaf key");
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).expect("leaf cert");
    let key =
        rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).expect("leaf key der");
    Issued {
        ca_pem,
        leaf: leaf_cert.der().clone(),
        key,
    }
}

/// A CA (written to `ca_pem`) and a leaf it signed, as a TLS acceptor.
pub(crate) fn acceptor(ca_pem: &Path, alpn: &[&[u8]]) -> tokio_rustls::TlsAcceptor {
    let issued = issued();
    std::fs::write(ca_pem, &issued.ca_pem).expect("write CA");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![issued.leaf], issued.key)
        .expect("server config");
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

/// Serves TLS connections on `listener` until the task is dropped: each
/// accepted handshake counts through `on_connection`, then every request
/// on it goes to `handle` (HTTP/1.1 or HTTP/2, as ALPN agreed). A client
/// that refuses the certificate ends at the handshake.
pub(crate) async fn serve<H, F>(
    listener: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    on_connection: impl Fn() + Send + Sync + 'static,
    handle: H,
) where
    H: Fn(hyper::Request<hyper::body::Incoming>, std::net::SocketAddr) -> F
        + Clone
        + Send
        + Sync
        + 'static,
    F: std::future::Future<Output = hyper::Response<http_body_util::Full<hyper::body::Bytes>>>
        + Send
        + 'static,
{
    let on_connection = Arc::new(on_connection);
    loop {
        let Ok((tcp, peer)) = listener.accept().await else {
            continue;
        };
        let (tls, handle, on_connection) = (tls.clone(), handle.clone(), on_connection.clone());
        tokio::spawn(async move {
            let Ok(stream) = tls.accept(tcp).await else {
                return;
            };
            on_connection();
            let service = hyper::service::service_fn(move |req| {
                let reply = handle(req, peer);
                async move { Ok::<_, std::convert::Infallible>(reply.await) }
            });
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
        });
    }
}
