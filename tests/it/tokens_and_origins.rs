//! Tokens stay with their origin: the client talks only to the scheme,
//! host and port the user configured (whatever `config.json` or a redirect
//! says), `SKILLPM_TOKEN` goes only to a registry the user named for the
//! run, saved tokens only to the registry they were saved for, and a
//! credential typed into a registry URL is never echoed or stored.

use crate::common;
use crate::mock;

use common::{stderr, stdout, Fixture, Registry};
use mock::{good_package, MockServer, Reply};
use std::path::PathBuf;

/// A server that must never be contacted; it counts whatever reaches it.
fn elsewhere() -> MockServer {
    MockServer::start(|_, _| mock::status(404))
}

fn registry_with(
    hook: impl Fn(&mock::Req, &str) -> Option<Reply> + Send + Sync + 'static,
) -> MockServer {
    mock::registry(
        vec![("evil".into(), "1.0.0".into(), good_package("evil", "1.0.0"))],
        hook,
    )
}

fn skill_dir(f: &Fixture) -> PathBuf {
    f.skill(
        &f.root().join("src"),
        "evil",
        "name: evil\ndescription: A skill\nversion: \"1.0.0\"",
        "body",
    )
}

/// Runs skillpm expecting exit 1 with one `error:` line mentioning all of
/// `mention`; returns stdout and stderr together.
fn fails(f: &Fixture, args: &[&str], mention: &[&str]) -> String {
    // --quiet: no progress lines, so stderr is the error alone.
    let out = f.skillpm(&[&["--quiet"], args].concat());
    let (err, all) = (stderr(&out), format!("{}{}", stdout(&out), stderr(&out)));
    assert_eq!(out.status.code(), Some(1), "skillpm {args:?}: {all}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {all}");
    assert!(err.starts_with("error: "), "{all}");
    for m in mention {
        assert!(err.contains(m), "{args:?} should mention {m:?}: {err}");
    }
    all
}

#[test]
fn config_json_pointing_api_at_another_origin_is_refused() {
    let other = elsewhere();
    // Same host, another port: another origin.
    let target = other.url.clone();
    let reg = registry_with(move |req, _| {
        (req.path == "/config.json").then(|| {
            mock::json(&serde_json::json!({
                "dl": format!("{target}/api/v1/skills"),
                "api": target,
                "auth-required": false,
            }))
        })
    });
    let f = Fixture::new();
    let dir = skill_dir(&f);
    let dir = dir.to_str().unwrap();
    for args in [
        vec!["publish", dir, "--registry", &reg.url, "--token", "spm_x"],
        vec![
            "yank",
            "evil@1.0.0",
            "--registry",
            &reg.url,
            "--token",
            "spm_x",
        ],
        vec!["owner", "list", "evil", "--registry", &reg.url],
        vec!["search", "evil", "--registry", &reg.url],
    ] {
        fails(&f, &args, &["origin", &other.url]);
    }
    assert_eq!(other.all_hits(), Vec::<String>::new());
}

/// A `dl` on another origin is a CDN, as static.crates.io is for
/// crates.io: downloads go there, without the token, which stays with the
/// registry; its redirects may not leave it either.
#[test]
fn downloads_from_a_cdn_origin_carry_no_token() {
    let package = good_package("evil", "1.0.0");
    let served = package.clone();
    let cdn = MockServer::start(move |req, _| match req.path.as_str() {
        "/files/evil/1.0.0/download" if !req.authorized => mock::bytes(served.clone()),
        "/files/evil/1.0.0/download" => mock::status(403),
        _ => mock::status(404),
    });
    let target = cdn.url.clone();
    let reg = registry_with(move |req, base| {
        (req.path == "/config.json").then(|| {
            mock::json(&serde_json::json!({
                "dl": format!("{target}/files"),
                "api": base,
                "auth-required": false,
            }))
        })
    });
    let mut f = Fixture::new();
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
    f.extra_env
        .push(("SKILLPM_TOKEN".into(), "spm_secret".into()));
    f.ok(&["init"]);
    f.ok(&["add", "evil@1"]);
    assert!(f.project_root().join("evil/SKILL.md").is_file());
    assert_eq!(cdn.all_hits(), ["/files/evil/1.0.0/download"]);
    assert_eq!(reg.hits("/api/v1/skills/evil/1.0.0/download"), 0);
}

