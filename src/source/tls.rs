//! Whom every HTTPS client trusts: the system's certificate authorities,
//! found where rustls-native-certs (and so reqwest's default) finds them
//! (`SSL_CERT_FILE` and `SSL_CERT_DIR` when either is set, else the
//! platform's bundle file and certificate directory), and read once per
//! process.
//!
//! Why not reqwest's default: for every client it builds, it reads the
//! bundle file *and* every file of the certificate directory. On Debian
//! and Ubuntu that directory holds the same authorities as the bundle,
//! about 150 more files to open and decode, before the first byte went
//! out. Here the bundle alone is read
//! up front. The directory is read only when the bundle does not vouch
//! for a server, and the verdict is then the one over both. So a server
//! is trusted exactly when the default would trust it, and the common
//! case never reads the directory.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Why no TLS client can be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TlsError {
    #[error("{NO_AUTHORITIES}")]
    NoAuthorities,
    #[error("TLS set-up")]
    Setup(#[source] rustls::Error),
}

/// The TLS configuration of every client in this process, built on
/// first use; each client sets the protocols its ALPN offers
/// ([`crate::source::http`]).
pub fn client_config() -> Result<rustls::ClientConfig, TlsError> {
    // A process fact: the trusted authorities (the system's, or SSL_CERT_FILE's).
    static CONFIG: OnceLock<Result<rustls::ClientConfig, TlsError>> = OnceLock::new();
    CONFIG.get_or_init(build).clone()
}

fn build() -> Result<rustls::ClientConfig, TlsError> {
    trusting(Places::from_env())
}

/// A configuration that trusts the authorities of one bundle file alone:
/// git's `http.sslCAInfo`, which replaces the system's as it does for
/// `git`.
pub fn client_config_of(file: &std::path::Path) -> Result<rustls::ClientConfig, TlsError> {
    trusting(Places {
        file: Some(file.to_path_buf()),
        dirs: Vec::new(),
    })
}

fn trusting(places: Places) -> Result<rustls::ClientConfig, TlsError> {
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let roots = SystemRoots::new(places, provider.clone())?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(roots))
        .with_no_client_auth();
    Ok(config)
}

/// Where the authorities are: rustls-native-certs' rules, kept apart so
/// the file can be read before (and often without) the directories.
#[derive(Debug, Clone, Default)]
pub(crate) struct Places {
    pub file: Option<PathBuf>,
    pub dirs: Vec<PathBuf>,
}

impl Places {
    fn from_env() -> Self {
        let file = std::env::var_os("SSL_CERT_FILE")
            .filter(|f| !f.is_empty())
            .map(PathBuf::from);
        let dirs: Vec<PathBuf> = std::env::var_os("SSL_CERT_DIR")
            .map(|d| {
                std::env::split_paths(&d)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if file.is_some() || !dirs.is_empty() {
            return Places { file, dirs };
        }
        let probed = openssl_probe::probe();
        Places {
            file: probed.cert_file,
            dirs: probed.cert_dir,
        }
    }

    fn load(file: Option<&PathBuf>, dirs: &[PathBuf]) -> Vec<CertificateDer<'static>> {
        let mut certs = Vec::new();
        if let Some(file) = file {
            certs.extend(rustls_native_certs::load_certs_from_paths(Some(file), None).certs);
        }
        for dir in dirs {
            certs.extend(rustls_native_certs::load_certs_from_paths(None, Some(dir)).certs);
        }
        certs
    }
}

/// Bundles up to this size (about ten authorities) are read when the
/// client is built: that costs less than starting a thread. A system
/// bundle (some 150 authorities on Debian) is slow to read and decode in
/// front of the first request of every command that goes online; it is
/// read on a thread of its own instead, while the
/// connection is made, and the handshake waits for it only if it reaches
/// the server's certificate first.
const READ_AT_ONCE: u64 = 16 * 1024;

/// Why no server can be trusted: said when the client is built, or by the
/// handshake when a large bundle read beside it turns out to hold none.
const NO_AUTHORITIES: &str = "no CA certificates were found (set SSL_CERT_FILE or SSL_CERT_DIR)";

/// A verifier over the bundle file first and, on its refusal, over the
/// file and the directories together (built once, on that first need).
#[derive(Debug)]
pub(crate) struct SystemRoots {
    places: Places,
    provider: Arc<CryptoProvider>,
    /// Over the file alone; `None` when it holds no authority (then every
    /// verdict is `all`'s). Filled when the client is built, or for a
    /// large bundle by a thread started then ([`READ_AT_ONCE`]), or by
    /// the first handshake that gets there before that thread.
    file: Arc<OnceLock<Option<Arc<WebPkiServerVerifier>>>>,
    all: OnceLock<Result<Arc<WebPkiServerVerifier>, rustls::Error>>,
}

impl SystemRoots {
    pub(crate) fn new(places: Places, provider: Arc<CryptoProvider>) -> Result<Self, TlsError> {
        let roots = SystemRoots {
            places,
            provider,
            file: Arc::default(),
            all: OnceLock::new(),
        };
        let meta = roots.places.file.as_ref().and_then(|f| f.metadata().ok());
        if meta.is_some_and(|m| m.is_file() && m.len() > READ_AT_ONCE) {
            let (file, path) = (roots.file.clone(), roots.places.file.clone());
            let provider = roots.provider.clone();
            // One that cannot start leaves the reading to the handshake.
            let _ = std::thread::Builder::new().spawn(move || {
                file.get_or_init(|| Self::over_file(path.as_ref(), &provider));
            });
            return Ok(roots);
        }
        if roots.over_the_file().is_none() {
            roots.all().map_err(|_| TlsError::NoAuthorities)?;
        }
        Ok(roots)
    }

