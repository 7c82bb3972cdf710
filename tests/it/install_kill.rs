//! SIGKILL `skillpm install` and `skillpm update` at seeded random moments.
//!
//! The project holds registry skills (served by a real `skillpm-registry`)
//! and path skills. Each run moves it between two complete states, A (every
//! skill at 1.0.0) and B (every skill at 1.1.0), and kills the command
//! partway:
//!
//! - `install` runs change the manifest's pins (`=1.0.0` <-> `=1.1.0`) and
//!   the path skills' sources, in either direction;
//! - `update` runs start from A under `^1` (the lock pins 1.0.0) and
//!   re-resolve to B.
//!
//! Half the runs start from an empty install root and an empty cache, so
//! kills also land in index fetches and downloads. The moment of the kill
//! is a seeded fraction of how long the same command takes uninterrupted
//! on this machine (measured first), so the sequence of kill points is
//! reproducible: `SKILLPM_KILL_SEED=<n>` replays a given seed.
//!
//! After every kill: each skill is wholly its old or its new tree; the lock
//! is the old lock or the new one, and if it is the new one every skill is
//! new (the lock is written last). The next `install` repairs everything:
//! `verify` is clean, the disk matches the lock, nothing is left staged.

use crate::common;
use common::seeded::Lcg;
use common::{Fixture, Registry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

const REGISTRY_SKILLS: usize = 8;
const PATH_SKILLS: usize = 4;
const RUNS: u64 = 56;
const A: &str = "1.0.0";
const B: &str = "1.1.0";

type Tree = BTreeMap<String, Vec<u8>>;

/// Every file under `dir` (except the install marker) with its contents.
fn snapshot(dir: &Path) -> Tree {
    let mut out = BTreeMap::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, rel)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().expect("file type").is_dir() {
                stack.push((e.path(), child));
            } else if name != ".skillpm-install" {
                out.insert(child, std::fs::read(e.path()).expect("read"));
            }
        }
    }
    out
}

fn names() -> Vec<String> {
    (0..REGISTRY_SKILLS)
        .map(|i| format!("r{i:02}"))
        .chain((0..PATH_SKILLS).map(|i| format!("p{i:02}")))
        .collect()
}

/// Writes a skill directory at `version` under `dir`.
fn write_skill(f: &Fixture, dir: &Path, name: &str, version: &str) {
    f.write(
        dir,
        "SKILL.md",
        format!(
            "---\nname: {name}\ndescription: The {name} skill\nversion: \"{version}\"\n---\n{name} body {version}\n"
        ),
    );
    f.write(
        dir,
        "references/r.md",
        format!("{name} {version}\n").repeat(2000),
    );
    f.write(dir, "scripts/run.sh", format!("echo {name} {version}\n"));
}

/// A complete state: the lock and every installed tree.
#[derive(Clone, PartialEq)]
struct State {
    lock: String,
    trees: Vec<Tree>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Install,
    Update,
}

struct World {
    f: Fixture,
    _reg: Registry,
}

impl World {
    fn root(&self) -> PathBuf {
        self.f.project_root()
    }

    fn lock_path(&self) -> PathBuf {
        self.f.project.join("skills.lock")
    }

    /// `req` for every registry skill; path skills by path.
    fn manifest(&self, req: &str) {
        let mut m = String::from("[skills]\n");
        for i in 0..REGISTRY_SKILLS {
            m.push_str(&format!("r{i:02} = \"{req}\"\n"));
        }
        for i in 0..PATH_SKILLS {
            m.push_str(&format!("p{i:02} = {{ path = \"./vendor/p{i:02}\" }}\n"));
        }
        self.f.write(&self.f.project, "skills.toml", m);
    }

    fn path_sources(&self, version: &str) {
        for i in 0..PATH_SKILLS {
            let name = format!("p{i:02}");
            let dir = self.f.project.join("vendor").join(&name);
            write_skill(&self.f, &dir, &name, version);
        }
    }

