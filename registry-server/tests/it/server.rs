//! End-to-end tests: the real `skillpm-registry` binary on 127.0.0.1:0 with
//! a temp data dir, driven over HTTP by raw reqwest (for status codes and
//! headers) and by `skillpm::registry::RegistryClient` (the code the CLI
//! uses).

use crate::common;
use common::{pack, pack_raw, Server, BIN};
use skillpm::checksum::Checksum;
use skillpm::source::registry::client::{IndexResponse, RegistryClient, RegistryError};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

async fn put_raw(s: &Server, token: Option<&str>, body: Vec<u8>) -> (u16, serde_json::Value) {
    let mut req = reqwest::Client::new()
        .put(format!("{}/api/v1/skills/new", s.url))
        .body(body);
    if let Some(t) = token {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    let json = resp.json().await.unwrap_or(serde_json::Value::Null);
    (status, json)
}

fn detail(v: &serde_json::Value) -> String {
    v["errors"][0]["detail"].as_str().unwrap_or("").to_string()
}

async fn get_status(url: &str) -> (u16, serde_json::Value) {
    let resp = reqwest::get(url).await.expect("get");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

async fn fresh_index(c: &RegistryClient, name: &str) -> (skillpm::protocol::IndexFile, String) {
    match c.index(name, None).await.expect("index") {
        IndexResponse::Fresh { index, etag, .. } => (index, etag.expect("etag")),
        IndexResponse::NotModified => panic!("304 without If-None-Match"),
    }
}

#[tokio::test]
async fn publish_index_download_roundtrip() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    let c = s.client(Some(&tok));

    let (status, cfg) = get_status(&format!("{}/config.json", s.url)).await;
    assert_eq!(status, 200);
    assert_eq!(cfg["api"], s.url.as_str());
    assert_eq!(cfg["dl"], format!("{}/api/v1/skills", s.url).as_str());
    assert_eq!(cfg["auth-required"], false);

    let tarball = pack("hello", "1.0.0", "Say hello", "Greets people.");
    let published = c.publish(tarball.clone()).await.expect("publish");
    assert_eq!(published.name.as_str(), "hello");
    assert_eq!(published.vers.to_string(), "1.0.0");
    assert_eq!(published.cksum, Checksum::of_bytes(&tarball));

    let (index, etag) = fresh_index(&c, "hello").await;
    assert_eq!(index.versions.len(), 1);
    let v = &index.versions[0];
    assert_eq!(v.cksum, published.cksum);
    assert!(!v.yanked);
    assert_eq!(v.description, "Say hello");
    assert!(v.published.as_deref().is_some_and(|p| p.ends_with('Z')));

    let bytes = c
        .download("hello", "1.0.0", 1 << 20)
        .await
        .expect("download");
    assert_eq!(Checksum::of_bytes(&bytes), v.cksum);
    // The cap stops the read.
    let err = c.download("hello", "1.0.0", 10).await.unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err}");

    // Unchanged index: 304; changed index: a new body and a new ETag.
    assert!(matches!(
        c.index("hello", Some(&etag)).await.unwrap(),
        IndexResponse::NotModified
    ));
    c.publish(pack("hello", "1.10.0", "Say hello", ""))
        .await
        .unwrap();
    c.publish(pack("hello", "1.2.0", "Say hello", ""))
        .await
        .unwrap();
    let (index, etag2) = match c.index("hello", Some(&etag)).await.unwrap() {
        IndexResponse::Fresh { index, etag, .. } => (index, etag.unwrap()),
        IndexResponse::NotModified => panic!("index changed but got 304"),
    };
    assert_ne!(etag, etag2);
    let vers: Vec<String> = index.versions.iter().map(|v| v.vers.to_string()).collect();
    assert_eq!(vers, ["1.0.0", "1.2.0", "1.10.0"], "semver order");

    // Headers as the protocol promises.
    let http = reqwest::Client::new();
    let r = http
        .get(format!("{}/index/hello", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["cache-control"],
        "public, max-age=0, must-revalidate"
    );
    let r = http
        .get(format!("{}/index/hello", s.url))
        .header("If-None-Match", etag2.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    let r = http
        .get(format!("{}/api/v1/skills/hello/1.0.0/download", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/gzip");
    assert_eq!(
        r.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
}

#[tokio::test]
async fn yank_and_unyank_show_in_index_and_keep_downloads() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let alice = s.client(Some(&s.token("alice")));
    let bob = s.client(Some(&s.token("bob")));
    alice
        .publish(pack("yanky", "0.1.0", "d", ""))
        .await
        .unwrap();

    alice.yank("yanky", "0.1.0", false).await.expect("yank");
    let (index, _) = fresh_index(&alice, "yanky").await;
    assert!(index.versions[0].yanked);
    let bytes = alice
        .download("yanky", "0.1.0", 1 << 20)
        .await
        .expect("yanked still downloads");
    assert_eq!(Checksum::of_bytes(&bytes), index.versions[0].cksum);

    let err = bob.yank("yanky", "0.1.0", true).await.unwrap_err();
    assert_eq!(err.status(), Some(403), "{err}");
    let err = alice.yank("yanky", "9.9.9", false).await.unwrap_err();
    assert_eq!(err.status(), Some(404), "{err}");

    alice.yank("yanky", "0.1.0", true).await.expect("unyank");
    let (index, _) = fresh_index(&alice, "yanky").await;
    assert!(!index.versions[0].yanked);
}

/// `POST /api/v1/yanked` names exactly the yanked versions asked about
/// (unknown names and versions are left out), follows a yank and an
/// un-yank at once, and refuses oversized or malformed queries.
#[tokio::test]
async fn yanked_query_answers_only_what_was_asked_and_follows_yanks() {
    use skillpm::protocol::{PackageVersion, MAX_YANKED_QUERY};
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let alice = s.client(Some(&s.token("alice")));
    for (n, v) in [("ya", "1.0.0"), ("ya", "1.1.0"), ("yb", "2.0.0")] {
        alice.publish(pack(n, v, "d", "")).await.unwrap();
    }
    let pv = |n: &str, v: &str| PackageVersion {
        name: n.parse().unwrap(),
        vers: v.parse().unwrap(),
    };
    let asked = || {
        vec![
            pv("ya", "1.0.0"),
            pv("ya", "1.1.0"),
            pv("yb", "2.0.0"),
            pv("nobody", "1.0.0"),
            pv("ya", "9.9.9"),
        ]
    };
    assert!(alice.yanked(asked()).await.unwrap().yanked.is_empty());
    alice.yank("ya", "1.1.0", false).await.unwrap();
    alice.yank("yb", "2.0.0", false).await.unwrap();
    let got = alice.yanked(asked()).await.unwrap().yanked;
    assert_eq!(got, vec![pv("ya", "1.1.0"), pv("yb", "2.0.0")]);
    // Not asked about, so not reported.
    let got = alice.yanked(vec![pv("ya", "1.0.0")]).await.unwrap().yanked;
    assert!(got.is_empty(), "{got:?}");
    alice.yank("yb", "2.0.0", true).await.unwrap();
    let got = alice.yanked(asked()).await.unwrap().yanked;
    assert_eq!(got, vec![pv("ya", "1.1.0")]);

    let too_many = vec![pv("ya", "1.0.0"); MAX_YANKED_QUERY + 1];
    let err = alice.yanked(too_many).await.unwrap_err();
    assert_eq!(err.status(), Some(400), "{err}");
    let http = reqwest::Client::new();
    let url = format!("{}/api/v1/yanked", s.url);
    let resp = http
        .post(&url)
        .body("{\"packages\": 7}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let resp = http
        .post(&url)
        .body(vec![b' '; 600 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
}

#[tokio::test]
async fn owners_add_list_remove_and_non_owner_publish() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let alice = s.client(Some(&s.token("alice")));
    let bob = s.client(Some(&s.token("bob")));
    let carol = s.client(Some(&s.token("carol")));
    alice
        .publish(pack("shared", "1.0.0", "d", ""))
        .await
        .unwrap();
    assert_eq!(alice.owners("shared").await.unwrap(), ["alice"]);

    let err = bob
        .publish(pack("shared", "1.1.0", "d", ""))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403), "{err}");
    assert!(err.to_string().contains("not an owner"), "{err}");
    let err = carol
        .add_owners("shared", &["carol".into()])
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403));

    alice.add_owners("shared", &["bob".into()]).await.unwrap();
    assert_eq!(alice.owners("shared").await.unwrap(), ["alice", "bob"]);
    bob.publish(pack("shared", "1.1.0", "d", ""))
        .await
        .expect("bob is an owner now");

    let err = alice
        .add_owners("shared", &["nobody".into()])
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));

    bob.remove_owners("shared", &["alice".into()])
        .await
        .unwrap();
    assert_eq!(bob.owners("shared").await.unwrap(), ["bob"]);
    let err = bob
        .remove_owners("shared", &["bob".into()])
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400), "{err}");
    assert_eq!(bob.owners("shared").await.unwrap(), ["bob"]);
    let err = alice
        .publish(pack("shared", "2.0.0", "d", ""))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403));

    let err = alice.owners("missing").await.unwrap_err();
    assert!(err.is_not_found());
}

