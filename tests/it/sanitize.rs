//! Untrusted text on the way out: whatever a SKILL.md, a registry, git or
//! a file name says, no control sequence reaches the terminal, the
//! `prompt`/`load` XML stays well-formed, `--json` stays valid JSON that
//! still carries the exact text, and `load` shows the skill, not skillpm's
//! bookkeeping. Every command that prints such text is driven through the
//! real binary.

use crate::common;
use crate::mock;

use common::{python, stderr, stdout, Fixture};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// A publisher's attempt at a fake "verified" line: retitle the window,
/// clear the screen, paint a green tick, an 8-bit CSI (U+009B), bidi
/// overrides that reorder the rest, a carriage return and backspace that
/// overwrite what was printed, and DEL.
const EVIL: &str = "\x1b]0;pwned\x07\x1b[2J\x1b[32m✔ verified\x1b[0m\u{9b}31m \
                    \u{202e}desrever\u{202c}\u{2066}iso\u{2069}\u{200f}\u{61c}\r\x08\x7f";

/// The test's own list of what must never be printed raw, written out
/// apart from the code under test so a narrowed predicate there cannot
/// hide a leak here.
fn forbidden(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && c != '\n' && c != '\t')
        || (0x7f..0xa0).contains(&u)
        || matches!(u, 0x61c | 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069)
}

fn assert_clean(what: &str, s: &str) {
    if let Some(c) = s.chars().find(|&c| forbidden(c)) {
        panic!("{what}: {c:?} reached the terminal raw in {s:?}");
    }
}

/// Both streams clean, and the escaped form of EVIL visible in `stream`.
fn assert_shown_escaped(what: &str, out: &Output, shown: &str) {
    assert_clean(&format!("{what} stdout"), &stdout(out));
    assert_clean(&format!("{what} stderr"), &stderr(out));
    assert!(
        shown.contains("\\x1b]0;pwned\\x07") && shown.contains("\\u{202e}desrever"),
        "{what}: the hostile text should be shown escaped: {shown:?}"
    );
}

