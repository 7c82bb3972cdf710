//! Hostile files on disk: SKILL.md documents built to hurt a YAML parser
//! or a scanner, and corrupted skills.toml / skills.lock. Hostile skills
//! are reported per skill (never a crash, never hiding the others); a
//! corrupt manifest or lock is an error naming file and line, and the lock
//! is never rewritten.

use crate::common;

use common::{find, stderr, Fixture};
use std::time::{Duration, Instant};

/// (command, SKILL.md bytes)
fn hostile_skills() -> Vec<(&'static str, Vec<u8>)> {
    // Billion laughs: nine levels of nine aliases.
    let mut bomb = String::from(
        "---\ndescription: alias bomb\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    bomb.push_str("---\nbody\n");
    let deep = format!(
        "---\ndescription: deep\nk: {}{}\n---\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let deep_map = format!(
        "---\ndescription: deep map\nk: {}1{}\n---\n",
        "{a: ".repeat(10_000),
        "}".repeat(10_000)
    );
    let mut binary = b"---\ndescription: bin\n---\n".to_vec();
    binary.extend_from_slice(&[0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]);
    let mut huge = b"---\ndescription: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 10 * 1024 * 1024));
    huge.extend_from_slice(b"\n---\n");
    vec![
        ("alias-bomb", bomb.into_bytes()),
        ("deep-seq", deep.into_bytes()),
        ("deep-map", deep_map.into_bytes()),
        (
            "python-tag",
            b"---\ndescription: !!python/object/apply:os.system [\"touch /tmp/skillpm-pwned\"]\nx: !!python/object:__main__.Evil {}\n---\n".to_vec(),
        ),
        ("dup-keys", b"---\ndescription: one\ndescription: two\nname: dup-keys\nname: other\n---\n".to_vec()),
        ("unclosed", b"---\ndescription: never closed\nname: unclosed\n".to_vec()),
        ("binary", binary),
        ("nul-in-yaml", b"---\ndescription: a\0b\n---\n".to_vec()),
        ("huge-line", huge),
        ("empty", Vec::new()),
        ("only-fence", b"---".to_vec()),
    ]
}

fn fixture_with_hostile_skills() -> Fixture {
    let f = Fixture::new();
    let root = f.project_root();
    f.skill(&root, "good", "description: a good skill", "body\n");
    for (cmd, bytes) in hostile_skills() {
        f.write(&root, &format!("{cmd}/SKILL.md"), bytes);
    }
    f.skill(
        &root,
        "zz-last",
        "description: after the hostile ones",
        "body\n",
    );
    f
}

#[test]
fn status_reports_each_hostile_skill_and_keeps_the_rest() {
    let f = fixture_with_hostile_skills();
    let start = Instant::now();
    let s = f.status_json();
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    find(&s, "good", "eligible");
    find(&s, "zz-last", "eligible");
    let skills = s["skills"].as_array().expect("skills");
    for (cmd, _) in hostile_skills() {
        let entry = skills
            .iter()
            .find(|e| e["command"] == cmd)
            .unwrap_or_else(|| panic!("{cmd} missing from status: {s:#}"));
        // Whatever the verdict, it is per skill and one line.
        if entry["state"] == "invalid" {
            let detail = entry["reason"]["detail"].as_str().unwrap_or("");
            assert!(!detail.contains('\n'), "{cmd}: {detail:?}");
            assert!(
                detail.len() < 2000,
                "{cmd}: detail is {} bytes",
                detail.len()
            );
        }
    }
    let state = |c: &str| {
        skills.iter().find(|e| e["command"] == c).expect("entry")["state"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    for c in [
        "alias-bomb",
        "deep-seq",
        "deep-map",
        "unclosed",
        "binary",
        "huge-line",
        "empty",
        "only-fence",
    ] {
        assert_eq!(state(c), "invalid", "{c}: {s:#}");
    }
    let code = |c: &str| {
        find(&s, c, "invalid")["reason"]["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(code("huge-line"), "too-large");
    assert_eq!(code("binary"), "not-utf8");
    // No YAML tag ever runs anything.
    assert!(!std::path::Path::new("/tmp/skillpm-pwned").exists());
    // The prompt is still built from the valid skills.
    let prompt = f.ok(&["prompt"]);
    assert!(
        prompt.contains("a good skill") && prompt.contains("after the hostile ones"),
        "{prompt}"
    );
}

#[test]
fn validate_reports_every_file_and_never_crashes() {
    let f = fixture_with_hostile_skills();
    let root = f.project_root();
    let out = f.skillpm(&["validate", root.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = common::stdout(&out);
    for (cmd, _) in hostile_skills() {
        if matches!(cmd, "python-tag" | "dup-keys") {
            continue; // may be valid YAML with a warning, or an error
        }
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("{cmd}/")) && l.contains("error")),
            "no error line for {cmd}:\n{text}"
        );
    }
    for l in text.lines() {
        assert!(l.len() < 4000, "line of {} bytes", l.len());
    }
    assert_eq!(
        stderr(&out).trim_end().lines().count(),
        1,
        "{}",
        stderr(&out)
    );
}

// ------------------------------------------------- manifest and lockfile

fn project_with_lock(manifest: &str, lock: &[u8]) -> Fixture {
    let f = Fixture::new();
    f.skill(
        &f.project,
        "local",
        "name: local\ndescription: local skill\nversion: \"1.0.0\"",
        "body\n",
    );
    f.write(&f.project, "skills.toml", manifest);
    f.write(&f.project, "skills.lock", lock);
    f
}

const MANIFEST: &str = "[skills]\nlocal = { path = \"./local\" }\n";

fn assert_fails_naming(f: &Fixture, args: &[&str], file: &str, line: Option<usize>) {
    let lock = f.project.join("skills.lock");
    let manifest = f.project.join("skills.toml");
    let before = (std::fs::read(&lock).ok(), std::fs::read(&manifest).ok());
    let out = f.skillpm(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "skillpm {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(file),
        "skillpm {args:?} should name {file}: {err}"
    );
    if let Some(l) = line {
        assert!(
            err.contains(&format!("{file}:{l}")) || err.contains(&format!("line {l}")),
            "skillpm {args:?} should name line {l}: {err}"
        );
    }
    let after = (std::fs::read(&lock).ok(), std::fs::read(&manifest).ok());
    assert!(
        before == after,
        "skillpm {args:?} rewrote skills.lock or skills.toml"
    );
}

#[test]
fn corrupt_manifest_names_file_and_line() {
    for (text, line) in [
        ("[skills]\nlocal = \"^1\nother = 1\n", 2),
        (
            "[skills]\nlocal = { path = \"./local\" }\nlocal = \"^2\"\n",
            3,
        ),
        ("[skills]\n\"bad name!\" = \"^1\"\n", 2),
        (
            "[skills]\nother = { path = \"./x\", version = \"^1\" }\n",
            2,
        ),
        (
            "[skills]\nother = { git = \"ext::sh -c touch% /tmp/x\" }\n",
            2,
        ),
    ] {
        let f = project_with_lock(text, b"");
        std::fs::remove_file(f.project.join("skills.lock")).expect("rm lock");
        for args in [&["install"][..], &["list"], &["add", "./local"]] {
            assert_fails_naming(&f, args, "skills.toml", Some(line));
        }
    }
    // Not UTF-8 at all.
    let f = project_with_lock("", b"");
    std::fs::write(f.project.join("skills.toml"), b"[skills]\n\xff\xfe = 1\n").expect("w");
    assert_fails_naming(&f, &["install"], "skills.toml", None);
}

#[test]
fn corrupt_lock_names_file_and_line_and_is_never_rewritten() {
    // First make a real lock, then damage it in several ways.
    let f = project_with_lock(MANIFEST, b"");
    std::fs::remove_file(f.project.join("skills.lock")).expect("rm lock");
    f.ok(&["install"]);
    let good = std::fs::read_to_string(f.project.join("skills.lock")).expect("lock");
    let cases: Vec<(Vec<u8>, Option<usize>)> = vec![
        (
            good.replacen("checksum = \"sha256:", "checksum = \"sha256:zz", 1)
                .into_bytes(),
            None,
        ),
        (
            good.replacen("version = 1", "version = 99", 1).into_bytes(),
            None,
        ),
        (format!("{good}[[skill]\n").into_bytes(), None),
        (
            good.replacen("[[skill]]", "[[skill]]\nname = \"local\"", 1)
                .into_bytes(),
            None,
        ),
        (
            b"version = 1\n\n[[skill]]\nname = \"../../etc\"\n".to_vec(),
            Some(4),
        ),
        (b"\xff\xfe\x00garbage".to_vec(), None),
        (
            good.replacen("source = \"", "source = \"ext::sh -c ", 1)
                .into_bytes(),
            None,
        ),
    ];
    for (bytes, line) in cases {
        std::fs::write(f.project.join("skills.lock"), &bytes).expect("w");
        for args in [
            &["install"][..],
            &["update"],
            &["list"],
            &["verify"],
            &["remove", "local"],
        ] {
            assert_fails_naming(&f, args, "skills.lock", line);
        }
    }
}
