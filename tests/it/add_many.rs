//! `add` of a git repository that holds many skills, shaped like the
//! public collections: `skills/NAME` (anthropics/skills), nested
//! directories (`skills/document-skills/pdf`), dot-directories
//! (openai/skills' `skills/.curated/`), agent directories
//! (`.claude/skills/`), and a skill nested inside another one (which ships
//! with its parent). Also the `owner/repo[/path][@ref]` shorthand against
//! a local mirror configured with `[sources] github`.

use crate::common;
use common::{commit_all, logging_git, stderr, Fixture};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository like the public collections.
fn collection(f: &Fixture, at: &Path) -> PathBuf {
    let s = |dir: &str, name: &str, desc: &str| {
        f.skill(
            at,
            dir,
            &format!("name: {name}\ndescription: {desc}"),
            "body",
        );
    };
    s("skills/pdf", "pdf", "Read and fill PDF forms");
    s("skills/document-skills/docx", "docx", "Edit Word documents");
    s(
        "skills/.curated/gh-fix-ci",
        "gh-fix-ci",
        "Fix failing CI runs",
    );
    s(
        "skills/.system/skill-creator",
        "skill-creator",
        "Create skills",
    );
    s(
        ".claude/skills/house-style",
        "house-style",
        "Our style guide",
    );
    // Nested inside pdf: part of pdf's package, not a skill of its own.
    s("skills/pdf/forms", "pdf-forms", "Sub-skill of pdf");
    // A description with an escape sequence must reach the terminal clean.
    s("skills/evil", "evil", "\"Looks \\e[31mred\\e[0m\"");
    f.write(at, "README.md", "# a collection\n");
    commit_all(at);
    at.to_path_buf()
}

