//! SIGKILL `skillpm install` at varied moments: each skill must be wholly
//! the old or the new version, the lock must be the old or the new lock,
//! and the next `install` must repair everything.

mod common;
use common::Fixture;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const SKILLS: usize = 12;
const RUNS: u64 = 30;

/// Every file under `dir` (except the install marker) with its contents.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
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
            if e.file_type().unwrap().is_dir() {
                stack.push((e.path(), child));
            } else if name != ".skillpm-install" {
                out.insert(child, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

fn write_version(f: &Fixture, version: &str) {
    for i in 0..SKILLS {
        let name = format!("s{i:02}");
        f.write(
            &f.project,
            &format!("vendor/{name}/SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: d\nversion: \"{version}\"\n---\nbody {version}\n"
            ),
        );
        f.write(
            &f.project,
            &format!("vendor/{name}/references/r.md"),
            format!("{version}\n").repeat(2000),
        );
    }
}

/// A tiny deterministic generator so every run is reproducible.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn sigkill_during_install_leaves_old_or_new_and_repairs() {
    let f = Fixture::new();
    let mut manifest = String::from("[skills]\n");
    for i in 0..SKILLS {
        manifest.push_str(&format!("s{i:02} = {{ path = \"./vendor/s{i:02}\" }}\n"));
    }
    f.write(&f.project, "skills.toml", &manifest);
    let root = f.project_root();
    let mut rng = Lcg(0x5eed);
    let (mut interrupted, mut mixed) = (0, 0);
    for run in 0..RUNS {
        let (old_v, new_v) = if run % 2 == 0 {
            ("1.0.0", "2.0.0")
        } else {
            ("2.0.0", "1.0.0")
        };
        write_version(&f, old_v);
        f.ok(&["install", "-q"]);
        let old_lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
        let old_trees: Vec<_> = (0..SKILLS)
            .map(|i| snapshot(&root.join(format!("s{i:02}"))))
            .collect();
        write_version(&f, new_v);

        let mut child = f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .args(["install", "-q"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % 60_000));
        let _ = child.kill();
        let _ = child.wait();

        let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
        interrupted += usize::from(lock == old_lock);
        let mut new_count = 0;
        for (i, old_tree) in old_trees.iter().enumerate() {
            let dir = root.join(format!("s{i:02}"));
            let snap = snapshot(&dir);
            let is_old = snap == *old_tree;
            let is_new = snap
                .get("SKILL.md")
                .is_some_and(|b| String::from_utf8_lossy(b).contains(&format!("body {new_v}")))
                && snap
                    .get("references/r.md")
                    .is_some_and(|b| *b == format!("{new_v}\n").repeat(2000).into_bytes());
            assert!(
                is_old || is_new,
                "run {run}: s{i:02} is neither old nor new: {:?}",
                snap.keys()
            );
            new_count += usize::from(is_new && !is_old);
        }
        mixed += usize::from(new_count > 0 && new_count < SKILLS);
        assert!(
            lock == old_lock || lock.matches(&format!("version = \"{new_v}\"")).count() == SKILLS,
            "run {run}: lock is a mix"
        );
        // The next install repairs everything and the lock matches disk.
        f.ok(&["install", "-q"]);
        f.ok(&["verify", "-q"]);
        for i in 0..SKILLS {
            let snap = snapshot(&root.join(format!("s{i:02}")));
            assert!(
                String::from_utf8_lossy(&snap["SKILL.md"]).contains(&format!("body {new_v}")),
                "run {run}"
            );
        }
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "run {run}: staging left behind");
    }
    eprintln!("{RUNS} runs: {interrupted} killed before the lock was written, {mixed} with a mix of old and new skills");
    // The kills must really land inside installs for this test to mean anything.
    assert!(interrupted > 0, "no run was interrupted");
}
