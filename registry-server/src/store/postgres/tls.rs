//! TLS to PostgreSQL, with libpq's `sslmode` and `sslrootcert` read from
//! the database URL.
//!
//! tokio-postgres knows only `disable`, `prefer` and `require`, and refuses
//! `verify-ca`, `verify-full` and `sslrootcert` in a URL. So they are taken
//! out of the URL here, the rest is handed to tokio-postgres, and the
//! connector's rustls configuration carries what each mode means:
//!
//! | `sslmode` | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | — |
//! | `prefer` (the default) | when the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert`, as `verify-ca` (as libpq does) |
//! | `verify-ca` | always | signed by a trusted authority |
//! | `verify-full` | always | signed by a trusted authority and naming the host |
//!
//! The trusted authorities are `sslrootcert`'s (a PEM file) when given,
//! else the system's.

use anyhow::Context;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The connection settings and TLS connector for a database URL.
pub fn connect_config(url: &str) -> anyhow::Result<(tokio_postgres::Config, MakeRustlsConnect)> {
    let shown = super::describe(url);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let Ok(mut parsed) = url::Url::parse(url) else {
        // libpq's `key=value` form, which tokio-postgres reads itself:
        // `sslmode` up to `require`, certificates unchecked.
        let config: tokio_postgres::Config = url
            .parse()
            .with_context(|| format!("invalid database URL {shown}"))?;
        let unchecked = Lenient {
            chain: None,
            provider: provider.clone(),
        };
        let tls = client_config(provider, Arc::new(unchecked))?;
        return Ok((config, MakeRustlsConnect::new(tls)));
    };
    let mut mode = Mode::Prefer;
    let mut root_file = None;
    let mut rest = Vec::new();
    for (k, v) in parsed.query_pairs() {
        match k.as_ref() {
            "sslmode" => {
                mode = match v.as_ref() {
                    "disable" => Mode::Disable,
                    "prefer" | "allow" => Mode::Prefer,
                    "require" => Mode::Require,
                    "verify-ca" => Mode::VerifyCa,
                    "verify-full" => Mode::VerifyFull,
                    other => anyhow::bail!(
                        "invalid sslmode {other:?} in {shown}; use disable, prefer, require, \
                         verify-ca or verify-full"
                    ),
                }
            }
            "sslrootcert" => root_file = Some(v.into_owned()),
            _ => rest.push((k.into_owned(), v.into_owned())),
        }
    }
    if mode == Mode::Require && root_file.is_some() {
        mode = Mode::VerifyCa;
    }
    parsed.set_query(None);
    if !rest.is_empty() {
        parsed.query_pairs_mut().extend_pairs(rest);
    }
    let mut config: tokio_postgres::Config = parsed
        .as_str()
        .parse()
        .with_context(|| format!("invalid database URL {shown}"))?;
    config.ssl_mode(match mode {
        Mode::Disable => tokio_postgres::config::SslMode::Disable,
        Mode::Prefer => tokio_postgres::config::SslMode::Prefer,
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => {
            tokio_postgres::config::SslMode::Require
        }
    });
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        Mode::Disable | Mode::Prefer | Mode::Require => Arc::new(Lenient {
            chain: None,
            provider: provider.clone(),
        }),
        Mode::VerifyCa | Mode::VerifyFull => {
            let roots = roots(root_file.as_deref())?;
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .context("cannot build the certificate verifier")?;
            match mode {
                Mode::VerifyCa => Arc::new(Lenient {
                    chain: Some(webpki),
                    provider: provider.clone(),
                }),
                _ => webpki,
            }
        }
    };
    let tls = client_config(provider, verifier)?;
    Ok((config, MakeRustlsConnect::new(tls)))
}

fn client_config(
    provider: Arc<CryptoProvider>,
    verifier: Arc<dyn ServerCertVerifier>,
) -> anyhow::Result<rustls::ClientConfig> {
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS set-up")?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// `sslrootcert`'s certificates, else the system's.
fn roots(file: Option<&str>) -> anyhow::Result<Arc<RootCertStore>> {
    let mut store = RootCertStore::empty();
    match file {
        Some(f) => {
            for cert in CertificateDer::pem_file_iter(f)
                .with_context(|| format!("cannot read sslrootcert {f}"))?
            {
                let cert = cert.with_context(|| format!("sslrootcert {f} is not PEM"))?;
                store
                    .add(cert)
                    .with_context(|| format!("sslrootcert {f} holds an unusable certificate"))?;
            }
            anyhow::ensure!(!store.is_empty(), "sslrootcert {f} holds no certificate");
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            anyhow::ensure!(
                !store.is_empty(),
                "no system certificate authorities to verify the database with; give sslrootcert"
            );
        }
    }
    Ok(Arc::new(store))
}

/// What `prefer`, `require` and `verify-ca` check of the server's
/// certificate: with `chain`, that it leads to a trusted authority (the
/// name in it is not compared with the host); without, nothing (as
/// libpq). The handshake's signatures are always checked.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
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

    #[test]
    fn sslmode_and_sslrootcert_are_read_and_taken_out_of_the_url() {
        let (c, _) =
            connect_config("postgres://u@127.0.0.1:5/db?sslmode=require&application_name=x")
                .unwrap();
        assert_eq!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
        assert_eq!(c.get_application_name(), Some("x"));
        let (c, _) = connect_config("postgres://u@127.0.0.1:5/db").unwrap();
        assert_eq!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Prefer);
        let (c, _) = connect_config("postgres://u@h/db?sslmode=disable").unwrap();
        assert_eq!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Disable);
        // libpq's key=value form still reads as tokio-postgres reads it.
        let (c, _) = connect_config("host=127.0.0.1 user=u dbname=db sslmode=require").unwrap();
        assert_eq!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
        assert_eq!(c.get_dbname(), Some("db"));
        let err = |url: &str| match connect_config(url) {
            Ok(_) => panic!("{url} was accepted"),
            Err(e) => e.to_string(),
        };
        let e = err("postgres://u:secret@h/db?sslmode=verify-everything");
        assert!(
            e.contains("invalid sslmode") && !e.contains("secret"),
            "{e}"
        );
        let e = err("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent");
        assert!(e.contains("sslrootcert /nonexistent"), "{e}");
    }
}
