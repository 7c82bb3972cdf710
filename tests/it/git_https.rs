//! `git+https://` sources against a real HTTPS git server (`git
//! http-backend` behind TLS, see skillpm_test_support::git_https): the
//! fetch runs in skillpm (gitoxide's client), not through `git`, asks
//! for what the spec or the lock names, honours git's configuration
//! (`insteadOf`, proxies, credential helpers); the lock it writes
//! restores the same trees, refs resolve, and failures are one clean
//! line. `git` on the fixture PATH logs every call, so a `git` run shows.

use crate::common;
use common::{assert_lock_checksums, git_calls, lock_skills, logging_git, stderr, tree, Fixture};
use skillpm_test_support::git_https::GitHttps;
use std::path::{Path, PathBuf};

const NAMES: [&str; 3] = ["alpha", "beta", "gamma"];

/// A fixture whose skillpm trusts `server`'s CA, with logging `git`;
/// returns the log's path too. `git` (the fallback) trusts the CA too:
/// its libcurl may be built on GnuTLS, which ignores `SSL_CERT_FILE`.
fn trusting(server: &GitHttps) -> (Fixture, PathBuf) {
    let mut f = Fixture::new();
    let ca = server.ca_file().display().to_string();
    f.extra_env.push(("SSL_CERT_FILE".into(), ca.clone()));
    f.extra_env.push(("GIT_SSL_CAINFO".into(), ca));
    let log = f.root().join("git.log");
    logging_git(&f, &log);
    (f, log)
}

/// A repository `multi` with three skills under `skills/`, served.
fn multi_repo(f: &Fixture, server: &GitHttps) -> PathBuf {
    let repo = f.root().join("multi");
    for n in NAMES {
        let fm = format!("name: {n}\ndescription: d\nversion: \"1.0.0\"");
        let dir = f.skill(&repo, &format!("skills/{n}"), &fm, "body");
        f.write(&dir, "scripts/run.sh", format!("echo {n}\n"));
    }
    common::commit_all(&repo);
    server.serve("multi", &repo);
    repo
}

/// The commit `rev` names in `repo`.
fn rev_parse(repo: &Path, rev: &str) -> String {
    object_id(repo, &format!("{rev}^{{commit}}"))
}

