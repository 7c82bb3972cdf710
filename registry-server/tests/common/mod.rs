//! Helpers shared by the registry-server integration tests: the real
//! `skillpm-registry` binary on 127.0.0.1:0 with a data dir, tokens, and
//! packing skills with the client's own packer.
#![allow(dead_code)]

use skillpm::source::registry::client::RegistryClient;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_skillpm-registry");

/// Spawns `skillpm-registry serve --listen 127.0.0.1:0 ARGS...` without
/// waiting for it, so several replicas can start (and migrate) at once.
pub fn spawn_serve(args: &[OsString], stderr: Stdio) -> Child {
    Command::new(BIN)
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn skillpm-registry")
}

/// Waits for the `listening on URL` line a spawned server prints first.
pub fn listening_url(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read address");
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}

pub struct Server {
    pub child: Child,
    pub url: String,
    pub data: PathBuf,
}

impl Server {
    /// Starts `serve` on `data`; the server's log goes to this stderr.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Self::start_with(data, extra, Stdio::inherit())
    }

    /// Starts `serve` on `data` with its log discarded.
    pub fn start_quiet(data: &Path, extra: &[&str]) -> Server {
        Self::start_with(data, extra, Stdio::null())
    }

    fn start_with(data: &Path, extra: &[&str], stderr: Stdio) -> Server {
        let mut args = vec![OsString::from("--data"), data.into()];
        args.extend(extra.iter().map(OsString::from));
        let mut child = spawn_serve(&args, stderr);
        let url = listening_url(&mut child);
        Server {
            child,
            url,
            data: data.to_path_buf(),
        }
    }

    pub fn token(&self, user: &str) -> String {
        token(&self.data, user)
    }

    pub fn client(&self, token: Option<&str>) -> RegistryClient {
        RegistryClient::new(&self.url, token.map(str::to_string)).expect("client")
    }

    pub async fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let http = reqwest::Client::new();
        loop {
            if let Ok(r) = http.get(format!("{}/health", self.url)).send().await {
                if r.status() == 200 {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "server never became healthy");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates an API token for `user` with the registry's own CLI.
pub fn token(data: &Path, user: &str) -> String {
    token_in(&[OsString::from("--data"), data.into()], user)
}

/// Creates an API token for `user` in the store that `store` (flags such
/// as `--data DIR` or `--database URL`) names.
pub fn token_in(store: &[OsString], user: &str) -> String {
    let out = Command::new(BIN)
        .args(["token", "create"])
        .args(store)
        .args(["--user", user])
        .output()
        .expect("token create");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_string();
    assert!(t.starts_with("spm_") && t.len() == 68, "{t}");
    t
}

/// Packs a skill whose SKILL.md is exactly `content`.
pub fn pack_raw(dir_name: &str, content: &str) -> Vec<u8> {
    pack_with_files(dir_name, content, &[])
}

/// Packs a skill whose SKILL.md is `content`, plus `files` (relative path,
/// bytes).
pub fn pack_with_files(dir_name: &str, content: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(dir_name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("SKILL.md"), content).expect("write");
    for (rel, bytes) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
    skillpm::archive::pack_dir(&dir).expect("pack")
}

/// SKILL.md with the given fields and body.
pub fn skill_md(name: &str, version: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\nversion: {version}\n---\n{body}\n")
}

pub fn pack(name: &str, version: &str, description: &str, body: &str) -> Vec<u8> {
    pack_raw(name, &skill_md(name, version, description, body))
}
