//! Load: 64 concurrent `skillpm install` processes, each installing the
//! same 100 skills from one real `skillpm-registry` into its own project
//! with its own empty cache (so every client really fetches every index
//! and downloads every tarball). All must succeed, verify clean and write
//! identical locks. The server runs with an open-files limit of 1024 (a
//! common default): before it capped its connections, downloads failed
//! there with "Too many open files". Per-process wall times are printed
//! (p50/p90/p99/max), never asserted; `benches/load.py` runs the same
//! scenario on release builds.

use crate::common;
use common::{stderr, Fixture, Registry};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const CLIENTS: usize = 64;
const SKILLS: usize = 100;

fn skill_name(i: usize) -> String {
    format!("load-{i:03}")
}

/// Publishes SKILLS small skills with the registry client the CLI uses.
fn publish_all(f: &Fixture, reg: &Registry) {
    let src = f.root().join("src");
    let tarballs: Vec<Vec<u8>> = (0..SKILLS)
        .map(|i| {
            let name = skill_name(i);
            let dir = src.join(&name);
            f.write(
                &dir,
                "SKILL.md",
                format!(
                    "---\nname: {name}\ndescription: Load-test skill number {i}.\nversion: \"1.0.{i}\"\n---\n{}",
                    format!("Step {i}: do the thing.\n").repeat(40)
                ),
            );
            skillpm::archive::pack_dir(&dir).expect("pack")
        })
        .collect();
    let client =
        skillpm::source::registry::client::RegistryClient::new(&reg.url, Some(reg.token.clone()))
            .expect("client");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(
        stream::iter(tarballs)
            .map(|t| client.publish(t))
            .buffer_unordered(8)
            .try_collect::<Vec<_>>(),
    )
    .expect("publish");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn sixty_four_clients_install_one_hundred_skills_each() {
    let mut f = Fixture::new();
    // The server runs with the open-files limit most services get by
    // default; 64 clients x 16 parallel downloads is as many connections.
    let reg = Registry::start_with_open_files_limit(&f.root().join("registry-data"), 1024);
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
    publish_all(&f, &reg);

    let mut manifest = String::from("[skills]\n");
    for i in 0..SKILLS {
        manifest.push_str(&format!("{} = \"^1\"\n", skill_name(i)));
    }
    let clients: Vec<(PathBuf, PathBuf)> = (0..CLIENTS)
        .map(|c| {
            let project = f.root().join(format!("clients/p{c:02}"));
            f.write(&project, "skills.toml", &manifest);
            (project, f.root().join(format!("clients/cache{c:02}")))
        })
        .collect();

    let f = Arc::new(f);
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let started = Instant::now();
    let threads: Vec<_> = clients
        .iter()
        .cloned()
        .map(|(project, cache)| {
            let (f, barrier) = (f.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut cmd = f.command(env!("CARGO_BIN_EXE_skillpm"));
                cmd.env("XDG_CACHE_HOME", &cache)
                    .current_dir(&project)
                    .args(["install", "-q"]);
                barrier.wait();
                let t = Instant::now();
                let out = cmd.output().expect("run skillpm install");
                (t.elapsed(), out)
            })
        })
        .collect();
    let mut times = Vec::new();
    let mut failures = Vec::new();
    for (c, t) in threads.into_iter().enumerate() {
        let (elapsed, out) = t.join().expect("client thread");
        times.push(elapsed);
        if !out.status.success() {
            failures.push(format!("client {c}: {}", stderr(&out)));
        }
    }
    let total = started.elapsed();
    assert!(
        failures.is_empty(),
        "{} of {CLIENTS} installs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Every project verifies clean against its own cache, holds all the
    // skills, and every lock is the same.
    let first_lock = read(&clients[0].0.join("skills.lock"));
    assert_eq!(first_lock.matches("[[skill]]").count(), SKILLS);
    let verify_threads: Vec<_> = clients
        .chunks(CLIENTS / 4)
        .map(|chunk| {
            let (f, chunk) = (f.clone(), chunk.to_vec());
            std::thread::spawn(move || {
                for (project, cache) in chunk {
                    let out = f
                        .command(env!("CARGO_BIN_EXE_skillpm"))
                        .env("XDG_CACHE_HOME", &cache)
                        .current_dir(&project)
                        .args(["verify", "-q"])
                        .output()
                        .expect("run skillpm verify");
                    assert!(
                        out.status.success(),
                        "{}: verify failed: {}{}",
                        project.display(),
                        stderr(&out),
                        String::from_utf8_lossy(&out.stdout)
                    );
                }
            })
        })
        .collect();
    for t in verify_threads {
        t.join().expect("verify thread");
    }
    for (project, _) in &clients {
        assert_eq!(
            read(&project.join("skills.lock")),
            first_lock,
            "{}: a different lock",
            project.display()
        );
        let installed = std::fs::read_dir(project.join(".agents/skills"))
            .expect("install root")
            .flatten()
            .filter(|e| e.path().join("SKILL.md").is_file())
            .count();
        assert_eq!(installed, SKILLS, "{}", project.display());
    }

    times.sort();
    eprintln!(
        "{CLIENTS} concurrent installs of {SKILLS} skills (debug build): per-process wall time \
         p50 {:.2}s, p90 {:.2}s, p99 {:.2}s, max {:.2}s; all done in {:.2}s",
        percentile(&times, 50.0).as_secs_f64(),
        percentile(&times, 90.0).as_secs_f64(),
        percentile(&times, 99.0).as_secs_f64(),
        times[times.len() - 1].as_secs_f64(),
        total.as_secs_f64()
    );
}