/// The object `rev` (`COMMIT:PATH` for a tree) names in `repo`.
fn object_id(repo: &Path, rev: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", rev])
        .current_dir(repo)
        .output()
        .expect("git rev-parse");
    assert!(out.status.success(), "rev-parse {rev}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// No `git` process fetched or read objects: no fallback ran.
fn assert_in_process(log: &Path) {
    for cmd in ["fetch", "remote-https", "ls-tree", "cat-file", "clone"] {
        assert_eq!(git_calls(log, cmd), 0, "git {cmd} ran");
    }
}

/// Each installed skill in `project` holds exactly the files of its
/// directory in `repo` (plus skillpm's install stamp).
fn assert_installed_trees(project: &Path, repo: &Path) {
    for n in NAMES {
        let want = tree::snapshot(&repo.join("skills").join(n), &|_| false);
        let installed = project.join(".agents/skills").join(n);
        let got = tree::snapshot(&installed, &tree::under(&[".skillpm-install"]));
        assert_eq!(tree::changes(&want, &got), None, "{n}");
    }
}

/// A project holding copies of `from`'s manifest and lock.
fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for file in ["skills.toml", "skills.lock"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

#[test]
fn add_all_over_https_fetches_in_process() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    let head = rev_parse(&repo, "HEAD");
    let url = server.url("multi");
    f.ok(&["init"]);
    f.ok(&["add", "--all", &format!("git+{url}")]);

    assert_in_process(&log);
    // The capability advertisement, then two protocol v2 commands
    // (`ls-refs`, `fetch`).
    let paths: Vec<String> = server.requests().iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/multi.git/info/refs",
            "/multi.git/git-upload-pack",
            "/multi.git/git-upload-pack"
        ]
    );
    // In HTTP/1.1, though the server offers HTTP/2 as well: requests in
    // turn gain nothing from HTTP/2's frames, which cost both ends.
    let versions: Vec<String> = server
        .requests()
        .iter()
        .map(|s| s.version.clone())
        .collect();
    assert_eq!(versions, ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1"]);
    let skills = lock_skills(&f.project);
    assert_eq!(skills.len(), NAMES.len());
    for s in &skills {
        assert_eq!(s["source"].as_str().unwrap(), format!("git+{url}#{head}"));
    }
    assert_lock_checksums(&skills, &repo);
    assert_installed_trees(&f.project, &repo);
}

/// A project that added every skill of `multi` over https, copied to
/// `cold` (returned last) with the cache emptied and the server's log and
/// the git log cleared: what a restore on a fresh machine starts from.
fn added_then_cold(server: &GitHttps) -> (Fixture, PathBuf, PathBuf, PathBuf) {
    let (f, log) = trusting(server);
    let repo = multi_repo(&f, server);
    f.ok(&["init"]);
    f.ok(&["add", "--all", &format!("git+{}", server.url("multi"))]);
    let cold = f.root().join("cold");
    copy_project(&f.project, &cold);
    std::fs::remove_dir_all(f.cache.join("skillpm")).unwrap();
    server.clear();
    std::fs::remove_file(&log).ok();
    (f, log, repo, cold)
}

/// A lock restores over https with the cache gone (`--locked`: a fetch,
/// in process, of the same trees; `--frozen` refuses without asking the
/// server) and with the git cache warm (`--frozen`: no request at all).
#[test]
fn locked_install_from_https_lock() {
    let server = GitHttps::start();
    let (f, log, repo, cold) = added_then_cold(&server);
    let cold_dir = cold.to_str().unwrap();
    let out = f.skillpm(&["--quiet", "-C", cold_dir, "install", "--frozen"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("--frozen"));
    assert_eq!(server.requests(), [], "--frozen stays offline");
    f.ok(&["-C", cold_dir, "install", "--locked"]);
    assert_in_process(&log);
    // The lock names the commit: it is fetched alone, by its id, after
    // the advertisement and the refs' listing.
    let seen: Vec<_> = server
        .requests()
        .iter()
        .map(|s| {
            (
                s.method.clone(),
                s.path.clone(),
                s.git_protocol.clone(),
                s.status,
            )
        })
        .collect();
    let post = |path: &str| {
        (
            "POST".to_string(),
            path.to_string(),
            "version=2".to_string(),
            200,
        )
    };
    assert_eq!(
        seen,
        [
            (
                "GET".to_string(),
                "/multi.git/info/refs".to_string(),
                "version=2".to_string(),
                200
            ),
            post("/multi.git/git-upload-pack"),
            post("/multi.git/git-upload-pack"),
        ]
    );
    assert_installed_trees(&cold, &repo);
    assert_eq!(lock_skills(&cold), lock_skills(&f.project));

    // Everything but the git clones gone: nothing to ask the server.
    let warm = f.root().join("warm");
    copy_project(&f.project, &warm);
    for entry in std::fs::read_dir(f.cache.join("skillpm")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() && !p.ends_with("git-v1") {
            std::fs::remove_dir_all(&p).unwrap();
        }
    }
    server.clear();
    f.ok(&["-C", warm.to_str().unwrap(), "install", "--frozen"]);
    assert_eq!(server.requests(), [], "the locked commit is cached");
    assert_in_process(&log);
    assert_installed_trees(&warm, &repo);
}

/// Whether the bare repository `git_dir` holds the object `id`.
fn has_object(git_dir: &Path, id: &str) -> bool {
    std::process::Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "-e", id])
        .status()
        .unwrap()
        .success()
}