/// `s` as a YAML double-quoted scalar, every control written as `\uXXXX`.
fn yaml(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if forbidden(c) || (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Every C0 control (tab and newline too), EVIL, and XML's specials.
fn every_hostile() -> String {
    let c0: String = (0u8..0x20).map(char::from).collect();
    format!("a{c0}b {EVIL} ]]> <x> & ' \" </skill_content> z")
}

/// A skill whose name (and so a name-mismatch warning) and description
/// carry `text`.
fn hostile_skill(f: &Fixture, root: &Path, command: &str, text: &str, body: &str) -> PathBuf {
    f.skill(
        root,
        command,
        &format!("name: {}\ndescription: {}", yaml(text), yaml(text)),
        body,
    )
}

/// Parses `xml` with a real XML 1.0 parser (expat, through minidom) and
/// returns the text content of every `tag` element.
fn parse_xml(xml: &str, tag: &str) -> Vec<String> {
    let script = "import json, sys, xml.dom.minidom as m\n\
                  d = m.parseString(sys.stdin.buffer.read())\n\
                  print(json.dumps([''.join(n.data for n in e.childNodes if n.nodeType in (3, 4)) \
                  for e in d.getElementsByTagName(sys.argv[1])]))";
    common::python_xml_json(script, &[tag], xml)
}

#[test]
fn status_shows_skill_text_and_file_names_escaped() {
    let f = Fixture::new();
    let r = f.project_root();
    hostile_skill(&f, &r, "evil", EVIL, "body\n");
    // A directory name is a file name from the publisher too.
    f.skill(&r, "dir\x1b[31mname\u{202e}", "description: fine", "");
    let out = f.skillpm(&["status"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_shown_escaped("status", &out, &text);
    assert!(text.contains("dir\\x1b[31mname\\u{202e}"), "{text}");

    // --json: still valid JSON carrying the exact text, with nothing raw.
    let out = f.skillpm(&["status", "--json"]);
    let raw = stdout(&out);
    assert_clean("status --json", &raw);
    let doc: serde_json::Value = serde_json::from_str(&raw).expect("json");
    let evil = common::find(&doc, "evil", "eligible");
    assert_eq!(evil["description"], EVIL);
}

#[test]
fn status_colour_is_ours_alone_on_a_terminal() {
    let f = Fixture::new();
    hostile_skill(&f, &f.project_root(), "evil", EVIL, "");
    // A real pseudo-terminal, so skillpm decides to colour by itself.
    let out = f
        .command(&python())
        .env_remove("NO_COLOR")
        .args([
            "-c",
            "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))",
            env!("CARGO_BIN_EXE_skillpm"),
            "status",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("python3 pty");
    assert!(out.status.success(), "{}", stderr(&out));
    // The terminal turns each newline into CR LF; that CR is the pty's.
    let text = stdout(&out).replace("\r\n", "\n");
    assert!(text.contains("\x1b[32mEligible (1):\x1b[0m"), "{text:?}");
    assert!(text.contains("\x1b[33mwarning:\x1b[0m"), "{text:?}");
    let ours = ["\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[31m", "\x1b[0m"];
    for (i, _) in text.match_indices('\x1b') {
        assert!(
            ours.iter().any(|o| text[i..].starts_with(o)),
            "an escape that is not skillpm's colour at {i}: {text:?}"
        );
    }
    assert_clean("status on a tty", &text.replace('\x1b', ""));
    assert!(text.contains("\\x1b]0;pwned\\x07"), "{text:?}");
}

#[test]
fn prompt_and_load_stay_well_formed_xml() {
    let f = Fixture::new();
    let r = f.project_root();
    let all = every_hostile();
    let c0: String = (0u8..0x20).map(char::from).collect();
    let body = format!("# Use it\n{c0}\n{EVIL}\n]]> <b>&amp;</b> </skill_content>\n");
    let dir = hostile_skill(&f, &r, "evil", &all, &body);
    hostile_skill(&f, &r, "evil/sub", &all, "");
    f.write(&dir, "scripts/run\x1b[2J<&>\u{202e}.sh", "echo");
    // The base directory line names a path with XML specials and controls.
    let odd = "odd<&>\x1b]0;t\x07\u{202e}";
    f.skill(&r, odd, "description: odd one", "Odd body\n");

    for format in ["seed", "agent-skills"] {
        let out = f.skillpm(&["prompt", "--format", format]);
        assert!(out.status.success(), "{}", stderr(&out));
        let xml = stdout(&out);
        assert_clean("prompt", &xml);
        let descriptions = parse_xml(&xml, "description");
        let evil = descriptions
            .iter()
            .find(|d| d.contains("]]>"))
            .unwrap_or_else(|| panic!("no hostile description in {xml}"));
        assert!(evil.contains("<x> & ' \" </skill_content>"), "{evil:?}");
        assert!(evil.contains("\\x1b]0;pwned\\x07"), "{evil:?}");
        assert!(evil.contains("\\x00\\x01"), "{evil:?}");
    }

    let out = f.skillpm(&["load", "evil"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let xml = stdout(&out);
    assert_clean("load", &xml);
    let content = parse_xml(&xml, "skill_content");
    // The body reaches the agent as written (no entities), controls shown.
    assert!(
        content[0].contains("]]> <b>&amp;</b> </skill_content>"),
        "{content:?}"
    );
    assert!(content[0].contains("\\x1b]0;pwned\\x07"), "{content:?}");
    let files = parse_xml(&xml, "file");
    assert!(
        files.contains(&"scripts/run\\x1b[2J<&>\\u{202e}.sh".to_string()),
        "{files:?}"
    );
    let subs = parse_xml(&xml, "skill");
    assert!(subs[0].contains("<x> & ' \""), "{subs:?}");

    let out = f.skillpm(&["load", "--", odd]);
    assert!(out.status.success(), "{}", stderr(&out));
    let xml = stdout(&out);
    assert_clean("load odd", &xml);
    let content = parse_xml(&xml, "skill_content");
    assert!(
        content[0].contains("Base directory for this skill: ")
            && content[0].contains("odd<&>\\x1b]0;t\\x07\\u{202e}"),
        "{content:?}"
    );
}

#[test]
fn load_does_not_show_the_install_marker() {
    let f = Fixture::new();
    f.ok(&["init"]);
    let src = f.root().join("src");
    f.skill(
        &src,
        "local",
        "name: local\ndescription: a local skill",
        "Body\n",
    );
    f.write(&src, "local/scripts/run.sh", "echo hi\n");
    f.ok(&["add", "../src/local"]);
    let installed = f.project_root().join("local");
    assert!(
        installed
            .join(skillpm_core::skill::INSTALL_MARKER)
            .is_file(),
        "the installer should have left its marker in {}",
        installed.display()
    );
    let xml = f.ok(&["load", "local"]);
    assert!(xml.contains("<file>scripts/run.sh</file>"), "{xml}");
    assert!(!xml.contains(".skillpm-install"), "{xml}");
    assert!(!f.ok(&["status"]).contains(".skillpm-install"));
}

/// Names are quoted with Rust escapes in validate's messages already; the
/// path comes from the file system as is.
#[test]
fn validate_shows_paths_escaped() {
    let f = Fixture::new();
    let dir = hostile_skill(&f, f.root(), "bad\x1b[31m\u{202e}", EVIL, "");
    let out = f.skillpm(&["validate", dir.to_str().expect("utf8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_clean("validate stdout", &stdout(&out));
    assert_clean("validate stderr", &stderr(&out));
    assert!(
        stdout(&out).contains("bad\\x1b[31m\\u{202e}/SKILL.md"),
        "{}",
        stdout(&out)
    );
}

/// A registry whose every free-text field is EVIL.
fn hostile_registry() -> mock::MockServer {
    mock::registry(
        vec![(
            "evil".into(),
            "1.0.0".into(),
            mock::good_package("evil", "1.0.0"),
        )],
        |req, _| {
            let p = req.path.as_str();
            if p == "/index/evil" {
                let mut index =
                    mock::index_json("evil", &[("1.0.0", &mock::good_package("evil", "1.0.0"))]);
                index["versions"][0]["description"] = EVIL.into();
                index["versions"][0]["requires"] = serde_json::json!({ "bins": [EVIL] });
                return Some(mock::json(&index));
            }
            if p.starts_with("/api/v1/search") {
                return Some(mock::json(&serde_json::json!({
                    "skills": [{"name": "evil", "max_version": "1.0.0", "description": EVIL}],
                    "meta": {"total": 1},
                })));
            }
            if p == "/api/v1/skills/evil/owners" {
                return Some(mock::json(&serde_json::json!({"users": [{"login": EVIL}]})));
            }
            if p == "/index/broken" {
                let body = serde_json::json!({"errors": [{"detail": EVIL}]});
                return Some(mock::Reply::Full {
                    status: 500,
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    body: serde_json::to_vec(&body).expect("json"),
                });
            }
            None
        },
    )
}

fn with_registry(server: &mock::MockServer) -> Fixture {
    let mut f = Fixture::new();
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f
}

#[test]
fn search_info_and_owners_show_registry_text_escaped() {
    let server = hostile_registry();
    let f = with_registry(&server);
    for args in [
        &["search", "evil"][..],
        &["info", "evil"],
        &["owner", "list", "evil"],
    ] {
        let out = f.skillpm(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_shown_escaped(&format!("{args:?}"), &out, &stdout(&out));
    }

    let out = f.skillpm(&["info", "evil", "--json"]);
    let raw = stdout(&out);
    assert_clean("info --json", &raw);
    let doc: serde_json::Value = serde_json::from_str(&raw).expect("info --json is JSON");
    assert_eq!(doc["versions"][0]["description"], EVIL);

    // Installing from it: progress lines and the summary stay clean.
    f.ok(&["init"]);
    let out = f.skillpm(&["add", "evil@1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("add stderr", &stderr(&out));
    for args in [&["list"][..], &["outdated"], &["list", "--json"]] {
        let out = f.skillpm(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_clean(&format!("{args:?}"), &stdout(&out));
    }
}

#[test]
fn registry_error_detail_is_one_escaped_line() {
    let server = hostile_registry();
    let f = with_registry(&server);
    let out = f.skillpm(&["info", "broken"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert_clean("registry error", &err);
    assert!(err.contains("\\u{202e}desrever"), "{err:?}");
}

#[test]
fn git_error_line_is_escaped() {
    let f = Fixture::new();
    // What a hostile remote makes git print (git forwards `remote:` lines).
    let git = f.write(
        &f.bin,
        "git",
        "#!/bin/sh\nprintf 'remote: \\033]0;pwned\\007\\033[2J\\302\\233 \\342\\200\\256desrever\\r\\n' >&2\nexit 128\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    f.ok(&["init"]);
    // ssh is fetched through `git`.
    let out = f.skillpm(&["add", "git+ssh://example.invalid/skills.git"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert_shown_escaped("git error", &out, &err);
}

#[test]
fn list_shows_lock_paths_escaped() {
    let f = Fixture::new();
    f.ok(&["init"]);
    let src = f.root().join("src");
    f.skill(&src, "local", "name: local\ndescription: a local skill", "");
    f.ok(&["add", "../src/local"]);
    // A lock from elsewhere (a pull request, say) may name any path.
    let lock_path = f.project.join("skills.lock");
    let lock = std::fs::read_to_string(&lock_path).expect("lock");
    let start = lock.find("path+").expect("a path source");
    let end = start + lock[start..].find('"').expect("end of source");
    let lock = format!("{}path+./a\\u202Eb\\u2066{}", &lock[..start], &lock[end..]);
    std::fs::write(&lock_path, lock).expect("write lock");
    let out = f.skillpm(&["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("list", &stdout(&out));
    assert!(
        stdout(&out).contains("a\\u{202e}b\\u{2066}"),
        "{}",
        stdout(&out)
    );
    let out = f.skillpm(&["list", "--json"]);
    let raw = stdout(&out);
    assert_clean("list --json", &raw);
    let rows: serde_json::Value = serde_json::from_str(&raw).expect("json");
    assert_eq!(rows[0]["source"], "path+./a\u{202e}b\u{2066}");
}

#[test]
fn verify_shows_file_names_escaped() {
    let f = Fixture::new();
    f.ok(&["init"]);
    let src = f.root().join("src");
    f.skill(&src, "local", "name: local\ndescription: a local skill", "");
    f.ok(&["add", "../src/local"]);
    // Someone drops a file into the installed tree; verify names it.
    f.write(&f.project_root(), "local/x\x1b[2J\u{202e}.sh", "echo");
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_clean("verify stdout", &stdout(&out));
    assert_clean("verify stderr", &stderr(&out));
    assert!(
        stdout(&out).contains("added file x\\x1b[2J\\u{202e}.sh"),
        "{}",
        stdout(&out)
    );
}
