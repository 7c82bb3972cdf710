//! `skillpm mcp` driven by MCP clients nobody here wrote: FastMCP's client
//! (`fastmcp-slim[client]==4.1.6`, Skills extension, protocol 2026-07-28)
//! and the official Python SDK (`mcp==2.3.0`, plain resources and tools,
//! protocol 2025-11-25), over stdio and Streamable HTTP, against a real
//! project tree: eligible, skipped, disabled, shadowed, user-invocable-only,
//! nested skills and symlinks out of a skill.
//!
//! The drivers in tests/mcp/ only talk to the server and report what they
//! saw as JSON; every assertion is here, against `status --json` and the
//! bytes on disk. The official inspector's CLI checks SEP-2640 conformance
//! and digests on its own, and so does the TypeScript SDK's `SkillsClient`
//! (`@modelcontextprotocol/client` 2.4.0). The tests skip when the clients are not installed,
//! unless SKILLPM_REQUIRE_MCP_CLIENTS=1 (CI). Install them with
//! `python3 -m pip install 'fastmcp-slim[client]==4.1.6' mcp==2.3.0`;
//! SKILLPM_MCP_PYTHON names another interpreter (a venv) if needed.

use crate::common;
use base64::Engine as _;
use common::Fixture;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const FASTMCP: &str = "4.1.6";
const MCP_SDK: &str = "2.3.0";

/// The interpreter with both clients at the pinned versions, or why not.
fn python() -> Result<String, String> {
    let py = std::env::var("SKILLPM_MCP_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&py)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('fastmcp-slim'), m.version('mcp'))",
        ])
        .output()
        .map_err(|e| format!("cannot run {py}: {e}"))?;
    let got = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || got != format!("{FASTMCP} {MCP_SDK}") {
        return Err(format!(
            "{py} lacks fastmcp-slim {FASTMCP} and mcp {MCP_SDK} (found `{got}`); install them with \
             python3 -m pip install 'fastmcp-slim[client]=={FASTMCP}' mcp=={MCP_SDK}"
        ));
    }
    Ok(py)
}

pub(crate) fn clients() -> Option<String> {
    match python() {
        Ok(py) => Some(py),
        Err(why) => {
            common::third_party_missing(
                "SKILLPM_REQUIRE_MCP_CLIENTS",
                "the MCP client tests",
                &why,
            );
            None
        }
    }
}

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn unb64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().expect("base64 string"))
        .expect("base64")
}

fn digest(bytes: &[u8]) -> String {
    skillpm::checksum::Checksum::of_bytes(bytes).to_string()
}

/// The project every test serves, and what should be served from it.
struct Tree {
    f: Fixture,
    /// command → directory, for every skill that must be served.
    served: BTreeMap<String, PathBuf>,
    /// command → files (relative) each served skill's manifest must list.
    files: BTreeMap<String, Vec<&'static str>>,
}

impl Tree {
    fn new() -> Tree {
        let f = Fixture::new();
        let proj = f.project_root();
        let user = f.user_root();
        f.write(
            &f.project,
            "skills.toml",
            "[engine]\ndisabled = [\"turned-off\"]\n",
        );
        let alpha = f.skill(
            &proj,
            "alpha",
            "name: alpha\ndescription: Fill in PDF forms and extract tables\nlicense: MIT\nmetadata:\n  author: test\n  tags: pdf forms",
            "# Alpha\nRun scripts/fill.sh.\n",
        );
        f.write(&alpha, "references/guide.md", "guide v1\n");
        f.write(&alpha, "scripts/fill.sh", "#!/bin/sh\necho fill\n");
        f.write(&alpha, "assets/logo.bin", [0u8, 159, 146, 150, 255, 0, 1]);
        f.write(&alpha, ".hidden-note", "dot entries are not served");
        // Shadowed by the project's alpha.
        f.skill(
            &user,
            "alpha",
            "name: alpha\ndescription: the user's copy",
            "user\n",
        );
        let notes = f.skill(
            &user,
            "notes",
            "name: notes\ndescription: Keep meeting notes",
            "",
        );
        f.skill(
            &proj,
            "needs-tool",
            "name: needs-tool\ndescription: d\nrequires:\n  bins: [no-such-tool-xyz]",
            "",
        );
        f.skill(
            &proj,
            "menu-only",
            "name: menu-only\ndescription: d\nsven:\n  user_invocable_only: true",
            "",
        );
        f.skill(&proj, "turned-off", "name: turned-off\ndescription: d", "");
        f.write(
            &proj,
            "broken/SKILL.md",
            "---\nname: broken\n---\nno description\n",
        );
        let implement = f.skill(
            &proj,
            "sven/implement",
            "name: implement\ndescription: Implement a change\nallowed-tools: Bash Read",
            "Plan, then code.\n",
        );
        let research = f.skill(
            &proj,
            "sven/implement/research",
            "name: research\ndescription: Research before implementing",
            "Read first.\n",
        );
        // Eligible and served, but not in skills/list: the extension's
        // schema wants string metadata and a name equal to the directory.
        let claw = f.skill(
            &proj,
            "claw",
            "name: claw\ndescription: OpenClaw style\nmetadata: {\"openclaw\": {\"always\": true}}",
            "",
        );
        let odd = f.skill(
            &proj,
            "odd-dir",
            "name: other-name\ndescription: Renamed",
            "",
        );
        let leaky = f.skill(&proj, "leaky", "name: leaky\ndescription: Has links", "");
        f.write(&leaky, "real.md", "inside\n");
        let outside = f.write(f.root(), "outside/secret.txt", "TOP SECRET\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(&outside, leaky.join("secret.txt")).expect("symlink");
            symlink(outside.parent().expect("dir"), leaky.join("outdir")).expect("symlink");
            symlink("real.md", leaky.join("alias.md")).expect("symlink");
        }
        let served = BTreeMap::from([
            ("alpha".to_string(), alpha),
            ("claw".to_string(), claw),
            ("leaky".to_string(), leaky),
            ("odd-dir".to_string(), odd),
            ("notes".to_string(), notes),
            ("sven/implement".to_string(), implement),
            ("sven/implement/research".to_string(), research),
        ]);
        let files = BTreeMap::from([
            (
                "alpha".to_string(),
                vec![
                    "SKILL.md",
                    "assets/logo.bin",
                    "references/guide.md",
                    "scripts/fill.sh",
                ],
            ),
            ("claw".to_string(), vec!["SKILL.md"]),
            ("leaky".to_string(), vec!["SKILL.md", "alias.md", "real.md"]),
            ("odd-dir".to_string(), vec!["SKILL.md"]),
            ("notes".to_string(), vec!["SKILL.md"]),
            // A nested skill's files are in the enclosing manifest too.
            (
                "sven/implement".to_string(),
                vec!["SKILL.md", "research/SKILL.md"],
            ),
            ("sven/implement/research".to_string(), vec!["SKILL.md"]),
        ]);
        Tree { f, served, files }
    }