/// The lock records each git skill's tree (`git rev-parse COMMIT:PATH`),
/// and a cold restore fetches the locked commit alone, without history
/// (the refs' listing, then one fetch), and packs each skill from the
/// tree the lock names. A tree the clone does not have (a lock edited by
/// hand, say) costs no request: that skill is packed from its path, and
/// its checksum decides. A lock without trees (written before they were
/// recorded) fetches the same commit.
#[test]
fn a_restore_fetches_the_locked_commit_alone() {
    let server = GitHttps::start();
    let (f, log, repo, cold) = added_then_cold(&server);
    let head = rev_parse(&repo, "HEAD");
    let skills = lock_skills(&f.project);
    let mut trees = Vec::new();
    for s in &skills {
        let path = s["path"].as_str().unwrap();
        let want = object_id(&repo, &format!("{head}:{path}"));
        assert_eq!(s["tree"].as_str(), Some(want.as_str()), "{s:?}");
        trees.push(want);
    }
    let posts = || server.counts().get("/multi.git/git-upload-pack").copied();
    // What the server sent is not counted as from the cache.
    let restore = |dir: &Path| {
        let out = f.skillpm(&["-C", dir.to_str().unwrap(), "install", "--locked"]);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("(0 from cache)"), "{err}");
    };
    restore(&cold);
    assert_eq!(posts(), Some(2), "{:?}", server.requests());
    assert_in_process(&log);
    assert_installed_trees(&cold, &repo);
    assert_eq!(lock_skills(&cold), skills);
    let clone = cache_repo(&f);
    for t in trees.iter().chain([&head]) {
        assert!(has_object(&clone, t), "object {t}");
    }
    let shallow = std::fs::read_to_string(clone.join("shallow")).unwrap();
    assert_eq!(shallow.trim(), head, "the commit came without history");

    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    for (name, text) in [
        ("bogus", lock.replace(&trees[0], &"0".repeat(40))),
        (
            "untreed",
            lock.lines()
                .filter(|l| !l.starts_with("tree = "))
                .map(|l| format!("{l}\n"))
                .collect(),
        ),
    ] {
        let dir = f.root().join(name);
        copy_project(&f.project, &dir);
        std::fs::write(dir.join("skills.lock"), &text).unwrap();
        std::fs::remove_dir_all(f.cache.join("skillpm")).unwrap();
        server.clear();
        restore(&dir);
        assert_eq!(posts(), Some(2), "{name}: {:?}", server.requests());
        assert_installed_trees(&dir, &repo);
        assert_eq!(
            std::fs::read_to_string(dir.join("skills.lock")).unwrap(),
            text
        );
    }
    // `update` of the lock without trees records them, and reports no
    // skill as updated: nothing installed changed.
    let untreed = f.root().join("untreed");
    let out = f.skillpm(&["-C", untreed.to_str().unwrap(), "update"]);
    let said = common::stderr(&out) + &common::stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        !said.contains("Updated") && said.contains("Up to date"),
        "{said}"
    );
    assert_eq!(lock_skills(&untreed), skills);
    assert_in_process(&log);
}

/// Commits `len` bytes of incompressible noise at `path` in `repo`.
fn commit_noise(f: &Fixture, repo: &Path, path: &str, len: usize) {
    f.write(
        repo,
        path,
        skillpm_test_support::seeded::noise(len as u64, len),
    );
    common::git(repo, &["add", "-A"]);
    common::git(repo, &["commit", "-qm", "noise"]);
}

