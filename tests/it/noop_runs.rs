//! The client's no-op paths: what a run may skip when nothing
//! changed, and what it must still notice.
//! - Re-adding a registry skill exactly as skills.toml has it asks the
//!   registry nothing (it succeeds with the registry stopped).
//! - A path dependency is packed again only when its directory's
//!   fingerprint moved; an edit that keeps size and mtime still moves it.

use crate::common;
use common::{stderr, Fixture, Registry};
use std::path::Path;
use std::time::{Duration, SystemTime};

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

fn publish(f: &Fixture, name: &str, version: &str) {
    let dir = f.root().join("src").join(version).join(name);
    f.write(
        &dir,
        "SKILL.md",
        format!("---\nname: {name}\ndescription: The {name} skill\nversion: \"{version}\"\n---\nbody {version}\n"),
    );
    f.ok(&["publish", dir.to_str().unwrap()]);
}

#[test]
fn re_adding_a_registry_skill_as_it_stands_asks_the_registry_nothing() {
    let mut f = Fixture::new();
    let mut reg = Registry::for_fixture(&mut f);
    publish(&f, "code-review", "1.0.0");
    publish(&f, "pdf", "0.1.0");
    f.ok(&["init"]);
    f.ok(&["add", "code-review@^1", "pdf@^0.1"]);
    // A newer matching version would be picked by a re-resolve.
    publish(&f, "code-review", "1.1.0");
    let lock = read(f.project.join("skills.lock"));
    let manifest = read(f.project.join("skills.toml"));
    reg.kill();
    // Nothing to do, so no request: with the registry gone it still works
    // and changes nothing.
    f.ok(&["add", "code-review@^1", "pdf@^0.1"]);
    assert_eq!(read(f.project.join("skills.lock")), lock);
    assert_eq!(read(f.project.join("skills.toml")), manifest);
    // A changed requirement is resolved again, and says the registry is
    // gone.
    let out = f.skillpm(&["add", "code-review@^1.1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read(f.project.join("skills.lock")), lock);
}

#[test]
fn a_path_skill_edited_without_changing_size_or_mtime_is_installed_again() {
    let f = Fixture::new();
    f.ok(&["init"]);
    let dir = f.project.join("vendor").join("alpha");
    let md = f.write(
        &dir,
        "SKILL.md",
        "---\nname: alpha\ndescription: Alpha\nversion: \"1.0.0\"\n---\nfirst\n",
    );
    f.ok(&["add", "./vendor/alpha"]);
    let installed = f.project_root().join("alpha").join("SKILL.md");
    let lock = read(f.project.join("skills.lock"));
    // A no-op run keeps the lock (the directory's fingerprint is unchanged).
    f.ok(&["install"]);
    assert_eq!(read(f.project.join("skills.lock")), lock);

    // Same length, same mtime: only the change time says it moved.
    let mtime = std::fs::metadata(&md).unwrap().modified().unwrap();
    std::fs::write(
        &md,
        "---\nname: alpha\ndescription: Alpha\nversion: \"1.0.0\"\n---\nsecnd\n",
    )
    .unwrap();
    let file = std::fs::File::options().write(true).open(&md).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    assert_eq!(std::fs::metadata(&md).unwrap().modified().unwrap(), mtime);
    f.ok(&["install"]);
    assert!(read(&installed).contains("secnd"));
    assert_ne!(read(f.project.join("skills.lock")), lock);

    // An added file is noticed too, even with the old mtime on the
    // directory.
    let before = read(f.project.join("skills.lock"));
    f.write(&dir, "references/notes.md", "notes\n");
    let d = std::fs::File::open(&dir).unwrap();
    d.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap_or(());
    f.ok(&["install"]);
    assert!(f.project_root().join("alpha/references/notes.md").is_file());
    assert_ne!(read(f.project.join("skills.lock")), before);
}