    /// The served set must be what `status` calls eligible, minus the
    /// user-invocable-only skill; check the premise, then return the URIs.
    fn expected_skill_uris(&self) -> BTreeSet<String> {
        let status = self.f.status_json();
        let state = |cmd: &str| -> Vec<String> {
            status["skills"]
                .as_array()
                .expect("skills")
                .iter()
                .filter(|s| s["command"] == cmd)
                .map(|s| s["state"].as_str().expect("state").to_string())
                .collect()
        };
        assert_eq!(state("needs-tool"), ["skipped"]);
        assert_eq!(state("turned-off"), ["skipped"]);
        assert_eq!(state("alpha"), ["eligible", "shadowed"]);
        assert_eq!(state("broken"), ["invalid"]);
        assert_eq!(state("menu-only"), ["eligible"]);
        let eligible: BTreeSet<String> = status["skills"]
            .as_array()
            .expect("skills")
            .iter()
            .filter(|s| s["state"] == "eligible" && s["command"] != "menu-only")
            .map(|s| s["command"].as_str().expect("command").to_string())
            .collect();
        assert_eq!(eligible, self.served.keys().cloned().collect());
        eligible
            .iter()
            .map(|c| format!("skill://{c}/SKILL.md"))
            .collect()
    }

    /// The served skills `skills/list` carries.
    fn listed_uris(&self) -> BTreeSet<String> {
        let mut uris = self.expected_skill_uris();
        uris.remove("skill://claw/SKILL.md");
        uris.remove("skill://odd-dir/SKILL.md");
        uris
    }

    /// Every file URI that must be served, with its bytes on disk now.
    fn expected_files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for (cmd, rels) in &self.files {
            for rel in rels {
                let bytes = std::fs::read(self.served[cmd].join(rel)).expect("read");
                out.insert(format!("skill://{cmd}/{rel}"), bytes);
            }
        }
        out
    }

    fn stdio_server(&self) -> Value {
        stdio_server(&self.f)
    }

    fn env(&self) -> BTreeMap<String, String> {
        server_env(&self.f)
    }
}

/// The job's `server` for `skillpm mcp` over stdio in `f`'s project.
pub(crate) fn stdio_server(f: &Fixture) -> Value {
    json!({
        "command": [env!("CARGO_BIN_EXE_skillpm"), "mcp"],
        "env": server_env(f),
        "cwd": f.project,
    })
}

/// The server's environment: `f`'s home, config, cache and PATH only.
fn server_env(f: &Fixture) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([
        ("HOME".to_string(), f.home.display().to_string()),
        (
            "XDG_CONFIG_HOME".to_string(),
            f.config.display().to_string(),
        ),
        ("XDG_CACHE_HOME".to_string(), f.cache.display().to_string()),
        ("PATH".to_string(), f.bin.display().to_string()),
        ("NO_COLOR".to_string(), "1".to_string()),
    ]);
    env.extend(f.extra_env.iter().cloned());
    env
}

/// A driver's job: the server, the hostile URIs, the tool calls every
/// test makes, and the disk changes to apply and wait for.
fn job(server: Value, changes: Value) -> Value {
    json!({
        "server": server,
        "hostile": HOSTILE,
        "load": "sven/implement",
        "search": "pdf forms",
        "changes": changes,
    })
}

const HOSTILE: &[&str] = &[
    "skill://alpha/../../etc/passwd",
    "skill://alpha/%2e%2e/%2e%2e/etc/passwd",
    "skill://alpha/..%2F..%2Fetc%2Fpasswd",
    "skill://alpha/references/..%5c..%5c..%5cetc%5cpasswd",
    "skill://leaky/secret.txt",
    "skill://leaky/outdir/secret.txt",
    "skill://menu-only/SKILL.md",
    "skill://needs-tool/SKILL.md",
    "skill://turned-off/SKILL.md",
    "skill://broken/SKILL.md",
    "skill://alpha/.hidden-note",
    "file:///etc/passwd",
];