/// Bytes under `dir`, every file.
fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            bytes_under(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

/// `add` and a restore fetch the commits they read without the history
/// behind them: a 512 KiB file that an earlier commit added and a later
/// one removed is never downloaded. A commit behind the tips is fetched
/// alone by its id; an abbreviated id makes the clone whole; a lock
/// pinning an older commit restores from a cold cache with that commit
/// fetched alone.
#[test]
fn git_fetches_take_no_history_they_do_not_read() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    commit_noise(&f, &repo, "old/noise.bin", 512 * 1024);
    let first = rev_parse(&repo, "HEAD~1");
    common::git(&repo, &["rm", "-rq", "old"]);
    f.write(&repo, "skills/alpha/notes.md", "later\n");
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-qm", "drop the noise"]);
    let url = format!("git+{}", server.url("multi"));
    f.ok(&["init"]);
    f.ok(&["add", &url, "--skill", "alpha"]);
    let cache = f.cache.join("skillpm");
    let git_bytes = bytes_under(&cache.join("git-v1"));
    assert!(git_bytes < 256 * 1024, "{git_bytes} bytes of git after add");
    // A branch that does not exist is missing at any depth: the error,
    // without fetching the history to find out.
    let out = f.skillpm(&["add", &format!("{url}@no-such-branch"), "--skill", "beta"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("is not a tag, branch or commit"));
    assert!(bytes_under(&cache.join("git-v1")) < 256 * 1024);

    let cold = f.root().join("cold");
    copy_project(&f.project, &cold);
    std::fs::remove_dir_all(&cache).unwrap();
    f.ok(&["-C", cold.to_str().unwrap(), "install", "--locked"]);
    assert_in_process(&log);
    assert_eq!(
        std::fs::read_to_string(cold.join(".agents/skills/alpha/notes.md")).unwrap(),
        "later\n"
    );
    let git_bytes = bytes_under(&cache.join("git-v1"));
    assert!(
        git_bytes < 256 * 1024,
        "{git_bytes} bytes of git in the cache"
    );

    // A commit behind the tips, by its id: fetched alone, without the
    // history that holds the noise.
    let add_at = |rev: &str| {
        let at = format!("{url}@{rev}");
        f.ok(&["-C", cold.to_str().unwrap(), "add", &at, "--skill", "beta"]);
    };
    add_at(&first);
    assert!(bytes_under(&cache.join("git-v1")) < 256 * 1024);
    // An abbreviated id only the history can resolve: the clone is
    // fetched whole.
    add_at(&first[..12]);
    assert!(bytes_under(&cache.join("git-v1")) > git_bytes + 512 * 1024);

    // A lock that pins the older commit (for beta) and the tip (for
    // alpha), restored with a cold cache: each commit is fetched alone
    // (the refs' listing, then one fetch), without the noise between.
    let older = f.root().join("older");
    copy_project(&cold, &older);
    std::fs::remove_dir_all(&cache).unwrap();
    server.clear();
    f.ok(&["-C", older.to_str().unwrap(), "install", "--locked"]);
    assert!(bytes_under(&cache.join("git-v1")) < 256 * 1024);
    assert_eq!(
        server.counts().get("/multi.git/git-upload-pack"),
        Some(&4),
        "{:?}",
        server.requests()
    );
    assert_eq!(
        std::fs::read_to_string(older.join(".agents/skills/beta/SKILL.md")).unwrap(),
        std::fs::read_to_string(repo.join("skills/beta/SKILL.md")).unwrap()
    );
    assert_in_process(&log);
}

/// Ctrl-C while a fetch of tips is under way leaves nothing behind that
/// breaks the next fetch, whether it is the first fetch of a clone or a
/// later one into it: the pack comes in through a temporary file, which
/// must go with the process (a `shallow.lock` left by a killed gitoxide
/// fetch, before skillpm fetched on its own, failed every later fetch of
/// that URL at once; none may be there either).
/// A fetch interrupted while its pack comes in, by Ctrl-C or by
/// `kill -9`, loses nothing and blocks nothing: the next run installs
/// every tree and leaves no temporary file or lock in the cache. Ctrl-C
/// has gitoxide remove the files it registered, but a signal landing
/// between a file's creation and its registration leaves that file, and
/// `kill -9` leaves everything; either way the next fetch into that clone
/// sweeps it first (`source::git::fetching`). After `kill -9` something
/// was left, so the round proves the sweep, not the signal handler.
#[test]
fn an_interrupted_fetch_leaves_no_lock_behind() {
    let server = GitHttps::start();
    let (f, _log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    f.ok(&["init"]);
    let url = format!("git+{}", server.url("multi"));
    let git = f.cache.join("skillpm/git-v1");
    // What a fetch holds while the pack comes in: the pack's temporary
    // file, and any lock file.
    let held = || -> Vec<PathBuf> {
        let mut found = Vec::new();
        for clone in std::fs::read_dir(&git).into_iter().flatten().flatten() {
            let pack = clone.path().join("objects/pack");
            let entries = std::fs::read_dir(&pack).into_iter().flatten().flatten();
            found.extend(entries.map(|e| e.path()).filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(".tmp"))
            }));
            found.extend(
                ["shallow.lock", "refs/heads/main.lock", "packed-refs.lock"]
                    .map(|l| clone.path().join(l))
                    .into_iter()
                    .filter(|p| p.exists()),
            );
        }
        found
    };
    for (round, (noise, signal)) in [("big/noise.bin", "-INT"), ("big/more.bin", "-KILL")]
        .into_iter()
        .enumerate()
    {
        commit_noise(&f, &repo, noise, 16 << 20);
        let mut child = f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .args(["add", "--all", &url])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        // Interrupted once the pack's temporary file has been seen by two
        // polls in a row: the pack is coming in.
        let mut seen = Vec::new();
        loop {
            let now = held();
            if now.iter().any(|p| seen.contains(p)) {
                break;
            }
            seen = now;
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: the fetch never took its lock"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "round {round}: the fetch ended first"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let killed = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert!(!status.success());
        if signal == "-KILL" {
            assert_ne!(
                held(),
                Vec::<PathBuf>::new(),
                "kill -9 left nothing to sweep"
            );
        }
        f.ok(&["add", "--all", &url]);
        assert_installed_trees(&f.project, &repo);
        assert_eq!(held(), Vec::<PathBuf>::new(), "round {round}: left behind");
    }
}

