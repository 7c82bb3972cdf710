//! `skillpm mcp` serves skill commands as MCP prompts, checked with two
//! clients nobody here wrote (the official Python SDK on 2025-11-25 and
//! FastMCP's client on 2026-07-28, see tests/it/mcp.rs for how they are
//! found): `prompts/list` with each command's arguments, `prompts/get`
//! with the instructions filled in as one user message, and -32602 for an
//! unknown prompt or a missing or undeclared argument. The official
//! inspector's CLI lists and gets them too, in both protocol eras.

use crate::common::Fixture;
use crate::mcp::{clients, drive, inspector, run_inspector, stdio_server};
use serde_json::{json, Value};

/// A command with named arguments, one with only a hint, one shadowed by
/// the project, one the model is never offered, one not invocable.
fn fixture() -> Fixture {
    let f = Fixture::new();
    let proj = f.project_root();
    let user = f.user_root();
    f.skill(
        &proj,
        "migrate",
        "description: Migrates a component.\narguments: [component, target]",
        "Move $component to $target (all: $ARGUMENTS).\n",
    );
    f.skill(
        &proj,
        "fix-issue",
        "description: Fixes an issue.\nargument-hint: <issue>\ndisable-model-invocation: true",
        "Fix issue $0.\n",
    );
    f.skill(
        &user,
        "fix-issue",
        "description: The user's copy.",
        "user\n",
    );
    f.skill(&user, "plain", "description: No placeholders.", "Plain.\n");
    f.skill(
        &user,
        "background",
        "description: Model only.\nuser-invocable: false",
        "x\n",
    );
    f
}

#[test]
fn a_new_command_is_announced_with_prompts_list_changed() {
    let Some(py) = clients() else { return };
    let f = fixture();
    let fresh = f.project_root().join("deploy/SKILL.md");
    let md = "---\nname: deploy\ndescription: Deploys.\nargument-hint: <env>\n---\nDeploy to $0.\n";
    let job = json!({
        "server": stdio_server(&f),
        "client": "mcp",
        "gets": [],
        "change": {"path": fresh, "content_b64": crate::mcp::b64(md.as_bytes())},
    });
    let report = drive(&py, "prompts_client.py", &job);
    assert_eq!(report["announced_list_changed"], true, "{report}");
    assert_eq!(report["prompts_notified"], true, "{report}");
    let after = report["after"].as_array().expect("after");
    assert!(after.contains(&json!("deploy")), "{report}");
}

fn run(py: &str, f: &Fixture, client: &str) -> Value {
    let gets = json!([
        {"name": "migrate", "arguments": {"component": "my widget", "target": "Vue"}},
        {"name": "fix-issue", "arguments": {"arguments": "123 $ARGUMENTS"}},
        {"name": "plain", "arguments": {"arguments": "now please"}},
        {"name": "plain"},
        {"name": "no-such-command", "arguments": {}},
        {"name": "background", "arguments": {}},
        {"name": "migrate", "arguments": {"component": "x"}},
        {"name": "migrate", "arguments": {"component": "x", "target": "y", "extra": "z"}},
    ]);
    let job = json!({"server": stdio_server(f), "client": client, "gets": gets});
    drive(py, "prompts_client.py", &job)
}

