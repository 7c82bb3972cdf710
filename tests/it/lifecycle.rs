//! Lifecycle states in `status --json`: every skill carries `lifecycle`
//! beside its `state`, `eligible` for what the agent is offered and
//! `ineligible` for everything with a reason (skipped, shadowed, invalid);
//! `status --agent` carries it too.

use crate::common::Fixture;
use serde_json::Value;

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