/// A ref's `.lock` that a killed fetch left in the clone (it was
/// mid-update) used to fail every later fetch into it ("the lockfile ...
/// might need manual deletion"). The next fetch sweeps it: `update` takes
/// the new commit.
#[test]
fn a_stale_ref_lock_does_not_block_the_next_fetch() {
    let server = GitHttps::start();
    let (f, _log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    f.ok(&["init"]);
    let url = format!("git+{}", server.url("multi"));
    f.ok(&["add", "--all", &url]);
    let clone = cache_repo(&f);
    // Where `kill -9` leaves it: the ref's lock in place, and the clone's
    // fetch lock file still saying a fetch is running. (A new clone's
    // refs are packed; the update that was killed made `refs/heads`.)
    let stale = clone.join("refs/heads/main.lock");
    std::fs::create_dir_all(clone.join("refs/heads")).unwrap();
    std::fs::write(&stale, "").unwrap();
    let mut marker = clone.into_os_string();
    marker.push(".skillpm-fetch");
    std::fs::write(&marker, "1").unwrap();
    commit_noise(&f, &repo, "later.bin", 1024);
    f.ok(&["update"]);
    assert!(!stale.exists());
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    assert!(lock.contains(&rev_parse(&repo, "HEAD")), "{lock}");
}

/// The server was spoken to in protocol v0 (the advertisement, then the
/// negotiation), in process: no `git` ran.
fn assert_fetched_in_v0(server: &GitHttps, log: &Path) {
    assert_in_process(log);
    let paths: Vec<String> = server.requests().iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        paths,
        ["/multi.git/info/refs", "/multi.git/git-upload-pack"]
    );
}

/// A lock is the truth about a git tree's bytes too: a checksum that is
/// not the tree's refuses the restore of that skill, whichever way the
/// tree was fetched, and nothing of it is installed.
#[test]
fn a_restore_refuses_a_tree_whose_checksum_is_not_the_locks() {
    let server = GitHttps::start();
    let (f, _log, _repo, cold) = added_then_cold(&server);
    let skills = lock_skills(&cold);
    let name = skills[0]["name"].as_str().unwrap().to_string();
    let checksum = skills[0]["checksum"].as_str().unwrap().to_string();
    let wrong = format!("sha256:{}", "1".repeat(64));
    let lock_path = cold.join("skills.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    std::fs::write(&lock_path, lock.replacen(&checksum, &wrong, 1)).unwrap();
    std::fs::remove_dir_all(cold.join(".agents")).ok();
    let out = f.skillpm(&["-C", cold.to_str().unwrap(), "install", "--locked"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&name) && err.contains("checksum"), "{err}");
    assert!(!cold.join(".agents/skills").join(&name).exists());
}

/// A server that never hears the client asked for protocol v2 (git
/// before 2.18, a proxy that drops `Git-Protocol`) is spoken to in v0:
/// the restore installs the same trees.
#[test]
fn locked_install_from_a_server_that_only_speaks_v0() {
    let server = GitHttps::start();
    let (f, log, repo, cold) = added_then_cold(&server);
    server.speak_only_v0();
    f.ok(&["-C", cold.to_str().unwrap(), "install", "--locked"]);
    assert_fetched_in_v0(&server, &log);
    assert_installed_trees(&cold, &repo);
    assert_eq!(lock_skills(&cold), lock_skills(&f.project));
}

/// The same server, seen by a first `add`.
#[test]
fn add_from_a_server_that_only_speaks_v0() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    server.speak_only_v0();
    f.ok(&["init"]);
    f.ok(&["add", "--all", &format!("git+{}", server.url("multi"))]);
    assert_fetched_in_v0(&server, &log);
    assert_installed_trees(&f.project, &repo);
    assert_lock_checksums(&lock_skills(&f.project), &repo);
}

/// The clone of the one URL in `f`'s cache (it has its fetch lock file
/// beside it).
fn cache_repo(f: &Fixture) -> PathBuf {
    let git = f.cache.join("skillpm/git-v1");
    let mut repos: Vec<PathBuf> = std::fs::read_dir(&git)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(repos.len(), 1, "{repos:?}");
    repos.remove(0)
}

/// A fetch asks for what is named and no more: `add` of the default
/// branch maps the remote's `HEAD` alone into the clone (no other branch,
/// no tag), as one `packed-refs` file. `update` after an upstream commit
/// fetches the new tip without history (the refs, then the pack), and
/// with nothing new asks for the refs and nothing more.
#[test]
fn later_fetches_ask_only_for_what_the_clone_lacks() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    common::git(&repo, &["branch", "topic"]);
    common::git(&repo, &["tag", "v1"]);
    let url = format!("git+{}", server.url("multi"));
    f.ok(&["init"]);
    f.ok(&["add", "--all", &url]);
    let clone = cache_repo(&f);
    let refs = || {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&clone)
            .arg("show-ref")
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(refs().contains("refs/skillpm/HEAD"), "{}", refs());
    assert!(!refs().contains("refs/heads/topic"), "{}", refs());
    assert!(!refs().contains("refs/tags/v1"), "{}", refs());
    assert!(clone.join("packed-refs").is_file());

    f.write(&repo, "skills/alpha/notes.md", "later\n");
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-qm", "more"]);
    let head = rev_parse(&repo, "HEAD");
    server.clear();
    f.ok(&["update"]);
    let posts = || server.counts().get("/multi.git/git-upload-pack").copied();
    assert_eq!(posts(), Some(2), "{:?}", server.requests());
    assert_installed_trees(&f.project, &repo);
    assert!(
        refs().contains(&format!("{head} refs/skillpm/HEAD")),
        "{}",
        refs()
    );
    let shallow = std::fs::read_to_string(clone.join("shallow")).unwrap();
    assert!(shallow.contains(&head), "{shallow}");

    server.clear();
    f.ok(&["update"]);
    assert_eq!(posts(), Some(1), "{:?}", server.requests());
    assert_in_process(&log);
}