#[test]
fn redirects_to_another_port_are_refused_with_or_without_a_token() {
    let other = elsewhere();
    let target = other.url.clone();
    let reg = registry_with(move |req, _| {
        let to = |p: &str| Some(mock::redirect(&format!("{target}{p}")));
        match req.path.as_str() {
            "/api/v1/skills/new" => to("/api/v1/skills/new"),
            "/api/v1/skills/evil/1.0.0/download" => to("/evil.tar.gz"),
            _ => None,
        }
    });
    let f = Fixture::new();
    let dir = skill_dir(&f);
    fails(
        &f,
        &[
            "publish",
            dir.to_str().unwrap(),
            "--registry",
            &reg.url,
            "--token",
            "spm_x",
        ],
        &["redirect"],
    );
    let mut f = Fixture::new();
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
    f.ok(&["init"]);
    fails(&f, &["add", "evil@1"], &["redirect"]);
    assert_eq!(other.all_hits(), Vec::<String>::new());
}

#[test]
fn env_token_goes_only_to_a_registry_the_user_named() {
    let reg = registry_with(|_, _| None);
    let mut f = Fixture::new();
    f.extra_env
        .push(("SKILLPM_TOKEN".into(), "spm_env_secret".into()));
    // A project whose skills.toml names the registry.
    f.write(
        &f.project,
        "skills.toml",
        format!("[skills]\n\n[registries]\ndefault = \"{}\"\n", reg.url),
    );
    let dir = skill_dir(&f);
    let dir = dir.to_str().unwrap();
    fails(
        &f,
        &["publish", dir],
        &["SKILLPM_TOKEN", "skills.toml", "--registry"],
    );
    fails(&f, &["yank", "evil@1.0.0"], &["SKILLPM_TOKEN"]);
    fails(&f, &["owner", "add", "evil", "bob"], &["SKILLPM_TOKEN"]);
    assert_eq!(reg.hits("/api/v1/skills/new"), 0, "{:?}", reg.all_hits());
    assert_eq!(reg.all_hits(), Vec::<String>::new());

    // Named on the command line or in SKILLPM_REGISTRY, it is sent (the
    // mock then answers 404, which is beside the point).
    fails(&f, &["publish", dir, "--registry", &reg.url], &["404"]);
    assert_eq!(reg.hits("/api/v1/skills/new"), 1);
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
    fails(&f, &["publish", dir], &["404"]);
    assert_eq!(reg.hits("/api/v1/skills/new"), 2);
}

#[test]
fn saved_tokens_go_only_to_the_registry_they_were_saved_for() {
    let f = Fixture::new();
    let reg = Registry::start(&f.root().join("registry-data"));
    let port = reg.url.rsplit(':').next().unwrap().to_string();
    // Saved under one spelling, found under another of the same registry.
    let spelled = format!("HTTP://127.0.0.1:{port}/");
    let out = f.skillpm(&["login", "--registry", &spelled, "--token", &reg.token]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains(&reg.token), "{}", stderr(&out));
    let dir = skill_dir(&f);
    let dir = dir.to_str().unwrap();
    f.ok(&["publish", dir, "--registry", &reg.url]);
    // The same server under another name is another registry: no token.
    let by_name = format!("http://localhost:{port}");
    fails(
        &f,
        &["yank", "evil@1.0.0", "--registry", &by_name],
        &["no token for", &by_name],
    );
    let creds = std::fs::read_to_string(f.config.join("skillpm/credentials.toml")).unwrap();
    assert!(
        creds.contains(&format!("\"http://127.0.0.1:{port}\"")),
        "{creds}"
    );
}

#[test]
fn credentials_in_a_registry_url_are_never_shown_or_saved() {
    let secret = "s3cr3t-pw";
    let url = format!("http://user:{secret}@127.0.0.1:1");
    let f = Fixture::new();
    let dir = skill_dir(&f);
    let dir = dir.to_str().unwrap();
    for args in [
        vec!["publish", dir],
        vec!["publish", dir, "--token", "t"],
        vec!["yank", "evil@1.0.0"],
        vec!["owner", "list", "evil"],
        vec!["owner", "add", "evil", "bob"],
        vec!["owner", "remove", "evil", "bob"],
        vec!["search", "evil"],
        vec!["info", "evil"],
        vec!["login", "--token", "t"],
    ] {
        let mut args = args;
        args.extend(["--registry", url.as_str()]);
        let all = fails(&f, &args, &["***@127.0.0.1:1"]);
        assert!(!all.contains(secret), "{args:?} leaked: {all}");
    }
    // Through SKILLPM_REGISTRY, on the install path as well.
    let mut f = Fixture::new();
    f.extra_env.push(("SKILLPM_REGISTRY".into(), url.clone()));
    f.write(&f.project, "skills.toml", "[skills]\nevil = \"^1\"\n");
    for args in [
        vec!["install", "--frozen"],
        vec!["install"],
        vec!["publish", dir],
    ] {
        let all = fails(&f, &args, &["SKILLPM_REGISTRY"]);
        assert!(!all.contains(secret), "{args:?} leaked: {all}");
    }
    for (path, bytes) in common::tree::snapshot(f.root(), &|_| false) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "secret written to {}",
            path.display()
        );
    }
}
