//! `add` of a git skill fetches its repository once: the name comes from
//! the skill itself, and the resolution that learned it is reused by the
//! install that follows. git is wrapped by a script that logs every call.

use crate::common;
use common::{git_calls as calls, logging_git, real_git, Fixture};
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Fetches from a `file://` URL: gitoxide runs `git-upload-pack`.
fn fetches(log: &Path) -> usize {
    calls(log, "upload-pack")
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

/// Only fetches ran `git`: no listing, object reader or rev-parse.
fn assert_reads_in_process(log: &Path) {
    for cmd in ["ls-tree", "cat-file", "rev-parse", "archive"] {
        assert_eq!(calls(log, cmd), 0, "git {cmd} ran");
    }
}

/// No git process is started to read the clone: refs, trees and blobs are
/// read in skillpm, in `add --all` and in a restore from the lock; and each
/// skill's lock checksum is still the deterministic pack of its directory
/// (what exporting every skill through `git` produced, so existing locks
/// verify).
#[test]
fn skills_of_one_commit_are_read_without_git_processes() {
    let f = Fixture::new();
    let log = f.root().join("git.log");
    logging_git(&f, &log);
    let repo = f.root().join("multi");
    let deep = "references/a-directory-name-long-enough-that-the-path/passes-the-hundred-bytes-of-a-plain-tar-header";
    let names = ["alpha", "beta", "gamma"];
    for n in names {
        let fm = format!("name: {n}\ndescription: d\nversion: \"1.0.0\"");
        let dir = f.skill(&repo, &format!("skills/{n}"), &fm, "body");
        let script = f.write(&dir, "scripts/run.sh", "#!/bin/sh\necho hi\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        f.write(&dir, &format!("{deep}/notes-{n}.md"), n);
    }
    common::commit_all(&repo);
    f.ok(&["init"]);
    f.ok(&["add", &format!("git+file://{}", repo.display()), "--all"]);
    assert_reads_in_process(&log);

    let skills = common::lock_skills(&f.project);
    assert_eq!(skills.len(), names.len());
    common::assert_lock_checksums(&skills, &repo);

    // A fresh project from the lock, the git cache warm, nothing packed.
    let fresh = f.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    for file in ["skills.toml", "skills.lock"] {
        std::fs::copy(f.project.join(file), fresh.join(file)).unwrap();
    }
    for entry in std::fs::read_dir(f.cache.join("skillpm")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() && !p.ends_with("git-v1") {
            std::fs::remove_dir_all(&p).unwrap();
        }
    }
    std::fs::remove_file(&log).unwrap();
    f.ok(&["-C", fresh.to_str().unwrap(), "install", "--frozen"]);
    assert_eq!(fetches(&log), 0, "the locked commit is in the cache");
    assert_reads_in_process(&log);
    for n in names {
        let run = fresh.join(".agents/skills").join(n).join("scripts/run.sh");
        assert!(run.is_file(), "{n}");
    }
}