/// A repository renamed on its host answers with a redirect: the first
/// request follows it, in process, the fetch goes straight to the new
/// name, and the lock keeps the URL the user gave; a cold restore from
/// that lock follows it the same way.
#[test]
fn a_renamed_repository_is_followed_in_process() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    server.move_repository("old", "multi");
    let url = format!("git+{}", server.url("old"));
    f.ok(&["init"]);
    f.ok(&["add", "--all", &url]);
    assert_in_process(&log);
    let seen = || -> Vec<(String, u16)> {
        let requests = server.requests();
        requests.into_iter().map(|s| (s.path, s.status)).collect()
    };
    let (old, new) = ("/old.git/info/refs", "/multi.git/info/refs");
    let post = "/multi.git/git-upload-pack";
    let followed = [
        (old.into(), 301),
        (new.into(), 200),
        (post.into(), 200),
        (post.into(), 200),
    ];
    assert_eq!(seen(), followed);
    assert_installed_trees(&f.project, &repo);
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    assert!(lock.contains(&format!("{url}#")), "{lock}");

    let cold = f.root().join("cold");
    copy_project(&f.project, &cold);
    std::fs::remove_dir_all(f.cache.join("skillpm")).unwrap();
    server.clear();
    f.ok(&["-C", cold.to_str().unwrap(), "install", "--locked"]);
    assert_in_process(&log);
    assert_eq!(seen(), followed);
    assert_installed_trees(&cold, &repo);
}

/// `@REF` picks a tag or a branch; without it the default branch wins.
#[test]
fn tag_and_branch_refs_resolve_over_https() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = f.root().join("refs");
    let write = |body: &str| {
        f.skill(
            &repo,
            ".",
            "name: refd\ndescription: d\nversion: \"1.0.0\"",
            body,
        );
    };
    write("tagged");
    common::commit_all(&repo);
    common::git(&repo, &["tag", "v1"]);
    write("on main");
    common::git(&repo, &["commit", "-qam", "main"]);
    common::git(&repo, &["checkout", "-qb", "next"]);
    write("on next");
    common::git(&repo, &["commit", "-qam", "next"]);
    common::git(&repo, &["checkout", "-q", "main"]);
    server.serve("refs", &repo);
    let url = server.url("refs");

    for (spec, rev, body) in [
        (format!("git+{url}@v1"), "v1", "tagged"),
        (format!("git+{url}@next"), "next", "on next"),
        (format!("git+{url}"), "main", "on main"),
    ] {
        let project = f.root().join(format!("project-{rev}"));
        std::fs::create_dir_all(&project).unwrap();
        let dir = project.to_str().unwrap();
        f.ok(&["-C", dir, "init"]);
        f.ok(&["-C", dir, "add", &spec]);
        let skills = lock_skills(&project);
        let commit = rev_parse(&repo, rev);
        assert_eq!(
            skills[0]["source"].as_str().unwrap(),
            format!("git+{url}#{commit}"),
            "{spec}"
        );
        let text = std::fs::read_to_string(project.join(".agents/skills/refd/SKILL.md")).unwrap();
        assert!(text.ends_with(body), "{spec}: {text}");
    }
    assert_in_process(&log);
}

