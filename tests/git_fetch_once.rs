//! `add` of a git skill fetches its repository once: the name comes from
//! the skill itself, and the resolution that learned it is reused by the
//! install that follows. git is wrapped by a script that logs every call.

mod common;
use common::Fixture;
use std::path::{Path, PathBuf};
use std::process::Command;

fn real_git() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH")
}

/// Puts a `git` on the fixture PATH that logs its arguments, one call per
/// line, to `log`, then runs the real git.
fn logging_git(f: &Fixture, log: &Path) {
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        real_git().display()
    );
    let p = f.write(&f.bin, "git", script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn repo_with_skill(f: &Fixture, name: &str) -> PathBuf {
    let repo = f.root().join(format!("repo-{name}"));
    f.skill(
        &repo,
        ".",
        &format!("name: {name}\ndescription: d\nversion: \"1.0.0\""),
        "body",
    );
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
    ] {
        let ok = Command::new(real_git())
            .args(args)
            .current_dir(&repo)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
    repo
}

fn fetches(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == "fetch"))
        .count()
}

#[test]
fn add_fetches_each_repository_once() {
    let f = Fixture::new();
    let log = f.root().join("git.log");
    logging_git(&f, &log);
    let repos: Vec<PathBuf> = ["one", "two", "three"]
        .iter()
        .map(|n| repo_with_skill(&f, n))
        .collect();
    f.ok(&["init"]);
    f.ok(&["add", &format!("git+file://{}", repos[0].display())]);
    assert_eq!(fetches(&log), 1, "one spec, one fetch");
    assert!(f.project_root().join("one/SKILL.md").is_file());

    std::fs::remove_file(&log).unwrap();
    let specs: Vec<String> = repos[1..]
        .iter()
        .map(|r| format!("git+file://{}", r.display()))
        .collect();
    let mut args = vec!["add"];
    args.extend(specs.iter().map(String::as_str));
    f.ok(&args);
    assert_eq!(fetches(&log), 2, "two repositories, two fetches");
    for n in ["two", "three"] {
        assert!(f.project_root().join(n).join("SKILL.md").is_file());
    }
}