/// Runs a driver with `job` on stdin; returns its JSON report.
pub(crate) fn drive(py: &str, driver: &str, job: &Value) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp");
    let mut child = Command::new(py)
        .arg(dir.join(driver))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the client driver");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(job.to_string().as_bytes())
        .expect("write the job");
    let out = child.wait_with_output().expect("driver output");
    assert!(
        out.status.success(),
        "{driver} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{driver} printed no report ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn assert_refused(report: &Value) {
    for uri in HOSTILE {
        let r = &report["hostile"][uri];
        assert_eq!(r["refused"], true, "{uri} was served: {r}");
    }
    // The hostile spellings are refused by name, not merely not found.
    let err = report["hostile"]["skill://alpha/%2e%2e/%2e%2e/etc/passwd"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if report["client"] == "mcp" {
        assert!(err.contains("paths outside a skill are refused"), "{err}");
    }
    assert!(!report.to_string().contains(&b64(b"TOP SECRET\n")));
}

/// What both clients see: the resources and their bytes, the tools;
/// `files` and `skill_uris` as they were before the driver changed anything.
fn assert_resources(
    report: &Value,
    files: &BTreeMap<String, Vec<u8>>,
    skill_uris: &BTreeSet<String>,
) {
    let got: BTreeMap<String, Vec<u8>> = report["resources"]
        .as_object()
        .expect("resources")
        .iter()
        .filter(|(uri, _)| {
            !matches!(
                uri.as_str(),
                "skill://index.json" | "skill://lifecycle.json"
            )
        })
        .map(|(uri, b)| (uri.clone(), unb64(b)))
        .collect();
    assert_eq!(&got, files, "resources/read must return the bytes on disk");
    let listed: BTreeSet<String> = skill_uris
        .iter()
        .map(|u| u.trim_end_matches("/SKILL.md").to_string())
        .collect();
    let tool_list: BTreeSet<String> = report["tool_list"]
        .as_array()
        .expect("list_skills")
        .iter()
        .map(|s| format!("skill://{}", s["command"].as_str().expect("command")))
        .collect();
    assert_eq!(tool_list, listed);
    let load = report["load"].as_str().expect("load_skill text");
    assert!(load.starts_with("<skill_content command=\"sven/implement\""));
    for want in [
        "<skill command=\"sven/implement/research\">",
        "Plan, then code.",
        "<tools>\n<tool name=\"Bash\" required=\"true\" available=\"unknown\">",
    ] {
        assert!(load.contains(want), "{want} not in {load}");
    }
    let top = report["search"][0]["command"].as_str().unwrap_or_default();
    assert_eq!(top, "alpha", "{}", report["search"]);
    assert_refused(report);
}

#[test]
fn fastmcp_sees_the_eligible_skills_through_the_skills_extension() {
    let Some(py) = clients() else { return };
    let tree = Tree::new();
    let expected = tree.expected_skill_uris();
    let listed = tree.listed_uris();
    let files = tree.expected_files();
    let alpha_md = tree.served["alpha"].join("SKILL.md");
    let new_alpha = "---\nname: alpha\ndescription: Fill in PDF forms, edited\n---\n# Alpha v2\n";
    let job = job(
        tree.stdio_server(),
        json!([
            {"path": alpha_md, "content_b64": b64(new_alpha.as_bytes()), "uri": "skill://alpha/SKILL.md"},
            // An eligibility change: disabling `notes` in skills.toml.
            {"path": tree.f.project.join("skills.toml"),
             "content_b64": b64(b"[engine]\ndisabled = [\"turned-off\", \"notes\"]\n"),
             "uri": "skill://notes/SKILL.md"},
        ]),
    );
    let report = drive(&py, "fastmcp_client.py", &job);
    assert_eq!(report["protocol"], "2026-07-28");

    // skills/list: exactly the eligible set, each manifest complete and true.
    let skills = report["skills"].as_array().expect("skills");
    let uris: BTreeSet<String> = skills
        .iter()
        .map(|s| s["uri"].as_str().expect("uri").to_string())
        .collect();
    assert_eq!(uris, listed);
    for s in skills {
        let cmd = s["uri"]
            .as_str()
            .and_then(|u| u.strip_prefix("skill://"))
            .and_then(|u| u.strip_suffix("/SKILL.md"))
            .expect("skill uri");
        let manifest: BTreeMap<String, (String, u64)> = s["resources"]
            .as_array()
            .expect("manifest")
            .iter()
            .map(|r| {
                let uri = r["uri"].as_str().expect("uri").to_string();
                let d = r["digest"].as_str().expect("digest").to_string();
                (uri, (d, r["size"].as_u64().expect("size")))
            })
            .collect();
        let want: BTreeMap<String, (String, u64)> = tree.files[cmd]
            .iter()
            .map(|rel| {
                let uri = format!("skill://{cmd}/{rel}");
                let bytes = &files[&uri];
                (uri, (digest(bytes), bytes.len() as u64))
            })
            .collect();
        assert_eq!(manifest, want, "manifest of {cmd}");
    }
    let alpha = skills
        .iter()
        .find(|s| s["uri"] == "skill://alpha/SKILL.md")
        .expect("alpha");
    assert_eq!(alpha["frontmatter"]["license"], "MIT");
    assert_eq!(alpha["frontmatter"]["metadata"]["tags"], "pdf forms");
    assert_eq!(
        report["got"], report["skills"],
        "skills/get agrees with skills/list"
    );

    // skill://index.json in the discovery-index shape.
    let index = &report["index"];
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let entries: BTreeSet<(String, String)> = index["skills"]
        .as_array()
        .expect("index skills")
        .iter()
        .map(|e| {
            assert_eq!(e["type"], "skill-md");
            let url = e["url"].as_str().expect("url").to_string();
            assert_eq!(e["digest"].as_str(), Some(digest(&files[&url]).as_str()));
            (e["name"].as_str().expect("name").to_string(), url)
        })
        .collect();
    assert!(entries.contains(&(
        "research".into(),
        "skill://sven/implement/research/SKILL.md".into()
    )));
    assert_eq!(entries.len(), expected.len());

    assert_resources(&report, &files, &expected);

    // An edit is announced on the listen stream, then served.
    let edit = &report["changes"][0];
    assert_eq!(edit["notified"], true, "{edit}");
    assert_eq!(unb64(&edit["after"]), new_alpha.as_bytes());
    let listed_alpha = edit["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .find(|s| s["uri"] == "skill://alpha/SKILL.md")
        .expect("alpha after the edit")
        .clone();
    assert_eq!(
        listed_alpha["frontmatter"]["description"],
        "Fill in PDF forms, edited"
    );
    assert!(listed_alpha["resources"]
        .as_array()
        .expect("manifest")
        .iter()
        .any(|r| r["digest"] == digest(new_alpha.as_bytes())));
    // A skill that stops being eligible is announced and no longer served.
    let disabled = &report["changes"][1];
    assert_eq!(disabled["notified"], true, "{disabled}");
    assert!(disabled.get("after").is_none(), "{disabled}");
    assert!(!disabled["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .any(|s| s["uri"] == "skill://notes/SKILL.md"));
}

#[test]
fn the_python_sdk_reads_plain_resources_and_tools_on_2025_11_25() {
    let Some(py) = clients() else { return };
    let tree = Tree::new();
    let expected = tree.expected_skill_uris();
    let files = tree.expected_files();
    let guide = tree.served["alpha"].join("references/guide.md");
    let fresh = tree.f.project_root().join("fresh/SKILL.md");
    let fresh_md = "---\nname: fresh\ndescription: Added while serving\n---\nnew\n";
    let job = job(
        tree.stdio_server(),
        json!([
            {"path": guide, "content_b64": b64(b"guide v2\n"), "uri": "skill://alpha/references/guide.md"},
            {"path": fresh, "content_b64": b64(fresh_md.as_bytes()), "uri": "skill://fresh/SKILL.md"},
        ]),
    );
    let report = drive(&py, "sdk_client.py", &job);
    assert_eq!(report["protocol"], "2025-11-25");
    assert!(report["extensions"]
        .as_array()
        .expect("extensions")
        .contains(&json!("io.modelcontextprotocol/skills")));
    assert_eq!(
        report["tools"],
        json!(["list_skills", "load_skill", "search_skills"])
    );
    let mut want: BTreeSet<String> = files.keys().cloned().collect();
    want.insert("skill://index.json".into());
    want.insert("skill://lifecycle.json".into());
    let listed: BTreeSet<String> = report["listed"]
        .as_array()
        .expect("listed")
        .iter()
        .map(|u| u.as_str().expect("uri").to_string())
        .collect();
    assert_eq!(listed, want);
    assert_eq!(report["load_unknown_is_error"], true);
    assert_resources(&report, &files, &expected);

    // An edit: list_changed on the session and resources/updated for the
    // subscribed URI, then the new bytes.
    let edit = &report["changes"][0];
    assert_eq!(edit["notified"], true, "{edit}");
    assert!(edit["events"]
        .as_array()
        .expect("events")
        .contains(&json!(["updated", "skill://alpha/references/guide.md"])));
    assert_eq!(unb64(&edit["after"]), b"guide v2\n");
    // A new skill appears in the list and is served.
    let added = &report["changes"][1];
    assert_eq!(added["notified"], true, "{added}");
    assert_eq!(unb64(&added["after"]), fresh_md.as_bytes());
    assert!(added["listed"]
        .as_array()
        .expect("listed")
        .contains(&json!("skill://fresh/SKILL.md")));
}

/// `skillpm mcp --http 127.0.0.1:0`, with the address it prints.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(f: &Fixture) -> HttpServer {
        HttpServer::start_with(f, None)
    }

    /// With `open_files`, the server runs under `ulimit -n open_files`.
    fn start_with(f: &Fixture, open_files: Option<u32>) -> HttpServer {
        let bin = env!("CARGO_BIN_EXE_skillpm");
        let mut cmd = match open_files {
            None => f.command(bin),
            Some(n) => {
                let mut c = f.command("/bin/sh");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\""), bin]);
                c
            }
        };
        let mut child = cmd
            .args(["mcp", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start skillpm mcp --http");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("skillpm mcp exited before listening")
                .expect("stderr line");
            if let Some(url) = line.split("listening on ").nth(1) {
                break url.trim().to_string();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn both_clients_work_over_streamable_http() {
    let Some(py) = clients() else { return };
    let tree = Tree::new();
    let server = HttpServer::start(&tree.f);
    let expected = tree.expected_skill_uris();
    let files = tree.expected_files();
    let guide = tree.served["alpha"].join("references/guide.md");
    let sdk = drive(
        &py,
        "sdk_client.py",
        &job(
            json!({"url": server.url}),
            json!([
                {"path": guide, "content_b64": b64(b"guide over http\n"), "uri": "skill://alpha/references/guide.md"},
            ]),
        ),
    );
    assert_eq!(sdk["protocol"], "2025-11-25");
    assert_resources(&sdk, &files, &expected);
    assert_eq!(sdk["changes"][0]["notified"], true, "{}", sdk["changes"]);
    assert_eq!(unb64(&sdk["changes"][0]["after"]), b"guide over http\n");

    let fast = drive(
        &py,
        "fastmcp_client.py",
        &job(json!({"url": server.url}), json!([])),
    );
    assert_eq!(fast["protocol"], "2026-07-28");
    let uris: BTreeSet<String> = fast["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["uri"].as_str().expect("uri").to_string())
        .collect();
    assert_eq!(uris, tree.listed_uris());
    let mut files = files;
    files.insert(
        "skill://alpha/references/guide.md".into(),
        b"guide over http\n".to_vec(),
    );
    assert_resources(&fast, &files, &expected);
}

/// `host:port` of a server URL `http://host:port/mcp`.
fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// One request on its own connection; the status code and the
/// `Mcp-Session-Id` header of the answer (the body is not read).
fn raw_request(
    url: &str,
    method: &str,
    session: Option<&str>,
    body: &str,
) -> (u16, Option<String>) {
    raw_request_with(url, method, session, "", body)
}

/// [`raw_request`] with `headers` (each ending in CRLF) added.
fn raw_request_with(
    url: &str,
    method: &str,
    session: Option<&str>,
    headers: &str,
    body: &str,
) -> (u16, Option<String>) {
    let (status, id, _) = raw_exchange(url, method, session, headers, body);
    (status, id)
}

/// One request on its own connection: the status, the session id the
/// server gave, and the body (read to the end; `Connection: close`).
fn raw_exchange(
    url: &str,
    method: &str,
    session: Option<&str>,
    headers: &str,
    body: &str,
) -> (u16, Option<String>, String) {
    use std::io::Read;
    let host = authority(url);
    let mut s = std::net::TcpStream::connect(host).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    write!(
        s,
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            other => panic!(
                "{method} /mcp: no complete answer ({other:?}) after {:?}",
                String::from_utf8_lossy(&head)
            ),
        }
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let id = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_string())
    });
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    (status, id, String::from_utf8_lossy(&rest).into_owned())
}

fn initialize(url: &str) -> (u16, Option<String>) {
    raw_request(
        url,
        "POST",
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    )
}

/// Sockets that connect and never send a byte used to hold a descriptor
/// each until the server could accept nothing more (`axum::serve` has no
/// timeouts), and the next real client waited forever. Now the server
/// serves through the registry's connection handling: past what its
/// open-files limit allows, a newcomer evicts a silent connection.
#[test]
fn silent_sockets_beyond_the_open_files_limit_do_not_lock_out_a_client() {
    let tree = Tree::new();
    let server = HttpServer::start_with(&tree.f, Some(256));
    let silent: Vec<std::net::TcpStream> = (0..400)
        .map(|_| std::net::TcpStream::connect(authority(&server.url)).expect("connect"))
        .collect();
    // Old enough to be evicted (the grace is 1 s).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (status, id) = initialize(&server.url);
    assert_eq!(status, 200);
    assert!(id.is_some(), "no session id");
    drop(silent);
}

/// Every `initialize` starts a session that lives for five idle minutes;
/// the server keeps at most 64 at once. A newcomer beyond them closes the
/// session used least recently (which then answers 404, and its client
/// initializes again), so a process keeping 64 sessions alive cannot lock
/// other clients out; a session in use keeps working. A closed session
/// gives its place back.
#[test]
fn http_sessions_are_capped_and_the_least_recent_makes_room() {
    let tree = Tree::new();
    let server = HttpServer::start(&tree.f);
    let ids: Vec<String> = (0..64)
        .map(|i| match initialize(&server.url) {
            (200, Some(id)) => id,
            other => panic!("session {i}: {other:?}"),
        })
        .collect();
    let ping = |id: &str| {
        let body = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
        raw_request(&server.url, "POST", Some(id), body).0
    };
    // The first session is used now: the second is the least recent.
    assert_eq!(ping(&ids[0]), 200);
    for _ in 0..2 {
        let (status, id) = initialize(&server.url);
        assert_eq!(status, 200, "a newcomer was locked out");
        assert!(id.is_some());
    }
    assert_eq!(ping(&ids[0]), 200, "the session in use was closed");
    assert_eq!(ping(&ids[1]), 404, "the least recent session stayed");
    assert_eq!(ping(&ids[2]), 404, "the next least recent session stayed");
    assert_eq!(ping(&ids[3]), 200);
    let (status, _) = raw_request(&server.url, "DELETE", Some(&ids[3]), "");
    assert!((200..300).contains(&status), "DELETE: {status}");
    // The place is given back when the closed session's task ends, and
    // the next newcomer takes it: the oldest left keeps working.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(initialize(&server.url).0, 200);
    assert_eq!(
        ping(&ids[4]),
        200,
        "a session was closed though a place was free"
    );
}

#[test]
fn stdout_carries_only_the_protocol_and_a_closed_stdin_ends_the_server() {
    let tree = Tree::new();
    let out = tree
        .f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .arg("mcp")
        .stdin(Stdio::null())
        .output()
        .expect("run skillpm mcp");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for want in [
        "serving 7 skill(s)",
        "claw: not in skills/list: `metadata` must map strings to strings",
        "odd-dir: not in skills/list",
        "secret.txt: refused, a symlink out of the skill",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
}

/// One JSON-RPC exchange over `skillpm mcp`'s stdio: sends `msg`, and
/// when it carries an id, reads lines until that id's answer.
pub(crate) fn exchange(
    stdin: &mut impl Write,
    out: &mut impl BufRead,
    msg: &Value,
) -> Option<Value> {
    writeln!(stdin, "{msg}").expect("write");
    stdin.flush().expect("flush");
    let id = msg.get("id")?;
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).expect("read") > 0, "server closed");
        let v: Value = serde_json::from_str(&line).expect("json line");
        if v.get("id") == Some(id) {
            return Some(v);
        }
    }
}

