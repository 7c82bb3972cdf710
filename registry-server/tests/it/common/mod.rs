//! Helpers shared by the registry-server integration tests: the real
//! `skillpm-registry` binary (through `skillpm-test-support`) with a
//! client and a health wait, and packing skills with the client's own
//! packer.
#![allow(dead_code)]

use skillpm::source::registry::client::RegistryClient;
#[allow(unused_imports)] // each test binary uses a part
pub use skillpm_test_support::registry::{listening_url, Registry, Serve};
#[allow(unused_imports)]
pub use skillpm_test_support::{seeded, tree};
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_skillpm-registry");

/// A server from [`BIN`], its log on this stderr.
pub fn serve() -> Serve {
    Serve::new(BIN)
}

/// A registry on a data dir; `url`, `data`, `child`, `token` and `kill`
/// are the support crate's [`Registry`]'s, through `Deref`.
pub struct Server(pub Registry);

impl Server {
    /// Starts `serve` on `data`; the server's log goes to this stderr.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Server(serve().data(data).args(extra).start())
    }

    /// Starts `serve` on `data` with its log discarded.
    pub fn start_quiet(data: &Path, extra: &[&str]) -> Server {
        Server(serve().data(data).args(extra).quiet().start())
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
}

impl std::ops::Deref for Server {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Registry {
        &mut self.0
    }
}

/// Creates an API token for `user` with the registry's own CLI.
pub fn token(data: &Path, user: &str) -> String {
    token_in(&[OsString::from("--data"), data.into()], user)
}

/// Creates an API token for `user` in the store that `store` (flags such
/// as `--data DIR` or `--database URL`) names.
pub fn token_in(store: &[OsString], user: &str) -> String {
    skillpm_test_support::registry::token_in(Path::new(BIN), store, user)
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

/// The shared services' URLs, `(SKILLPM_TEST_POSTGRES, SKILLPM_TEST_S3)`,
/// or `None` after saying why `test` is skipped. CI sets
/// `SKILLPM_REQUIRE_SERVICES`, so there a missing service fails instead.
pub fn services(test: &str) -> Option<(String, String)> {
    let (Ok(postgres), Ok(s3)) = (
        std::env::var("SKILLPM_TEST_POSTGRES"),
        std::env::var("SKILLPM_TEST_S3"),
    ) else {
        assert!(
            std::env::var_os("SKILLPM_REQUIRE_SERVICES").is_none(),
            "{test}: SKILLPM_REQUIRE_SERVICES is set but SKILLPM_TEST_POSTGRES / SKILLPM_TEST_S3 are not"
        );
        println!(
            "skipping {test}: SKILLPM_TEST_POSTGRES and SKILLPM_TEST_S3 are not set \
             (run `scripts/services.sh start` and `eval \"$(scripts/services.sh env)\"`)"
        );
        return None;
    };
    Some((postgres, s3))
}

/// `PUT /api/v1/skills/new` with `token`: the status and the JSON body
/// (`Null` when there is none), for tests that check refusals.
pub async fn publish_raw(url: &str, token: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    let resp = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
        .put(format!("{url}/api/v1/skills/new"))
        .header("Authorization", format!("Bearer {token}"))
        .body(body)
        .send()
        .await
        .expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}