fn check(f: &Fixture, report: &Value) {
    let names: Vec<&str> = report["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fix-issue", "migrate", "plain"], "{report}");
    let p = &report["prompts"];
    assert_eq!(p[0]["description"], "Fixes an issue.");
    assert_eq!(p[0]["arguments"][0]["name"], "arguments");
    assert_eq!(p[0]["arguments"][0]["required"], false);
    assert!(p[0]["arguments"][0]["description"]
        .as_str()
        .unwrap()
        .ends_with("<issue>"));
    assert_eq!(
        p[1]["arguments"],
        json!([{"name": "component", "required": true}, {"name": "target", "required": true}])
    );

    let text = |i: usize| {
        let g = &report["gets"][i];
        assert_eq!(g["messages"].as_array().map(Vec::len), Some(1), "{g}");
        assert_eq!(g["messages"][0]["role"], "user");
        g["messages"][0]["text"].as_str().unwrap().to_string()
    };
    let migrate_dir = f.project_root().join("migrate");
    assert_eq!(
        text(0),
        format!(
            "Base directory for this skill: {}\n\nMove my widget to Vue (all: 'my widget' Vue).\n",
            migrate_dir.display()
        )
    );
    assert_eq!(report["gets"][0]["description"], "Migrates a component.");
    // The project's fix-issue, not the user's; an argument is text only.
    assert!(text(1).ends_with("Fix issue 123.\n"), "{}", text(1));
    assert!(text(2).ends_with("Plain.\n\nARGUMENTS: now please\n"));
    assert!(text(3).ends_with("Plain.\n"));
    for i in 4..8 {
        assert_eq!(report["gets"][i]["code"], -32602, "{}", report["gets"][i]);
    }
    let error = |i: usize| report["gets"][i]["error"].as_str().unwrap().to_string();
    assert!(
        error(4).contains("no command `no-such-command`"),
        "{}",
        error(4)
    );
    assert!(error(6).contains("needs argument `target`"), "{}", error(6));
    assert!(error(7).contains("has no argument `extra`"), "{}", error(7));
}

#[test]
fn the_python_sdk_lists_and_gets_skill_commands_as_prompts() {
    let Some(py) = clients() else { return };
    let f = fixture();
    let report = run(&py, &f, "mcp");
    assert_eq!(report["protocol"], "2025-11-25");
    assert_eq!(report["announced"], true);
    check(&f, &report);
}

#[test]
fn fastmcp_lists_and_gets_skill_commands_as_prompts() {
    let Some(py) = clients() else { return };
    let f = fixture();
    let report = run(&py, &f, "fastmcp");
    assert_eq!(report["protocol"], "2026-07-28");
    check(&f, &report);
}

/// The inspector's CLI with `args` against `skillpm mcp` in `f`, in
/// `era`: whether it succeeded, and the JSON it printed.
fn inspect(cli: &std::path::Path, f: &Fixture, era: &str, args: &[&str]) -> (bool, Value) {
    let out = run_inspector(cli, f, era, args);
    // A result on stdout; a failure's error document on stderr.
    let stream = match out.status.success() {
        true => &out.stdout,
        false => &out.stderr,
    };
    let text = String::from_utf8_lossy(stream);
    let doc = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{era}: {e}: {text}"));
    (out.status.success(), doc)
}

#[test]
fn the_official_inspector_lists_and_gets_prompts_in_both_eras() {
    let Some(cli) = inspector() else { return };
    let f = fixture();
    for era in ["modern", "legacy"] {
        let (ok, list) = inspect(&cli, &f, era, &["--method", "prompts/list"]);
        assert!(ok, "{era}: {list}");
        let names: Vec<&str> = list["result"]["prompts"]
            .as_array()
            .expect("prompts")
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fix-issue", "migrate", "plain"], "{era}");
        let get = [
            "--method",
            "prompts/get",
            "--prompt-name",
            "migrate",
            "--prompt-args",
            "component=SearchBar",
            "target=Vue",
        ];
        let (ok, got) = inspect(&cli, &f, era, &get);
        assert!(ok, "{era}: {got}");
        let text = got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .expect("text");
        assert!(
            text.ends_with("Move SearchBar to Vue (all: SearchBar Vue).\n"),
            "{era}: {text}"
        );
        let (ok, err) = inspect(
            &cli,
            &f,
            era,
            &["--method", "prompts/get", "--prompt-name", "nope"],
        );
        assert!(!ok, "{era}: {err}");
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no command `nope`"),
            "{era}: {err}"
        );
    }
}
