//! The registry as a Claude Code marketplace: `/marketplace.json` lists
//! each package as a plugin whose source is the registry's npm view, and
//! the real `npm` client reads that view (`npm view`, `npm install`, and
//! `npm ci` refusing a tarball whose integrity does not match).

use crate::common;
use base64::Engine as _;
use common::{pack_with_files, skill_md, Server};
use sha2::{Digest, Sha512};
use std::path::Path;
use std::process::{Command, Output};

/// `npm` with its cache and config inside `home`, so nothing of the
/// machine's npm setup (a proxy, another registry, a token) takes part.
fn npm(home: &Path, args: &[&str]) -> Output {
    let rc = home.join("npmrc");
    std::fs::create_dir_all(home).expect("npm home");
    if !rc.exists() {
        std::fs::write(&rc, "").expect("npmrc");
    }
    Command::new("npm")
        .args(args)
        .arg("--cache")
        .arg(home.join("cache"))
        .arg("--userconfig")
        .arg(&rc)
        .args(["--no-audit", "--no-fund", "--ignore-scripts"])
        // A refused download is not retried (npm's default waits minutes).
        .args(["--fetch-retries", "0"])
        .env("npm_config_update_notifier", "false")
        .env_remove("npm_config_registry")
        .output()
        .expect("run npm")
}

/// Whether `npm` runs here; without it the npm half of the test is
/// skipped, unless SKILLPM_REQUIRE_NPM=1 (CI, which installs it).
fn have_npm() -> bool {
    let ok = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = "npm is not on PATH (apt-get install npm)";
        assert!(
            std::env::var("SKILLPM_REQUIRE_NPM").as_deref() != Ok("1"),
            "{why}, and SKILLPM_REQUIRE_NPM=1"
        );
        println!("skipping the npm client checks: {why}");
    }
    ok
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

async fn get(url: &str) -> (u16, Vec<u8>) {
    let r = reqwest::get(url).await.expect("get");
    (r.status().as_u16(), r.bytes().await.expect("body").to_vec())
}

