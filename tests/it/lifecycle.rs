//! Lifecycle states in `status --json`: every skill carries `lifecycle`
//! beside its `state`, `eligible` for what the agent is offered and
//! `ineligible` for everything with a reason (skipped, shadowed, invalid);
//! `status --agent` carries it too. `skillpm mcp`'s `list_skills` reports
//! `loaded` for the skills a session fetched, until their file changes.

use crate::common::Fixture;
use crate::mcp::{exchange, stdio_session};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[test]
fn status_json_carries_each_skills_lifecycle() {
    let f = Fixture::new();
    let project = f.project_root();
    let user = f.home.join(".agents/skills");
    f.skill(&project, "ready", "description: Works anywhere.", "");
    f.skill(
        &project,
        "needs-bin",
        "description: Needs a binary.\nrequires: {bins: [no-such-bin-xyz]}",
        "",
    );
    f.skill(&project, "broken", "name: broken", "no description");
    f.skill(&user, "ready", "description: The user's copy.", "");
    let check = |doc: &Value| {
        let mut seen: Vec<String> = doc["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("{} {} {}", s["command"], s["state"], s["lifecycle"]))
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [
                r#""broken" "invalid" "ineligible""#,
                r#""needs-bin" "skipped" "ineligible""#,
                r#""ready" "eligible" "eligible""#,
                r#""ready" "shadowed" "ineligible""#,
            ]
        );
    };
    check(&serde_json::from_str(&f.ok(&["status", "--json"])).unwrap());
    // One agent's view reads its own keys (codex ignores `requires`), and
    // the stage still follows the state.
    let codex: Value =
        serde_json::from_str(&f.ok(&["status", "--json", "--agent", "codex"])).unwrap();
    let skills = codex["skills"].as_array().unwrap();
    assert!(!skills.is_empty());
    for s in skills {
        let want = match s["state"].as_str() {
            Some("eligible") => "eligible",
            _ => "ineligible",
        };
        assert_eq!(s["lifecycle"], want, "{s}");
    }
}

/// `command=lifecycle` for each skill of a list the server gave.
fn stage_lines(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("list")
        .iter()
        .map(|s| {
            format!(
                "{}={}",
                s["command"].as_str().unwrap(),
                s["lifecycle"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn mcp_sessions_track_loaded_and_active_skills_until_they_change() {
    let f = Fixture::new();
    let root = f.project_root();
    f.skill(&root, "alpha", "description: First.", "Alpha body v1\n");
    f.skill(&root, "beta", "description: Second.", "Beta body\n");
    let gamma = f.skill(&root, "gamma", "description: Third.", "Gamma body\n");
    f.write(&gamma, "notes.md", "gamma notes");
    let (mut child, mut stdin, mut out) = stdio_session(&f);
    let mut id = 10;
    let mut send = |method: &str, params: Value| {
        id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        exchange(&mut stdin, &mut out, &msg).expect("answer")
    };
    let stages = |send: &mut dyn FnMut(&str, Value) -> Value| {
        let answer = send(
            "tools/call",
            json!({"name": "list_skills", "arguments": {}}),
        );
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .expect("text");
        let list: Value = serde_json::from_str(text).expect("json");
        stage_lines(&list)
    };
    assert_eq!(
        stages(&mut send),
        ["alpha=eligible", "beta=eligible", "gamma=eligible"]
    );
    let loaded = send(
        "tools/call",
        json!({"name": "load_skill", "arguments": {"name": "alpha"}}),
    );
    assert!(loaded.to_string().contains("Alpha body v1"), "{loaded}");
    // Reading a SKILL.md resource is loading it too; another file is not.
    let answer = send("resources/read", json!({"uri": "skill://beta/SKILL.md"}));
    assert!(answer.to_string().contains("Beta body"), "{answer}");
    let answer = send("resources/read", json!({"uri": "skill://gamma/notes.md"}));
    assert!(answer.to_string().contains("gamma notes"), "{answer}");
    assert_eq!(
        stages(&mut send),
        ["alpha=loaded", "beta=loaded", "gamma=eligible"]
    );
    // Invoking a skill's command (prompts/get) makes it active; the
    // session's lifecycle resource says the same as the tool.
    let got = send("prompts/get", json!({"name": "beta", "arguments": {}}));
    assert!(got.to_string().contains("Beta body"), "{got}");
    assert_eq!(
        stages(&mut send),
        ["alpha=loaded", "beta=active", "gamma=eligible"]
    );
    let answer = send("resources/read", json!({"uri": "skill://lifecycle.json"}));
    let text = answer["result"]["contents"][0]["text"]
        .as_str()
        .expect("lifecycle.json");
    let doc: Value = serde_json::from_str(text).expect("json");
    let from_resource = stage_lines(&doc["skills"]);
    assert_eq!(
        from_resource,
        ["alpha=loaded", "beta=active", "gamma=eligible"]
    );
    // Loading an active skill again keeps it active.
    send(
        "tools/call",
        json!({"name": "load_skill", "arguments": {"name": "beta"}}),
    );
    assert_eq!(stages(&mut send)[1], "beta=active");
    // Editing alpha sends it back to eligible once the server reloads.
    f.skill(&root, "alpha", "description: First.", "Alpha body v2\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = stages(&mut send);
        if now[0] == "alpha=eligible" {
            assert_eq!(now, ["alpha=eligible", "beta=active", "gamma=eligible"]);
            break;
        }
        assert!(Instant::now() < deadline, "no reload seen: {now:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}
