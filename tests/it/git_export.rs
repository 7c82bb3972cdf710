//! A git skill installs exactly what was committed: the repository's own
//! `.gitattributes` (export-subst, export-ignore, eol, ident, filter
//! drivers) change nothing, and a tree that is too large is refused from
//! its listing, before git's output can cost memory.

use crate::common;
use common::{seeded, stderr, Fixture};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, None)
}

const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@example.com"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@example.com"),
];

/// Runs git in `dir` with a fixed identity, feeding it `stdin`.
fn git_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .envs(IDENTITY)
        .args(["-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.unwrap_or_default()).expect("stdin");
    }
    let out = child.wait_with_output().expect("git");
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\nversion: \"1.0.0\"\n---\nbody\n")
}

/// A project whose `git` is the system's.
fn fixture() -> Fixture {
    let f = Fixture::new();
    f.link_bin("git");
    f
}

fn new_repo(f: &Fixture, name: &str) -> PathBuf {
    let repo = f.root().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    repo
}

/// A new repository holding the skill `name`'s `SKILL.md`, not committed.
fn skill_repo(f: &Fixture, name: &str) -> PathBuf {
    let repo = new_repo(f, name);
    f.write(&repo, "SKILL.md", skill_md(name));
    repo
}

fn file_url(repo: &Path) -> String {
    format!("git+file://{}", repo.display())
}

#[test]
fn gitattributes_in_the_repository_change_nothing() {
    let f = fixture();
    let marker = f.root().join("filter-ran");
    // A filter driver the *user* has configured (as git-lfs is): a
    // repository naming it must not make skillpm run it.
    std::fs::write(
        f.home.join(".gitconfig"),
        format!(
            "[filter \"evil\"]\n\tsmudge = {} {} && {}\n\tclean = {}\n",
            tool("touch"),
            marker.display(),
            tool("cat"),
            tool("cat"),
        ),
    )
    .unwrap();
    let repo = new_repo(&f, "attrs");
    let md = skill_md("attrs");
    let committed: &[(&str, &[u8])] = &[
        ("SKILL.md", md.as_bytes()),
        ("subst.txt", b"commit $Format:%H$ by $Format:%an$\n"),
        ("ignored.txt", b"export-ignore must not drop me\n"),
        ("crlf.txt", b"line one\nline two\n"),
        ("ident.txt", b"$Id$\n"),
        ("filtered.txt", b"raw bytes\n"),
    ];
    for (p, c) in committed {
        f.write(&repo, p, c);
    }
    f.write(
        &repo,
        ".gitattributes",
        "* export-subst\nignored.txt export-ignore\ncrlf.txt text eol=crlf\nident.txt ident\nfiltered.txt filter=evil\n",
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "attrs"]);

    f.ok(&["init"]);
    f.ok(&["add", &file_url(&repo)]);
    let installed = f.project_root().join("attrs");
    for (p, c) in committed {
        let got = std::fs::read(installed.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(c),
            "{p} differs from what was committed"
        );
    }
    assert!(!marker.exists(), "the filter driver ran");
    f.ok(&["verify"]);
}

#[test]
fn one_blob_listed_many_times_is_refused_before_it_is_read() {
    let f = fixture();
    let repo = skill_repo(&f, "wide");
    git(&repo, &["add", "SKILL.md"]);
    // 4 MiB that do not compress, stored once, listed 250 times: 1 GB of
    // `git archive` output from a repository of a few MiB.
    let noise = seeded::noise(1, 4 << 20);
    let oid = git_in(&repo, &["hash-object", "-w", "--stdin"], Some(&noise));
    let index: String = (0..250)
        .map(|i| format!("100644 {oid}\tcopies/{i:03}.bin\n"))
        .collect();
    git_in(
        &repo,
        &["update-index", "--index-info"],
        Some(index.as_bytes()),
    );
    git(&repo, &["commit", "-qm", "wide"]);

    f.ok(&["init"]);
    let start = Instant::now();
    let mut add = f.command(env!("CARGO_BIN_EXE_skillpm"));
    add.args(["--quiet", "add", &file_url(&repo)]);
    let (out, peak_kib) = common::run_watched(add, 1 << 20);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("more than 52428800 bytes"), "{err}");
    assert!(err.contains("refusing to install file://"), "{err}");
    assert!(err.contains("/wide@"), "the skill is named: {err}");
    assert!(peak_kib < 100 * 1024, "peak RSS {peak_kib} KiB");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(!f.project_root().join("wide").exists());
}

