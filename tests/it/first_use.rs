//! What a new user hit, each end to end against a real
//! `skillpm-registry` on 127.0.0.1.

use crate::common;
use common::{stderr, Fixture, Registry};
use std::path::{Path, PathBuf};

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
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

    fn publish(&self, name: &str, version: &str) -> PathBuf {
        let dir = self.f.package_src(name, version, "d", "body");
        self.f.ok(&["publish", dir.to_str().unwrap()]);
        dir
    }
}

#[test]
fn a_missing_project_directory_fails() {
    let f = Fixture::new();
    let out = f.skillpm(&["-C", "/nonexistent/project", "status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no such directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn add_starts_a_manifest_records_caret_and_leaves_nothing_when_it_fails() {
    let w = World::new();
    let f = &w.f;
    w.publish("code-review", "1.2.0");
    // No skills.toml yet: a failed add writes none.
    let out = f.skillpm(&["add", "no-such-skill"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!f.project.join("skills.toml").exists());
    assert!(!f.project.join("skills.lock").exists());
    // A successful one starts it, recording `^<resolved version>`.
    f.ok(&["add", "code-review"]);
    let manifest = read(f.project.join("skills.toml"));
    assert!(manifest.contains("code-review = \"^1.2.0\""), "{manifest}");
}

#[test]
fn update_prints_old_and_new_and_outdated_marks_yanked() {
    let w = World::new();
    let f = &w.f;
    w.publish("lint", "1.0.0");
    f.ok(&["init"]);
    f.ok(&["add", "lint@^1"]);
    f.ok(&["yank", "lint@1.0.0"]);
    let out = f.ok(&["outdated"]);
    assert!(out.contains("1.0.0 (yanked)"), "{out}");
    w.publish("lint", "1.1.0");
    let out = f.skillpm(&["update"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Updated lint 1.0.0 -> 1.1.0"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn locked_says_not_in_the_lock_before_the_network() {
    let mut w = World::new();
    w.publish("lint", "1.0.0");
    w.f.ok(&["init"]);
    w.f.ok(&["add", "lint@^1"]);
    w.reg.kill();
    // Under `[skills]`: `add` put `[registries]` after it.
    let m = read(w.f.project.join("skills.toml")).replacen(
        "[skills]\n",
        "[skills]\nother = \"^1\"\n",
        1,
    );
    assert!(m.contains("other = \"^1\""), "{m}");
    std::fs::write(w.f.project.join("skills.toml"), m).unwrap();
    for flag in ["--locked", "--frozen"] {
        let out = w.f.skillpm(&["install", flag]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("other is in skills.toml but not in skills.lock"),
            "{err}"
        );
        assert!(err.contains(flag), "{err}");
        assert!(!err.contains("cannot reach"), "went to the network: {err}");
    }
}

#[test]
fn from_cache_counts_only_what_was_cached_before_the_run() {
    let f = Fixture::new();
    f.ok(&["init"]);
    f.skill(
        &f.project.join("vendor"),
        "local",
        "name: local\ndescription: d",
        "",
    );
    let out = f.skillpm(&["add", "./vendor/local"]);
    assert!(
        stderr(&out).contains("Installed 1 skill (0 from cache)"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(f.project_root().join("local")).unwrap();
    let out = f.skillpm(&["install"]);
    assert!(
        stderr(&out).contains("Installed 1 skill (1 from cache)"),
        "{}",
        stderr(&out)
    );
}