/// `skillpm mcp` over stdio in `f`, initialized (2025-11-25) by a raw
/// client: the child, its stdin, and its stdout by lines.
pub(crate) fn stdio_session(f: &Fixture) -> (Child, std::process::ChildStdin, impl BufRead) {
    let mut child = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run skillpm mcp");
    // A server that never answers must fail the test, not hang it: after
    // a minute it is killed, and the next read finds its output closed.
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        // Only if the pid is still a skillpm (a finished test's is gone).
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("skillpm") {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let answer = exchange(&mut stdin, &mut out, &init).expect("initialize");
    assert!(answer.get("result").is_some(), "{answer}");
    (child, stdin, out)
}

/// Closes a [`stdio_session`] and asserts the server's peak memory stayed
/// under 80 MiB.
fn end_session_within_80_mib(mut child: Child, stdin: std::process::ChildStdin) {
    let peak_kib = common::vm_hwm_kib(child.id());
    drop(stdin);
    child.wait().expect("wait");
    assert!(
        peak_kib > 0 && peak_kib < 80 * 1024,
        "peak RSS {peak_kib} KiB"
    );
}

/// `resources/subscribe` keeps only URIs the server serves or could serve
/// (no longer than a served URI can be, 4 KiB), at most MAX_SUBSCRIPTIONS
/// per session: forty calls with 3.8 MiB URIs used to keep a session at
/// 530 MB. Such lines are now dropped before they are parsed (the message
/// cap, `a_large_message_is_not_parsed`); a URI under that cap but over
/// 4 KiB is refused with a short error, and the server's peak memory stays
/// small; a served URI, and one of a skill still to come, subscribe.
#[test]
fn subscriptions_are_for_served_resources_only() {
    let tree = Tree::new();
    let (child, mut stdin, mut out) = stdio_session(&tree.f);
    exchange(
        &mut stdin,
        &mut out,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let long = format!("skill://{}/SKILL.md", "a".repeat(200_000));
    for id in 2..42 {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
            "params": {"uri": long}});
        let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
        let error = answer
            .get("error")
            .unwrap_or_else(|| panic!("accepted: {id}"));
        assert!(error.to_string().len() < 1024, "the error echoes the URI");
    }
    for (id, uri) in [
        (42, "skill://alpha/SKILL.md"),
        (43, "skill://to-come/SKILL.md"),
    ] {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
            "params": {"uri": uri}});
        let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
        assert!(answer.get("result").is_some(), "{uri}: {answer}");
    }
    end_session_within_80_mib(child, stdin);
}