#[tokio::test]
async fn marketplace_lists_packages_as_npm_plugins_that_npm_installs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let s = Server::start(data.path(), &[]);
    let c = s.client(Some(&s.token("alice")));
    let v1 = skill_md("hello", "1.0.0", "Say hello", "Greets people.");
    let v2 = skill_md("hello", "1.1.0", "Say hello twice", "Greets people twice.");
    let script: &[u8] = b"#!/bin/sh\necho hi\n";
    c.publish(pack_with_files("hello", &v1, &[("scripts/hi.sh", script)]))
        .await
        .expect("publish 1.0.0");
    c.publish(pack_with_files("hello", &v2, &[]))
        .await
        .expect("publish 1.1.0");
    c.publish(pack_with_files(
        "gone",
        &skill_md("gone", "1.0.0", "Yanked", ""),
        &[],
    ))
    .await
    .expect("publish gone");
    c.yank("gone", "1.0.0", false).await.expect("yank");

    // The marketplace: one plugin per listed package, newest version,
    // sourced from this registry's npm view.
    let (status, body) = get(&format!("{}/marketplace.json", s.url)).await;
    assert_eq!(status, 200);
    let m: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let port = s.url.rsplit(':').next().unwrap();
    assert_eq!(m["name"], format!("127-0-0-1-{port}"));
    assert_eq!(m["owner"]["name"], m["name"]);
    assert_eq!(
        m["plugins"],
        serde_json::json!([{
            "name": "hello",
            "description": "Say hello twice",
            "version": "1.1.0",
            "source": {
                "source": "npm",
                "package": "hello",
                "version": "1.1.0",
                "registry": format!("{}/npm", s.url),
            },
        }])
    );

    // The tarball is the same bytes every time, and its packument
    // integrity is their sha512.
    let tgz_url = format!("{}/npm/hello/-/hello-1.0.0.tgz", s.url);
    let (status, tgz) = get(&tgz_url).await;
    assert_eq!(status, 200);
    assert_eq!(get(&tgz_url).await.1, tgz);
    let integrity = format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(&tgz))
    );
    let (status, body) = get(&format!("{}/npm/hello", s.url)).await;
    assert_eq!(status, 200);
    let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["dist-tags"]["latest"], "1.1.0");
    assert_eq!(doc["versions"]["1.0.0"]["dist"]["integrity"], integrity);
    assert_eq!(doc["versions"]["1.0.0"]["dist"]["tarball"], tgz_url);
    // Yanked versions are not listed; a name or file that does not parse
    // is refused before any lookup.
    assert_eq!(get(&format!("{}/npm/gone", s.url)).await.0, 404);
    assert_eq!(get(&format!("{}/npm/Bad..Name", s.url)).await.0, 400);
    assert_eq!(
        get(&format!("{}/npm/hello/-/other-1.0.0.tgz", s.url))
            .await
            .0,
        400
    );
    assert_eq!(
        get(&format!("{}/npm/hello/-/hello-9.9.9.tgz", s.url))
            .await
            .0,
        404
    );

    if !have_npm() {
        return;
    }
    let home = tmp.path().join("npm");
    let registry = format!("{}/npm/", s.url);

    let out = npm(&home, &["view", "--json", "--registry", &registry, "hello"]);
    assert!(out.status.success(), "npm view: {}", text(&out));
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(view["version"], "1.1.0");
    assert_eq!(view["versions"], serde_json::json!(["1.0.0", "1.1.0"]));

    // What Claude Code runs for an npm plugin source: `npm install` of the
    // pinned version from the marketplace's registry.
    let prefix = home.join("install");
    let out = npm(
        &home,
        &[
            "install",
            "--registry",
            &registry,
            "--prefix",
            prefix.to_str().unwrap(),
            "hello@1.0.0",
        ],
    );
    assert!(out.status.success(), "npm install: {}", text(&out));
    let pkg = prefix.join("node_modules/hello");
    let plugin: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pkg.join(".claude-plugin/plugin.json")).unwrap())
            .unwrap();
    assert_eq!(plugin["name"], "hello");
    assert_eq!(plugin["version"], "1.0.0");
    assert_eq!(plugin["description"], "Say hello");
    assert_eq!(
        std::fs::read_to_string(pkg.join("skills/hello/SKILL.md")).unwrap(),
        v1
    );
    assert_eq!(
        std::fs::read(pkg.join("skills/hello/scripts/hi.sh")).unwrap(),
        script
    );
    // npm recorded the integrity the packument gave, which it checked.
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(prefix.join("package-lock.json")).unwrap()).unwrap();
    assert_eq!(
        lock["packages"]["node_modules/hello"]["integrity"],
        integrity
    );

    // A lock whose integrity does not match the served bytes: npm refuses.
    let bad = home.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let mut lock = lock;
    lock["packages"]["node_modules/hello"]["integrity"] = format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(b"other bytes"))
    )
    .into();
    std::fs::write(bad.join("package-lock.json"), lock.to_string()).unwrap();
    std::fs::copy(prefix.join("package.json"), bad.join("package.json")).unwrap();
    let out = npm(
        &home.join("fresh"),
        &[
            "ci",
            "--registry",
            &registry,
            "--prefix",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success(), "npm ci accepted a bad integrity");
    assert!(text(&out).contains("EINTEGRITY"), "{}", text(&out));
    assert!(!bad.join("node_modules/hello/skills").exists());
}

/// A blob changed under the registry (a disk, a bucket) is never served as
/// an npm package: it must still be the bytes published.
#[tokio::test]
async fn a_changed_blob_is_not_served_as_an_npm_package() {
    let data = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(data.path(), &[]);
    let c = s.client(Some(&s.token("alice")));
    let md = skill_md("hello", "1.0.0", "Say hello", "Greets people.");
    let published = c
        .publish(pack_with_files("hello", &md, &[]))
        .await
        .expect("publish");
    let other = skill_md("hello", "1.0.0", "Say hello", "Does something else.");
    std::fs::write(
        data.path().join("blobs").join(published.cksum.hex()),
        pack_with_files("hello", &other, &[]),
    )
    .unwrap();
    let (status, body) = get(&format!("{}/npm/hello/-/hello-1.0.0.tgz", s.url)).await;
    assert_eq!(status, 500);
    let err: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["errors"][0]["detail"], "internal server error");
    assert_eq!(get(&format!("{}/npm/hello", s.url)).await.0, 500);
}
