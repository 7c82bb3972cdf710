//! Install pipeline with git and path sources: real repositories made by
//! the test, the real binary, a real cache.

use crate::common;
use common::{stderr, Fixture};
use std::path::{Path, PathBuf};

use common::git_stdout as git;

/// A repository holding `skills/house-style` at two tagged versions and a
/// newer commit on a `next` branch.
fn make_repo(f: &Fixture) -> PathBuf {
    let repo = f.root().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let write = |version: &str, body: &str| {
        f.write(
            &repo,
            "skills/house-style/SKILL.md",
            format!("---\nname: house-style\ndescription: House style rules\nversion: \"{version}\"\n---\n{body}\n"),
        );
        f.write(
            &repo,
            "skills/house-style/references/style.md",
            format!("style {version}"),
        );
        f.write(&repo, "README.md", "repo");
    };
    write("1.0.0", "v1 body");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "v1"]);
    git(&repo, &["tag", "v1.0.0"]);
    write("1.1.0", "v1.1 body");
    git(&repo, &["commit", "-qam", "v1.1"]);
    git(&repo, &["tag", "v1.1.0"]);
    git(&repo, &["checkout", "-qb", "next"]);
    write("2.0.0", "next body");
    git(&repo, &["commit", "-qam", "next"]);
    git(&repo, &["checkout", "-q", "main"]);
    repo
}