/// Trees git itself would never write: an entry named `.` (its files
/// would merge into the skill's root), `..`, and `.GIT` (on macOS and
/// Windows the repository's own directory). Each is refused in one line,
/// and nothing is installed.
#[test]
fn tree_entries_named_dot_dotdot_or_git_in_any_case_are_refused() {
    let f = fixture();
    f.ok(&["init"]);
    for (i, (name, why)) in [
        (".", "tree entry named"),
        ("..", "tree entry named"),
        (".GIT", "`.git`"),
    ]
    .into_iter()
    .enumerate()
    {
        let repo = skill_repo(&f, &format!("odd{i}"));
        f.write(
            &repo,
            "hidden/config",
            "[core]\n\tfsmonitor = touch pwned\n",
        );
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "plain"]);
        let hidden = git(&repo, &["rev-parse", "HEAD:hidden"]);
        let skill = git(&repo, &["rev-parse", "HEAD:SKILL.md"]);
        let tree = git_in(
            &repo,
            &["mktree"],
            Some(
                format!("100644 blob {skill}\tSKILL.md\n040000 tree {hidden}\t{name}\n").as_bytes(),
            ),
        );
        let commit = git(&repo, &["commit-tree", &tree, "-m", "odd"]);
        // HEAD names the odd commit; no work tree could hold it.
        git(&repo, &["update-ref", "HEAD", &commit]);
        let out = f.skillpm(&["--quiet", "add", &file_url(&repo)]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
        assert!(!f.project_root().join(format!("odd{i}")).exists(), "{name}");
    }
    assert!(!f.project.join("pwned").exists());
}

/// A tree from git is held as its plain canonical tar, so what bounds it
/// is its unpacked size (the test above), not how well it compresses: 12
/// distinct incompressible MiB, over the 10 MiB a registry tarball may
/// take, install and verify, from the cache and from the clone.
#[test]
fn a_tree_that_compresses_badly_is_bounded_by_its_unpacked_size() {
    let f = fixture();
    let repo = skill_repo(&f, "noisy");
    for i in 0..12 {
        f.write(&repo, &format!("assets/{i}.bin"), seeded::noise(i, 1 << 20));
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "noisy"]);
    f.ok(&["init"]);
    f.ok(&["--quiet", "add", &file_url(&repo)]);
    let installed = f.project_root().join("noisy/assets/11.bin");
    assert_eq!(
        std::fs::read(&installed).expect("read"),
        seeded::noise(11, 1 << 20)
    );
    f.ok(&["verify"]);
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    f.ok(&["install", "--locked"]);
    f.ok(&["verify"]);
    // The cache holds the tree in its clone, not as a tarball as well.
    let tarballs = f.cache.join("skillpm/tarballs-v1");
    assert!(std::fs::read_dir(&tarballs).map_or(true, |d| d.count() == 0));
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    f.ok(&["install", "--locked"]);
    assert_eq!(
        std::fs::read(&installed).expect("read"),
        seeded::noise(11, 1 << 20)
    );
}

#[test]
fn symlinks_and_executables_keep_their_meaning() {
    let f = fixture();
    let repo = skill_repo(&f, "modes");
    let script = f.write(&repo, "scripts/run.sh", "#!/bin/sh\necho hi\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let long = format!("{}/deep.md", "d".repeat(120));
    f.write(&repo, &long, "long path");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "modes"]);
    f.ok(&["init"]);
    f.ok(&["add", &file_url(&repo)]);
    let installed = f.project_root().join("modes");
    assert_eq!(
        std::fs::read_to_string(installed.join(&long)).unwrap(),
        "long path"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(installed.join("scripts/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "{mode:o}");
    }

    // A committed symlink is refused, as in any package.
    let repo = skill_repo(&f, "linked");
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", repo.join("passwd")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "link"]);
    let out = f.skillpm(&["--quiet", "add", &file_url(&repo)]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("symlink"), "{err}");
}

/// The absolute path of a system tool (the fixture's PATH holds only git).
fn tool(name: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not found on PATH"))
        .display()
        .to_string()
}

/// A lock written before trees were locked by their tar holds, for git
/// and path skills, the sha256 of the tar gzipped at level 9. It still
/// installs, with `--locked` and without, from the cache and from
/// nothing, and is never rewritten for it.
#[test]
fn a_lock_from_before_trees_were_locked_by_their_tar_still_installs() {
    use skillpm_core::archive;
    let f = fixture();
    let repo = skill_repo(&f, "gitted");
    f.write(&repo, "scripts/run.sh", "echo hi\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "one"]);
    let local = f.project.join("vendor/local");
    f.write(&local, "SKILL.md", skill_md("local"));
    f.ok(&["init"]);
    f.ok(&["--quiet", "add", &file_url(&repo)]);
    f.ok(&["--quiet", "add", "./vendor/local"]);

    let lock_path = f.project.join("skills.lock");
    let mut lock = std::fs::read_to_string(&lock_path).expect("lock");
    for dir in [&repo, &local] {
        let now = archive::tree_checksum(dir).expect("tar");
        let old = skillpm_core::Checksum::of_bytes(&archive::pack_dir(dir).expect("pack"));
        assert!(lock.contains(&now.to_string()), "{lock}");
        lock = lock.replace(&now.to_string(), &old.to_string());
    }
    std::fs::write(&lock_path, &lock).expect("write lock");

    // From nothing: no cache, no installed trees.
    std::fs::remove_dir_all(&f.cache).expect("rm cache");
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    f.ok(&["install", "--locked"]);
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), lock);
    assert_eq!(
        std::fs::read_to_string(f.project_root().join("gitted/scripts/run.sh")).unwrap(),
        "echo hi\n"
    );
    f.ok(&["verify"]);
    // From the cache, and with a resolve that packs the path skill again.
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    f.ok(&["install"]);
    f.ok(&["install", "--locked"]);
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), lock);
    f.ok(&["verify"]);
    // An edit is still an edit.
    f.write(&f.project_root().join("local"), "SKILL.md", "edited\n");
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}
