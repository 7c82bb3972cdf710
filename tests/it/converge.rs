//! Targets that stay inside the project, one
//! `install` converging disk to the lock after any interruption or edit,
//! `verify` re-hashing against the lock, relative paths kept relative,
//! no process-lock clutter, and capped reads of hostile local files.
//! Path dependencies keep every test offline and real.

use crate::common;
use common::{stderr, stdout, Fixture};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

/// A project with `skills.toml` and two path skills under `vendor/`.
fn project() -> Fixture {
    let f = Fixture::new();
    f.ok(&["init"]);
    for n in ["alpha", "beta"] {
        f.skill(
            &f.project.join("vendor"),
            n,
            &format!("name: {n}\ndescription: {n} skill\nversion: \"1.0.0\""),
            "body",
        );
        f.write(
            &f.project.join("vendor"),
            &format!("{n}/scripts/run.sh"),
            "#!/bin/sh\n",
        );
        let run = f.project.join("vendor").join(n).join("scripts/run.sh");
        std::fs::set_permissions(run, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    f
}

fn installed(f: &Fixture, name: &str) -> PathBuf {
    f.project_root().join(name)
}

/// The names in `dir` that start with one of `prefixes`, sorted.
fn names_starting(dir: &Path, prefixes: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
        .collect();
    names.sort();
    names
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn install_targets_must_stay_inside_the_project() {
    let outside = tempfile::tempdir().unwrap();
    for target in [
        outside.path().display().to_string(),
        "../../escape".to_string(),
        "skills/../../x".to_string(),
        ".".to_string(),
    ] {
        let f = project();
        f.write(
            &f.project,
            "skills.toml",
            format!("[skills]\n[install]\ntargets = [{target:?}]\n"),
        );
        let out = f.skillpm(&["add", "./vendor/alpha"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{target}: {err}");
        assert!(err.contains("install target"), "{err}");
        assert!(!f.root().join("escape").exists());
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn never_writes_through_a_committed_symlink() {
    let elsewhere = tempfile::tempdir().unwrap();
    let f = project();
    // `.agents -> elsewhere`, as a cloned repository could carry it.
    symlink(elsewhere.path(), f.project.join(".agents")).unwrap();
    let out = f.skillpm(&["add", "./vendor/alpha"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("symlink"), "{err}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// A target inside `.git`, in any case (on a
/// case-insensitive file system `.GIT` is the repository), is refused: a
/// skill named `hooks` would otherwise become `.git/hooks` and its
/// `pre-commit` would run on the next commit.
#[test]
fn install_targets_inside_git_are_refused_in_any_case() {
    for target in ["./.git", "./.git/x", "./.GIT", "sub/.Git/hooks"] {
        let f = project();
        std::fs::create_dir_all(f.project.join(".git")).unwrap();
        f.write(
            &f.project,
            "skills.toml",
            format!("[skills]\n[install]\ntargets = [{target:?}]\n"),
        );
        let out = f.skillpm(&["add", "./vendor/alpha"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{target}: {err}");
        assert!(
            err.contains("install target") && err.contains("inside a git repository"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            std::fs::read_dir(f.project.join(".git")).unwrap().count(),
            0
        );
    }
}

#[test]
fn process_lock_does_not_clutter_the_project() {
    let f = project();
    f.ok(&["add", "./vendor/alpha"]);
    let names: Vec<String> = std::fs::read_dir(&f.project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".skillpm")), "{names:?}");
    // A committed dangling symlink where the old lock file lived creates
    // nothing anywhere.
    let target = f.root().join("planted");
    symlink(&target, f.project.join(".skillpm.lock")).unwrap();
    f.ok(&["install"]);
    assert!(!target.exists());
}

#[test]
fn relative_paths_stay_relative() {
    let f = project();
    let outside = f.root().join("shared/gamma");
    f.skill(
        &f.root().join("shared"),
        "gamma",
        "name: gamma\ndescription: g\nversion: \"1.0.0\"",
        "",
    );
    assert!(outside.is_dir());
    f.ok(&["add", "../shared/gamma", "./vendor/alpha"]);
    let manifest = read(&f.project.join("skills.toml"));
    let lock = read(&f.project.join("skills.lock"));
    for text in [&manifest, &lock] {
        assert!(text.contains("../shared/gamma"), "{text}");
        assert!(!text.contains(&f.root().display().to_string()), "{text}");
    }
}

#[test]
fn install_repairs_edits_and_lost_exec_bits_and_verify_names_them() {
    let f = project();
    f.ok(&["add", "./vendor/alpha"]);
    let skill_md = installed(&f, "alpha").join("SKILL.md");
    let run = installed(&f, "alpha").join("scripts/run.sh");
    let pristine = read(&skill_md);
    std::fs::write(&skill_md, "---\nname: alpha\ndescription: evil\n---\n").unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o644)).unwrap();

    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    assert!(report.contains("modified file SKILL.md"), "{report}");
    assert!(
        report.contains("executable bit of scripts/run.sh"),
        "{report}"
    );
    assert!(report.contains("skillpm install"), "{report}");

    // --frozen installs too (it only forbids changing the lock).
    f.ok(&["install", "--frozen"]);
    assert_eq!(read(&skill_md), pristine);
    assert_eq!(
        std::fs::metadata(&run).unwrap().permissions().mode() & 0o111,
        0o111
    );
    f.ok(&["verify"]);
}

#[test]
fn a_tampered_cached_tarball_is_neither_installed_nor_called_clean() {
    let f = project();
    f.ok(&["add", "./vendor/alpha"]);
    let tarballs = f.cache.join("skillpm/tarballs-v1");
    let cached = std::fs::read_dir(&tarballs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar"))
        .expect("a cached tree");
    let tampered = "---\nname: alpha\ndescription: tampered\n---\n";
    let evil = tempfile::tempdir().unwrap();
    std::fs::write(evil.path().join("SKILL.md"), tampered).unwrap();
    std::fs::write(
        &cached,
        skillpm_core::archive::tar_dir(evil.path()).unwrap(),
    )
    .unwrap();
    // Same for the installed copy `verify` checks: the lock decides.
    std::fs::write(installed(&f, "alpha").join("SKILL.md"), tampered).unwrap();
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    std::fs::remove_dir_all(installed(&f, "alpha")).unwrap();
    f.ok(&["install"]);
    assert!(!read(&installed(&f, "alpha").join("SKILL.md")).contains("tampered"));
    f.ok(&["verify"]);
}

/// A tarball packed this run is cached after the trees are in place; a
/// cache that cannot take it costs a warning and a later repack, never
/// the install.
#[test]
fn a_cache_that_cannot_take_a_tarball_warns_and_installs() {
    let f = project();
    let tarballs = f.cache.join("skillpm/tarballs-v1");
    std::fs::create_dir_all(tarballs.parent().unwrap()).unwrap();
    std::fs::write(&tarballs, "not a directory").unwrap();
    let out = f.skillpm(&["add", "./vendor/alpha"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("not cached"), "{err}");
    assert!(read(&installed(&f, "alpha").join("SKILL.md")).contains("alpha skill"));
    assert!(read(&f.project.join("skills.lock")).contains("name = \"alpha\""));
    f.ok(&["verify"]);
    // With the cache usable again, the next cold install stores it.
    std::fs::remove_file(&tarballs).unwrap();
    std::fs::remove_dir_all(installed(&f, "alpha")).unwrap();
    f.ok(&["install"]);
    let cached = std::fs::read_dir(&tarballs).unwrap().count();
    assert_eq!(cached, 1);
}

#[test]
fn one_install_removes_orphans_of_an_interrupted_run_but_never_user_skills() {
    let f = project();
    f.ok(&["add", "./vendor/alpha", "./vendor/beta"]);
    // An interrupted `add` installs before it writes the lock: simulate
    // that by restoring the lock and manifest of before the add of beta.
    f.ok(&["remove", "beta"]);
    let lock = read(&f.project.join("skills.lock"));
    let manifest = read(&f.project.join("skills.toml"));
    f.ok(&["add", "./vendor/beta"]);
    std::fs::write(f.project.join("skills.lock"), &lock).unwrap();
    std::fs::write(f.project.join("skills.toml"), &manifest).unwrap();
    f.skill(
        &f.project_root(),
        "mine",
        "name: mine\ndescription: user-written",
        "",
    );
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("beta"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("not in skills.lock"),
        "{}",
        stdout(&out)
    );

    f.ok(&["install"]);
    assert!(!installed(&f, "beta").exists(), "orphan removed");
    assert!(installed(&f, "alpha").join("SKILL.md").is_file());
    assert!(
        installed(&f, "mine").join("SKILL.md").is_file(),
        "user skill kept"
    );
    f.ok(&["verify"]);
}

/// A run killed between staging its lock and renaming it into place
/// (Ctrl-C while the journal commits) leaves a pending file beside
/// `skills.toml`; the next run removes it, and nothing else.
#[test]
fn a_killed_runs_pending_lock_is_swept_by_the_next_run() {
    let f = project();
    f.ok(&["add", "./vendor/alpha"]);
    f.write(&f.project, ".skillpm-pending-Ab12Cd", "[[skill]]\nkilled");
    f.write(&f.project, ".tmp-users-own", "kept");
    f.ok(&["add", "./vendor/beta"]);
    assert_eq!(
        names_starting(&f.project, &[".skillpm", ".tmp"]),
        [".tmp-users-own"]
    );
    assert!(read(&f.project.join("skills.lock")).contains("beta"));
    f.ok(&["verify"]);
}

/// The lock and the manifest are written and synced while the trees are
/// staged, and renamed into place only once every tree is: an install
/// that fails in between leaves both as they were, and nothing pending.
#[test]
fn an_install_that_fails_after_resolving_writes_neither_lock_nor_manifest() {
    let f = project();
    let manifest = read(&f.project.join("skills.toml"));
    // Resolving succeeds; creating the install root does not.
    f.write(&f.project, ".agents", "not a directory");
    let out = f.skillpm(&["add", "./vendor/alpha"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(".agents/skills: Not a directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&f.project.join("skills.toml")), manifest);
    assert!(!f.project.join("skills.lock").exists());
    let left = names_starting(&f.project, &[".skillpm"]);
    assert!(left.is_empty(), "{left:?}");
    // Once the root can be made, the same add goes through.
    std::fs::remove_file(f.project.join(".agents")).unwrap();
    f.ok(&["add", "./vendor/alpha"]);
    assert!(read(&f.project.join("skills.lock")).contains("alpha"));
}

#[test]
fn hostile_local_files_cost_an_error_not_memory_or_a_hang() {
    // A lock or manifest that is /dev/zero, and a symlink to /dev/zero
    // inside an installed skill: each fails or is reported, quickly.
    let f = project();
    f.ok(&["add", "./vendor/alpha"]);
    symlink("/dev/zero", installed(&f, "alpha").join("zero")).unwrap();
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("added file zero"), "{}", stdout(&out));

    std::fs::remove_file(f.project.join("skills.lock")).unwrap();
    symlink("/dev/zero", f.project.join("skills.lock")).unwrap();
    for args in [&["install"][..], &["list"], &["verify"]] {
        let out = f.skillpm(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains("skills.lock"), "{}", stderr(&out));
    }
    std::fs::remove_file(f.project.join("skills.toml")).unwrap();
    symlink("/dev/zero", f.project.join("skills.toml")).unwrap();
    // Not a regular file, so not a project manifest: status answers (it
    // used to read /dev/zero until memory ran out).
    let status = f.status_json();
    assert_eq!(status["project"], serde_json::Value::Null, "{status}");
    let out = f.skillpm(&["install"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// Past the size where `install` checks installed trees on every core,
/// (and `verify` re-hashes them), each tree is still judged on its own:
/// the edited ones (in different
/// threads' shares, at different distances from either end) are repaired,
/// and every other tree is left exactly as it was, down to its
/// directory's inode.
#[test]
fn many_trees_are_checked_at_once_and_only_the_edited_ones_replaced() {
    use std::os::unix::fs::MetadataExt;
    let f = Fixture::new();
    f.ok(&["init"]);
    let names: Vec<String> = (0..70).map(|i| format!("s{i:02}")).collect();
    for n in &names {
        let meta = format!("name: {n}\ndescription: {n} skill\nversion: \"1.0.0\"");
        f.skill(&f.project.join("vendor"), n, &meta, "body");
    }
    let specs: Vec<String> = names.iter().map(|n| format!("./vendor/{n}")).collect();
    let mut args = vec!["add"];
    args.extend(specs.iter().map(String::as_str));
    f.ok(&args);
    let inode = |n: &str| std::fs::metadata(installed(&f, n)).unwrap().ino();
    let before: Vec<u64> = names.iter().map(|n| inode(n)).collect();
    let edited = ["s00", "s40"];
    for n in edited {
        std::fs::write(installed(&f, n).join("SKILL.md"), "edited").unwrap();
    }
    // `verify` re-hashes every tree on every core too, and names exactly
    // the edited ones.
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    for n in &names {
        let named = report
            .lines()
            .any(|l| l.starts_with(&format!("{n} (")) && l.contains("): modified file SKILL.md;"));
        assert_eq!(named, edited.contains(&n.as_str()), "{n}: {report}");
    }
    f.ok(&["install"]);
    for (n, was) in names.iter().zip(&before) {
        let body = read(&installed(&f, n).join("SKILL.md"));
        assert!(body.contains(&format!("name: {n}")), "{n}: {body}");
        assert_eq!(inode(n) != *was, edited.contains(&n.as_str()), "{n}");
    }
}