/// Runs `skillpm --quiet add SPEC`, which must fail with exit code 1 and
/// one line, leave the project as it was and not panic; returns stderr.
fn add_fails(f: &Fixture, spec: &str) -> String {
    f.ok(&["init"]);
    let before = tree::snapshot(&f.project, &|_| false);
    let out = f.skillpm(&["--quiet", "add", spec]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    if let Some(changes) = tree::changes(&before, &tree::snapshot(&f.project, &|_| false)) {
        panic!("add {spec} changed the project: {changes}");
    }
    common::assert_tmp_empty(f);
    err
}

#[test]
fn missing_repository_is_one_clean_error() {
    let server = GitHttps::start();
    let (f, _log) = trusting(&server);
    let url = server.url("nowhere");
    let err = add_fails(&f, &format!("git+{url}"));
    assert!(err.contains(&url), "{err}");
    let statuses: Vec<u16> = server.requests().iter().map(|s| s.status).collect();
    assert!(
        !statuses.is_empty() && statuses.iter().all(|s| *s == 404),
        "the server answered 404: {statuses:?}"
    );
}

/// Without `SSL_CERT_FILE` the test CA is unknown: the handshake fails,
/// no HTTP request gets through, and the error is one line.
#[test]
fn untrusted_certificate_is_one_clean_error() {
    let server = GitHttps::start();
    let f = Fixture::new();
    logging_git(&f, &f.root().join("git.log"));
    let repo = multi_repo(&f, &server);
    let url = server.url("multi");
    let err = add_fails(&f, &format!("git+{url}"));
    assert!(err.contains(&url) && err.contains("certificate"), "{err}");
    assert_eq!(server.requests(), [], "no request passed TLS");
    assert!(repo.join(".git").is_dir());
}

/// An authority that only `SSL_CERT_DIR` holds is trusted although
/// `SSL_CERT_FILE` names a bundle without it: skillpm reads the bundle
/// first and the directory when the bundle does not vouch (see
/// `source::tls`), so it trusts what the system's default set would.
/// Without it in the directory either, the same add is refused.
#[test]
fn an_authority_only_the_certificate_directory_holds_is_trusted() {
    let server = GitHttps::start();
    let mut f = Fixture::new();
    let log = f.root().join("git.log");
    logging_git(&f, &log);
    let bundle = f.root().join("bundle.pem");
    std::fs::write(&bundle, skillpm_test_support::issued().ca_pem).unwrap();
    let dir = f.root().join("certs");
    std::fs::create_dir(&dir).unwrap();
    f.extra_env
        .push(("SSL_CERT_FILE".into(), bundle.display().to_string()));
    f.extra_env
        .push(("SSL_CERT_DIR".into(), dir.display().to_string()));
    multi_repo(&f, &server);
    let url = format!("git+{}", server.url("multi"));

    let err = add_fails(&f, &url);
    assert!(err.contains("certificate"), "{err}");

    std::fs::copy(server.ca_file(), dir.join("server.pem")).unwrap();
    f.ok(&["add", "--all", &url]);
    assert_eq!(lock_skills(&f.project).len(), NAMES.len());
    assert_in_process(&log);
}

/// With no authority to trust anywhere, the error says where skillpm
/// looks for them, in one line, and nothing is fetched.
#[test]
fn no_authorities_at_all_is_one_error_that_says_where_to_look() {
    let server = GitHttps::start();
    let mut f = Fixture::new();
    let empty = f.root().join("no-certs");
    std::fs::create_dir(&empty).unwrap();
    f.extra_env.push((
        "SSL_CERT_FILE".into(),
        empty.join("missing.pem").display().to_string(),
    ));
    f.extra_env
        .push(("SSL_CERT_DIR".into(), empty.display().to_string()));
    multi_repo(&f, &server);
    let err = add_fails(&f, &format!("git+{}", server.url("multi")));
    assert!(
        err.contains("no CA certificates were found (set SSL_CERT_FILE or SSL_CERT_DIR)"),
        "{err}"
    );
    assert_eq!(server.requests(), [], "no request passed TLS");
}

/// Without `git` on the machine, https fetches work all the same, from a
/// server before protocol v2 too; a failure is its own reason, never
/// that git is missing.
#[test]
fn https_fetches_need_no_git() {
    let server = GitHttps::start();
    let f = Fixture::new();
    let repo = multi_repo(&f, &server);
    let url = server.url("multi");
    let err = add_fails(&f, &format!("git+{url}"));
    assert!(err.contains(&url) && err.contains("certificate"), "{err}");
    assert!(!err.contains("is git installed"), "{err}");

    let mut v0 = Fixture::new();
    let ca = server.ca_file().display().to_string();
    v0.extra_env.push(("SSL_CERT_FILE".into(), ca));
    server.speak_only_v0();
    v0.ok(&["init"]);
    v0.ok(&["add", "--all", &format!("git+{url}")]);
    assert_installed_trees(&v0.project, &repo);
}

/// A server that stops answering in the middle of a fetch costs the
/// client's timeout, not the rest of time.
#[test]
fn a_fetch_that_stalls_gives_up_after_the_timeout() {
    let server = GitHttps::start();
    let (mut f, log) = trusting(&server);
    multi_repo(&f, &server);
    server.speak_only_v0();
    server.stall_v0_fetches();
    f.extra_env
        .push(("SKILLPM_HTTP_TIMEOUT".into(), "1".into()));
    f.ok(&["init"]);
    let child = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .args(["add", "--all", &format!("git+{}", server.url("multi"))])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::output_within(
        child,
        std::time::Duration::from_secs(60),
        "the fetch from the stalled server",
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("multi.git"), "{err}");
    assert_in_process(&log);
    assert!(!f.project.join("skills.lock").exists());
}

/// Writes `text` as the fixture user's git configuration (`~/.gitconfig`).
fn user_gitconfig(f: &Fixture, text: &str) {
    std::fs::write(f.home.join(".gitconfig"), text).unwrap();
}

/// `url.<base>.insteadOf` in the user's git configuration rewrites the
/// URL a spec names, as `git` would; the lock keeps the URL the user
/// gave.
#[test]
fn an_instead_of_rewrite_in_git_config_is_honoured() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    let base = server.url("multi").replace("multi.git", "");
    user_gitconfig(
        &f,
        &format!("[url \"{base}\"]\n\tinsteadOf = https://git.example.invalid/\n"),
    );
    let url = "git+https://git.example.invalid/multi.git";
    f.ok(&["init"]);
    f.ok(&["add", "--all", url]);
    assert_in_process(&log);
    assert_installed_trees(&f.project, &repo);
    let skills = lock_skills(&f.project);
    assert!(skills[0]["source"].as_str().unwrap().starts_with(url));
    assert!(server.hits("multi") > 0);
}