/// A message's parse costs memory in proportion to its size (a 15 MiB
/// stdio line of `[0,0,...]` took the server to 1.7 GB), so messages are
/// capped well below the SDK's defaults: a 1 MiB line is dropped without
/// being parsed and the session goes on (a ping is answered), and a 1 MiB
/// HTTP body is refused with 413.
#[test]
fn a_large_message_is_not_parsed() {
    let tree = Tree::new();
    let (child, mut stdin, mut out) = stdio_session(&tree.f);
    let zeros = vec!["0"; 512 * 1024].join(",");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"search_skills","arguments":{{"query":[{zeros}]}}}}}}"#
    )
    .expect("write");
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let answer = exchange(&mut stdin, &mut out, &ping).expect("ping");
    assert!(answer.get("result").is_some(), "{answer}");
    end_session_within_80_mib(child, stdin);

    let server = HttpServer::start(&tree.f);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"x":[{zeros}]}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    );
    let (status, _) = raw_request(&server.url, "POST", None, &body);
    assert_eq!(status, 413);
}

/// Two `Host` headers (a loopback one for the DNS-rebinding check, a
/// foreign one for whatever reads the other) or two `Origin` headers are
/// refused with 400 before any session is made; one of each is served.
#[test]
fn http_refuses_two_host_or_origin_headers() {
    use std::io::Read;
    let tree = Tree::new();
    let server = HttpServer::start(&tree.f);
    let host = authority(&server.url).to_string();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let send = |extra: &str| -> u16 {
        let mut s = std::net::TcpStream::connect(&host).expect("connect");
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .expect("timeout");
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(send("Host: evil.example\r\n"), 400);
    let origin = format!("Origin: http://{host}\r\n");
    assert_eq!(
        send(&format!("{origin}Origin: http://evil.example\r\n")),
        400
    );
    assert_eq!(send(&origin), 200);
    assert_eq!(send(""), 200);
}

/// MCP's transport requires servers to refuse (403) a request whose
/// `Origin` is present and not allowed. The server binds loopback only, so
/// a page served from a loopback host (any port: the MCP Inspector's UI
/// runs on one of its own) is allowed and any other origin is another
/// site driving the visitor's browser; neither kind gets a session.
#[test]
fn http_refuses_an_origin_other_than_loopback() {
    let tree = Tree::new();
    let server = HttpServer::start(&tree.f);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let post = |origin: &str| {
        let header = format!("Origin: {origin}\r\n");
        raw_request_with(&server.url, "POST", None, &header, body)
    };
    for evil in [
        "http://evil.example.com",
        "null",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example:6274",
    ] {
        assert_eq!(post(evil), (403, None), "{evil}");
    }
    for local in [
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        "https://[::1]:8443",
    ] {
        let (status, id) = post(local);
        assert_eq!(status, 200, "{local}");
        assert!(id.is_some(), "{local}: no session");
    }
}

/// A request for a method the server answers, with params that do not fit
/// that method, is -32602 "invalid params" (rmcp's default called it
/// -32601 "method not found"); an unknown method is still -32601.
#[test]
fn malformed_params_are_invalid_params() {
    let tree = Tree::new();
    let (child, mut stdin, mut out) = stdio_session(&tree.f);
    let code = |stdin: &mut std::process::ChildStdin,
                out: &mut _,
                id: u64,
                method: &str,
                params: Value| {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = exchange(stdin, out, &req).expect("answer");
        answer["error"]["code"].clone()
    };
    for (id, method, params) in [
        (2, "resources/read", json!({})),
        (3, "tools/call", json!({})),
        (4, "skills/get", json!({})),
        (5, "resources/directory/read", json!({})),
        (6, "resources/read", json!({"uri": 7})),
        (7, "prompts/get", json!({})),
        (
            9,
            "prompts/get",
            json!({"name": "alpha", "arguments": {"arguments": 7}}),
        ),
        (10, "prompts/list", json!({"cursor": ""})),
    ] {
        assert_eq!(
            code(&mut stdin, &mut out, id, method, params),
            -32602,
            "{method}"
        );
    }
    assert_eq!(code(&mut stdin, &mut out, 8, "no/such", json!({})), -32601);
    end_session_within_80_mib(child, stdin);
}

/// A cursor the server did not hand out is -32602, as MCP's pagination
/// says, in `resources/list` and the extension's `skills/list` (it used to
/// be read as "from the start" and the whole list came back); a cursor
/// that names an entry is served the entries after it.
#[test]
fn an_invalid_cursor_is_invalid_params() {
    let tree = Tree::new();
    let (child, mut stdin, mut out) = stdio_session(&tree.f);
    for (id, method) in [(2, "resources/list"), (3, "skills/list")] {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"cursor": "garbage"}});
        let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    let req = json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list",
        "params": {"cursor": "skill://alpha/SKILL.md"}});
    let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
    let first = &answer["result"]["resources"][0]["uri"];
    assert_eq!(first, "skill://alpha/assets/logo.bin", "{answer}");
    // A cursor that is not a string at all (rmcp read it as none and gave
    // the first page) is refused before the SDK reads it.
    for (id, method, cursor) in [
        (5, "resources/list", json!(5)),
        (6, "prompts/list", json!({})),
        (7, "skills/list", json!([1])),
    ] {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"cursor": cursor}});
        let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert_eq!(answer["id"], id, "{answer}");
    }
    end_session_within_80_mib(child, stdin);
    // Over HTTP too, whatever the session.
    let server = HttpServer::start(&tree.f);
    let (_, session) = initialize(&server.url);
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{"cursor":5}}"#;
    let (status, _, answer) = raw_exchange(&server.url, "POST", session.as_deref(), "", body);
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(answer.trim()).expect("a JSON answer");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["id"], 9, "{answer}");
}