fn url(repo: &Path) -> String {
    format!("git+file://{}", repo.display())
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn add_lists_the_skills_of_a_collection_and_asks() {
    let f = Fixture::new();
    f.link_bin("git");
    let repo = collection(&f, &f.root().join("collection"));
    let out = f.skillpm(&["--quiet", "add", &url(&repo)]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("--skill") && err.contains("--all"), "{err}");
    assert!(!err.contains("no SKILL.md at the top"), "{err}");
    for (command, name, desc) in [
        ("pdf", "pdf", "Read and fill PDF forms"),
        ("document-skills/docx", "docx", "Edit Word documents"),
        ("gh-fix-ci", "gh-fix-ci", "Fix failing CI runs"),
        ("skill-creator", "skill-creator", "Create skills"),
        ("house-style", "house-style", "Our style guide"),
    ] {
        let line = err
            .lines()
            .find(|l| l.split_whitespace().next() == Some(command))
            .unwrap_or_else(|| panic!("{command} not listed:\n{err}"));
        assert!(line.contains(name) && line.contains(desc), "{line}");
    }
    assert!(
        !err.contains("pdf-forms"),
        "a nested skill is listed: {err}"
    );
    assert!(err.contains("holds 6 skills"), "{err}");
    assert!(err.contains("Looks"), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "escape reached the terminal: {err:?}"
    );
    assert!(!f.project.join("skills.toml").exists());
}

#[test]
fn add_skill_takes_the_named_ones_at_one_commit() {
    let f = Fixture::new();
    f.link_bin("git");
    let repo = collection(&f, &f.root().join("collection"));
    f.ok(&["init"]);
    f.ok(&[
        "add",
        &url(&repo),
        "--skill",
        "pdf",
        "gh-fix-ci",
        "document-skills/docx",
    ]);
    let manifest = read(&f.project.join("skills.toml"));
    for (name, path) in [
        ("pdf", "skills/pdf"),
        ("gh-fix-ci", "skills/.curated/gh-fix-ci"),
        ("docx", "skills/document-skills/docx"),
    ] {
        let line = manifest
            .lines()
            .find(|l| l.starts_with(&format!("{name} =")))
            .unwrap_or_else(|| panic!("{name} not in manifest:\n{manifest}"));
        assert!(line.contains(&format!("path = \"{path}\"")), "{line}");
        assert!(
            f.project_root().join(name).join("SKILL.md").is_file(),
            "{name} not installed"
        );
    }
    // The nested skill ships with its parent.
    assert!(f.project_root().join("pdf/forms/SKILL.md").is_file());
    assert!(!manifest.lines().any(|l| l.starts_with("house-style")));
    let lock = read(&f.project.join("skills.lock"));
    let commits: std::collections::BTreeSet<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("source = \"git+"))
        .map(|s| s.rsplit_once('#').map(|x| x.1).unwrap_or(""))
        .collect();
    assert_eq!(commits.len(), 1, "{lock}");

    // --skill/--all only choose; with --path (one package) they are refused.
    let out = f.skillpm(&[
        "--quiet",
        "add",
        &url(&repo),
        "--path",
        "skills/pdf",
        "--all",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("this spec names one package"),
        "{}",
        stderr(&out)
    );

    let out = f.skillpm(&["--quiet", "add", &url(&repo), "--skill", "nope"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no skill `nope`") && err.contains("house-style"),
        "{err}"
    );
    assert!(!err.contains("did you mean"), "{err}");
    // A typo is answered with the nearest name.
    let out = f.skillpm(&["--quiet", "add", &url(&repo), "--skill", "hosue-style"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("(did you mean `house-style`?)"), "{err}");
}

fn fetches(log: &Path) -> usize {
    // gitoxide runs `git-upload-pack` to fetch from a `file://` URL.
    crate::common::git_calls(log, "upload-pack")
}

#[test]
fn add_all_fetches_the_repository_once() {
    let f = Fixture::new();
    let log = f.root().join("git.log");
    logging_git(&f, &log);
    let repo = f.root().join("big");
    for i in 0..80 {
        let dir = match i % 4 {
            0 => format!("skills/s{i:02}"),
            1 => format!("skills/.curated/s{i:02}"),
            2 => format!(".agents/skills/group/s{i:02}"),
            _ => format!("skills/nested/deeper/s{i:02}"),
        };
        f.skill(
            &repo,
            &dir,
            &format!("name: s{i:02}\ndescription: skill {i}"),
            "b",
        );
    }
    commit_all(&repo);
    f.ok(&["init"]);
    f.ok(&["add", &url(&repo), "--all"]);
    assert_eq!(fetches(&log), 1, "{}", read(&log));
    let lock = read(&f.project.join("skills.lock"));
    assert_eq!(lock.matches("[[skill]]").count(), 80);
    for i in 0..80 {
        // Enough skills that discovery is spread over threads: each name
        // must still come with its own directory.
        let md = read(&f.project_root().join(format!("s{i:02}/SKILL.md")));
        assert!(md.contains(&format!("description: skill {i}\n")), "{md}");
    }
    // Installing again from the lock changes nothing and fetches nothing.
    f.ok(&["install", "--locked"]);
    assert_eq!(fetches(&log), 1);
}

/// A repository as real collections are: some skills with names the
/// spec forbids, one whose SKILL.md does not parse, two of one name.
/// `--all` names every one of them with its directory and why, installs
/// the rest and says how many it skipped; `--strict` installs nothing.
#[test]
fn add_all_skips_and_names_every_skill_it_cannot_install() {
    let f = Fixture::new();
    logging_git(&f, &f.root().join("git.log"));
    let repo = f.root().join("messy");
    let s = |dir: &str, front: &str| f.skill(&repo, dir, front, "body");
    s("skills/good-one", "name: good-one\ndescription: fine");
    s("skills/good-two", "name: good-two\ndescription: fine");
    s("skills/risk", "name: -21risk-automation\ndescription: d");
    s("skills/ahrefs", "name: Ahrefs Automation\ndescription: d");
    s("skills/broken", "name: broken\ndescription: [not closed");
    s("skills/a/twin", "name: twin\ndescription: one");
    s("skills/b/twin", "name: twin\ndescription: other");
    commit_all(&repo);
    f.ok(&["init"]);

    let strict = f.skillpm(&["add", &url(&repo), "--all", "--strict"]);
    let err = stderr(&strict);
    assert_eq!(strict.status.code(), Some(1), "{err}");
    assert!(err.contains("5 of the 7 skills"), "{err}");
    assert!(!f.project_root().join("good-one").exists());
    assert!(!read(&f.project.join("skills.toml")).contains("good-one"));

    let out = f.skillpm(&["add", &url(&repo), "--all"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for (dir, why) in [
        ("skills/risk", "-21risk-automation"),
        ("skills/ahrefs", "Ahrefs Automation"),
        ("skills/broken", "SKILL.md: "),
        ("skills/a/twin", "2 skills here are named `twin`"),
        ("skills/b/twin", "add one of them with --path"),
    ] {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("cannot install {dir}:")))
            .unwrap_or_else(|| panic!("{dir} not reported: {err}"));
        assert!(line.contains(why), "{line}");
    }
    assert!(err.contains("skipped 5 of the 7 skills"), "{err}");
    for good in ["good-one", "good-two"] {
        assert!(f.project_root().join(good).join("SKILL.md").exists());
    }
    let lock = read(&f.project.join("skills.lock"));
    assert_eq!(lock.matches("[[skill]]").count(), 2, "{lock}");
    // One of the twins can still be had by its path.
    f.ok(&["add", &url(&repo), "--path", "skills/b/twin"]);
    assert!(read(&f.project_root().join("twin/SKILL.md")).contains("other"));
}

#[test]
fn owner_repo_shorthand_uses_the_configured_base() {
    let f = Fixture::new();
    f.link_bin("git");
    let mirror = f.root().join("mirror");
    let work = collection(&f, &f.root().join("work"));
    std::fs::create_dir_all(mirror.join("acme")).expect("mkdir");
    let bare = mirror.join("acme/skills.git");
    let ok = Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(&work)
        .arg(&bare)
        .status()
        .expect("git")
        .success();
    assert!(ok);
    f.write(
        &f.project,
        "skills.toml",
        format!(
            "# mine\n[sources]\ngithub = \"file://{}\"\n\n[skills]\n",
            mirror.display()
        ),
    );
    f.ok(&["add", "acme/skills", "--skill", "house-style"]);
    f.ok(&["add", "acme/skills/skills/pdf@main"]);
    let manifest = read(&f.project.join("skills.toml"));
    assert!(manifest.starts_with("# mine\n"), "{manifest}");
    let full = format!("file://{}", bare.display());
    assert!(
        manifest.contains(&format!(
            "house-style = {{ git = \"{full}\", path = \".claude/skills/house-style\" }}"
        )),
        "{manifest}"
    );
    assert!(manifest.contains("path = \"skills/pdf\""), "{manifest}");
    let lock = read(&f.project.join("skills.lock"));
    assert!(lock.contains(&format!("source = \"git+{full}#")), "{lock}");
    assert!(f.project_root().join("pdf/SKILL.md").is_file());

    // A shorthand is never a registry name or a path.
    let out = f.skillpm(&["--quiet", "add", "-acme/skills"]);
    assert!(!out.status.success());
    let out = f.skillpm(&["--quiet", "add", "acme/../etc"]);
    assert!(!out.status.success());
}
