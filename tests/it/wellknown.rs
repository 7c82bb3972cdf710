//! Agent Skills discovery via well-known URIs, end to end: fixture sites
//! served over loopback HTTP by a tiny static server (modern and legacy
//! index locations; `skill-md`, `.tar.gz` and `.zip` artifacts), the real
//! `skillpm-registry`'s own well-known index, and a third-party client
//! (vercel's `skills` CLI) reading that index.

use crate::common;
use common::site::{tar_gz, Site};
use common::{run_vercel, stderr, vercel_skills, Fixture, Registry};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};

// ------------------------------------------------------------ artifacts

fn skill_md(name: &str, desc: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: {desc}\n---\n# {name}\nUse it.\n").into_bytes()
}

/// A `.zip` of `files`, each a regular file.
fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, data) in files {
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(if path.ends_with(".sh") { 0o755 } else { 0o644 });
        w.start_file(*path, opts).expect("zip");
        w.write_all(data).expect("zip");
    }
    w.finish().expect("zip").into_inner()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// Writes the modern index for `entries` (name, type, url, digest,
/// description).
fn modern_index(site: &Site, entries: &[(&str, &str, &str, String, &str)]) {
    let skills: Vec<serde_json::Value> = entries
        .iter()
        .map(|(name, ty, url, digest, desc)| {
            serde_json::json!({"name": name, "type": ty, "description": desc, "url": url, "digest": digest})
        })
        .collect();
    let index = serde_json::json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": skills,
    });
    site.put(
        ".well-known/agent-skills/index.json",
        serde_json::to_string_pretty(&index)
            .expect("json")
            .as_bytes(),
    );
}

/// A site with three skills: `hello` as a SKILL.md, `tarred` as a
/// `.tar.gz` (its URL relative with `..`), `zipped` as a `.zip` that wraps
/// everything in one directory.
fn three_skill_site(f: &Fixture) -> Site {
    let site = Site::start(&f.root().join("site"));
    let hello = skill_md("hello", "Says hello");
    site.put(".well-known/agent-skills/hello/SKILL.md", &hello);
    let tarred = tar_gz(&[
        ("SKILL.md", &skill_md("tarred", "Comes as a tarball")),
        ("scripts/run.sh", b"echo tarred\n"),
    ]);
    site.put("archives/tarred.tar.gz", &tarred);
    let zipped = zip(&[
        ("zipped/SKILL.md", &skill_md("zipped", "Comes as a zip")),
        ("zipped/references/notes.md", b"notes\n"),
    ]);
    site.put(".well-known/agent-skills/zipped.zip", &zipped);
    modern_index(
        &site,
        &[
            (
                "hello",
                "skill-md",
                "hello/SKILL.md",
                sha256(&hello),
                "Says hello",
            ),
            (
                "tarred",
                "archive",
                "../../archives/tarred.tar.gz",
                sha256(&tarred),
                "Comes as a tarball",
            ),
            (
                "zipped",
                "archive",
                "/.well-known/agent-skills/zipped.zip",
                sha256(&zipped),
                "Comes as a zip",
            ),
        ],
    );
    site
}

/// A site with only a legacy v0.1.0 index: skill `old`, two files.
fn legacy_site(root: &Path) -> Site {
    let site = Site::start(root);
    site.put(
        ".well-known/skills/old/SKILL.md",
        &skill_md("old", "From a v0.1.0 index"),
    );
    site.put(".well-known/skills/old/ref/notes.md", b"legacy notes\n");
    site.put(
        ".well-known/skills/index.json",
        br#"{"skills":[{"name":"old","description":"From a v0.1.0 index","files":["SKILL.md","ref/notes.md"]}]}"#,
    );
    site
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The `[[skill]]` tables of the lock, by name.
fn locked(f: &Fixture) -> BTreeMap<String, toml::Table> {
    let lock: toml::Table = read(&f.project.join("skills.lock"))
        .parse()
        .expect("lock toml");
    lock.get("skill")
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_table().cloned())
                .map(|t| (t["name"].as_str().unwrap_or("").to_string(), t))
                .collect()
        })
        .unwrap_or_default()
}

// ------------------------------------------------------------ tests

