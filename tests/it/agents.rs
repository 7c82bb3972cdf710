//! Named agent targets, one tree per skill shared by every
//! agent that reads `.agents/skills` and linked (or copied) into the
//! others, verify and orphan removal on every root, `status --agent` and
//! `status --agents`, and `init` detecting the agents a project uses.

use crate::common;
use common::{stderr, stdout, Fixture};
use serde_json::Value;
use std::path::Path;

fn project(targets: &str, extra: &str) -> Fixture {
    let f = Fixture::new();
    f.write(
        &f.project,
        "skills.toml",
        format!("[skills]\n[install]\ntargets = {targets}\n{extra}"),
    );
    for name in ["alpha", "beta"] {
        f.skill(
            &f.project,
            &format!("vendor/{name}"),
            &format!("name: {name}\ndescription: {name} skill\nversion: \"1.0.0\""),
            "body\n",
        );
        f.write(
            &f.project,
            &format!("vendor/{name}/scripts/run.sh"),
            "echo hi\n",
        );
    }
    f
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn link_text(p: &Path) -> String {
    std::fs::read_link(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .display()
        .to_string()
}

/// Every `SKILL.md` under `dir` reached without following symlinks.
fn real_skill_files(dir: &Path) -> usize {
    let mut n = 0;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    for e in rd.flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            n += real_skill_files(&e.path());
        } else if ft.is_file() && e.file_name() == "SKILL.md" {
            n += 1;
        }
    }
    n
}

#[test]
fn agents_sharing_agents_skills_get_one_tree_and_claude_a_link() {
    let f = project(
        r#"["claude-code", "codex", "cursor", "gemini-cli", "./.agents/skills"]"#,
        "",
    );
    f.ok(&["add", "./vendor/alpha", "./vendor/beta"]);
    let shared = f.project.join(".agents/skills");
    let claude = f.project.join(".claude/skills");
    for name in ["alpha", "beta"] {
        let tree = shared.join(name);
        assert!(
            tree.join("SKILL.md").is_file() && !is_symlink(&tree),
            "{name}"
        );
        assert!(tree.join(".skillpm-install").is_file());
        let link = claude.join(name);
        assert!(is_symlink(&link), "{name} in .claude/skills is not a link");
        assert_eq!(link_text(&link), format!("../../.agents/skills/{name}"));
        assert!(link.join("scripts/run.sh").is_file());
    }
    // Written once: one SKILL.md per skill outside vendor/, no per-agent
    // directories for agents that read .agents/skills.
    assert_eq!(real_skill_files(&f.project.join(".agents")), 2);
    assert_eq!(real_skill_files(&f.project.join(".claude")), 0);
    for dir in [".cursor", ".gemini", ".codex"] {
        assert!(!f.project.join(dir).exists(), "{dir} was created");
    }
    assert!(f.ok(&["verify"]).is_empty());
    let again = stderr(&f.skillpm(&["install"]));
    assert!(again.contains("Up to date, 4 unchanged"), "{again}");
    // `list` sees both roots agree.
    assert!(f.ok(&["list"]).contains("installed"));

    // A link pointing elsewhere is named by verify and repaired by install.
    let link = claude.join("alpha");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("../../.agents/skills/beta", &link).unwrap();
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("does not point to ../../.agents/skills/alpha"),
        "{}",
        stdout(&out)
    );
    f.ok(&["install"]);
    assert_eq!(link_text(&link), "../../.agents/skills/alpha");
    // A missing link is put back.
    std::fs::remove_file(&link).unwrap();
    f.ok(&["install"]);
    assert_eq!(link_text(&link), "../../.agents/skills/alpha");

    // Removing a skill removes its tree and every link to it; a skill the
    // user wrote by hand in .claude/skills stays.
    f.skill(&claude, "mine", "description: hand-written", "keep\n");
    f.ok(&["remove", "alpha"]);
    assert!(!shared.join("alpha").exists());
    assert!(std::fs::symlink_metadata(claude.join("alpha")).is_err());
    assert!(claude.join("mine/SKILL.md").is_file());
    assert!(is_symlink(&claude.join("beta")));

    // An orphan link left by an interrupted run (no lock entry) goes.
    std::os::unix::fs::symlink("../../.agents/skills/gone", claude.join("gone")).unwrap();
    // A link the user made to an installed tree under another name is
    // theirs, though its target carries our marker.
    std::os::unix::fs::symlink(shared.join("beta"), claude.join("my-beta")).unwrap();
    f.ok(&["install"]);
    assert!(std::fs::symlink_metadata(claude.join("gone")).is_err());
    assert!(is_symlink(&claude.join("my-beta")));
}