/// A stdio line that is not JSON is answered with a -32700 parse error
/// with a null id, as JSON-RPC 2.0 says (the SDK dropped it without a
/// word), and the session goes on: the request after it is answered.
#[test]
fn a_stdio_line_that_is_not_json_is_a_parse_error() {
    let tree = Tree::new();
    let (child, mut stdin, mut out) = stdio_session(&tree.f);
    writeln!(stdin, "this is {{ not json").expect("write");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    writeln!(stdin, "{ping}").expect("write");
    stdin.flush().expect("flush");
    // Every line up to the ping's answer: the parse error is among them.
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).expect("read") > 0, "server closed");
        let v: Value = serde_json::from_str(&line).expect("json line");
        if v["id"] == 2 {
            assert!(v.get("result").is_some(), "{v}");
            break;
        }
        seen.push(v);
    }
    let parse_errors: Vec<&Value> = seen
        .iter()
        .filter(|v| v["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse_errors.len(), 1, "{seen:?}");
    let e = parse_errors[0];
    assert!(e.get("id").is_some_and(Value::is_null), "{e}");
    assert_eq!(e["jsonrpc"], "2.0");
    // And the session still serves a real request.
    let req = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
        "params": {"uri": "skill://notes/SKILL.md"}});
    let answer = exchange(&mut stdin, &mut out, &req).expect("answer");
    assert!(
        answer["result"]["contents"][0]["text"].is_string(),
        "{answer}"
    );
    end_session_within_80_mib(child, stdin);
}