    fn state(&self) -> State {
        State {
            lock: std::fs::read_to_string(self.lock_path()).expect("read skills.lock"),
            trees: names()
                .iter()
                .map(|n| snapshot(&self.root().join(n)))
                .collect(),
        }
    }

    /// Points the fixture at a fresh, empty cache (or back at its own).
    fn use_cache(&mut self, dir: Option<&Path>) {
        self.f.extra_env.retain(|(k, _)| k != "XDG_CACHE_HOME");
        if let Some(d) = dir {
            self.f
                .extra_env
                .push(("XDG_CACHE_HOME".into(), d.display().to_string()));
        }
    }

    /// Puts the project in state `from` and then edits its inputs so that
    /// `kind` moves it to `to`.
    fn prepare(&self, kind: Kind, from: &str, to: &str, cold: bool, expect: &State) {
        if cold {
            let _ = std::fs::remove_dir_all(self.root());
        }
        match kind {
            Kind::Install => {
                self.manifest(&format!("={from}"));
                self.path_sources(from);
            }
            Kind::Update => {
                assert_eq!(from, A);
                self.manifest("^1");
                self.path_sources(A);
                std::fs::write(self.lock_path(), &expect.lock).expect("write lock");
            }
        }
        self.f.ok(&["install", "-q"]);
        assert!(self.state() == *expect, "preparing state {from} failed");
        match kind {
            Kind::Install => self.manifest(&format!("={to}")),
            Kind::Update => assert_eq!(to, B),
        }
        self.path_sources(to);
    }