/// A project that has added `skills/house-style` at `v1.0.0` from a
/// `file://` URL of [`make_repo`]'s repository; with the repository and
/// that URL as a spec (`git+file://...`).
fn added_v1() -> (Fixture, PathBuf, String) {
    let f = Fixture::new();
    f.link_bin("git");
    let repo = make_repo(&f);
    f.ok(&["init"]);
    let url = format!("git+file://{}", repo.display());
    f.ok(&[
        "add",
        &format!("{url}@v1.0.0"),
        "--path",
        "skills/house-style",
    ]);
    (f, repo, url)
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

#[test]
fn git_tag_branch_and_lock_reproduction() {
    let (f, repo, url) = added_v1();
    let installed = f.project_root().join("house-style");
    assert!(read(installed.join("SKILL.md")).contains("v1 body"));
    assert_eq!(read(installed.join("references/style.md")), "style 1.0.0");
    let manifest = read(f.project.join("skills.toml"));
    assert!(manifest.contains("house-style = {"), "{manifest}");
    assert!(manifest.contains("v1.0.0"), "{manifest}");
    let lock = read(f.project.join("skills.lock"));
    let commit = git(&repo, &["rev-parse", "v1.0.0^{commit}"]);
    assert!(lock.contains(&format!("#{commit}\"")), "{lock}");
    assert!(lock.contains("path = \"skills/house-style\""));
    assert!(lock.contains("version = \"1.0.0\""));
    assert!(lock.contains("checksum = \"sha256:"));

    // A second install is a no-op and leaves the lock byte-identical.
    f.ok(&["install"]);
    assert_eq!(read(f.project.join("skills.lock")), lock);

    // Reproduce in a fresh project from skills.toml + skills.lock only.
    let fresh = f.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::copy(f.project.join("skills.toml"), fresh.join("skills.toml")).unwrap();
    std::fs::copy(f.project.join("skills.lock"), fresh.join("skills.lock")).unwrap();
    f.ok(&["-C", fresh.to_str().unwrap(), "install", "--locked"]);
    assert_eq!(read(fresh.join("skills.lock")), lock);
    assert_eq!(
        read(fresh.join(".agents/skills/house-style/SKILL.md")),
        read(installed.join("SKILL.md"))
    );

    // Moving the tag's branch forward does not move the lock...
    f.ok(&["install"]);
    assert_eq!(read(f.project.join("skills.lock")), lock);
    // ...but adding the branch does.
    f.ok(&[
        "add",
        &format!("{url}@next"),
        "--path",
        "skills/house-style",
    ]);
    assert!(read(installed.join("SKILL.md")).contains("next body"));
    let next = git(&repo, &["rev-parse", "next"]);
    assert!(read(f.project.join("skills.lock")).contains(&next));
    f.ok(&["verify"]);
}

/// A git tree is kept once, in the cache's clone: a restore from a warm
/// cache packs it from there without the network (`--frozen` forbids it)
/// and counts it as from the cache; a restore after the cache is gone
/// fetches it and does not.
#[test]
fn a_git_tree_is_cached_in_its_clone_alone() {
    let (f, _, _) = added_v1();
    let tarballs = f.cache.join("skillpm/tarballs-v1");
    assert!(std::fs::read_dir(&tarballs).map_or(true, |d| d.count() == 0));
    let installed = f.project_root().join("house-style");
    let body = read(installed.join("SKILL.md"));

    // The tree reinstalled by `args`, `cached` of it counted from the cache.
    let reinstall = |args: &[&str], cached: usize| {
        std::fs::remove_dir_all(&installed).unwrap();
        let out = f.skillpm(args);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        let summary = format!("Installed 1 skill ({cached} from cache)");
        assert!(err.contains(&summary), "{err}");
        assert_eq!(read(installed.join("SKILL.md")), body);
    };
    reinstall(&["install", "--frozen"], 1);
    std::fs::remove_dir_all(&f.cache).unwrap();
    reinstall(&["install", "--locked"], 0);
    f.ok(&["verify"]);
}

/// `verify` names the files a git skill's installed tree changed, as it
/// does for a registry skill: the locked tree is made again from the
/// cache's clone, without the network. Without the clone it says that
/// nothing is left to compare with.
#[test]
fn verify_names_the_changed_files_of_a_git_skill() {
    let (f, _, _) = added_v1();
    let installed = f.project_root().join("house-style");
    std::fs::write(installed.join("SKILL.md"), "edited").unwrap();
    std::fs::remove_file(installed.join("references/style.md")).unwrap();
    std::fs::write(installed.join("extra.md"), "new").unwrap();
    let out = f.skillpm(&["verify"]);
    let said = common::stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for line in [
        "modified file SKILL.md",
        "missing file references/style.md",
        "added file extra.md",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
    std::fs::remove_dir_all(&f.cache).unwrap();
    let out = f.skillpm(&["verify"]);
    let said = common::stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("neither the cache nor its source has the locked files"),
        "{said}"
    );
}

#[test]
fn path_source_is_copied_and_locked_with_its_path() {
    let f = Fixture::new();
    f.ok(&["init"]);
    f.skill(
        &f.project,
        "vendor/local-thing",
        "name: local-thing\ndescription: d\nversion: \"0.3.0\"",
        "local body",
    );
    f.ok(&["add", "./vendor/local-thing"]);
    let dest = f.project_root().join("local-thing");
    assert!(read(dest.join("SKILL.md")).contains("local body"));
    assert!(!dest.is_symlink());
    let lock = read(f.project.join("skills.lock"));
    assert!(
        lock.contains("source = \"path+./vendor/local-thing\""),
        "{lock}"
    );
    assert!(lock.contains("version = \"0.3.0\""));
    // Editing the installed copy never touches the source directory.
    std::fs::write(dest.join("SKILL.md"), "changed").unwrap();
    assert!(read(f.project.join("vendor/local-thing/SKILL.md")).contains("local body"));
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        common::stdout(&out).contains("modified file SKILL.md"),
        "{}",
        common::stdout(&out)
    );
}

/// An installed tree's modes are the package's (0755 for its directory
/// and executables, 0644 for other files) whatever the umask: with the
/// usual ones (022, 002) they are given when each file is created, with a
/// stricter one (077) they are set again after it.
#[test]
#[cfg(unix)]
fn installed_modes_do_not_depend_on_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    f.ok(&["init"]);
    let src = f.skill(
        &f.project,
        "vendor/moded",
        "name: moded\ndescription: d\nversion: \"1.0.0\"",
        "body",
    );
    let script = f.write(&src, "scripts/run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    f.ok(&["add", "./vendor/moded"]);
    let dest = f.project_root().join("moded");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for umask in ["022", "002", "077"] {
        std::fs::remove_dir_all(&dest).unwrap();
        let out = f
            .command("/bin/sh")
            .args([
                "-c",
                &format!("umask {umask}; exec \"$0\" install --locked"),
            ])
            .arg(env!("CARGO_BIN_EXE_skillpm"))
            .output()
            .unwrap();
        assert!(out.status.success(), "umask {umask}: {}", stderr(&out));
        assert_eq!(mode(&dest), 0o755, "umask {umask}: the tree's directory");
        assert_eq!(mode(&dest.join("SKILL.md")), 0o644, "umask {umask}");
        assert_eq!(mode(&dest.join("scripts/run.sh")), 0o755, "umask {umask}");
    }
    f.ok(&["verify"]);
}