#[test]
fn http_refuses_an_address_other_hosts_can_reach() {
    let tree = Tree::new();
    let out = tree
        .f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .args(["mcp", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .expect("run skillpm mcp");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("takes a loopback address"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The official MCP inspector's CLI (`@modelcontextprotocol/inspector`
/// 2.12.0), which runs the SEP-2640 conformance and digest checks itself
/// (`--verify`). Installed with
/// `npm install --prefix target/mcp-inspector @modelcontextprotocol/inspector@2.12.0`,
/// or named by SKILLPM_MCP_INSPECTOR; required when
/// SKILLPM_REQUIRE_MCP_INSPECTOR=1.
pub(crate) fn inspector() -> Option<PathBuf> {
    let path = std::env::var_os("SKILLPM_MCP_INSPECTOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/mcp-inspector/node_modules/.bin/mcp-inspector")
        });
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "{} is missing (npm install --prefix target/mcp-inspector @modelcontextprotocol/inspector@2.12.0)",
        path.display()
    );
    common::third_party_missing("SKILLPM_REQUIRE_MCP_INSPECTOR", "the inspector test", &why);
    None
}

/// The inspector's CLI with `args`, JSON output, in protocol `era`,
/// against `skillpm mcp` in `f`'s project.
pub(crate) fn run_inspector(
    cli: &Path,
    f: &Fixture,
    era: &str,
    args: &[&str],
) -> std::process::Output {
    let mut cmd = Command::new(cli);
    cmd.env_clear()
        .env("HOME", &f.home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .args(["--cli", "--protocol-era", era, "--format", "json", "-q"])
        .args(args)
        .arg("--cwd")
        .arg(&f.project);
    for (k, v) in server_env(f) {
        cmd.arg("-e").arg(format!("{k}={v}"));
    }
    cmd.arg(env!("CARGO_BIN_EXE_skillpm"))
        .arg("mcp")
        .output()
        .expect("run the inspector")
}

#[test]
fn the_official_inspector_verifies_every_listed_skill_in_both_eras() {
    let Some(cli) = inspector() else { return };
    let tree = Tree::new();
    let listed = tree.listed_uris();
    for era in ["modern", "legacy"] {
        let args = ["--method", "skills/list", "--verify", "--require-digests"];
        let out = run_inspector(&cli, &tree.f, era, &args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{era}: inspector exit {:?}\n{text}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut verified = BTreeSet::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let r: Value = serde_json::from_str(line).expect("one JSON report per skill");
            assert_eq!(r["ok"], true, "{era}: {r}");
            assert_eq!(r["outcome"], "verified", "{era}: {r}");
            verified.insert(r["uri"].as_str().expect("uri").to_string());
        }
        assert_eq!(verified, listed, "{era}");
    }
}

/// `skillpm mcp` over stdio in `f`, sent `requests` after `initialize`
/// and then a closed stdin: the answers by id, and what it wrote to stderr.
fn stdio_batch(f: &Fixture, requests: &[Value]) -> (BTreeMap<u64, Value>, String) {
    let mut child = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run skillpm mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    for msg in std::iter::once(&init).chain(requests) {
        writeln!(stdin, "{msg}").expect("write");
    }
    drop(stdin);
    // Both pipes are read as the server writes (a 2.2 MB answer would
    // fill a pipe that is only read at the end); a server that does not
    // end is killed after a minute, as in `stdio_session`.
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("skillpm") {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let out = child.wait_with_output().expect("skillpm mcp output");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json line"))
        .filter_map(|v| Some((v.get("id")?.as_u64()?, v)))
        .collect();
    (answers, common::stderr(&out))
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// URI → (digest, size) of a `skills/get` answer's manifest.
fn manifest(answer: &Value) -> BTreeMap<String, (String, u64)> {
    answer["result"]["skill"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("no manifest: {answer}"))
        .iter()
        .map(|r| {
            let uri = r["uri"].as_str().expect("uri").to_string();
            let d = r["digest"].as_str().expect("digest").to_string();
            (uri, (d, r["size"].as_u64().expect("size")))
        })
        .collect()
}

/// SEP-2640: a manifest is complete, nested skills included, and a
/// directory read returns every direct child. As in anthropics/skills,
/// where a skill holds another, the enclosing manifest used to leave the
/// nested skill's files out and `skill://outer` omitted `inner/`, so the
/// TypeScript `SkillsClient` refused to read `outer/inner/SKILL.md` as
/// unlisted. The nested skill stays a skill of its own, and every file is
/// in `resources/list` once, its `SKILL.md` named as its frontmatter says.
#[test]
fn nested_skills_are_in_the_enclosing_manifest_and_directory() {
    let f = Fixture::new();
    let proj = f.project_root();
    let outer = f.skill(&proj, "outer", "name: outer\ndescription: Encloses", "");
    f.write(&outer, "ref.md", "ref\n");
    let inner = f.skill(&proj, "outer/inner", "name: inner\ndescription: Nested", "");
    f.write(&inner, "data/x.txt", "x\n");
    let (answers, _) = stdio_batch(
        &f,
        &[
            request(1, "skills/get", json!({"uri": "skill://outer/SKILL.md"})),
            request(
                2,
                "skills/get",
                json!({"uri": "skill://outer/inner/SKILL.md"}),
            ),
            request(
                3,
                "resources/directory/read",
                json!({"uri": "skill://outer"}),
            ),
            request(4, "resources/list", json!({})),
            request(
                5,
                "resources/read",
                json!({"uri": "skill://outer/inner/data/x.txt"}),
            ),
        ],
    );
    let entry = |rel: &str| {
        let bytes = std::fs::read(outer.join(rel)).expect("read");
        let uri = format!("skill://outer/{rel}");
        (uri, (digest(&bytes), bytes.len() as u64))
    };
    let want: BTreeMap<_, _> = ["SKILL.md", "inner/SKILL.md", "inner/data/x.txt", "ref.md"]
        .into_iter()
        .map(entry)
        .collect();
    assert_eq!(manifest(&answers[&1]), want, "outer");
    let want: BTreeMap<_, _> = ["inner/SKILL.md", "inner/data/x.txt"]
        .into_iter()
        .map(entry)
        .collect();
    assert_eq!(manifest(&answers[&2]), want, "inner");
    let children: BTreeSet<(&str, &str)> = answers[&3]["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", answers[&3]))
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        BTreeSet::from([
            ("skill://outer/SKILL.md", "text/markdown"),
            ("skill://outer/inner", "inode/directory"),
            ("skill://outer/ref.md", "text/markdown"),
        ])
    );
    let listed: Vec<(&str, &str)> = answers[&4]["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("skill://index.json", "index.json"),
            ("skill://lifecycle.json", "lifecycle.json"),
            ("skill://outer/SKILL.md", "outer"),
            ("skill://outer/inner/SKILL.md", "inner"),
            ("skill://outer/inner/data/x.txt", "outer/inner/data/x.txt"),
            ("skill://outer/ref.md", "outer/ref.md"),
        ]
    );
    assert_eq!(answers[&5]["result"]["contents"][0]["text"], "x\n");
}

/// The extension's limits are 512 files and 16 MiB a skill, and a
/// manifest must be complete. A 2.2 MB file used to be left out (a cap of
/// our own, 1 MiB a file), and a 600-file skill was served cut to 512
/// files. Now a skill within the limits is served whole, one of 512 files
/// included, and a skill over them is not served at all, with a note.
#[test]
fn skills_within_the_extensions_limits_are_served_whole_and_others_not_at_all() {
    let f = Fixture::new();
    let proj = f.project_root();
    let big = f.skill(&proj, "big-file", "name: big-file\ndescription: Large", "");
    let large = "0123456789abcdef\n".repeat(130_000); // 2.2 MB
    f.write(&big, "assets/large.txt", &large);
    let full = f.skill(&proj, "full", "name: full\ndescription: At the limit", "");
    for i in 0..511 {
        f.write(&full, &format!("r/{i:03}.md"), "r\n");
    }
    let many = f.skill(&proj, "many", "name: many\ndescription: Over the limit", "");
    for i in 0..600 {
        f.write(&many, &format!("r/{i:03}.md"), "r\n");
    }
    let (answers, stderr) = stdio_batch(
        &f,
        &[
            request(1, "skills/get", json!({"uri": "skill://big-file/SKILL.md"})),
            request(2, "skills/get", json!({"uri": "skill://full/SKILL.md"})),
            request(3, "skills/get", json!({"uri": "skill://many/SKILL.md"})),
            request(4, "skills/list", json!({})),
            request(5, "resources/read", json!({"uri": "skill://many/SKILL.md"})),
            request(
                6,
                "resources/read",
                json!({"uri": "skill://big-file/assets/large.txt"}),
            ),
        ],
    );
    let big_manifest = manifest(&answers[&1]);
    assert_eq!(
        big_manifest.get("skill://big-file/assets/large.txt"),
        Some(&(digest(large.as_bytes()), large.len() as u64)),
        "{big_manifest:?}"
    );
    assert_eq!(answers[&6]["result"]["contents"][0]["text"], large.as_str());
    assert_eq!(manifest(&answers[&2]).len(), 512);
    assert!(answers[&3].get("error").is_some(), "{}", answers[&3]);
    assert!(answers[&5].get("error").is_some(), "many/SKILL.md was read");
    let listed: Vec<&str> = answers[&4]["result"]["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        ["skill://big-file/SKILL.md", "skill://full/SKILL.md"]
    );
    assert!(
        stderr.contains("many: not served: 601 files"),
        "no note on stderr: {stderr}"
    );
}

/// The Python SDK's client logs "Session termination failed: 202" for
/// anything but 200 or 204 (rmcp answered 202); the SDKs' servers say 200.
#[test]
fn an_http_session_delete_is_answered_200() {
    let tree = Tree::new();
    let server = HttpServer::start(&tree.f);
    let (status, id) = initialize(&server.url);
    assert_eq!(status, 200);
    let (status, _) = raw_request(&server.url, "DELETE", id.as_deref(), "");
    assert_eq!(status, 200);
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    assert_eq!(raw_request(&server.url, "POST", id.as_deref(), ping).0, 404);
}

/// The TypeScript SDK's client (`@modelcontextprotocol/client` 2.4.0, its
/// `SkillsClient` from `/ext/skills`). Installed with
/// `npm install --prefix target/mcp-ts-client @modelcontextprotocol/client@2.4.0`,
/// or named by SKILLPM_MCP_TS_CLIENT (a `node_modules` directory); required
/// when SKILLPM_REQUIRE_MCP_TS_CLIENT=1.
fn ts_client() -> Option<(PathBuf, PathBuf)> {
    let modules = std::env::var_os("SKILLPM_MCP_TS_CLIENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-ts-client/node_modules")
        });
    let node = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("node"))
            .find(|n| n.is_file())
    });
    let why = match node {
        Some(node) if modules.join("@modelcontextprotocol/client").is_dir() => {
            return Some((node, modules))
        }
        Some(_) => format!(
            "{} has no @modelcontextprotocol/client (npm install --prefix target/mcp-ts-client @modelcontextprotocol/client@2.4.0)",
            modules.display()
        ),
        None => "node is not on PATH".to_string(),
    };
    common::third_party_missing(
        "SKILLPM_REQUIRE_MCP_TS_CLIENT",
        "the TypeScript SDK test",
        &why,
    );
    None
}

