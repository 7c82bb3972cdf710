//! SIGKILL a first `add --all` of a large git repository, in a project
//! with no skills.toml, at many moments: while it stages trees, and
//! throughout the window the install journal covers (from the journal
//! appearing, through the swaps, to the lock and the manifest being
//! renamed in). After each kill one `skillpm status` must settle the run:
//! the agent then sees no skill and there is no skills.toml or
//! skills.lock (the state before), or every skill, each the repository's
//! tree, with a skills.toml and a skills.lock that list exactly those.
//!
//! The same sweep runs for an `add` of one skill that needs every other
//! one of the repository (`skill.toml`, siblings by path): then the state
//! after is skills.toml naming that one skill and the lock and the agent
//! holding all of them, the dependencies included.
//!
//! The kill moments are offsets from an event of the run (the first
//! staged directory, the journal), spread over how long the same command
//! takes uninterrupted on this machine, measured first; the figures (how
//! many kills landed where, how each ended) are printed, not asserted.

use crate::common;
use common::{commit_all, stderr, Fixture};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const SKILLS: usize = 240;
/// Kills anchored on the first staged directory, spread over staging.
const WHILE_STAGING: u32 = 8;
/// Kills anchored on the journal, spread over the swaps and the renames.
const IN_THE_WINDOW: u32 = 16;
const JOURNAL: &str = ".skillpm-journal";

fn name(i: usize) -> String {
    format!("s{i:03}")
}

fn body(i: usize) -> String {
    format!(
        "---\nname: {}\ndescription: Skill number {i}\n---\nbody {i}\n",
        name(i)
    )
}

/// Skill names the agent sees in `root` (dot-entries are staging).
fn visible(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The names a skills.toml or a skills.lock lists.
fn listed(p: &Path, lock: bool) -> BTreeSet<String> {
    let Ok(text) = std::fs::read_to_string(p) else {
        return BTreeSet::new();
    };
    let doc: toml::Value = toml::from_str(&text).expect("toml");
    match lock {
        true => doc["skill"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| s["name"].as_str().expect("name").to_string())
                    .collect()
            })
            .unwrap_or_default(),
        false => doc
            .get("skills")
            .and_then(|s| s.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default(),
    }
}

struct Sweep {
    f: Fixture,
    url: String,
    /// `add` of `s000` alone, which needs every other skill, rather than
    /// `add --all`.
    deps: bool,
}

impl Sweep {
    fn spawn(&self) -> Child {
        self.f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .args(["add", "-q", &self.url])
            .args(match self.deps {
                true => ["--skill", "s000"].as_slice(),
                false => ["--all"].as_slice(),
            })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn skillpm")
    }

    fn root(&self) -> PathBuf {
        self.f.project_root()
    }

    /// Back to a project that has never had skillpm in it.
    fn reset(&self) {
        let _ = std::fs::remove_dir_all(self.f.project.join(".agents"));
        for e in std::fs::read_dir(&self.f.project)
            .expect("project")
            .flatten()
        {
            let _ = std::fs::remove_file(e.path());
        }
    }

    /// Waits until `ready` holds or the child ends; when it held, the
    /// moment it was first seen.
    fn wait_for(&self, child: &mut Child, ready: impl Fn() -> bool) -> Option<Instant> {
        loop {
            if ready() {
                return Some(Instant::now());
            }
            if child.try_wait().expect("wait").is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn staging_started(&self) -> bool {
        std::fs::read_dir(self.root()).is_ok_and(|mut rd| rd.next().is_some())
    }

    fn journal(&self) -> bool {
        self.f.project.join(JOURNAL).exists()
    }

    /// One uninterrupted run: from its start, when staging began, when
    /// the journal appeared and when it ended.
    fn measure(&self) -> (Duration, Duration, Duration) {
        let start = Instant::now();
        let mut child = self.spawn();
        let staged = self
            .wait_for(&mut child, || self.staging_started())
            .expect("the run staged nothing");
        let journal = self
            .wait_for(&mut child, || self.journal())
            .expect("the run wrote no journal");
        let status = child.wait().expect("wait");
        assert!(status.success(), "an uninterrupted add failed");
        let end = Instant::now();
        self.assert_settled(&self.f.ok(&["status"]), "the uninterrupted run");
        (staged - start, journal - start, end - start)
    }

    /// The project as the agent sees it after a kill and one `status`:
    /// the state before the add or the whole new one. Returns whether it
    /// is the new one.
    fn assert_settled(&self, status: &str, at: &str) -> bool {
        let root = self.root();
        let seen = visible(&root);
        let manifest = listed(&self.f.project.join("skills.toml"), false);
        let lock = listed(&self.f.project.join("skills.lock"), true);
        assert!(!self.f.project.join(JOURNAL).exists(), "{at}: journal left");
        let pending: Vec<String> = std::fs::read_dir(&self.f.project)
            .expect("project")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".skillpm"))
            .collect();
        if seen.is_empty() {
            assert!(
                !self.f.project.join("skills.toml").exists()
                    && !self.f.project.join("skills.lock").exists(),
                "{at}: no skill installed, yet a skills.toml or skills.lock"
            );
            assert!(!status.contains("Eligible ("), "{at}: status {status}");
            return false;
        }
        let all: BTreeSet<String> = (0..SKILLS).map(name).collect();
        assert_eq!(
            seen.len(),
            SKILLS,
            "{at}: {} of the skills seen",
            seen.len()
        );
        assert_eq!(seen, all, "{at}");
        let named = match self.deps {
            true => BTreeSet::from([name(0)]),
            false => all.clone(),
        };
        assert_eq!(manifest, named, "{at}: skills.toml lists other skills");
        assert_eq!(lock, all, "{at}: skills.lock lists other skills");
        if self.deps {
            let text = std::fs::read_to_string(self.f.project.join("skills.lock")).expect("lock");
            let doc: toml::Value = toml::from_str(&text).expect("toml");
            let edges = doc["skill"].as_array().expect("skills")[0]["dependencies"]
                .as_array()
                .map_or(0, Vec::len);
            assert_eq!(edges, SKILLS - 1, "{at}: the lock lost s000's edges");
        }
        for i in (0..SKILLS).step_by(37) {
            let md = std::fs::read_to_string(root.join(name(i)).join("SKILL.md"));
            assert_eq!(md.ok(), Some(body(i)), "{at}: {} differs", name(i));
        }
        assert!(
            status.contains(&format!("Eligible ({SKILLS})")),
            "{at}: status {status}"
        );
        assert!(
            pending.is_empty(),
            "{at}: left beside skills.toml: {pending:?}"
        );
        true
    }
}

