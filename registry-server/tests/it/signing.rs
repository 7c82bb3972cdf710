//! Signed index entries: `skillpm-registry key ...` and `serve --keys`,
//! against the real binary. Every signature is checked with the client's
//! own verifier (`skillpm_core::signing::Keyring`) against the keys the
//! server's config.json lists.

use crate::common;
use common::{pack, pack_with_files, skill_md, Server, BIN};
use ed25519_dalek::pkcs8::DecodePrivateKey;
use skillpm_core::protocol::{IndexFile, RegistryConfig};
use skillpm_core::signing::{Keyring, SignatureError};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn key(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN)
        .arg("key")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run skillpm-registry key")
}

/// `key ARGS --dir DIR`, which must succeed; its stdout.
fn key_ok(args: &[&str], dir: &Path) -> String {
    let out = key(args, dir);
    assert!(
        out.status.success(),
        "key {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

async fn config(url: &str) -> RegistryConfig {
    reqwest::get(format!("{url}/config.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn index(url: &str, name: &str) -> IndexFile {
    reqwest::get(format!("{url}/index/{name}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The signer of each version of `name`, verified against config.json.
async fn signers(url: &str, name: &str) -> Vec<(String, Result<Option<String>, SignatureError>)> {
    let ring = Keyring::new(&config(url).await.keys).expect("config.json keys");
    index(url, name)
        .await
        .versions
        .iter()
        .map(|v| {
            (
                v.vers.to_string(),
                ring.verify(v).map(|k| k.map(str::to_string)),
            )
        })
        .collect()
}

/// Waits until `name`'s index satisfies `ok` (another process changed
/// the database; the server notices within its polling interval).
async fn index_until(url: &str, name: &str, ok: impl Fn(&IndexFile) -> bool) -> IndexFile {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let i = index(url, name).await;
        if ok(&i) {
            return i;
        }
        assert!(Instant::now() < deadline, "index of {name} never changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn publish_signs_with_the_active_key_and_the_private_key_stays_out_of_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let id = key_ok(&["generate"], &keys);
    assert_eq!(id.len(), 16, "{id}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&keys.join(format!("{id}.pem"))), 0o600);
        assert_eq!(mode(&keys), 0o700);
    }
    // A second generate would leave two first keys: refused.
    assert!(!key(&["generate"], &keys).status.success());
    let listed = key_ok(&["list"], &keys);
    assert!(listed.contains(&format!("{id}\ted25519\t")), "{listed}");
    assert!(listed.ends_with("active"), "{listed}");

    let data = tmp.path().join("data");
    let keys_arg = keys.to_str().unwrap();
    let s = Server::start(&data, &["--keys", keys_arg]);
    let tok = s.token("alice");
    let c = s.client(Some(&tok));
    c.publish(pack("base", "1.0.0", "Base", "base"))
        .await
        .expect("publish");
    let top = pack_with_files(
        "top",
        &skill_md("top", "1.0.0", "Top", "needs base"),
        &[("skill.toml", b"[dependencies]\nbase = \"^1\"\n")],
    );
    c.publish(top).await.expect("publish");

    let cfg = config(&s.url).await;
    assert_eq!(cfg.keys.len(), 1);
    assert_eq!(cfg.keys[0].id, id);
    assert_eq!(cfg.keys[0].algorithm, "ed25519");
    assert!(cfg.keys[0].revoked.is_none());
    for name in ["base", "top"] {
        let got = signers(&s.url, name).await;
        assert_eq!(
            got,
            vec![("1.0.0".to_string(), Ok(Some(id.clone())))],
            "{name}"
        );
    }
    // The signature covers the dependencies the index lists.
    let mut entry = index(&s.url, "top").await.versions.remove(0);
    assert_eq!(entry.deps.len(), 1);
    entry.deps.clear();
    let ring = Keyring::new(&cfg.keys).unwrap();
    assert!(matches!(
        ring.verify(&entry),
        Err(SignatureError::Invalid { .. })
    ));

    // The private key is nowhere in the data directory: neither its PEM
    // text nor its raw 32 bytes (database, WAL, blobs).
    let pem = std::fs::read_to_string(keys.join(format!("{id}.pem"))).unwrap();
    let seed = ed25519_dalek::SigningKey::from_pkcs8_pem(&pem)
        .unwrap()
        .to_bytes();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut files = 0;
    let mut todo = vec![data.clone()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&p).unwrap();
            assert!(
                !bytes.windows(seed.len()).any(|w| w == seed),
                "{} holds the private key",
                p.display()
            );
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(&body), "{} holds its PEM", p.display());
        }
    }
    assert!(files >= 3, "looked at {files} files");
    assert!(data.join("registry.db").is_file());
}

#[tokio::test]
async fn rotate_revoke_and_resign() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let a = key_ok(&["generate"], &keys);
    let data = tmp.path().join("data");
    let s = Server::start(&data, &["--keys", keys.to_str().unwrap()]);
    let tok = s.token("alice");
    let c = s.client(Some(&tok));
    c.publish(pack("notes", "1.0.0", "Notes", "one"))
        .await
        .unwrap();

    // Rotation: the running server signs with B from now on, and lists
    // both keys.
    let b = key_ok(&["rotate"], &keys);
    assert_ne!(a, b);
    c.publish(pack("notes", "1.1.0", "Notes", "two"))
        .await
        .unwrap();
    assert_eq!(
        signers(&s.url, "notes").await,
        vec![
            ("1.0.0".to_string(), Ok(Some(a.clone()))),
            ("1.1.0".to_string(), Ok(Some(b.clone()))),
        ]
    );
    let listed = key_ok(&["list"], &keys);
    assert!(
        listed.contains(&format!("{a}\ted25519\t")) && listed.contains("\tvalid"),
        "{listed}"
    );
    assert!(
        listed.lines().last().unwrap().ends_with("active"),
        "{listed}"
    );

    // The active key cannot be revoked, nor an unknown one.
    let out = key(&["revoke", &b], &keys);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("key rotate"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!key(&["revoke", "0000000000000000"], &keys).status.success());

    // Revoking A: config.json marks it, and what it signed is refused.
    key_ok(&["revoke", &a], &keys);
    assert!(
        !keys.join(format!("{a}.pem")).exists(),
        "private half deleted"
    );
    let cfg = config(&s.url).await;
    let listed_a = cfg.keys.iter().find(|k| k.id == a).unwrap();
    assert!(listed_a.revoked.is_some());
    let got = signers(&s.url, "notes").await;
    assert!(
        matches!(got[0].1, Err(SignatureError::Revoked { .. })),
        "{got:?}"
    );
    assert_eq!(got[1].1, Ok(Some(b.clone())));

    // Resign signs it with B (the server serves it within its polling).
    let out = Command::new(BIN)
        .args(["key", "resign", "--data"])
        .arg(&data)
        .arg("--dir")
        .arg(&keys)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!(
            "re-signed 1 version(s) with key {b}; 1 already signed by it"
        )),
        "{said}"
    );
    index_until(&s.url, "notes", |i| {
        i.versions
            .iter()
            .all(|v| v.sig.as_ref().is_some_and(|s| s.keyid == b))
    })
    .await;
    let got = signers(&s.url, "notes").await;
    assert!(
        got.iter().all(|(_, r)| *r == Ok(Some(b.clone()))),
        "{got:?}"
    );

    // A row altered in the database since it was signed is not signed
    // again: resign names it and fails.
    {
        let db = rusqlite::Connection::open(data.join("registry.db")).unwrap();
        db.busy_timeout(Duration::from_secs(10)).unwrap();
        db.execute(
            "UPDATE versions SET cksum = ?1, sig_key = ?2 WHERE name = 'notes' AND vers = '1.0.0'",
            rusqlite::params![format!("sha256:{}", "0".repeat(64)), a],
        )
        .unwrap();
    }
    let out = Command::new(BIN)
        .args(["key", "resign", "--data"])
        .arg(&data)
        .arg("--dir")
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not re-signed: notes@1.0.0"), "{err}");
}

#[tokio::test]
async fn without_keys_entries_are_unsigned_and_config_lists_none() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    s.client(Some(&tok))
        .publish(pack("plain", "1.0.0", "Plain", "x"))
        .await
        .unwrap();
    let cfg: serde_json::Value = reqwest::get(format!("{}/config.json", s.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(cfg.get("keys").is_none(), "{cfg}");
    let idx: serde_json::Value = reqwest::get(format!("{}/index/plain", s.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(idx["versions"][0].get("sig").is_none(), "{idx}");

    // Keys added later: `resign` signs what was published before.
    let keys = tmp.path().join("keys");
    let id = key_ok(&["generate"], &keys);
    let out = Command::new(BIN)
        .args(["key", "resign", "--data"])
        .arg(tmp.path())
        .arg("--dir")
        .arg(&keys)
        .output()
        .unwrap();
    assert!(out.status.success());
    let idx = index_until(&s.url, "plain", |i| i.versions[0].sig.is_some()).await;
    assert_eq!(idx.versions[0].sig.as_ref().unwrap().keyid, id);
}

#[test]
fn keys_need_a_config_json_to_publish_them_in() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    key_ok(&["generate"], &keys);
    let out = Command::new(BIN)
        .args(["serve", "--listen", "0.0.0.0:0", "--data"])
        .arg(tmp.path().join("data"))
        .arg("--keys")
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--public-url"), "{err}");
    // An empty key directory is refused with what to run.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(tmp.path().join("data"))
        .arg("--keys")
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("key generate"), "{err}");
}