    /// The verifier over the bundle file alone, once read.
    fn over_the_file(&self) -> Option<&Arc<WebPkiServerVerifier>> {
        self.file
            .get_or_init(|| Self::over_file(self.places.file.as_ref(), &self.provider))
            .as_ref()
    }

    fn over_file(
        file: Option<&PathBuf>,
        provider: &Arc<CryptoProvider>,
    ) -> Option<Arc<WebPkiServerVerifier>> {
        Self::verifier(Places::load(file, &[]), provider).ok()
    }

    fn verifier(
        certs: Vec<CertificateDer<'static>>,
        provider: &Arc<CryptoProvider>,
    ) -> Result<Arc<WebPkiServerVerifier>, rustls::Error> {
        let mut store = rustls::RootCertStore::empty();
        store.add_parsable_certificates(certs);
        if store.is_empty() {
            return Err(rustls::Error::General(NO_AUTHORITIES.into()));
        }
        WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
            .build()
            .map_err(|e| rustls::Error::General(e.to_string()))
    }

    fn all(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        self.all
            .get_or_init(|| {
                let certs = Places::load(self.places.file.as_ref(), &self.places.dirs);
                Self::verifier(certs, &self.provider)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the directories have been read (for tests of the laziness).
    #[cfg(test)]
    fn read_directories(&self) -> bool {
        self.all.get().is_some()
    }
}

impl ServerCertVerifier for SystemRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(file) = self.over_the_file() {
            let verdict =
                file.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
            if verdict.is_ok() || self.places.dirs.is_empty() {
                return verdict;
            }
        }
        self.all()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillpm_test_support::issued;

    fn verify(roots: &SystemRoots, leaf: &CertificateDer<'static>) -> Result<(), rustls::Error> {
        let name =
            ServerName::try_from("127.0.0.1").map_err(|e| rustls::Error::General(e.to_string()))?;
        roots
            .verify_server_cert(leaf, &[], &name, &[], UnixTime::now())
            .map(|_| ())
    }

    #[test]
    fn the_directories_are_read_only_when_the_file_does_not_vouch() {
        file_first_then_directories(false);
    }

    /// A system-sized bundle, which is read on a thread of its own while
    /// the connection is made, vouches and refuses as a small one does
    /// (that it is read beside the handshake is a matter of time, for
    /// BENCHMARKS.md, not for a test).
    #[test]
    fn a_large_bundle_vouches_and_refuses_as_a_small_one() {
        file_first_then_directories(true);
    }

    /// The file's authorities vouch without the directories being read;
    /// a refusal reads them. With `large`, the bundle holds enough other
    /// authorities to be read beside the handshake ([`READ_AT_ONCE`]).
    fn file_first_then_directories(large: bool) {
        let tmp = tempfile::tempdir().unwrap();
        let (in_file, in_dir, nowhere) = (issued(), issued(), issued());
        let mut bundle = in_file.ca_pem.clone();
        while large && bundle.len() as u64 <= READ_AT_ONCE {
            bundle.push_str(&issued().ca_pem);
        }
        let file = tmp.path().join("bundle.pem");
        std::fs::write(&file, &bundle).unwrap();
        let dir = tmp.path().join("certs");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("extra.pem"), &in_dir.ca_pem).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let places = Places {
            file: Some(file),
            dirs: vec![dir],
        };
        let roots = SystemRoots::new(places, provider).unwrap();
        assert!(!roots.read_directories(), "read before any server");

        verify(&roots, &in_file.leaf).unwrap();
        assert!(roots.file.get().is_some_and(Option::is_some));
        assert!(
            !roots.read_directories(),
            "the file vouched, yet the directory was read"
        );

        verify(&roots, &in_dir.leaf).unwrap();
        assert!(roots.read_directories());

        let refused = verify(&roots, &nowhere.leaf).unwrap_err();
        assert!(refused.to_string().contains("UnknownIssuer"), "{refused}");
        // The file's own authority still counts once the directory is in.
        verify(&roots, &in_file.leaf).unwrap();
    }

    /// A large bundle that holds no authority (and no directory to fall
    /// back on) fails the handshake with the same advice as one found
    /// empty when the client is built.
    #[test]
    fn a_large_bundle_without_authorities_says_where_to_look() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("bundle.pem");
        std::fs::write(&file, "# not a certificate\n".repeat(2_000)).unwrap();
        let places = Places {
            file: Some(file),
            dirs: Vec::new(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = SystemRoots::new(places, provider).unwrap();
        let refused = verify(&roots, &issued().leaf).unwrap_err().to_string();
        assert!(refused.contains(NO_AUTHORITIES), "{refused}");
    }

    #[test]
    fn without_a_file_the_directories_are_read_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let in_dir = issued();
        std::fs::write(tmp.path().join("ca.pem"), &in_dir.ca_pem).unwrap();
        let places = Places {
            file: Some(tmp.path().join("missing.pem")),
            dirs: vec![tmp.path().to_path_buf()],
        };
        let roots =
            SystemRoots::new(places, Arc::new(rustls::crypto::ring::default_provider())).unwrap();
        assert!(roots.read_directories());
        verify(&roots, &in_dir.leaf).unwrap();

        let empty = tempfile::tempdir().unwrap();
        let none = Places {
            file: None,
            dirs: vec![empty.path().to_path_buf()],
        };
        let err =
            SystemRoots::new(none, Arc::new(rustls::crypto::ring::default_provider())).unwrap_err();
        assert!(matches!(err, TlsError::NoAuthorities), "{err}");
        assert!(err.to_string().contains("no CA certificates"), "{err}");
    }
}
