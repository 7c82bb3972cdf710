//! `skillpm commands` and `skillpm commands run`: the table of skill
//! commands (a project skill shadowing a user one, with why), and a
//! command's instructions filled in with Claude Code's substitutions.

use crate::common::{stderr, stdout, Fixture};
use serde_json::Value;

/// A user-scope `deploy` that a project-scope one shadows, a skill with
/// named arguments, one hidden from the `/` menu, one without
/// placeholders, and an ineligible one.
fn fixture() -> Fixture {
    let f = Fixture::new();
    let user = f.home.join(".claude/skills");
    f.skill(
        &user,
        "deploy",
        "description: The user's deploy.",
        "user deploy\n",
    );
    f.skill(
        &f.project_root(),
        "deploy",
        "description: Deploys the project.\nargument-hint: <env> [--dry-run]",
        "Deploy to $0 (all: $ARGUMENTS) from ${CLAUDE_SKILL_DIR}.\n",
    );
    f.skill(
        &f.project_root(),
        "migrate",
        "description: Migrates a component.\narguments: [component, from, to]\ndisable-model-invocation: true",
        "Move $component from $from to $ARGUMENTS[2]; price $5 stays empty.\n",
    );
    f.skill(
        &user,
        "plain",
        "description: No placeholders.",
        "Do the plain thing.\n",
    );
    f.skill(
        &user,
        "background",
        "description: Model only.\nuser-invocable: false",
        "x\n",
    );
    f.skill(
        &user,
        "docker",
        "description: Needs docker.\nrequires: {bins: [no-such-bin-xyz]}",
        "x\n",
    );
    f
}

#[test]
fn the_table_lists_user_invocable_eligible_skills_with_shadowing_and_why() {
    let f = fixture();
    let doc: Value = serde_json::from_str(&f.ok(&["commands", "--json"])).unwrap();
    let names: Vec<&str> = doc["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // Sorted; not `background` (user-invocable: false), not `docker`
    // (missing its binary).
    assert_eq!(names, ["deploy", "migrate", "plain"]);
    let deploy = &doc["commands"][0];
    assert_eq!(deploy["scope"], "project");
    assert_eq!(deploy["description"], "Deploys the project.");
    assert_eq!(deploy["argument_hint"], "<env> [--dry-run]");
    let shadowed = deploy["shadowed"].as_array().unwrap();
    assert_eq!(shadowed.len(), 1);
    assert_eq!(shadowed[0]["scope"], "user");
    let user_deploy = f.home.join(".claude/skills/deploy");
    assert_eq!(shadowed[0]["path"], user_deploy.display().to_string());
    let why = shadowed[0]["why"].as_str().unwrap();
    assert!(
        why.contains("project root") && why.contains("takes precedence over the user root"),
        "{why}"
    );
    let migrate = &doc["commands"][1];
    assert_eq!(
        migrate["arguments"],
        serde_json::json!(["component", "from", "to"])
    );
    assert_eq!(migrate["model_invocable"], false);
    // Byte-identical across runs.
    assert_eq!(f.ok(&["commands", "--json"]), f.ok(&["commands", "--json"]));

    let human = f.ok(&["commands"]);
    let lines: Vec<&str> = human.lines().collect();
    assert!(
        lines[0].starts_with("/deploy <env> [--dry-run]  Deploys the project."),
        "{human}"
    );
    assert!(
        lines[1].contains(&format!("{}: shadowed by", user_deploy.display())),
        "{human}"
    );
    assert!(lines[2].starts_with("/migrate"), "{human}");
}

#[test]
fn run_fills_arguments_as_claude_code_does() {
    let f = fixture();
    let dir = f.project_root().join("deploy");
    let out = f.ok(&["commands", "run", "deploy", "eu west", "--dry-run"]);
    assert_eq!(
        out,
        format!(
            "Base directory for this skill: {d}\n\nDeploy to eu west (all: 'eu west' --dry-run) from {d}.\n",
            d = dir.display()
        )
    );
    let out = f.ok(&["commands", "run", "migrate", "SearchBar", "React", "Vue"]);
    assert!(
        out.ends_with("Move SearchBar from React to Vue; price  stays empty.\n"),
        "{out}"
    );
    // No placeholder in the body: the arguments are appended.
    let out = f.ok(&["commands", "run", "plain", "now", "$ARGUMENTS"]);
    assert!(
        out.ends_with("Do the plain thing.\n\nARGUMENTS: now '$ARGUMENTS'\n"),
        "{out}"
    );
}

#[test]
fn run_refuses_what_it_cannot_fill() {
    let f = fixture();
    for (args, code, says) in [
        (vec!["nope"], 1, "no command `nope`"),
        (vec!["background"], 1, "no command `background`"),
        (vec!["docker"], 1, "no command `docker`"),
    ] {
        let mut all = vec!["commands", "run"];
        all.extend(args);
        let out = f.skillpm(&all);
        assert_eq!(out.status.code(), Some(code), "{all:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    let long = "x".repeat(17 * 1024);
    let out = f.skillpm(&["commands", "run", "plain", &long]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("at most 16384 are accepted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1);
}