#[test]
fn locked_fails_without_writing_and_names_the_package() {
    let f = Fixture::new();
    f.ok(&["init"]);
    f.skill(
        &f.project,
        "vendor/a-skill",
        "name: a-skill\ndescription: d",
        "",
    );
    f.skill(
        &f.project,
        "vendor/b-skill",
        "name: b-skill\ndescription: d",
        "",
    );
    f.ok(&["add", "./vendor/a-skill"]);
    let lock = read(f.project.join("skills.lock"));
    let mut manifest = read(f.project.join("skills.toml"));
    manifest.push_str("b-skill = { path = \"./vendor/b-skill\" }\n");
    std::fs::write(f.project.join("skills.toml"), &manifest).unwrap();
    let out = f.skillpm(&["install", "--locked"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("b-skill"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(read(f.project.join("skills.lock")), lock);
    assert!(!f.project_root().join("b-skill").exists());
}

#[test]
fn remove_targets_global_and_user_skills_untouched() {
    let f = Fixture::new();
    f.write(
        &f.project,
        "skills.toml",
        "# my skills\n[skills]\n\n[install]\ntargets = [\".agents/skills\", \".claude/skills\"]\n",
    );
    f.skill(&f.project, "vendor/one", "name: one\ndescription: d", "");
    // A skill the user wrote by hand in the same root.
    f.skill(
        &f.project_root(),
        "mine",
        "description: hand-written",
        "keep me",
    );
    f.ok(&["add", "./vendor/one"]);
    for t in [".agents/skills", ".claude/skills"] {
        assert!(f.project.join(t).join("one/SKILL.md").is_file(), "{t}");
    }
    assert!(read(f.project.join("skills.toml")).starts_with("# my skills\n"));
    f.ok(&["remove", "one"]);
    for t in [".agents/skills", ".claude/skills"] {
        assert!(!f.project.join(t).join("one").exists(), "{t}");
    }
    assert!(read(f.project_root().join("mine/SKILL.md")).contains("keep me"));
    assert!(!read(f.project.join("skills.lock")).contains("one"));
    assert!(read(f.project.join("skills.toml")).starts_with("# my skills\n"));

    // A foreign directory in the way is refused, not overwritten.
    f.skill(&f.project_root(), "one", "description: squatter", "mine");
    let out = f.skillpm(&["add", "./vendor/one"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not installed by skillpm"),
        "{}",
        stderr(&out)
    );
    assert!(read(f.project_root().join("one/SKILL.md")).contains("squatter"));

    // --global uses the user manifest and ~/.agents/skills.
    let g = f.root().join("global-src");
    f.skill(&g, "gskill", "name: gskill\ndescription: d", "");
    let out = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .current_dir(&g)
        .args(["add", "--global", "./gskill"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(f.home.join(".agents/skills/gskill/SKILL.md").is_file());
    assert!(f.config.join("skillpm/skills.lock").is_file());
    assert!(read(f.config.join("skillpm/skills.toml")).contains("gskill"));
}

#[test]
fn bad_specs_exit_2_naming_the_character() {
    let f = Fixture::new();
    f.ok(&["init"]);
    for (spec, needle) in [
        ("code;review", "';' at position 5"),
        ("git+ext::sh", "ext"),
        ("--upload-pack=evil", ""),
    ] {
        let out = f.skillpm(&["add", "--", spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{spec}: {}", stderr(&out));
    }
}