/// One tree linked into several agents' roots is one skill to `status`,
/// plain and per agent: shown once, eligible, with where else it is
/// linked, never as shadowed by itself. A different tree of the same
/// command in another root still shadows.
#[test]
fn a_tree_linked_into_several_roots_is_one_skill_in_status() {
    let f = project(r#"["claude-code", "codex", "cursor"]"#, "");
    f.ok(&["add", "./vendor/alpha", "./vendor/beta"]);
    // Claude Code reads .claude/skills alone: nothing else to name there.
    for (args, elsewhere) in [
        (vec!["status", "--json"], 1),
        (vec!["status", "--json", "--agent", "cursor"], 1),
        (vec!["status", "--json", "--agent", "claude-code"], 0),
    ] {
        let doc = json(&f.ok(&args));
        let skills = doc["skills"].as_array().unwrap();
        let rows = states(&doc);
        assert_eq!(skills.len(), 2, "{args:?}: {rows:?}");
        assert!(
            rows.iter().all(|(_, state, _)| state == "eligible"),
            "{args:?}: {rows:?}"
        );
        for s in skills {
            let linked = s["linked_from"].as_array().unwrap();
            assert_eq!(linked.len(), elsewhere, "{args:?}: {s}");
        }
    }
    let shown = f.ok(&["status"]);
    assert!(!shown.contains("Shadowed"), "{shown}");
    assert!(shown.contains("(also in "), "{shown}");
    // A hand-made copy (another tree) in .claude/skills shadows as before.
    let claude = f.project.join(".claude/skills");
    std::fs::remove_file(claude.join("beta")).unwrap();
    f.skill(&claude, "beta", "name: beta\ndescription: mine", "mine\n");
    let shown = f.ok(&["status"]);
    assert!(shown.contains("Shadowed (1)"), "{shown}");
}

/// `--global` with agent names in the user manifest's targets installs
/// into each agent's own directory under the home: one tree in the
/// shared `~/.agents/skills`, a link in `~/.claude/skills` for Claude
/// Code, and for an agent that does not read the shared directory there
/// (Amp) a link in the user root it reads; `remove --global` takes them
/// all.
#[test]
fn global_installs_go_to_each_named_agents_user_directory() {
    let f = Fixture::new();
    f.write(
        &f.config,
        "skillpm/skills.toml",
        "[skills]\n\n[install]\ntargets = [\"claude-code\", \"codex\", \"amp\"]\n",
    );
    let src = f.root().join("global-src");
    f.skill(&src, "gskill", "name: gskill\ndescription: d", "body\n");
    let global = |args: &[&str]| {
        let out = f
            .command(env!("CARGO_BIN_EXE_skillpm"))
            .current_dir(&src)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    global(&["add", "--global", "./gskill"]);
    let tree = f.home.join(".agents/skills/gskill");
    assert!(tree.join("SKILL.md").is_file() && !is_symlink(&tree));
    for (root, up) in [
        (".claude/skills", "../.."),
        (".config/agents/skills", "../../.."),
    ] {
        let link = f.home.join(root).join("gskill");
        assert!(is_symlink(&link), "{root}");
        assert_eq!(link_text(&link), format!("{up}/.agents/skills/gskill"));
        assert!(link.join("SKILL.md").is_file(), "{root}");
    }
    assert!(!f.project.join(".claude").exists());
    global(&["remove", "--global", "gskill"]);
    for root in [".agents/skills", ".claude/skills", ".config/agents/skills"] {
        let gone = f.home.join(root).join("gskill");
        assert!(std::fs::symlink_metadata(&gone).is_err(), "{root}");
    }
}

#[test]
fn copy_mode_copies_into_each_target_and_verifies_each() {
    let f = project(r#"["codex", "claude-code"]"#, "link = \"copy\"\n");
    f.ok(&["add", "./vendor/alpha"]);
    let copy = f.project.join(".claude/skills/alpha");
    assert!(!is_symlink(&copy) && copy.join("SKILL.md").is_file());
    assert!(copy.join(".skillpm-install").is_file());
    assert!(f.ok(&["verify"]).is_empty());
    std::fs::write(copy.join("scripts/run.sh"), "rm -rf /\n").unwrap();
    let out = f.skillpm(&["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    assert!(
        report.contains(".claude/skills") && report.contains("scripts/run.sh"),
        "{report}"
    );
    f.ok(&["install"]);
    assert_eq!(
        std::fs::read_to_string(copy.join("scripts/run.sh")).unwrap(),
        "echo hi\n"
    );
    assert!(f.ok(&["verify"]).is_empty());
    // Switching to links replaces the copy with a link.
    f.write(
        &f.project,
        "skills.toml",
        std::fs::read_to_string(f.project.join("skills.toml"))
            .unwrap()
            .replace("link = \"copy\"\n", ""),
    );
    f.ok(&["install"]);
    assert_eq!(link_text(&copy), "../../.agents/skills/alpha");
}

#[test]
fn a_misspelt_agent_is_refused_naming_the_known_ones() {
    let f = project(r#"["claude"]"#, "");
    let out = f.skillpm(&["add", "./vendor/alpha"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("`claude`") && err.contains("claude-code") && err.contains("./claude"),
        "{err}"
    );
    assert!(!f.project.join("claude").exists());
    assert!(!f.project.join(".agents").exists());
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).expect("json")
}

fn states(doc: &Value) -> Vec<(String, String, String)> {
    doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["command"].as_str().unwrap().to_string(),
                s["state"].as_str().unwrap().to_string(),
                s["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Skills in several agents' directories, with requirements written in
/// the dialects agents differ on.
fn agents_world() -> Fixture {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "[skills]\n");
    let p = &f.project;
    f.skill(
        &p.join(".agents/skills"),
        "needs-docker",
        "description: top-level requires\nrequires: {bins: [docker]}",
        "",
    );
    f.skill(
        &p.join(".agents/skills"),
        "claw-only",
        "description: openclaw metadata\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"no-such-tool\"]}}}",
        "",
    );
    f.skill(
        &p.join(".claude/skills"),
        "manual",
        "description: only by name\ndisable-model-invocation: true",
        "",
    );
    f.skill(
        &p.join(".claude/skills"),
        "dup",
        "description: project dup",
        "",
    );
    f.skill(
        &f.home.join(".claude/skills"),
        "dup",
        "description: user dup",
        "",
    );
    f.skill(
        &p.join(".github/skills"),
        "copilot-only",
        "description: c",
        "",
    );
    f
}

#[test]
fn status_agent_shows_its_roots_precedence_and_dialect() {
    let f = agents_world();
    // Claude Code: only .claude roots, personal over project.
    let claude = json(&f.ok(&["status", "--agent", "claude-code", "--json"]));
    assert_eq!(claude["agent"]["id"], "claude-code");
    let roots: Vec<&str> = claude["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        roots[0].ends_with("project/.claude/skills") && roots[1].ends_with("home/.claude/skills"),
        "{roots:?}"
    );
    let s = states(&claude);
    let cmds: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
    assert!(
        !cmds.contains(&"needs-docker") && !cmds.contains(&"copilot-only"),
        "{cmds:?}"
    );
    let dup_winner = s
        .iter()
        .find(|x| x.0 == "dup" && x.1 == "eligible")
        .unwrap();
    assert!(
        dup_winner.2.contains("home/.claude/skills"),
        "{dup_winner:?}"
    );
    // The default view (skillpm's) lets the project win instead.
    let own = states(&f.status_json());
    let dup_own = own
        .iter()
        .find(|x| x.0 == "dup" && x.1 == "eligible")
        .unwrap();
    assert!(dup_own.2.contains("project/.claude/skills"), "{dup_own:?}");

    // Codex reads no requirement keys: the docker skill is offered.
    let codex = states(&json(&f.ok(&["status", "--agent", "codex", "--json"])));
    assert!(
        codex
            .iter()
            .any(|x| x.0 == "needs-docker" && x.1 == "eligible"),
        "{codex:?}"
    );
    assert!(!codex.iter().any(|x| x.0 == "manual"));
    // OpenClaw reads metadata.openclaw but not top-level requires.
    let claw = states(&json(&f.ok(&["status", "--agent", "openclaw", "--json"])));
    assert!(
        claw.iter().any(|x| x.0 == "claw-only" && x.1 == "skipped"),
        "{claw:?}"
    );
    assert!(
        claw.iter()
            .any(|x| x.0 == "needs-docker" && x.1 == "eligible"),
        "{claw:?}"
    );

    let human = f.ok(&["status", "--agent", "claude-code"]);
    assert!(
        human.contains("Dialect: disable-model-invocation"),
        "{human}"
    );
    assert!(
        human.contains("Source: https://code.claude.com/docs/en/skills"),
        "{human}"
    );

    let out = f.skillpm(&["status", "--agent", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("known agents: amp, claude-code"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn status_agents_is_a_deterministic_matrix() {
    let f = agents_world();
    let first = f.ok(&["status", "--agents", "--json"]);
    assert_eq!(first, f.ok(&["status", "--agents", "--json"]));
    let m = json(&first);
    let agents: Vec<&str> = m["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "amp",
            "claude-code",
            "codex",
            "cursor",
            "gemini-cli",
            "github-copilot",
            "goose",
            "openclaw",
            "opencode"
        ]
    );
    let cell = |cmd: &str, agent: &str| -> Value {
        let i = agents.iter().position(|a| *a == agent).unwrap();
        let row = m["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["command"] == cmd)
            .unwrap();
        row["cells"][i].clone()
    };
    assert_eq!(cell("needs-docker", "codex")["state"], "eligible");
    assert_eq!(cell("needs-docker", "claude-code")["state"], "absent");
    assert_eq!(cell("claw-only", "openclaw")["state"], "skipped");
    assert_eq!(cell("claw-only", "openclaw")["reason"], "missing-bin");
    assert_eq!(cell("manual", "claude-code")["user_only"], true);
    assert_eq!(cell("copilot-only", "github-copilot")["state"], "eligible");
    assert_eq!(cell("copilot-only", "cursor")["state"], "absent");
    let cmds: Vec<&str> = m["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    let mut sorted = cmds.clone();
    sorted.sort();
    assert_eq!(cmds, sorted);

    let table = f.ok(&["status", "--agents"]);
    assert_eq!(table, f.ok(&["status", "--agents"]));
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("skill") && header.contains("claude-code"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("manual") && l.contains("user")),
        "{table}"
    );
}

#[test]
fn init_detects_agents_and_proposes_them_as_targets() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project.join(".claude")).unwrap();
    std::fs::create_dir_all(f.project.join(".cursor/rules")).unwrap();
    f.write(&f.project, "GEMINI.md", "# notes\n");
    let out = f.skillpm(&["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for line in [
        "Detected claude-code (.claude exists)",
        "Detected cursor (.cursor exists)",
        "Detected gemini-cli (GEMINI.md exists)",
    ] {
        assert!(err.contains(line), "{err}");
    }
    let text = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    let proposed = "# targets = [\"claude-code\", \"cursor\", \"gemini-cli\"]\n";
    assert!(text.contains(proposed), "{text}");
    assert!(text.contains("#   claude-code: .claude\n"), "{text}");
    // The proposal works as written once uncommented.
    let text = text
        .replace("# [install]\n", "[install]\n")
        .replace(proposed, &proposed[2..]);
    f.write(&f.project, "skills.toml", text);
    f.skill(
        &f.project,
        "vendor/alpha",
        "name: alpha\ndescription: a",
        "",
    );
    f.ok(&["add", "./vendor/alpha"]);
    assert!(f.project.join(".agents/skills/alpha/SKILL.md").is_file());
    assert!(is_symlink(&f.project.join(".claude/skills/alpha")));

    // Nothing detected: the plain template.
    let g = Fixture::new();
    g.ok(&["init"]);
    let plain = std::fs::read_to_string(g.project.join("skills.toml")).unwrap();
    assert!(!plain.contains("already uses"), "{plain}");
}

/// Claude Code finds `<root>/<name>/SKILL.md` only: `status --agent
/// claude-code` leaves out a skill in a group directory and one inside
/// another skill, and says so (by name in the header, in `--json` under
/// the agent), while an agent that finds nested skills (Cursor, reading
/// the same root) shows them; the matrix agrees.
#[test]
fn status_agent_leaves_out_nested_skills_an_agent_does_not_find() {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "[skills]\n");
    let root = f.project.join(".claude/skills");
    f.skill(&root, "top", "description: top level", "");
    f.skill(&root, "top/sub", "description: inside a skill", "");
    f.skill(&root, "group/inner", "description: in a group", "");

    let claude = json(&f.ok(&["status", "--agent", "claude-code", "--json"]));
    let cmds: Vec<String> = states(&claude).into_iter().map(|s| s.0).collect();
    assert_eq!(cmds, ["top"]);
    assert_eq!(claude["agent"]["depth"], "top-level");
    assert_eq!(
        claude["agent"]["not_found_nested"],
        serde_json::json!(["group/inner", "top/sub"])
    );
    let human = f.ok(&["status", "--agent", "claude-code"]);
    assert!(
        human.contains(
            "Not found by Claude Code: 2 nested skill(s), as it reads <root>/<name>/SKILL.md only: group/inner, top/sub"
        ),
        "{human}"
    );

    let cursor = json(&f.ok(&["status", "--agent", "cursor", "--json"]));
    let cmds: Vec<String> = states(&cursor).into_iter().map(|s| s.0).collect();
    assert_eq!(cmds, ["group/inner", "top", "top/sub"]);
    assert_eq!(cursor["agent"]["depth"], "nested");
    assert_eq!(cursor["agent"]["not_found_nested"], serde_json::json!([]));

    let m = json(&f.ok(&["status", "--agents", "--json"]));
    let col = |agent: &str| {
        m["agents"]
            .as_array()
            .unwrap()
            .iter()
            .position(|a| a == agent)
            .unwrap()
    };
    let row = m["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["command"] == "group/inner")
        .unwrap();
    assert_eq!(row["cells"][col("claude-code")]["state"], "absent");
    assert_eq!(row["cells"][col("cursor")]["state"], "eligible");
}
