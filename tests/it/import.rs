//! `skillpm import` takes over a project managed by vercel's
//! `skills` CLI. The fixture lock (tests/fixtures/import/skills-lock.json)
//! was written by `skills` 1.7.4 itself, offline, by make-lock.sh next to
//! it; the last test re-runs that tool (when installed) and checks it still
//! writes those bytes, then imports what it installed.

use crate::common;
use common::{commit_all, git, run_vercel, stderr, vercel_skills, Fixture};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let ok = Command::new("cp")
        .arg("-R")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -R {}", from.display());
}

/// The fixture repository committed (tag v1) and served as a bare mirror
/// at `mirror/acme/skills.git`; returns (mirror base URL, work tree).
fn mirror(f: &Fixture) -> (String, PathBuf) {
    f.link_bin("git");
    let src = f.root().join("src");
    copy_dir(&fixture_dir().join("repo"), &src);
    commit_all(&src);
    git(&src, &["tag", "v1"]);
    let mirror = f.root().join("mirror");
    std::fs::create_dir_all(mirror.join("acme")).unwrap();
    git(
        &mirror.join("acme"),
        &["clone", "-q", "--bare", src.to_str().unwrap(), "skills.git"],
    );
    (format!("file://{}", mirror.display()), src)
}

fn rev(repo: &Path, r: &str) -> String {
    let out = Command::new("git")
        .args(["rev-parse", r])
        .current_dir(repo)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The project as vercel's tool leaves it: the lock, each skill's tree in
/// .agents/skills and a relative link to it in .claude/skills.
fn vercel_layout(f: &Fixture, src: &Path, lock: &str) {
    f.write(&f.project, "skills-lock.json", lock);
    for name in ["alpha", "beta"] {
        copy_dir(
            &src.join("skills").join(name),
            &f.project.join(".agents/skills").join(name),
        );
        std::fs::create_dir_all(f.project.join(".claude/skills")).unwrap();
        std::os::unix::fs::symlink(
            format!("../../.agents/skills/{name}"),
            f.project.join(".claude/skills").join(name),
        )
        .unwrap();
    }
}

/// Runs `skillpm import` with only `[sources] github` configured (the
/// mirror stands in for github.com, as it would for GitHub Enterprise);
/// asserts success and returns what it said.
fn import(f: &Fixture, base: &str) -> String {
    f.write(
        &f.project,
        "skills.toml",
        format!("[sources]\ngithub = \"{base}\"\n"),
    );
    let out = f.skillpm(&["import"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    err
}

fn fixture_lock() -> String {
    std::fs::read_to_string(fixture_dir().join("skills-lock.json")).unwrap()
}

/// Checks the imported project: same sources, full commits, the trees
/// taken over, the links kept, and a clean verify.
fn assert_imported(f: &Fixture, base: &str, src: &Path) {
    let toml = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    let url = format!("{base}/acme/skills.git");
    assert!(
        toml.contains(&format!(
            "alpha = {{ git = \"{url}\", path = \"skills/alpha\" }}"
        )),
        "{toml}"
    );
    assert!(
        toml.contains(&format!(
            "beta = {{ git = \"{url}\", ref = \"v1\", path = \"skills/beta\" }}"
        )),
        "{toml}"
    );
    assert!(
        toml.contains("targets = [\".agents/skills\", \"claude-code\"]"),
        "{toml}"
    );
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    for (name, r) in [("alpha", "main"), ("beta", "v1")] {
        let want = format!("source = \"git+{url}#{}\"", rev(src, r));
        let entry = lock
            .split("[[skill]]")
            .find(|e| e.contains(&format!("name = \"{name}\"")))
            .unwrap();
        assert!(entry.contains(&want), "{name}: {lock}");
        assert!(f
            .project
            .join(".agents/skills")
            .join(name)
            .join(".skillpm-install")
            .is_file());
        let link = std::fs::read_link(f.project.join(".claude/skills").join(name)).unwrap();
        assert_eq!(link, Path::new("../../.agents/skills").join(name));
    }
    assert!(f.ok(&["verify"]).is_empty());
    f.ok(&["install", "--frozen"]);
}

#[test]
fn imports_the_lock_vercel_wrote_pinning_full_commits() {
    let f = Fixture::new();
    let (base, src) = mirror(&f);
    vercel_layout(&f, &src, &fixture_lock());
    let err = import(&f, &base);
    assert!(!err.contains("not carried over"), "{err}");
    assert!(err.contains("Imported 2 skill(s)"), "{err}");
    assert_imported(&f, &base, &src);
    // The installed trees are the same bytes vercel's tool had put there.
    assert_eq!(
        std::fs::read(f.project.join(".agents/skills/alpha/scripts/run.sh")).unwrap(),
        b"echo alpha\n"
    );
}

#[test]
fn edited_skills_and_unknown_sources_are_reported_not_carried() {
    let f = Fixture::new();
    let (base, src) = mirror(&f);
    let mut lock: serde_json::Value = serde_json::from_str(&fixture_lock()).unwrap();
    let skills = lock["skills"].as_object_mut().unwrap();
    skills["alpha"]["pluginName"] = "acme-pack".into();
    skills.insert(
        "from-npm".into(),
        serde_json::json!({"source": "some-pkg", "sourceType": "node_modules", "computedHash": "00"}),
    );
    skills.insert(
        "Bad Name".into(),
        serde_json::json!({"source": "acme/skills", "sourceType": "github"}),
    );
    vercel_layout(&f, &src, &serde_json::to_string_pretty(&lock).unwrap());
    // The user edited beta after installing it.
    let beta = f.project.join(".agents/skills/beta/SKILL.md");
    std::fs::write(&beta, "---\nname: beta\ndescription: mine now\n---\n").unwrap();
    let err = import(&f, &base);
    for line in [
        "not carried over: Bad Name: not a valid skill name",
        "not carried over: alpha: `pluginName` has no equivalent and was dropped",
        "not carried over: beta: .agents/skills/beta differs from what `skills` installed; left as it is, not imported",
        "not carried over: from-npm: source type `node_modules` has no skillpm equivalent",
    ] {
        assert!(err.contains(line), "missing {line:?} in\n{err}");
    }
    assert!(err.contains("Imported 1 skill(s)"), "{err}");
    assert!(std::fs::read_to_string(&beta).unwrap().contains("mine now"));
    let toml = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    assert!(
        toml.contains("alpha = ") && !toml.contains("beta = "),
        "{toml}"
    );
}

/// A project that commits `.claude ->
/// ../home/.claude` makes `.claude/skills/alpha` the user's own skill. Its
/// tree hashes as the lock says (a public skill's hash is public), yet it
/// is somebody else's directory: it is neither moved aside nor deleted,
/// and the skill is reported as not taken over.
#[test]
fn a_root_reached_through_a_committed_symlink_is_never_taken_over() {
    let f = Fixture::new();
    let (base, src) = mirror(&f);
    f.write(&f.project, "skills-lock.json", fixture_lock());
    for name in ["alpha", "beta"] {
        copy_dir(
            &src.join("skills").join(name),
            &f.project.join(".agents/skills").join(name),
        );
    }
    let victim = f.home.join(".claude/skills/alpha");
    copy_dir(&src.join("skills/alpha"), &victim);
    let before = common::tree::snapshot(&victim, &|_| false);
    assert!(!before.is_empty());
    std::os::unix::fs::symlink("../home/.claude", f.project.join(".claude")).unwrap();
    let err = import(&f, &base);
    assert!(
        err.contains("not carried over: alpha: .claude/skills/alpha is not taken over:")
            && err.contains("is a symlink"),
        "{err}"
    );
    assert_eq!(common::tree::snapshot(&victim, &|_| false), before, "{err}");
    let left = common::tree::entries(&f.home.join(".claude/skills")).unwrap();
    assert_eq!(left, ["alpha"], "nothing staged beside the user's skill");
}

/// A committed skills-lock.json is the repository's word: it may not
/// point skillpm at this machine (a `file://` repository, a site on
/// loopback such as an internal admin endpoint, a link-local metadata
/// address) or at a directory outside the project. Each such entry is
/// reported and not imported, and nothing is fetched from it; the user's
/// own `[sources] github` base may still be local.
#[test]
fn a_lock_may_not_point_at_this_machine_or_outside_the_project() {
    let f = Fixture::new();
    let (base, src) = mirror(&f);
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let counter = hits.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(conn);
        }
    });
    let mut lock: serde_json::Value = serde_json::from_str(&fixture_lock()).unwrap();
    let skills = lock["skills"].as_object_mut().unwrap();
    for (name, entry) in [
        (
            "etc",
            serde_json::json!({"source": "file:///etc", "sourceType": "git"}),
        ),
        (
            "admin",
            serde_json::json!({"source": format!("http://127.0.0.1:{port}/internal/admin"), "sourceType": "well-known"}),
        ),
        (
            "metadata",
            serde_json::json!({"source": "https://169.254.169.254/latest", "sourceType": "well-known"}),
        ),
        (
            "loopgit",
            serde_json::json!({"source": format!("https://localhost:{port}/x.git"), "sourceType": "git"}),
        ),
        (
            "keys",
            serde_json::json!({"source": "../../home/.ssh", "sourceType": "local"}),
        ),
        (
            "sneaky",
            serde_json::json!({"source": "../skills", "sourceType": "github"}),
        ),
    ] {
        skills.insert(name.into(), entry);
    }
    vercel_layout(&f, &src, &serde_json::to_string_pretty(&lock).unwrap());
    let err = import(&f, &base);
    for name in ["admin", "etc", "loopgit", "metadata"] {
        assert!(
            err.contains(&format!("not carried over: {name}: skills-lock.json names")),
            "{name}: {err}"
        );
    }
    assert!(
        err.contains("keys: local source ../../home/.ssh is not inside the project"),
        "{err}"
    );
    assert!(
        err.contains("sneaky: github source `../skills` is not owner/name"),
        "{err}"
    );
    assert!(err.contains("Imported 2 skill(s)"), "{err}");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a request reached loopback"
    );
}