/// `SkillsClient` lists every skill and reads every file of each manifest,
/// checking each file's size and digest (and SKILL.md's frontmatter
/// against the entry's) itself; none may fail.
#[test]
fn the_typescript_sdks_skills_client_verifies_every_listed_file() {
    let Some((node, modules)) = ts_client() else {
        return;
    };
    let tree = Tree::new();
    let listed = tree.listed_uris();
    let out = Command::new(node)
        .env_clear()
        .envs(tree.env())
        .current_dir(&tree.f.project)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/skills_client.mjs"))
        .arg(&modules)
        .args([env!("CARGO_BIN_EXE_skillpm"), "mcp"])
        .output()
        .expect("run node");
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["errors"], json!([]), "{report}");
    assert_eq!(report["supported"], true, "{report}");
    assert_eq!(report["invalid"], 0, "{report}");
    let skills = report["skills"].as_object().expect("skills");
    let got: BTreeSet<String> = skills.keys().cloned().collect();
    assert_eq!(got, listed);
    let mut read = BTreeSet::new();
    for files in skills.values() {
        for (uri, f) in files.as_object().expect("files") {
            assert_eq!(f["verified"], true, "{uri}: {f}");
            read.insert(uri.clone());
        }
    }
    for uri in tree.expected_files().keys() {
        let listed_skill = listed
            .iter()
            .any(|s| uri.starts_with(s.trim_end_matches("SKILL.md")));
        assert!(
            !listed_skill || read.contains(uri),
            "{uri} not read: {read:?}"
        );
    }
}

/// Every result names the server in `_meta`, as the 2026-07-28 revision
/// asks (its clients need not have sent `initialize`, whose answer names
/// it in the body): lists, reads, tool calls and the extension's methods
/// alike, with the version the binary reports. (`ping`, gone from that
/// revision, answers `{}` as before.)
#[test]
fn every_result_names_the_server_in_its_meta() {
    let tree = Tree::new();
    let methods = [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "skill://alpha/SKILL.md"})),
        ("resources/directory/read", json!({"uri": "skill://alpha"})),
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "list_skills", "arguments": {}}),
        ),
        ("prompts/list", json!({})),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://alpha/SKILL.md"})),
    ];
    let requests: Vec<Value> = (1..)
        .zip(&methods)
        .map(|(id, (method, params))| request(id, method, params.clone()))
        .collect();
    let (answers, stderr) = stdio_batch(&tree.f, &requests);
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(answers[&0]["result"]["serverInfo"]["name"], "skillpm");
    for (id, (method, _)) in (1..).zip(&methods) {
        let answer = &answers
            .get(&id)
            .unwrap_or_else(|| panic!("{method}: {stderr}"));
        let named = &answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(named["name"], "skillpm", "{method}: {answer}");
        assert_eq!(named["version"], version, "{method}: {answer}");
    }
    // What the result carries otherwise is untouched.
    assert_eq!(
        answers[&3]["result"]["contents"][0]["uri"],
        "skill://alpha/SKILL.md"
    );
}

/// A second start over a tree that did not change reads no file: the
/// parses and digests the first start kept (in skillpm's cache) serve,
/// and every answer is the same. A file changed since is read again.
#[test]
fn a_start_over_an_unchanged_tree_reads_no_file() {
    let tree = Tree::new();
    // Files changed within a clock tick of their read are not kept.
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let requests = [
        request(1, "skills/list", json!({})),
        request(2, "resources/list", json!({})),
        request(
            3,
            "resources/read",
            json!({"uri": "skill://alpha/references/guide.md"}),
        ),
        request(4, "skills/get", json!({"uri": "skill://alpha/SKILL.md"})),
    ];
    let read_line = |stderr: &str| {
        stderr
            .lines()
            .find(|l| l.contains("file(s) read"))
            .unwrap_or_else(|| panic!("no start-up line: {stderr}"))
            .to_string()
    };
    let (cold, stderr) = stdio_batch(&tree.f, &requests);
    assert!(!read_line(&stderr).contains(" 0 file(s) read"), "{stderr}");
    let (warm, stderr) = stdio_batch(&tree.f, &requests);
    assert!(
        read_line(&stderr).contains(" 0 file(s) read, 0 SKILL.md parsed"),
        "{stderr}"
    );
    for id in 1..=4 {
        assert_eq!(warm[&id]["result"], cold[&id]["result"], "answer {id}");
    }
    assert_eq!(
        warm[&3]["result"]["contents"][0]["text"], "guide v1\n",
        "read on request"
    );
    tree.f
        .write(&tree.served["alpha"], "references/guide.md", "guide v2\n");
    let (changed, stderr) = stdio_batch(&tree.f, &requests);
    assert!(
        read_line(&stderr).contains(" 1 file(s) read, 0 SKILL.md parsed"),
        "{stderr}"
    );
    assert_eq!(changed[&3]["result"]["contents"][0]["text"], "guide v2\n");
}
