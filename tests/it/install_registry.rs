//! End to end against a real `skillpm-registry` on 127.0.0.1: publish with
//! the CLI, then add / install / update / yank / tamper / frozen.

use crate::common;
use common::{stderr, stdout, Fixture, Registry};
use std::path::{Path, PathBuf};

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

/// Writes a publishable skill directory.
fn skill_src(f: &Fixture, name: &str, version: &str, body: &str) -> PathBuf {
    f.package_src(
        name,
        version,
        &format!("The {name} skill, version {version}"),
        body,
    )
}

struct World {
    f: Fixture,
    reg: Registry,
}

impl World {
    fn new() -> World {
        let mut f = Fixture::new();
        let reg = Registry::for_fixture(&mut f);
        World { f, reg }
    }

    fn publish(&self, name: &str, version: &str) {
        let dir = skill_src(&self.f, name, version, &format!("{name} body {version}"));
        self.f.ok(&["publish", dir.to_str().unwrap()]);
    }
}

#[test]
fn add_range_lock_reproduce_update_outdated() {
    let w = World::new();
    let f = &w.f;
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        w.publish("code-review", v);
    }
    w.publish("pdf", "0.1.0");
    f.ok(&["init"]);
    f.ok(&["add", "code-review@^1", "pdf"]);
    let installed = f.project_root().join("code-review");
    assert!(read(installed.join("SKILL.md")).contains("body 1.1.0"));
    let manifest = read(f.project.join("skills.toml"));
    assert!(manifest.contains("code-review = \"^1\""), "{manifest}");
    let lock = read(f.project.join("skills.lock"));
    assert!(
        lock.contains(&format!("source = \"registry+{}\"", w.reg.url)),
        "{lock}"
    );
    assert!(lock.contains("version = \"1.1.0\""));
    // The lock's checksum is the one the index lists.
    let info = f.ok(&["info", "code-review", "--json"]);
    let index: serde_json::Value = serde_json::from_str(&info).unwrap();
    let cksum = index["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vers"] == "1.1.0")
        .unwrap()["cksum"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(lock.contains(&format!("checksum = \"{cksum}\"")), "{lock}");

    // status shows the installed version.
    let s = f.status_json();
    assert_eq!(
        common::find(&s, "code-review", "eligible")["installed"],
        "1.1.0"
    );

    // Reproduce in a fresh directory.
    let fresh = f.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::copy(f.project.join("skills.toml"), fresh.join("skills.toml")).unwrap();
    std::fs::copy(f.project.join("skills.lock"), fresh.join("skills.lock")).unwrap();
    f.ok(&["-C", fresh.to_str().unwrap(), "install", "--locked"]);
    assert_eq!(read(fresh.join("skills.lock")), lock);
    assert_eq!(
        read(fresh.join(".agents/skills/code-review/SKILL.md")),
        read(installed.join("SKILL.md"))
    );

    // A newer 1.x appears: install keeps the lock, update moves within ^1.
    w.publish("code-review", "1.2.0");
    f.ok(&["install"]);
    assert_eq!(read(f.project.join("skills.lock")), lock);
    let out = f.ok(&["outdated", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "code-review")
        .unwrap();
    assert_eq!(
        (
            row["current"].as_str(),
            row["wanted"].as_str(),
            row["latest"].as_str()
        ),
        (Some("1.1.0"), Some("1.2.0"), Some("2.0.0"))
    );
    f.ok(&["update", "code-review"]);
    assert!(read(f.project.join("skills.lock")).contains("version = \"1.2.0\""));
    assert!(read(installed.join("SKILL.md")).contains("body 1.2.0"));
    let list = f.ok(&["list"]);
    assert!(list.contains("code-review 1.2.0"), "{list}");
    assert!(list.contains("[installed]"), "{list}");
    f.ok(&["verify"]);
}

#[test]
fn yanked_versions_are_never_newly_chosen_but_locked_ones_install() {
    let w = World::new();
    let f = &w.f;
    w.publish("lint", "1.0.0");
    w.publish("lint", "1.1.0");
    f.ok(&["init"]);
    f.ok(&["add", "lint@^1"]);
    let lock = read(f.project.join("skills.lock"));
    assert!(lock.contains("version = \"1.1.0\""));
    f.ok(&["yank", "lint@1.1.0"]);

    // `outdated` marks the locked version yanked and keeps its columns.
    let human = f.ok(&["outdated"]);
    let header = human.lines().next().expect("header");
    let row = human.lines().find(|l| l.starts_with("lint ")).expect("row");
    assert!(row.contains(" 1.1.0 (yanked) "), "{human}");
    let wanted = header.find("wanted").expect("wanted column");
    assert_eq!(row.get(wanted..wanted + 6), Some("1.0.0 "), "{human}");
    let latest = header.find("latest").expect("latest column");
    assert_eq!(row.get(latest..), Some("1.0.0"), "{human}");

    // A fresh project resolving anew skips the yanked version.
    let other = f.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    f.ok(&["-C", other.to_str().unwrap(), "init"]);
    f.ok(&["-C", other.to_str().unwrap(), "add", "lint@^1"]);
    assert!(read(other.join("skills.lock")).contains("version = \"1.0.0\""));

    // The locked yanked version still installs (cold cache), with a warning.
    let fresh = f.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::copy(f.project.join("skills.toml"), fresh.join("skills.toml")).unwrap();
    std::fs::copy(f.project.join("skills.lock"), fresh.join("skills.lock")).unwrap();
    std::fs::remove_dir_all(&f.cache).unwrap();
    let out = f.skillpm(&["-C", fresh.to_str().unwrap(), "install", "--locked"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("yanked"), "{}", stderr(&out));
    assert!(read(fresh.join(".agents/skills/lint/SKILL.md")).contains("body 1.1.0"));

    // Warm, from the cached tarball, nothing is asked, and the cache still
    // remembers the yank.
    let warm = f.root().join("warm");
    std::fs::create_dir_all(&warm).unwrap();
    std::fs::copy(f.project.join("skills.toml"), warm.join("skills.toml")).unwrap();
    std::fs::copy(f.project.join("skills.lock"), warm.join("skills.lock")).unwrap();
    let out = f.skillpm(&["-C", warm.to_str().unwrap(), "install", "--frozen"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lint@1.1.0 was yanked when last checked"),
        "{}",
        stderr(&out)
    );

    // `update` moves off it, to a lower version, and says why.
    let out = f.skillpm(&["update"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("lint 1.1.0 -> 1.0.0 (1.1.0 is yanked)"),
        "{said}"
    );

    // Un-yank makes it choosable again.
    f.ok(&["yank", "--undo", "lint@1.1.0"]);
    f.ok(&["-C", other.to_str().unwrap(), "update"]);
    assert!(read(other.join("skills.lock")).contains("version = \"1.1.0\""));
}

#[test]
fn tampered_tarball_is_fatal_and_changes_nothing() {
    let w = World::new();
    let f = &w.f;
    w.publish("safe", "1.0.0");
    f.ok(&["init"]);
    f.ok(&["add", "safe@1"]);
    let lock = read(f.project.join("skills.lock"));
    // Tamper with every blob in the server's data directory.
    let mut tampered = 0;
    let mut stack = vec![w.reg.data.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.components().any(|c| c.as_os_str() == "blobs") {
                let mut bytes = std::fs::read(&p).unwrap();
                let last = bytes.len() - 1;
                bytes[last] ^= 0xff;
                std::fs::write(&p, bytes).unwrap();
                tampered += 1;
            }
        }
    }
    assert!(tampered > 0, "no blob found to tamper with");
    let fresh = f.root().join("fresh");
    f.write(&fresh, "skills.toml", read(f.project.join("skills.toml")));
    f.write(&fresh, "skills.lock", &lock);
    f.write(
        &fresh,
        ".agents/skills/keep/SKILL.md",
        "---\ndescription: user skill\n---\n",
    );
    std::fs::remove_dir_all(&f.cache).unwrap();
    // The running server keeps small blobs it has served in memory (they
    // are content-addressed), so a registry serving the tampered bytes is
    // a fresh process over the same data.
    let served = Registry::start(&w.reg.data);
    let out = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .env("SKILLPM_REGISTRY", &served.url)
        .args(["-C", fresh.to_str().unwrap(), "install"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("checksum mismatch for safe@1.0.0"), "{err}");
    assert_eq!(err.matches("sha256:").count(), 2, "{err}");
    assert!(!fresh.join(".agents/skills/safe").exists());
    assert!(fresh.join(".agents/skills/keep/SKILL.md").is_file());
    assert_eq!(read(fresh.join("skills.lock")), lock);
}

#[test]
fn frozen_never_uses_the_network() {
    let mut w = World::new();
    w.publish("offline", "1.0.0");
    let f = &w.f;
    f.ok(&["init"]);
    f.ok(&["add", "offline@^1"]);
    w.reg.kill();
    let f = &w.f;
    // Warm cache: a fresh copy installs with the registry down.
    let fresh = f.root().join("fresh");
    f.write(&fresh, "skills.toml", read(f.project.join("skills.toml")));
    f.write(&fresh, "skills.lock", read(f.project.join("skills.lock")));
    f.ok(&["-C", fresh.to_str().unwrap(), "install", "--frozen"]);
    assert!(fresh.join(".agents/skills/offline/SKILL.md").is_file());
    // A dependency the lock lacks needs the network: refused.
    // Under `[skills]`: `add` put `[registries]` after it.
    let m = read(fresh.join("skills.toml")).replacen("[skills]\n", "[skills]\nother = \"^1\"\n", 1);
    assert!(m.contains("other = \"^1\""), "{m}");
    std::fs::write(fresh.join("skills.toml"), m).unwrap();
    let out = f.skillpm(&["-C", fresh.to_str().unwrap(), "install", "--frozen"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--frozen"), "{}", stderr(&out));
    // Cold cache with --frozen: refused, nothing written.
    std::fs::remove_dir_all(&f.cache).unwrap();
    let cold = f.root().join("cold");
    f.write(&cold, "skills.toml", read(f.project.join("skills.toml")));
    f.write(&cold, "skills.lock", read(f.project.join("skills.lock")));
    let out = f.skillpm(&["-C", cold.to_str().unwrap(), "install", "--frozen"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("--frozen"), "{}", stderr(&out));
    assert!(!cold.join(".agents/skills/offline").exists());
}

#[test]
fn pack_is_deterministic_and_publish_side_commands_work() {
    let w = World::new();
    let f = &w.f;
    let dir = skill_src(f, "packer", "0.2.0", "packed body");
    let a = f.root().join("a.tar.gz");
    let b = f.root().join("b.tar.gz");
    let out_a = f.ok(&["pack", dir.to_str().unwrap(), "-o", a.to_str().unwrap()]);
    let out_b = f.ok(&["pack", dir.to_str().unwrap(), "-o", b.to_str().unwrap()]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(out_a.contains("sha256:"));
    assert_eq!(
        out_a.split_whitespace().last(),
        out_b.split_whitespace().last()
    );

    f.ok(&["publish", dir.to_str().unwrap()]);
    // Republishing the same version is refused with the server's reason.
    let again = f.skillpm(&["publish", dir.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(stderr(&again).lines().count(), 1, "{}", stderr(&again));

    let found = f.ok(&["search", "packer"]);
    assert!(found.starts_with("packer 0.2.0"), "{found}");
    let owners = f.ok(&["owner", "list", "packer"]);
    assert_eq!(owners.trim(), "alice");
    let info = f.ok(&["info", "packer"]);
    assert!(info.contains("0.2.0"), "{info}");

    // A bad token is a clear one-line error.
    let mut bad = f.command(env!("CARGO_BIN_EXE_skillpm"));
    bad.env("SKILLPM_TOKEN", "spm_wrong")
        .args(["yank", "packer@0.2.0"]);
    let out = bad.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    // login stores the token with mode 0600 and publish uses it.
    let mut login = f.command(env!("CARGO_BIN_EXE_skillpm"));
    login
        .env_remove("SKILLPM_TOKEN")
        .args(["login", "--token", &w.reg.token]);
    assert!(login.output().unwrap().status.success());
    let cred = f.config.join("skillpm/credentials.toml");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&cred).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let dir2 = skill_src(f, "packer", "0.3.0", "newer");
    let mut publish = f.command(env!("CARGO_BIN_EXE_skillpm"));
    publish
        .env_remove("SKILLPM_TOKEN")
        .args(["publish", dir2.to_str().unwrap()]);
    let out = publish.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Behind a TLS front that offers HTTP/2 by ALPN (as nginx or a CDN in
/// front of a registry does), a cold locked install takes HTTP/2 and
/// multiplexes its config, yank query and downloads on one connection,
/// instead of one TLS handshake per concurrent download.
#[test]
fn cold_installs_share_one_http2_connection_behind_a_tls_front() {
    let mut f = Fixture::new();
    let front = skillpm_test_support::tls_front::TlsFront::start();
    let reg = skillpm_test_support::registry::Serve::new(common::registry_exe())
        .data(&f.root().join("registry-data"))
        .quiet()
        .args(["--public-url", &front.url()])
        .start();
    front.forward_to(&reg.url);
    f.extra_env.push(("SKILLPM_REGISTRY".into(), front.url()));
    f.extra_env
        .push(("SKILLPM_TOKEN".into(), reg.token("alice")));
    let ca = front.ca_file().to_str().expect("utf-8 path").to_string();
    f.extra_env.push(("SSL_CERT_FILE".into(), ca));
    let names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    for n in names {
        let dir = skill_src(&f, n, "1.0.0", &format!("{n} body"));
        f.ok(&["publish", dir.to_str().unwrap()]);
    }
    f.ok(&["init"]);
    let mut add = vec!["add"];
    add.extend(names);
    // Six index queries at once, before any connection exists: the first
    // goes alone, so the others find the HTTP/2 connection it opened
    // rather than each making its own.
    let connections = front.connections();
    f.ok(&add);
    assert_eq!(
        front.connections() - connections,
        1,
        "one connection for add"
    );
    std::fs::remove_dir_all(f.project_root()).unwrap();
    std::fs::remove_dir_all(&f.cache).unwrap();
    let (connections, requests) = (front.connections(), front.versions().len());
    f.ok(&["install", "--locked"]);
    for n in names {
        assert!(read(f.project_root().join(n).join("SKILL.md")).contains(&format!("{n} body")));
    }
    let versions = front.versions().split_off(requests);
    // config.json, the yank query and six downloads.
    assert!(versions.len() >= 8, "{versions:?}");
    assert!(versions.iter().all(|v| v == "HTTP/2.0"), "{versions:?}");
    assert_eq!(
        front.connections() - connections,
        1,
        "one connection for install"
    );
}

/// `publish --dry-run` runs the registry's own checks here and sends
/// nothing (no registry is even configured): a skill as real collections
/// write it (no version) is refused with where the version goes; with
/// `metadata.version` it lists every file with its size. `publish` checks
/// the same before it uploads, so the registry never sees the first;
/// `publish --version` publishes it unedited.
#[test]
fn publish_dry_run_runs_the_registrys_checks_and_sends_nothing() {
    let f = Fixture::new();
    let dir = f.root().join("src/pdf");
    f.write(
        &dir,
        "SKILL.md",
        "---\nname: pdf\ndescription: PDFs\n---\nbody\n",
    );
    f.write(&dir, "scripts/fill.py", "print('fill')\n");
    let out = f.skillpm(&["publish", "--dry-run", dir.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a version is required to publish"), "{err}");
    assert!(err.contains("under `metadata:`"), "{err}");

    f.write(
        &dir,
        "SKILL.md",
        "---\nname: pdf\ndescription: PDFs\nmetadata:\n  version: \"1.2.0\"\n---\nbody\n",
    );
    let out = f.skillpm(&["publish", "--dry-run", dir.to_str().unwrap()]);
    let (said, listed) = (stderr(&out), stdout(&out));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Would publish pdf@1.2.0: 2 files"), "{said}");
    assert!(said.contains("nothing was sent"), "{said}");
    assert!(
        listed.contains("SKILL.md") && listed.contains("scripts/fill.py"),
        "{listed}"
    );
    assert!(
        listed.contains(" 14 B"),
        "the size of scripts/fill.py: {listed}"
    );

    // A real publish refuses the unversioned skill before it uploads.
    let mut f = f;
    let reg = Registry::for_fixture(&mut f);
    let bare = f.root().join("src/bare");
    f.write(&bare, "SKILL.md", "---\nname: bare\ndescription: d\n---\n");
    let out = f.skillpm(&["publish", bare.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("under `metadata:`"),
        "{}",
        stderr(&out)
    );
    f.ok(&["publish", dir.to_str().unwrap()]);
    let found = f.ok(&["info", "pdf"]);
    assert!(found.contains("1.2.0"), "{found}");

    // `--version` publishes the unversioned skill as it is (the index
    // records the version) and it installs; a version that disagrees with
    // a declared one is refused.
    let clash = f.skillpm(&["publish", dir.to_str().unwrap(), "--version", "9.0.0"]);
    assert_eq!(clash.status.code(), Some(1), "{}", stderr(&clash));
    assert!(
        stderr(&clash).contains("says 1.2.0, but the publish asks for 9.0.0"),
        "{}",
        stderr(&clash)
    );
    let before = std::fs::read_to_string(bare.join("SKILL.md")).unwrap();
    f.ok(&["publish", bare.to_str().unwrap(), "--version", "0.3.0"]);
    assert_eq!(
        std::fs::read_to_string(bare.join("SKILL.md")).unwrap(),
        before
    );
    f.ok(&["init"]);
    f.ok(&["add", "bare"]);
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    assert!(
        lock.contains("name = \"bare\"\nversion = \"0.3.0\""),
        "{lock}"
    );
    drop(reg);
}

/// An unknown name gets the registry's nearest package, from its search.
#[test]
fn an_unknown_name_suggests_the_nearest_from_the_registrys_search() {
    let w = World::new();
    let f = &w.f;
    w.publish("code-review", "1.0.0");
    w.publish("pdf-tools", "1.0.0");
    f.ok(&["init"]);
    let out = f.skillpm(&["add", "code-reveiw"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no package `code-reveiw`"), "{err}");
    assert!(err.contains("did you mean `code-review`?"), "{err}");
    // Nothing close: no suggestion, still one line.
    let err = stderr(&f.skillpm(&["add", "zzzzzz"]));
    assert!(
        err.contains("no package `zzzzzz`") && !err.contains("did you mean"),
        "{err}"
    );
    assert!(!f.project.join("skills.lock").exists());
}