#[test]
fn a_broken_lock_is_one_clear_error_and_changes_nothing() {
    let f = Fixture::new();
    for (text, want) in [
        ("{not json", "not JSON"),
        (
            "{\"version\": 7, \"skills\": {}}",
            "lock version 7 is not supported",
        ),
        ("[]", "no `version` number"),
    ] {
        f.write(&f.project, "skills-lock.json", text);
        let out = f.skillpm(&["import"]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(
            err.contains("skills-lock.json") && err.contains(want),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!f.project.join("skills.toml").exists());
    }
}

/// The real tool, offline: the same steps as make-lock.sh must produce the
/// committed fixture byte for byte, and skillpm imports what it installed.
#[test]
fn vercel_skills_writes_the_fixture_and_skillpm_imports_its_install() {
    let Some(tool) = vercel_skills() else { return };
    let f = Fixture::new();
    let (base, src) = mirror(&f);
    let home = f.root().join("vercel-home");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::os::unix::fs::symlink(f.bin.join("git"), home.join("bin/git")).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        format!("[url \"{base}/\"]\n\tinsteadOf = https://github.com/\n"),
    )
    .unwrap();
    for args in [
        [
            "add",
            "acme/skills",
            "--skill",
            "alpha",
            "--agent",
            "claude-code",
            "codex",
            "-y",
        ]
        .as_slice(),
        [
            "add",
            "acme/skills#v1",
            "--skill",
            "beta",
            "--agent",
            "claude-code",
            "codex",
            "-y",
        ]
        .as_slice(),
    ] {
        let (ok, text) = run_vercel(&tool, &f.project, &home, args);
        assert!(ok, "skills {args:?}: {text}");
    }
    let written = std::fs::read_to_string(f.project.join("skills-lock.json")).unwrap();
    assert_eq!(
        written,
        fixture_lock(),
        "the tool writes a different lock; rerun make-lock.sh"
    );
    let err = import(&f, &base);
    assert!(!err.contains("not carried over"), "{err}");
    assert_imported(&f, &base, &src);
}
