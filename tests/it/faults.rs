//! Faults and load: many `skillpm install` processes on one project and one
//! cache at once, and a disk that fills up mid-install.

use crate::common;
use crate::mock;

use common::seeded::noise;
use common::Fixture;
use mock::{good_package, MockServer};
use std::time::{Duration, Instant};

fn package_with(name: &str, version: &str, extra: &[u8]) -> Vec<u8> {
    mock::RawTar::new()
        .file("SKILL.md", mock::skill_md(name, version).as_bytes())
        .file("assets/blob.bin", extra)
        .gz()
}

const SKILLS: usize = 12;

fn names() -> Vec<String> {
    (0..SKILLS).map(|i| format!("skill-{i:02}")).collect()
}

fn server() -> MockServer {
    let pkgs = names()
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let t = package_with(&n, "1.0.0", &noise(i as u64 + 1, 20_000));
            (n, "1.0.0".to_string(), t)
        })
        .collect();
    mock::registry(pkgs, |_, _| None)
}

fn run_parallel(f: &Fixture, n: usize, args: &[&str]) -> (Vec<std::process::Output>, Duration) {
    let start = Instant::now();
    let children: Vec<_> = (0..n)
        .map(|_| {
            f.command(env!("CARGO_BIN_EXE_skillpm"))
                .args(args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let outs = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect();
    (outs, start.elapsed())
}

#[test]
fn eight_concurrent_installs_share_project_and_cache() {
    let server = server();
    let mut f = Fixture::new();
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f.ok(&["init"]);
    let mut manifest = std::fs::read_to_string(f.project.join("skills.toml")).expect("toml");
    for n in names() {
        manifest.push_str(&format!("{n} = \"^1\"\n"));
    }
    std::fs::write(f.project.join("skills.toml"), &manifest).expect("write");

    // Round 1: cold cache, no lock. Round 2: root wiped, lock present,
    // warm cache. Round 3: everything in place (no-op).
    let mut lock_after_first = None;
    for round in 1..=3 {
        if round == 2 {
            std::fs::remove_dir_all(f.project_root()).expect("wipe root");
        }
        let (outs, took) = run_parallel(&f, 8, &["--quiet", "install"]);
        for (i, o) in outs.iter().enumerate() {
            assert!(
                o.status.success(),
                "round {round} process {i}: {}",
                common::stderr(o)
            );
        }
        eprintln!("faults: round {round}: 8 concurrent installs of {SKILLS} skills took {took:?}");
        f.ok(&["verify"]);
        let lock = std::fs::read_to_string(f.project.join("skills.lock")).expect("lock");
        for n in names() {
            assert!(lock.contains(&format!("name = \"{n}\"")), "{lock}");
            assert!(f.project_root().join(&n).join("assets/blob.bin").is_file());
        }
        match &lock_after_first {
            None => lock_after_first = Some(lock),
            Some(first) => assert_eq!(first, &lock, "lock changed in round {round}"),
        }
        // No staging leftovers anywhere in the root or the cache's tmp.
        for e in std::fs::read_dir(f.project_root()).expect("root").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with(".skillpm-"), "leftover {name}");
        }
        common::assert_tmp_empty(&f);
    }
    // Each tarball was downloaded once per cold round at most, not once
    // per process: the cache lock makes the others wait and reuse it.
    for n in names() {
        let hits = server.hits(&format!("/api/v1/skills/{n}/1.0.0/download"));
        assert!(hits <= 8, "{n} downloaded {hits} times");
    }
}

/// Unmounts on drop, even when the test panics.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn full_disk_fails_cleanly_and_keeps_the_previous_state() {
    let mut f = Fixture::new();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&f.project)
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipped: cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)");
        return;
    }
    let _mount = Mount(f.project.clone());
    let server = mock::registry(
        vec![
            ("good".into(), "1.0.0".into(), good_package("good", "1.0.0")),
            (
                "big".into(),
                "1.0.0".into(),
                package_with("big", "1.0.0", &noise(7, 2 << 20)),
            ),
        ],
        |_, _| None,
    );
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f.ok(&["init"]);
    f.ok(&["add", "good@1"]);
    let snap = |f: &Fixture| common::tree::snapshot(&f.project, &|_| false);
    let before = snap(&f);
    let out = f.skillpm(&["--quiet", "add", "big@1"]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("No space left") || err.contains("space"),
        "{err}"
    );
    eprintln!("faults: full disk: {}", err.trim_end());
    assert_eq!(
        before,
        snap(&f),
        "the project changed after a failed install"
    );
    f.ok(&["verify"]);
    // Once space is back (the big skill removed from the wish list), all
    // is well; and a retry that fits succeeds.
    f.ok(&["install"]);
    f.ok(&["verify"]);
}