/// `http.proxy` in the user's git configuration carries every request:
/// the proxy saw the server's address asked for, and the add worked.
#[test]
fn a_proxy_in_git_config_carries_the_fetch() {
    let server = GitHttps::start();
    let proxy = skillpm_test_support::proxy::ConnectProxy::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    user_gitconfig(&f, &format!("[http]\n\tproxy = {}\n", proxy.url()));
    f.ok(&["init"]);
    f.ok(&["add", "--all", &format!("git+{}", server.url("multi"))]);
    assert_in_process(&log);
    assert_installed_trees(&f.project, &repo);
    let host = server.url("multi");
    let host = host
        .trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    assert!(!proxy.targets().is_empty(), "the proxy was not used");
    assert!(
        proxy.targets().iter().all(|t| *t == host),
        "{:?}",
        proxy.targets()
    );
}

/// A private repository answers 401 without credentials: the add fails
/// in one line and prompts for nothing. With a credential helper in the
/// user's git configuration, it is fetched.
#[test]
fn a_credential_helper_answers_for_a_private_repository() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    // Basic base64("u:p").
    server.make_private("multi", "Basic dTpw");
    let url = format!("git+{}", server.url("multi"));
    let err = add_fails(&f, &url);
    assert!(err.contains("multi.git"), "{err}");
    assert!(server.requests().iter().any(|s| s.status == 401));

    user_gitconfig(
        &f,
        "[credential]\n\thelper = \"!f() { echo username=u; echo password=p; }; f\"\n",
    );
    server.clear();
    f.ok(&["add", "--all", &url]);
    assert_in_process(&log);
    assert_installed_trees(&f.project, &repo);
    assert!(server.requests().iter().any(|s| s.status == 200));
}

/// A repository whose other branches point at objects it lacks (a host's
/// broken mirror, a half-pushed branch) still installs: only the ref the
/// spec names is fetched.
#[test]
fn a_repository_whose_other_branches_miss_objects_installs() {
    let server = GitHttps::start();
    let (f, log) = trusting(&server);
    let repo = multi_repo(&f, &server);
    common::git(&repo, &["checkout", "-qb", "broken"]);
    f.write(&repo, "only-on-broken.txt", "gone\n");
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-qm", "broken"]);
    let broken = rev_parse(&repo, "HEAD");
    common::git(&repo, &["checkout", "-q", "main"]);
    let object = repo
        .join(".git/objects")
        .join(&broken[..2])
        .join(&broken[2..]);
    std::fs::remove_file(&object).unwrap();
    f.ok(&["init"]);
    f.ok(&["add", "--all", &format!("git+{}", server.url("multi"))]);
    f.ok(&["add", "--all", &format!("git+{}@main", server.url("multi"))]);
    assert_in_process(&log);
    assert_installed_trees(&f.project, &repo);
}