#[tokio::test]
async fn search_ranks_name_then_description_then_body() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let c = s.client(Some(&s.token("alice")));
    for (name, desc, body) in [
        (
            "writer",
            "Writes reports",
            "Can also export to PDF when asked.",
        ),
        ("docs", "Convert PDF files to text", ""),
        ("pdf-tools", "Assorted helpers", ""),
        ("pdf", "Read documents", ""),
        ("unrelated", "Nothing to see", "nothing"),
    ] {
        c.publish(pack(name, "1.0.0", desc, body)).await.unwrap();
    }
    let r = c.search("pdf", 10).await.unwrap();
    let names: Vec<&str> = r.skills.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["pdf", "pdf-tools", "docs", "writer"]);
    assert_eq!(r.meta.total, 4);
    assert_eq!(r.skills[0].max_version.to_string(), "1.0.0");

    let r = c.search("PDF", 2).await.unwrap();
    assert_eq!(r.skills.len(), 2);
    assert_eq!(r.meta.total, 4);

    // Newest non-yanked version decides; yanked-only packages vanish.
    c.publish(pack("pdf", "1.1.0", "Read documents v2", ""))
        .await
        .unwrap();
    let r = c.search("pdf", 10).await.unwrap();
    assert_eq!(r.skills[0].max_version.to_string(), "1.1.0");
    c.yank("writer", "1.0.0", false).await.unwrap();
    let r = c.search("pdf", 10).await.unwrap();
    assert!(r.skills.iter().all(|h| h.name.as_str() != "writer"));

    let (status, _) = get_status(&format!("{}/api/v1/search?q=x&per_page=0", s.url)).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn every_error_status() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    let good = pack("errs", "1.0.0", "d", "");

    // 401: missing, bad, revoked token.
    let (st, body) = put_raw(&s, None, good.clone()).await;
    assert_eq!(st, 401, "{body}");
    let (st, _) = put_raw(&s, Some("spm_nope"), good.clone()).await;
    assert_eq!(st, 401);
    let doomed = s.token("alice");
    let out = Command::new(BIN)
        .args(["token", "revoke", "--data"])
        .arg(&s.data)
        .arg(&doomed)
        .output()
        .unwrap();
    assert!(out.status.success());
    let (st, body) = put_raw(&s, Some(&doomed), good.clone()).await;
    assert_eq!(st, 401, "{body}");

    // 400: garbage, bad SKILL.md (with the line), missing version, no SKILL.md.
    let (st, body) = put_raw(&s, Some(&tok), b"definitely not gzip".to_vec()).await;
    assert_eq!(st, 400, "{body}");
    let bad_name = pack_raw(
        "x",
        "---\nname: Bad_Name\ndescription: d\nversion: 1.0.0\n---\n",
    );
    let (st, body) = put_raw(&s, Some(&tok), bad_name).await;
    assert_eq!(st, 400);
    assert!(detail(&body).starts_with("SKILL.md line 2:"), "{body}");
    let broken_yaml = pack_raw("x", "---\nname: x\ndescription: [unclosed\n---\n");
    let (st, body) = put_raw(&s, Some(&tok), broken_yaml).await;
    assert_eq!(st, 400);
    assert!(detail(&body).contains("SKILL.md"), "{body}");
    let no_version = pack_raw("nover", "---\nname: nover\ndescription: d\n---\n");
    let (st, body) = put_raw(&s, Some(&tok), no_version).await;
    assert_eq!(st, 400);
    assert!(detail(&body).contains("version"), "{body}");
    let bad_version = pack_raw(
        "badver",
        "---\nname: badver\ndescription: d\nversion: one\n---\n",
    );
    let (st, body) = put_raw(&s, Some(&tok), bad_version).await;
    assert_eq!(st, 400);
    assert!(detail(&body).contains("line 4"), "{body}");
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("README.md"), "hi").unwrap();
    let no_skill = skillpm::archive::pack_dir(other.path()).unwrap();
    let (st, body) = put_raw(&s, Some(&tok), no_skill).await;
    assert_eq!(st, 400);
    assert!(detail(&body).contains("no SKILL.md"), "{body}");

    // 200 then 409 on identical bytes.
    let (st, body) = put_raw(&s, Some(&tok), good.clone()).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = put_raw(&s, Some(&tok), good.clone()).await;
    assert_eq!(st, 409, "{body}");
    // Build metadata does not make a new version.
    let (st, _) = put_raw(&s, Some(&tok), pack("errs", "1.0.0+b", "d", "")).await;
    assert_eq!(st, 409);

    // 404s and 400s on reads.
    for (url, want) in [
        ("/index/missing", 404),
        ("/index/Bad..Name", 400),
        ("/api/v1/skills/errs/9.9.9/download", 404),
        ("/api/v1/skills/missing/1.0.0/download", 404),
        ("/api/v1/skills/errs/not-a-version/download", 400),
        ("/api/v1/nothing-here", 404),
    ] {
        let (st, body) = get_status(&format!("{}{url}", s.url)).await;
        assert_eq!(st, want, "{url}: {body}");
        assert!(!detail(&body).is_empty(), "{url}: {body}");
    }

    // The client's error names the host and the detail, never the token.
    let c = s.client(Some(&tok));
    let err = c.publish(good).await.unwrap_err().to_string();
    let host = s.url.trim_start_matches("http://");
    assert!(
        err.contains(host) && err.contains("already exists"),
        "{err}"
    );
    assert!(!err.contains(&tok));
}