    fn spawn(&self, kind: Kind) -> Child {
        let cmd = match kind {
            Kind::Install => "install",
            Kind::Update => "update",
        };
        self.f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .args([cmd, "-q"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn skillpm")
    }
}

#[test]
fn sigkill_during_install_and_update_leaves_old_or_new_and_repairs() {
    let started = Instant::now();
    let seed: u64 = std::env::var("SKILLPM_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    for i in 0..REGISTRY_SKILLS {
        let name = format!("r{i:02}");
        for v in [A, B] {
            let dir = f.root().join("src").join(format!("{name}-{v}")).join(&name);
            write_skill(&f, &dir, &name, v);
            f.ok(&["publish", dir.to_str().expect("utf8 path")]);
        }
    }
    let mut w = World { f, _reg: reg };

    // The reference states, reached without interruption.
    w.manifest(&format!("={A}"));
    w.path_sources(A);
    w.f.ok(&["install", "-q"]);
    let state_a = w.state();
    w.manifest(&format!("={B}"));
    w.path_sources(B);
    w.f.ok(&["install", "-q"]);
    let state_b = w.state();
    assert!(state_a.lock != state_b.lock);
    // What `install` makes of an update killed before it wrote the lock:
    // the locked 1.0.0 registry skills, the path skills as their sources
    // are now (path skills are always re-read).
    w.manifest("^1");
    w.path_sources(A);
    std::fs::write(w.lock_path(), &state_a.lock).expect("write lock");
    w.f.ok(&["install", "-q"]);
    assert!(w.state() == state_a, "^1 with the A lock keeps A");
    w.path_sources(B);
    w.f.ok(&["install", "-q"]);
    let state_hybrid = w.state();

    let state_of = |v: &str| {
        if v == A {
            state_a.clone()
        } else {
            state_b.clone()
        }
    };
    let combos = [
        (Kind::Install, false),
        (Kind::Update, false),
        (Kind::Install, true),
        (Kind::Update, true),
    ];
    let base = w.f.root().to_path_buf();
    let cache_dir = |run: u64| base.join(format!("cache-run{run}"));

    // How long each kind of run takes uninterrupted here; kills land at a
    // seeded fraction (0 to 1.25) of that.
    let mut full = Vec::new();
    for (n, &(kind, cold)) in combos.iter().enumerate() {
        let run = 1000 + n as u64;
        let (from, to) = (A, B);
        w.use_cache(cold.then(|| cache_dir(run)).as_deref());
        w.prepare(kind, from, to, cold, &state_of(from));
        let t = Instant::now();
        let status = w.spawn(kind).wait().expect("wait");
        full.push(t.elapsed());
        assert!(status.success(), "{kind:?} (cold: {cold}) failed");
        assert!(
            w.state() == state_b,
            "{kind:?} (cold: {cold}) did not reach B"
        );
        w.use_cache(None);
        let _ = std::fs::remove_dir_all(cache_dir(run));
    }

    let mut rng = Lcg(seed);
    let (mut old_lock, mut new_lock, mut mixed) = (0, 0, 0);
    for run in 0..RUNS {
        let (kind, cold) = combos[(run % 4) as usize];
        let (from, to) = match kind {
            Kind::Update => (A, B),
            Kind::Install if (run / 4) % 2 == 0 => (A, B),
            Kind::Install => (B, A),
        };
        let (old, new) = (state_of(from), state_of(to));
        let what = format!("run {run} (seed {seed}): {kind:?} {from} -> {to}, cold cache: {cold}");
        w.use_cache(cold.then(|| cache_dir(run)).as_deref());
        w.prepare(kind, from, to, cold, &old);

        let window = full[(run % 4) as usize].as_micros() as u64 * 5 / 4;
        let delay = Duration::from_micros(rng.next() % window.max(1));
        let mut child = w.spawn(kind);
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();

        let after = w.state();
        let lock_is_old = after.lock == old.lock;
        let lock_is_new = after.lock == new.lock;
        assert!(
            lock_is_old || lock_is_new,
            "{what}: the lock is neither the old nor the new one:\n{}",
            after.lock
        );
        let mut new_count = 0;
        for (i, name) in names().iter().enumerate() {
            let is_old = after.trees[i] == old.trees[i];
            let is_new = after.trees[i] == new.trees[i];
            assert!(
                is_old || is_new,
                "{what}: {name} is neither its old nor its new tree: {:?}",
                after.trees[i].keys()
            );
            assert!(
                is_new || !lock_is_new,
                "{what}: the lock was written before {name} was installed"
            );
            new_count += usize::from(is_new);
        }
        old_lock += usize::from(lock_is_old);
        new_lock += usize::from(lock_is_new);
        mixed += usize::from(new_count > 0 && new_count < names().len());

        // The next install repairs everything: disk matches the lock. A
        // kill after the run's journal was written and every tree moved
        // leaves the new lock pending, and the next command finishes the
        // run (saying so) rather than starting over from the old lock.
        let repair = w.f.skillpm(&["install", "-q"]);
        let said = common::stderr(&repair);
        assert!(
            repair.status.success(),
            "{what}: the repairing install failed: {said}"
        );
        let finished = said.contains("finished an interrupted `skillpm update`");
        w.f.ok(&["verify", "-q"]);
        let repaired = w.state();
        let expected = match kind {
            Kind::Install => &new,
            Kind::Update if lock_is_new || finished => &new,
            Kind::Update => &state_hybrid,
        };
        assert!(
            repaired == *expected,
            "{what}: after the repairing install the project is not in the expected state; lock:\n{}",
            repaired.lock
        );
        let leftovers: Vec<_> = std::fs::read_dir(w.root())
            .expect("read install root")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{what}: left behind: {leftovers:?}");
        let pending: Vec<_> = std::fs::read_dir(&w.f.project)
            .expect("read project")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".skillpm-pending-"))
            .collect();
        assert!(
            pending.is_empty(),
            "{what}: left in the project: {pending:?}"
        );
        w.use_cache(None);
        let _ = std::fs::remove_dir_all(cache_dir(run));
    }
    eprintln!(
        "{RUNS} runs (seed {seed}; uninterrupted: {}): {old_lock} killed before the lock was \
         written ({mixed} of them with a mix of old and new skills), {new_lock} after; {:.1}s",
        full.iter()
            .zip(combos)
            .map(|(d, (k, c))| format!("{k:?}{} {}ms", if c { " cold" } else { "" }, d.as_millis()))
            .collect::<Vec<_>>()
            .join(", "),
        started.elapsed().as_secs_f64()
    );
    // The kills must really land inside the commands for this to mean anything.
    assert!(old_lock > 0, "no run was interrupted");
}
