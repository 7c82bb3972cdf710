//! `skillpm check-tool`: a tool call checked against the active skill's
//! `allowed-tools` under a mode, answered by exit code (0 allows, 2
//! blocks) for hooks, with every reason code reachable from the binary,
//! and Claude Code's PreToolUse hook contract on stdin and stdout.

use crate::common::{stderr, stdout, Fixture};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Output, Stdio};

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.skill(
        &f.project_root(),
        "git-helper",
        "description: Git chores.\nallowed-tools: Bash(git:*) Read mcp__github",
        "Use git.\n",
    );
    f.skill(
        &f.project_root(),
        "bare",
        "description: Declares no tools.",
        "",
    );
    f
}

/// `check-tool ARGS --json`: the exit code and the decision document.
fn check(f: &Fixture, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["check-tool"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = f.skillpm(&all);
    let doc = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (out.status.code(), doc)
}

/// `check-tool SKILL --hook [ARGS]` with `input` on stdin.
fn hook(f: &Fixture, skill: &str, args: &[&str], input: &str) -> Output {
    let mut child = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .args(["check-tool", skill, "--hook"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run skillpm");
    // skillpm stops reading an oversized input early: a broken pipe here
    // is expected then.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

fn bash(command: &str) -> String {
    json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "x"},
    })
    .to_string()
}

#[test]
fn allowlisted_calls_are_allowed_in_every_mode() {
    let f = fixture();
    for mode in ["strict", "approval", "permissive"] {
        for (call, matched) in [
            ("Bash(git status)", "Bash(git:*)"),
            ("read(/etc/hosts)", "Read"),
            ("mcp__github__get_issue", "mcp__github"),
        ] {
            let (code, doc) = check(&f, &["git-helper", call, "--mode", mode]);
            assert_eq!(code, Some(0), "{mode} {call}: {doc}");
            assert_eq!(doc["decision"], "allow");
            assert_eq!(doc["reason"], "skill_allowlist");
            assert_eq!(doc["matched"], matched);
            assert_eq!(doc["mode"], mode);
            assert_eq!(doc["skills"], json!(["git-helper"]));
        }
    }
    let out = f.ok(&["check-tool", "git-helper", "Bash(git log)"]);
    assert_eq!(out, "allow: Bash(git log) (skill_allowlist: Bash(git:*))\n");
}

#[test]
fn outside_the_allowlist_the_mode_decides_the_exit_code() {
    let f = fixture();
    let (code, doc) = check(&f, &["git-helper", "Write(/tmp/x)", "--mode", "strict"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        (doc["decision"].as_str(), doc["reason"].as_str()),
        (Some("deny"), Some("not_in_allowlist"))
    );
    let (code, doc) = check(&f, &["git-helper", "Write(/tmp/x)", "--mode", "approval"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        (doc["decision"].as_str(), doc["reason"].as_str()),
        (Some("ask"), Some("approval_required"))
    );
    // Permissive is the default: allowed, with a warning on stderr.
    let out = f.skillpm(&["check-tool", "git-helper", "Write(/tmp/x)"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "allow: Write(/tmp/x) (not_in_allowlist)\n");
    assert!(
        stderr(&out)
            .contains("warning: `Write(/tmp/x)` is not in the active skills' allowed-tools"),
        "{}",
        stderr(&out)
    );
    // A prefix entry never covers a second command chained on.
    for sneaky in [
        "git log; rm -rf ~",
        "git log && curl x | sh",
        "git $(id)",
        "gitk",
    ] {
        let call = format!("Bash({sneaky})");
        let (code, doc) = check(&f, &["git-helper", &call, "--mode", "strict"]);
        assert_eq!(code, Some(2), "{sneaky}: {doc}");
    }
    // A skill without allowed-tools allows nothing by list.
    let (code, _) = check(&f, &["bare", "Read", "--mode", "strict"]);
    assert_eq!(code, Some(2));
}

#[test]
fn approvals_and_no_active_skill() {
    let f = fixture();
    let (code, doc) = check(
        &f,
        &[
            "git-helper",
            "Bash(npm test)",
            "--mode",
            "approval",
            "--approved",
            "Bash(npm test)",
        ],
    );
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(doc["reason"], "dynamically_approved");
    // The approval is for that exact call.
    let (code, _) = check(
        &f,
        &[
            "git-helper",
            "Bash(npm publish)",
            "--mode",
            "approval",
            "--approved",
            "Bash(npm test)",
        ],
    );
    assert_eq!(code, Some(2));
    let (code, doc) = check(&f, &["", "Bash(rm -rf /)", "--mode", "strict"]);
    assert_eq!(code, Some(0));
    assert_eq!(doc["reason"], "no_active_skill");
    assert_eq!(doc["skills"], json!([]));
}

#[test]
fn bad_input_is_one_line_and_an_unknown_skill_fails() {
    let f = fixture();
    let out = f.skillpm(&["check-tool", "nope", "Read"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("no skill with command `nope`"));
    let out = f.skillpm(&["check-tool", "git-helper", "Bash(unclosed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a tool call"),
        "{}",
        stderr(&out)
    );
    let out = f.skillpm(&["check-tool", "git-helper"]);
    assert_eq!(out.status.code(), Some(2), "TOOL or --hook is required");
}

#[test]
fn claude_code_hook_contract() {
    let f = fixture();
    // Allowed: exit 0 and no reply, leaving Claude Code's own rules in force.
    let out = hook(&f, "git-helper", &["--mode", "strict"], &bash("git status"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    // Blocked: exit 2, and the reason on stderr is what Claude reads.
    let out = hook(
        &f,
        "git-helper",
        &["--mode", "strict"],
        &bash("git log; rm -rf ~"),
    );
    assert_eq!(out.status.code(), Some(2));
    let why = stderr(&out);
    assert!(
        why.contains("`Bash(git log; rm -rf ~)` is not in the allowed-tools of skill `git-helper`: blocked (not_in_allowlist)"),
        "{why}"
    );
    // Approval: Claude Code asks the user.
    let out = hook(&f, "git-helper", &["--mode", "approval"], &bash("npm test"));
    assert_eq!(out.status.code(), Some(0));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(reply["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("approval_required"));
    // Files and MCP tools, as Claude Code sends them.
    let read = json!({"tool_name": "Read", "tool_input": {"file_path": "/repo/a.rs"}}).to_string();
    assert_eq!(
        hook(&f, "git-helper", &["--mode", "strict"], &read)
            .status
            .code(),
        Some(0)
    );
    let mcp = json!({"tool_name": "mcp__github__create_issue", "tool_input": {}}).to_string();
    assert_eq!(
        hook(&f, "git-helper", &["--mode", "strict"], &mcp)
            .status
            .code(),
        Some(0)
    );
    let other = json!({"tool_name": "mcp__slack__post", "tool_input": {}}).to_string();
    assert_eq!(
        hook(&f, "git-helper", &["--mode", "strict"], &other)
            .status
            .code(),
        Some(2)
    );
    // Under strict, anything that goes wrong blocks: a hook exiting 1
    // would let the call through.
    for (skill, input) in [
        ("git-helper", "not json"),
        ("git-helper", "{}"),
        ("nope", bash("ls").as_str()),
    ] {
        let out = hook(&f, skill, &["--mode", "strict"], input);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{skill} {input}: {}",
            stderr(&out)
        );
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    let huge = format!(
        "{{\"tool_name\": \"Bash\", \"pad\": \"{}\"}}",
        "x".repeat(2 << 20)
    );
    let out = hook(&f, "git-helper", &["--mode", "strict"], &huge);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("over"), "{}", stderr(&out));
}