#[test]
fn installs_skill_md_tar_gz_and_zip_from_a_modern_index() {
    let f = Fixture::new();
    let site = three_skill_site(&f);
    f.ok(&["init"]);
    f.ok(&["add", &site.url, "--all"]);
    // One index read and one download per skill, though `add` resolves
    // before it installs.
    let mut reqs = site.requests();
    reqs.sort();
    assert_eq!(
        reqs,
        [
            "/.well-known/agent-skills/hello/SKILL.md",
            "/.well-known/agent-skills/index.json",
            "/.well-known/agent-skills/zipped.zip",
            "/archives/tarred.tar.gz",
        ]
    );
    let root = f.project_root();
    assert!(read(&root.join("hello/SKILL.md")).contains("Says hello"));
    assert_eq!(read(&root.join("tarred/scripts/run.sh")), "echo tarred\n");
    assert_eq!(read(&root.join("zipped/references/notes.md")), "notes\n");
    assert!(root.join("zipped/SKILL.md").is_file());

    let index_url = format!("{}/.well-known/agent-skills/index.json", site.url);
    let lock = locked(&f);
    for (name, artifact) in [
        (
            "hello",
            format!("{}/.well-known/agent-skills/hello/SKILL.md", site.url),
        ),
        ("tarred", format!("{}/archives/tarred.tar.gz", site.url)),
        (
            "zipped",
            format!("{}/.well-known/agent-skills/zipped.zip", site.url),
        ),
    ] {
        let t = &lock[name];
        assert_eq!(
            t["source"].as_str(),
            Some(format!("wellknown+{index_url}").as_str())
        );
        assert_eq!(t["artifact"].as_str(), Some(artifact.as_str()), "{name}");
        let served = std::fs::read(
            site.root
                .join(artifact.trim_start_matches(&format!("{}/", site.url))),
        )
        .expect("served");
        assert_eq!(
            t["digest"].as_str(),
            Some(sha256(&served).as_str()),
            "{name}"
        );
    }
    let manifest = read(&f.project.join("skills.toml"));
    assert!(
        manifest.contains(&format!("hello = {{ wellknown = \"{index_url}\" }}")),
        "{manifest}"
    );

    // From the lock, with nothing installed and an empty cache: fetched by
    // the locked URLs, without reading the index.
    std::fs::remove_dir_all(&root).expect("rm");
    std::fs::remove_dir_all(&f.cache).expect("rm cache");
    site.clear_log();
    f.ok(&["install", "--locked"]);
    assert!(root.join("zipped/references/notes.md").is_file());
    let reqs = site.requests();
    assert!(!reqs.iter().any(|r| r.ends_with("index.json")), "{reqs:?}");
    assert_eq!(reqs.len(), 3, "{reqs:?}");
}

#[test]
fn several_skills_need_skill_or_all() {
    let f = Fixture::new();
    let site = three_skill_site(&f);
    f.ok(&["init"]);
    let out = f.skillpm(&["--quiet", "add", &site.url]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("holds 3 skills") && err.contains("--all"),
        "{err}"
    );
    for line in ["hello", "tarred", "zipped"] {
        assert!(
            err.lines().any(|l| l.trim_start().starts_with(line)),
            "{err}"
        );
    }
    assert!(err.contains("Comes as a zip"), "{err}");
    f.ok(&[
        "add",
        &format!("wellknown+{}", site.url),
        "--skill",
        "zipped",
    ]);
    assert!(f.project_root().join("zipped/SKILL.md").is_file());
    assert!(!f.project_root().join("hello").exists());
    assert_eq!(locked(&f).len(), 1);
}

