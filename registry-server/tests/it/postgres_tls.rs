//! TLS to PostgreSQL: libpq's `sslmode` and `sslrootcert` in the database
//! URL, against the PostgreSQL `scripts/services.sh` starts, which offers
//! TLS with a certificate made for the run that names `localhost` only
//! (`SKILLPM_TEST_POSTGRES_CA` is its CA). Each case runs `token create`,
//! which connects and prepares the schema.

use crate::common;
use crate::scale::Shared;
use common::BIN;
use std::process::Command;

/// `token create` against `url`: whether it worked, and stderr.
fn connect(url: &str) -> (bool, String) {
    let out = Command::new(BIN)
        .args(["token", "create", "--database", url, "--user", "tls"])
        .output()
        .expect("token create");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn sslmode_verifies_what_it_says() {
    let Some(shared) = Shared::new("tls").await else {
        return;
    };
    let Ok(ca) = std::env::var("SKILLPM_TEST_POSTGRES_CA") else {
        assert!(
            std::env::var_os("SKILLPM_REQUIRE_SERVICES").is_none(),
            "SKILLPM_REQUIRE_SERVICES is set but SKILLPM_TEST_POSTGRES_CA is not"
        );
        println!("skipping: SKILLPM_TEST_POSTGRES_CA is not set (scripts/services.sh env)");
        return;
    };
    let by_ip = url::Url::parse(&shared.database).expect("url");
    assert_eq!(by_ip.host_str(), Some("127.0.0.1"));
    let mut by_name = by_ip.clone();
    by_name.set_host(Some("localhost")).expect("host");
    let with = |u: &url::Url, query: &str| format!("{u}?{query}");
    let root = format!("sslrootcert={ca}");

    // Checked all the way: the CA and the name.
    let (ok, err) = connect(&with(&by_name, &format!("sslmode=verify-full&{root}")));
    assert!(ok, "{err}");
    // The certificate names localhost, not 127.0.0.1.
    let (ok, err) = connect(&with(&by_ip, &format!("sslmode=verify-full&{root}")));
    assert!(!ok);
    assert!(err.contains("not valid for name"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // verify-ca checks the chain, not the name.
    let (ok, err) = connect(&with(&by_ip, &format!("sslmode=verify-ca&{root}")));
    assert!(ok, "{err}");
    // Without the CA, the system's authorities do not know it.
    let (ok, err) = connect(&with(&by_name, "sslmode=verify-full"));
    assert!(!ok);
    assert!(err.contains("UnknownIssuer"), "{err}");
    // require encrypts without checking, as libpq does; with a CA it is
    // verify-ca, so a wrong CA fails.
    let (ok, err) = connect(&with(&by_ip, "sslmode=require"));
    assert!(ok, "{err}");
    let other_ca = tempfile::NamedTempFile::new().expect("tmp");
    let pem = another_ca_pem();
    std::fs::write(other_ca.path(), pem).expect("write");
    let (ok, err) = connect(&with(
        &by_ip,
        &format!("sslmode=require&sslrootcert={}", other_ca.path().display()),
    ));
    assert!(!ok && err.contains("UnknownIssuer"), "{err}");
    // disable and the default still work against a server that offers TLS.
    for query in ["sslmode=disable", "application_name=tls-test"] {
        let (ok, err) = connect(&with(&by_ip, query));
        assert!(ok, "{query}: {err}");
    }
    shared.drop_db().await;
}

/// A CA certificate nobody signed the server's with: the services' own
/// CA file cannot serve (it is the right one), so one is made with
/// openssl for the test.
fn another_ca_pem() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tmp");
    let (key, crt) = (dir.path().join("k"), dir.path().join("c"));
    let out = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=another CA", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&crt)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(crt).expect("read")
}