#[test]
fn sigkill_during_a_first_add_all_leaves_nothing_or_everything_recorded() {
    sweep(false);
}

#[test]
fn sigkill_during_an_add_that_pulls_in_dependencies_leaves_nothing_or_the_whole_graph() {
    sweep(true);
}

fn sweep(deps: bool) {
    let started = Instant::now();
    let f = Fixture::new();
    f.link_bin("git");
    let repo = f.root().join("collection");
    for i in 0..SKILLS {
        f.write(&repo, &format!("skills/{}/SKILL.md", name(i)), body(i));
    }
    if deps {
        let needs: String = (1..SKILLS)
            .map(|i| format!("{0} = {{ path = \"../{0}\" }}\n", name(i)))
            .collect();
        f.write(
            &repo,
            &format!("skills/{}/skill.toml", name(0)),
            format!("[dependencies]\n{needs}"),
        );
    }
    commit_all(&repo);
    let sweep = Sweep {
        url: format!("git+file://{}", repo.display()),
        f,
        deps,
    };
    // The first run clones into the cache; the runs measured and killed
    // all start from that cache, as a second project's add would.
    sweep.measure();
    sweep.reset();
    let (staged, journal, end) = sweep.measure();
    sweep.reset();
    // Offsets from the anchor, up to a little past where the measured
    // run ended, so some kills land after it has finished.
    let points: Vec<(bool, Duration)> = (0..WHILE_STAGING)
        .map(|i| (false, (journal - staged) * i / WHILE_STAGING))
        .chain((0..IN_THE_WINDOW).map(|i| (true, (end - journal) * 5 * i / (4 * IN_THE_WINDOW))))
        .collect();
    let (mut old, mut new, mut finished, mut rolled_back, mut ended_first) = (0, 0, 0, 0, 0);
    for (on_journal, offset) in &points {
        let mut child = sweep.spawn();
        let anchor = match on_journal {
            true => sweep.wait_for(&mut child, || sweep.journal()),
            false => sweep.wait_for(&mut child, || sweep.staging_started()),
        };
        if let Some(at) = anchor {
            let wake = at + *offset;
            while Instant::now() < wake && child.try_wait().expect("wait").is_none() {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        if child.try_wait().expect("wait").is_some() {
            ended_first += 1;
        }
        let _ = child.kill();
        child.wait().expect("wait");
        let out = sweep.f.skillpm(&["status"]);
        assert!(out.status.success(), "status failed: {}", stderr(&out));
        let err = stderr(&out);
        finished += usize::from(err.contains("finished an interrupted `skillpm add`"));
        rolled_back += usize::from(err.contains("rolled back an interrupted `skillpm add`"));
        let at = format!(
            "kill {:?} after the {}",
            offset,
            if *on_journal {
                "journal"
            } else {
                "first staged tree"
            }
        );
        let status = String::from_utf8_lossy(&out.stdout).into_owned();
        match sweep.assert_settled(&status, &at) {
            true => new += 1,
            false => old += 1,
        }
        sweep.reset();
    }
    eprintln!(
        "add {} of {SKILLS} skills (measured: staging from {staged:?}, journal at {journal:?}, \
         end at {end:?}); {} kills: {old} left the state before, {new} the new one; \
         {finished} finished and {rolled_back} rolled back by status; {ended_first} runs ended \
         before their kill; {:?} in all",
        if deps { "with dependencies" } else { "--all" },
        points.len(),
        started.elapsed()
    );
    assert_eq!(old + new, points.len());
}

/// A journal is read back as untrusted input: one that names a directory
/// outside the project's install roots fails every command, naming the
/// journal, and nothing moves.
#[test]
fn a_journal_naming_a_directory_outside_the_roots_moves_nothing() {
    let f = Fixture::new();
    f.ok(&["init"]);
    let victim = f.root().join("victim");
    f.skill(&victim, "keep", "name: keep\ndescription: mine", "mine\n");
    let journal = r#"{"version":1,"command":"add","pending":[],"roots":[["../victim",".skillpm-parked-x"]],"changes":[[0,"keep","absent"]]}"#;
    f.write(&f.project, JOURNAL, journal);
    for args in [&["status"][..], &["install"], &["list"]] {
        let out = f.skillpm(args);
        assert!(!out.status.success(), "{args:?} followed the journal");
        let err = stderr(&out);
        assert!(
            err.contains(JOURNAL) && err.contains("not an install root of this project"),
            "{args:?}: {err}"
        );
    }
    assert!(victim.join("keep/SKILL.md").is_file());
    assert!(f.project.join(JOURNAL).is_file());
}