#[test]
fn legacy_index_with_files() {
    let f = Fixture::new();
    let site = legacy_site(&f.root().join("site"));
    f.ok(&["init"]);
    f.ok(&["add", &format!("{}/", site.url)]);
    assert_eq!(
        read(&f.project_root().join("old/ref/notes.md")),
        "legacy notes\n"
    );
    let t = &locked(&f)["old"];
    assert_eq!(
        t["source"].as_str(),
        Some(format!("wellknown+{}/.well-known/skills/index.json", site.url).as_str())
    );
    assert_eq!(
        t["artifact"].as_str(),
        Some(format!("{}/.well-known/skills/old/", site.url).as_str())
    );
    // The modern location was tried first.
    let reqs = site.requests();
    assert_eq!(reqs[0], "/.well-known/agent-skills/index.json", "{reqs:?}");

    // A changed file is refused from the lock (the recorded digest covers
    // every file).
    site.put(".well-known/skills/old/ref/notes.md", b"changed\n");
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    std::fs::remove_dir_all(&f.cache).expect("rm cache");
    let out = f.skillpm(&["--quiet", "install", "--locked"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("digest mismatch"), "{}", stderr(&out));
}

#[test]
fn a_wrong_digest_is_refused_before_unpacking() {
    let f = Fixture::new();
    let site = Site::start(&f.root().join("site"));
    let evil = tar_gz(&[("SKILL.md", &skill_md("evil", "x"))]);
    site.put("evil.tar.gz", &evil);
    modern_index(
        &site,
        &[(
            "evil",
            "archive",
            "/evil.tar.gz",
            sha256(b"something else"),
            "x",
        )],
    );
    f.ok(&["init"]);
    let manifest_before = read(&f.project.join("skills.toml"));
    let out = f.skillpm(&["--quiet", "add", &site.url]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("digest mismatch for evil"), "{err}");
    assert!(!f.project_root().join("evil").exists());
    assert_eq!(read(&f.project.join("skills.toml")), manifest_before);
    common::assert_tmp_empty(&f);
}

#[test]
fn locked_refuses_a_changed_digest_and_update_rereads_the_index() {
    let f = Fixture::new();
    let site = three_skill_site(&f);
    f.ok(&["init"]);
    f.ok(&["add", &site.url, "--skill", "tarred"]);
    let before = locked(&f)["tarred"]["digest"].as_str().map(str::to_string);

    // The publisher ships new bytes under the same URL (and a new index).
    let tarred = tar_gz(&[
        ("SKILL.md", &skill_md("tarred", "Comes as a tarball, v2")),
        ("scripts/run.sh", b"echo v2\n"),
    ]);
    site.put("archives/tarred.tar.gz", &tarred);
    modern_index(
        &site,
        &[(
            "tarred",
            "archive",
            "../../archives/tarred.tar.gz",
            sha256(&tarred),
            "v2",
        )],
    );
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    std::fs::remove_dir_all(&f.cache).expect("rm cache");
    let out = f.skillpm(&["--quiet", "install", "--locked"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("digest mismatch for tarred"), "{err}");
    assert!(!f.project_root().join("tarred").exists());

    let out = f.ok(&["outdated"]);
    let new_digest = sha256(&tarred);
    assert!(
        out.contains(&format!("changed ({})", &new_digest[..19])),
        "{out}"
    );
    f.ok(&["update"]);
    let after = locked(&f)["tarred"]["digest"].as_str().map(str::to_string);
    assert_ne!(before, after);
    assert_eq!(after.as_deref(), Some(sha256(&tarred).as_str()));
    assert_eq!(
        read(&f.project_root().join("tarred/scripts/run.sh")),
        "echo v2\n"
    );
}

#[test]
fn hostile_archives_and_urls_are_refused() {
    let f = Fixture::new();
    let site = Site::start(&f.root().join("site"));
    // A zip holding a symlink, and one escaping with `..`.
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("SKILL.md", opts).expect("zip");
    w.write_all(&skill_md("linky", "x")).expect("zip");
    w.add_symlink("leak", "/etc/passwd", opts).expect("zip");
    let linky = w.finish().expect("zip").into_inner();
    site.put("linky.zip", &linky);
    let escape = zip(&[("SKILL.md", &skill_md("escape", "x")), ("../../evil", b"x")]);
    site.put("escape.zip", &escape);
    modern_index(
        &site,
        &[
            ("escape", "archive", "/escape.zip", sha256(&escape), "x"),
            ("linky", "archive", "/linky.zip", sha256(&linky), "x"),
            (
                "remote",
                "skill-md",
                "http://example.com/SKILL.md",
                sha256(b"x"),
                "x",
            ),
        ],
    );
    f.ok(&["init"]);
    for (name, why) in [("linky", "symlink"), ("escape", "escapes")] {
        let out = f.skillpm(&["--quiet", "add", &site.url, "--skill", name]);
        assert!(!out.status.success(), "{name}");
        assert!(stderr(&out).contains(why), "{name}: {}", stderr(&out));
    }
    assert!(!f.root().join("evil").exists());
    // Plain http to a non-loopback host never makes it into the index.
    let out = f.skillpm(&["--quiet", "add", &site.url, "--skill", "remote"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no skill `remote`"),
        "{}",
        stderr(&out)
    );
    let out = f.skillpm(&["--quiet", "add", "http://example.com"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("loopback"), "{}", stderr(&out));
}

/// A DNS name that resolves to this machine is refused before any
/// connection, though the URL names no local address: an index on the
/// internet could otherwise send the client to services that listen on
/// loopback only. The same site by literal address installs, so what is
/// refused is the name, not the site or its certificate (valid for both).
#[test]
fn a_name_that_resolves_to_this_machine_is_refused() {
    let name = skillpm_test_support::loopback_name()
        .expect("a name that /etc/hosts maps to 127.0.0.1 (.ci/run adds skillpm-loopback.test)");
    let f = Fixture::new();
    let site = Site::start(&f.root().join("site"));
    let hello = skill_md("hello", "Says hello");
    site.put("hello/SKILL.md", &hello);
    modern_index(
        &site,
        &[("hello", "skill-md", "/hello/SKILL.md", sha256(&hello), "x")],
    );
    let front = skillpm_test_support::tls_front::TlsFront::start();
    front.forward_to(&site.url);
    let mut f = f;
    let ca = front.ca_file().display().to_string();
    f.extra_env.push(("SSL_CERT_FILE".into(), ca));
    f.ok(&["init"]);

    let port = front.url().rsplit(':').next().expect("port").to_string();
    let by_name = format!("https://{name}:{port}");
    let out = f.skillpm(&["add", &by_name]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("resolves only to this machine"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(site.requests().is_empty(), "{:?}", site.requests());
    assert!(!f.project_root().join("hello").exists());

    f.ok(&["add", &front.url()]);
    assert_eq!(
        std::fs::read(f.project_root().join("hello/SKILL.md")).expect("installed"),
        hello
    );
}

// ------------------------------------------------------------ the registry

fn publish(f: &Fixture, name: &str, version: &str) {
    let dir = f.package_src(
        name,
        version,
        &format!("The {name} skill"),
        &format!("{name} {version}"),
    );
    f.ok(&["publish", dir.to_str().expect("utf8")]);
}

/// GET over a raw socket: (status line, headers, body).
fn http_get(url: &str, headers: &[(&str, &str)]) -> (String, String, Vec<u8>) {
    let rest = url.strip_prefix("http://").expect("http url");
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .expect("path");
    let mut s = TcpStream::connect(host).expect("connect");
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write");
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).expect("read");
    let split = resp
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("head");
    let head = String::from_utf8_lossy(&resp[..split]).to_string();
    let status = head.lines().next().unwrap_or("").to_string();
    (status, head.to_lowercase(), resp[split + 4..].to_vec())
}

#[test]
fn the_registry_serves_a_well_known_index_skillpm_installs_from() {
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    publish(&f, "alpha", "1.0.0");
    publish(&f, "alpha", "1.1.0");
    publish(&f, "beta", "0.3.0");
    publish(&f, "beta", "0.4.0");
    f.ok(&["yank", "beta@0.4.0"]);

    let index_url = format!("{}/.well-known/agent-skills/index.json", reg.url);
    let (status, head, body) = http_get(&index_url, &[]);
    assert!(status.contains("200"), "{status}");
    assert!(
        head.contains("cache-control: public, max-age=0, must-revalidate"),
        "{head}"
    );
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .expect("etag")
        .to_string();
    let index: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let skills = index["skills"].as_array().expect("skills");
    let got: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or(""),
                s["url"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "alpha",
                format!("{}/api/v1/skills/alpha/1.1.0/download", reg.url).as_str()
            ),
            (
                "beta",
                format!("{}/api/v1/skills/beta/0.3.0/download", reg.url).as_str()
            ),
        ]
    );
    for s in skills {
        assert_eq!(s["type"], "archive");
        let (_, _, tarball) = http_get(s["url"].as_str().expect("url"), &[]);
        assert_eq!(s["digest"].as_str(), Some(sha256(&tarball).as_str()));
    }
    let (status, _, _) = http_get(&index_url, &[("If-None-Match", etag.trim())]);
    assert!(status.contains("304"), "{status}");

    // skillpm, as any RFC client, installs from it.
    f.ok(&["init"]);
    f.ok(&["add", &reg.url, "--all"]);
    assert_eq!(
        read(&f.project_root().join("alpha/scripts/run.sh")),
        "echo 1.1.0\n"
    );
    assert_eq!(
        read(&f.project_root().join("beta/scripts/run.sh")),
        "echo 0.3.0\n"
    );
    let lock = locked(&f);
    assert_eq!(lock["alpha"]["version"].as_str(), Some("1.1.0"));
    assert_eq!(
        lock["alpha"]["source"].as_str(),
        Some(format!("wellknown+{index_url}").as_str())
    );

    // The registry serves canonical packs: the artifact gunzips to the
    // tree's canonical tar, whose sha256 is the lock's checksum; a cold
    // install from the lock gets the same tree.
    let artifact = lock["alpha"]["artifact"].as_str().expect("artifact");
    let (_, _, tarball) = http_get(artifact, &[]);
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(&tarball[..])
        .read_to_end(&mut tar)
        .expect("gunzip");
    assert_eq!(
        lock["alpha"]["checksum"].as_str(),
        Some(sha256(&tar).as_str())
    );
    assert_eq!(
        lock["alpha"]["digest"].as_str(),
        Some(sha256(&tarball).as_str())
    );
    std::fs::remove_dir_all(f.project_root()).expect("rm");
    std::fs::remove_dir_all(&f.cache).expect("rm cache");
    f.ok(&["install", "--locked"]);
    assert_eq!(
        read(&f.project_root().join("beta/scripts/run.sh")),
        "echo 0.3.0\n"
    );

    // A new version changes the index (new ETag) and `update` takes it.
    publish(&f, "alpha", "1.2.0");
    let (status, _, _) = http_get(&index_url, &[("If-None-Match", etag.trim())]);
    assert!(status.contains("200"), "{status}");
    f.ok(&["update"]);
    assert_eq!(locked(&f)["alpha"]["version"].as_str(), Some("1.2.0"));
}

// ------------------------------------------------------------ vercel `skills`

/// `skills add URL` of every skill, for Claude Code (`.claude/skills`),
/// copied, without prompts.
fn vercel_install_all(
    tool: &(PathBuf, PathBuf),
    cwd: &Path,
    home: &Path,
    url: &str,
) -> (bool, String) {
    let args = [
        "add",
        url,
        "--skill",
        "*",
        "--agent",
        "claude-code",
        "--copy",
        "-y",
    ];
    run_vercel(tool, cwd, home, &args)
}

/// Every file under `dir`, relative path → contents.
fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let Ok(rel) = p.strip_prefix(base) {
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap_or_default(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn vercel_skills_lists_and_installs_from_the_registry() {
    let Some(tool) = vercel_skills() else { return };
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    publish(&f, "alpha", "1.0.0");
    publish(&f, "alpha", "1.1.0");
    publish(&f, "beta", "0.3.0");
    let (cwd, home) = (
        f.root().join("vercel-project"),
        f.root().join("vercel-home"),
    );

    let (ok, out) = run_vercel(&tool, &cwd, &home, &["add", &reg.url, "--list"]);
    assert!(ok, "{out}");
    assert!(out.contains("Found 2 skills"), "{out}");
    assert!(
        out.contains("alpha") && out.contains("The beta skill"),
        "{out}"
    );

    let (ok, out) = vercel_install_all(&tool, &cwd, &home, &reg.url);
    assert!(ok, "{out}");
    let installed = cwd.join(".claude/skills");
    assert_eq!(dir_names(&installed), ["alpha", "beta"], "{out}");
    assert_eq!(
        read(&installed.join("alpha/scripts/run.sh")),
        "echo 1.1.0\n"
    );
    assert!(read(&installed.join("beta/SKILL.md")).contains("version: \"0.3.0\""));
    let lock = read(&cwd.join("skills-lock.json"));
    assert!(lock.contains("\"sourceType\": \"well-known\""), "{lock}");
}

#[test]
fn skillpm_installs_what_vercel_skills_accepts_from_fixture_sites() {
    let Some(tool) = vercel_skills() else { return };
    let f = Fixture::new();
    let modern = three_skill_site(&f);
    let legacy = legacy_site(&f.root().join("legacy-site"));
    for (i, site) in [&modern, &legacy].into_iter().enumerate() {
        let (cwd, home) = (
            f.root().join(format!("vercel-{i}")),
            f.root().join(format!("vercel-home-{i}")),
        );
        let (ok, out) = vercel_install_all(&tool, &cwd, &home, &site.url);
        assert!(ok, "{out}");
        let theirs = cwd.join(".claude/skills");
        let accepted = dir_names(&theirs);
        assert!(!accepted.is_empty(), "vercel installed nothing: {out}");

        let project = f.root().join(format!("skillpm-{i}"));
        std::fs::create_dir_all(&project).expect("mkdir");
        let run = f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .current_dir(&project)
            .args(["--quiet", "add", &site.url, "--all"])
            .output()
            .expect("skillpm");
        assert!(run.status.success(), "{}", stderr(&run));
        for name in &accepted {
            let want = files_under(&theirs.join(name));
            let got = files_under(&project.join(".agents/skills").join(name));
            for (path, bytes) in &want {
                assert_eq!(got.get(path), Some(bytes), "{name}/{path}");
            }
        }
    }
}