#[tokio::test]
async fn size_limits_give_413() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(
        tmp.path(),
        &[
            "--max-upload",
            "2048",
            "--max-unpacked",
            "4096",
            "--max-entries",
            "5",
        ],
    );
    let tok = s.token("alice");
    // Incompressible bytes larger than the upload cap.
    let mut noise = Vec::with_capacity(64 * 1024);
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..64 * 1024 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.push(x as u8);
    }
    let (st, body) = put_raw(&s, Some(&tok), noise).await;
    assert_eq!(st, 413, "{body}");
    assert!(detail(&body).contains("2048"), "{body}");

    // Small when compressed, too big when unpacked.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("big");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("SKILL.md"),
        "---\nname: big\ndescription: d\nversion: 1.0.0\n---\n",
    )
    .unwrap();
    std::fs::write(d.join("zeros.txt"), vec![b'0'; 100_000]).unwrap();
    let (st, body) = put_raw(&s, Some(&tok), skillpm::archive::pack_dir(&d).unwrap()).await;
    assert_eq!(st, 413, "{body}");
    assert!(detail(&body).contains("unpacks to more"), "{body}");

    // Too many entries.
    std::fs::remove_file(d.join("zeros.txt")).unwrap();
    for i in 0..10 {
        std::fs::write(d.join(format!("f{i}.txt")), "x").unwrap();
    }
    let (st, body) = put_raw(&s, Some(&tok), skillpm::archive::pack_dir(&d).unwrap()).await;
    assert_eq!(st, 413, "{body}");
    assert!(detail(&body).contains("entries"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_publishes_of_one_version_have_one_winner() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    let tarball = pack("race", "1.0.0", "d", "");
    let http = reqwest::Client::new();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let req = http
            .put(format!("{}/api/v1/skills/new", s.url))
            .header("Authorization", format!("Bearer {tok}"))
            .body(tarball.clone());
        tasks.push(tokio::spawn(async move {
            req.send().await.map(|r| r.status().as_u16())
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap().unwrap());
    }
    codes.sort();
    assert_eq!(codes.iter().filter(|&&c| c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|&&c| c == 409).count(), 15, "{codes:?}");
    let (index, _) = fresh_index(&s.client(None), "race").await;
    assert_eq!(index.versions.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_publishes_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    let acked = Arc::new(Mutex::new(Vec::<(String, Checksum)>::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let publisher = {
        let (acked, count, url, tok) = (acked.clone(), count.clone(), s.url.clone(), tok.clone());
        tokio::spawn(async move {
            let c = RegistryClient::new(&url, Some(tok)).unwrap();
            for i in 0..400u32 {
                let vers = format!("0.{i}.0");
                let tarball = pack("crashy", &vers, "d", "body");
                match c.publish(tarball).await {
                    Ok(r) => {
                        acked.lock().unwrap().push((vers, r.cksum));
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(_) => break,
                }
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while count.load(Ordering::SeqCst) < 8 {
        assert!(Instant::now() < deadline, "publishes too slow");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    s.child.kill().unwrap(); // SIGKILL
    s.child.wait().unwrap();
    publisher.await.unwrap();

    let s2 = Server::start(tmp.path(), &[]);
    s2.wait_healthy().await;
    let c = s2.client(None);
    let (index, _) = fresh_index(&c, "crashy").await;
    for v in &index.versions {
        let bytes = c
            .download("crashy", &v.vers.to_string(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(Checksum::of_bytes(&bytes), v.cksum, "{}", v.vers);
    }
    for (vers, sum) in acked.lock().unwrap().iter() {
        let found = index.versions.iter().find(|v| v.vers.to_string() == *vers);
        assert_eq!(
            found.map(|v| v.cksum),
            Some(*sum),
            "acknowledged {vers} lost"
        );
    }
    assert!(index.versions.len() >= 8);
    // The restarted server still accepts publishes on the same data.
    let c = s2.client(Some(&tok));
    c.publish(pack("crashy", "9.0.0", "d", "")).await.unwrap();
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start(tmp.path(), &[]);
    s.wait_healthy().await;
    let st = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(code) = s.child.try_wait().unwrap() {
            assert!(code.success(), "{code:?}");
            break;
        }
        assert!(Instant::now() < deadline, "did not exit on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn lowercase_skill_md_and_requires_reach_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let c = s.client(Some(&s.token("alice")));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("lower");
    std::fs::create_dir_all(d.join("scripts")).unwrap();
    std::fs::write(
        d.join("skill.md"),
        "---\nname: lower\ndescription: d\nversion: 2.0.0-beta.1\nrequires:\n  bins: [docker]\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(d.join("scripts/run.sh"), "#!/bin/sh\n").unwrap();
    let r = c
        .publish(skillpm::archive::pack_dir(&d).unwrap())
        .await
        .unwrap();
    assert_eq!(r.vers.to_string(), "2.0.0-beta.1");
    let (index, _) = fresh_index(&c, "lower").await;
    assert_eq!(
        index.versions[0].requires["bins"],
        serde_json::json!(["docker"])
    );
    assert!(index.versions[0].deps.is_empty());
}

/// Packs `name@version` with `skill.toml` saying `deps` (its
/// `[dependencies]` table).
fn pack_depending(name: &str, version: &str, deps: &str) -> Vec<u8> {
    let toml = format!("[dependencies]\n{deps}\n");
    common::pack_with_files(
        name,
        &common::skill_md(name, version, "d", "body"),
        &[("skill.toml", toml.as_bytes())],
    )
}

/// `skill.toml`'s registry dependencies reach the index; one the
/// registry cannot satisfy, or one from outside it, is refused before
/// anything is stored.
#[tokio::test]
async fn dependencies_reach_the_index_or_the_publish_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start(tmp.path(), &[]);
    let tok = s.token("alice");
    let c = s.client(Some(&tok));
    for v in ["1.0.0", "1.5.0", "1.6.0"] {
        c.publish(pack("style-guide", v, "d", "b")).await.unwrap();
    }
    c.yank("style-guide", "1.6.0", false).await.unwrap();

    c.publish(pack_depending(
        "review",
        "1.0.0",
        "style-guide = \"^1.2\"\nother = { version = \"*\", registry = \"default\" }",
    ))
    .await
    .expect_err("`other` is not in this registry");
    c.publish(pack_depending("review", "1.0.0", "style-guide = \"^1.2\""))
        .await
        .expect("publish with a dependency");
    let (index, _) = fresh_index(&c, "review").await;
    let deps = &index.versions[0].deps;
    assert_eq!(deps.len(), 1);
    assert_eq!(deps[0].name.as_str(), "style-guide");
    assert_eq!(deps[0].req.to_string(), "^1.2");
    let (_, raw) = get_status(&format!("{}/index/review", s.url)).await;
    assert_eq!(
        raw["versions"][0]["deps"],
        serde_json::json!([{ "name": "style-guide", "req": "^1.2" }])
    );

    // `lint` declaring `deps` is refused with 400: what it says.
    let refused = |deps: &'static str| {
        let (s, tok) = (&s, &tok);
        async move {
            let (status, body) = put_raw(s, Some(tok), pack_depending("lint", "1.0.0", deps)).await;
            assert_eq!(status, 400, "{body}");
            detail(&body)
        }
    };
    // Only the yanked 1.6.0 would match: refused, naming what there is.
    assert_eq!(
        refused("style-guide = \">=1.6\"").await,
        "skill.toml: dependency `style-guide` >=1.6: no published version matches \
         (available: 1.0.0, 1.5.0)"
    );
    let said = refused("ghost = \"1\"").await;
    assert!(said.contains("no package named `ghost`"), "{said}");

    // Only registry packages: a git dependency is refused with its line.
    let said =
        refused("style-guide = \"1\"\nhelper = { git = \"https://example.com/h.git\" }").await;
    assert!(
        said.starts_with("skill.toml line 3: dependency `helper` is a git dependency"),
        "{said}"
    );
    assert!(said.contains("only on registry packages"), "{said}");

    // Nothing of the refused publishes was stored.
    let (status, _) = get_status(&format!("{}/index/lint", s.url)).await;
    assert_eq!(status, 404);
    let blobs = std::fs::read_dir(tmp.path().join("blobs")).unwrap().count();
    assert_eq!(blobs, 4, "three style-guide versions and review");
}
