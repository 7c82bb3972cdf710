//! A skill skills.toml already has is never taken over by another source
//! silently: `add` from another repository, directory, registry or site
//! is refused, naming both, unless `--replace`; `--all` of a second
//! collection refuses the names the two share and installs nothing until
//! they are resolved. A new ref of the same source is an update.

use crate::common;
use common::{commit_all, logging_git, stderr, Fixture};
use std::path::{Path, PathBuf};

/// A fixture with `git` on its PATH (a `file://` fetch runs
/// `git-upload-pack`).
fn with_git() -> Fixture {
    let f = Fixture::new();
    logging_git(&f, &f.root().join("git.log"));
    f
}

/// A git repository at `root/dir` with a skill per name under `skills/`,
/// each saying where it comes from.
fn collection(f: &Fixture, dir: &str, names: &[&str]) -> PathBuf {
    let repo = f.root().join(dir);
    for n in names {
        f.skill(
            &repo,
            &format!("skills/{n}"),
            &format!("name: {n}\ndescription: {n} from {dir}"),
            "body",
        );
    }
    commit_all(&repo);
    repo
}

fn url(repo: &Path) -> String {
    format!("git+file://{}", repo.display())
}

fn installed_description(f: &Fixture, name: &str) -> String {
    let md = std::fs::read_to_string(f.project_root().join(name).join("SKILL.md")).unwrap();
    md.lines()
        .find_map(|l| l.strip_prefix("description: "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_second_collection_does_not_take_over_a_shared_name() {
    let f = with_git();
    let first = collection(&f, "first", &["pdf", "docx"]);
    let second = collection(&f, "second", &["docx", "xlsx"]);
    f.ok(&["init"]);
    f.ok(&["add", "--all", &url(&first)]);
    let manifest = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();

    let out = f.skillpm(&["add", "--all", &url(&second)]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("2 of these skills") || err.contains("`docx` from"),
        "{err}"
    );
    assert!(err.contains("first") && err.contains("second"), "{err}");
    assert!(err.contains("--replace"), "{err}");
    // Nothing changed: not docx, and not the xlsx that does not collide.
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.toml")).unwrap(),
        manifest
    );
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.lock")).unwrap(),
        lock
    );
    assert_eq!(installed_description(&f, "docx"), "docx from first");
    assert!(!f.project_root().join("xlsx").exists());

    f.ok(&["add", "--all", "--replace", &url(&second)]);
    assert_eq!(installed_description(&f, "docx"), "docx from second");
    assert_eq!(installed_description(&f, "xlsx"), "xlsx from second");
    assert_eq!(installed_description(&f, "pdf"), "pdf from first");
}

#[test]
fn a_local_directory_does_not_take_over_a_git_skill() {
    let f = with_git();
    let repo = collection(&f, "repo", &["pdf"]);
    f.ok(&["init"]);
    f.ok(&["add", &url(&repo), "--skill", "pdf"]);
    f.skill(
        &f.project.join("vendor"),
        "pdf",
        "name: pdf\ndescription: pdf from vendor",
        "",
    );
    let out = f.skillpm(&["add", "./vendor/pdf"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("skills.toml has `pdf` from git+file://"),
        "{err}"
    );
    assert!(err.contains("not ./vendor/pdf"), "{err}");
    assert_eq!(installed_description(&f, "pdf"), "pdf from repo");
    // The same source again is no replacement: a re-add passes.
    f.ok(&["add", &url(&repo), "--skill", "pdf"]);
    f.ok(&["add", "./vendor/pdf", "--replace"]);
    assert_eq!(installed_description(&f, "pdf"), "pdf from vendor");
    f.ok(&["add", "./vendor/pdf"]);
}
