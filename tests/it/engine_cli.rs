//! The engine's CLI contract: discovery, eligibility, prompt, load,
//! validate and status, driven through the real binary on fixture trees.

use crate::common;
use common::{find, stderr, stdout, Fixture};

const D: &str = "description: A skill";

#[test]
fn roots_are_listed_lowest_precedence_first_and_project_shadows_user() {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "[skills]\n");
    f.skill(&f.user_root(), "review", "description: user copy", "");
    f.skill(&f.project_root(), "review", "description: project copy", "");
    f.skill(&f.project.join(".claude/skills"), "only-claude", D, "");
    let s = f.status_json();
    let roots: Vec<_> = s["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["scope"].as_str().unwrap(), r["exists"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        roots,
        [
            ("user", true),
            ("user", false),
            ("project", true),
            ("project", true)
        ]
    );
    assert_eq!(s["project"], f.project.to_str().unwrap());
    let win = find(&s, "review", "eligible");
    assert_eq!(win["description"], "project copy");
    assert_eq!(win["scope"], "project");
    let lost = find(&s, "review", "shadowed");
    assert_eq!(lost["scope"], "user");
    assert_eq!(lost["reason"]["code"], "shadowed");
    // Sorted by command, then highest precedence first.
    let order: Vec<_> = s["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            format!(
                "{}:{}",
                x["command"].as_str().unwrap(),
                x["state"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        order,
        ["only-claude:eligible", "review:eligible", "review:shadowed"]
    );
}

#[test]
fn project_is_nearest_ancestor_with_manifest_and_c_flag_overrides() {
    let f = Fixture::new();
    f.write(&f.project, "skills.toml", "");
    f.skill(&f.project_root(), "p", D, "");
    let sub = f.project.join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let out = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .current_dir(&sub)
        .args(["status", "--json"])
        .output()
        .unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["project"], f.project.to_str().unwrap());
    find(&s, "p", "eligible");

    let other = f.root().join("other");
    f.skill(&other.join(".claude/skills"), "o", D, "");
    let s: serde_json::Value =
        serde_json::from_str(&f.ok(&["-C", other.to_str().unwrap(), "status", "--json"])).unwrap();
    assert_eq!(s["project"], other.to_str().unwrap());
    find(&s, "o", "eligible");
    assert!(s["skills"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["command"] != "p"));
}

#[test]
fn extra_roots_from_project_and_user_config() {
    let f = Fixture::new();
    f.write(
        &f.project,
        "skills.toml",
        "[engine]\nroots = [\"vendor/skills\"]\n",
    );
    f.write(
        &f.config,
        "skillpm/config.toml",
        "[engine]\nroots = [\"~/.sven/skills\"]\n",
    );
    f.skill(&f.project.join("vendor/skills"), "vendored", D, "");
    f.skill(&f.home.join(".sven/skills"), "svenny", D, "");
    let s = f.status_json();
    assert_eq!(find(&s, "vendored", "eligible")["scope"], "extra");
    assert_eq!(find(&s, "svenny", "eligible")["scope"], "extra");
    let paths: Vec<_> = s["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    // user, user, user-extra, project, project, project-extra
    assert!(paths[2].ends_with(".sven/skills"), "{paths:?}");
    assert!(paths[5].ends_with("vendor/skills"), "{paths:?}");
}

/// A cloned repository's files may not point discovery at the user's
/// home: `[engine] roots = ["../.."]` or a committed `.claude/skills ->
/// ~` make `status` fail in one line naming the root, without walking it,
/// until the user's own config trusts project roots.
#[test]
fn project_roots_that_leave_the_project_are_refused() {
    let f = Fixture::new();
    f.skill(&f.home.join("work/client-x/skills"), "credentials", D, "");
    f.write(
        &f.project,
        "skills.toml",
        "[engine]\nroots = [\"../home\"]\n",
    );
    let out = f.skillpm(&["status"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("outside the project"), "{err}");
    assert!(!stdout(&out).contains("credentials"));

    f.write(&f.project, "skills.toml", "[skills]\n");
    std::fs::create_dir_all(f.project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&f.home, f.project.join(".claude/skills")).unwrap();
    let out = f.skillpm(&["status"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".claude/skills") && err.contains("leads to"),
        "{err}"
    );

    f.write(
        &f.config,
        "skillpm/config.toml",
        "[engine]\ntrust_project_roots = true\n",
    );
    let s = f.status_json();
    assert_eq!(
        find(&s, "work/client-x/skills/credentials", "eligible")["scope"],
        "project"
    );
}

#[test]
fn nested_skills_bundled_dirs_and_symlinks() {
    let f = Fixture::new();
    let r = f.project_root();
    f.skill(&r, "sven", D, "");
    f.skill(&r, "sven/implement/research", D, "");
    f.write(&r, "sven/scripts/run.sh", "echo");
    f.write(&r, "loose/notes.txt", "no skill here");
    let outside = f.root().join("outside");
    f.skill(&outside, "linked", D, "");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("linked"), r.join("linked")).unwrap();
        std::os::unix::fs::symlink(&r, r.join("sven/loop")).unwrap();
    }
    let s = f.status_json();
    let cmds: Vec<_> = s["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["command"].as_str().unwrap())
        .collect();
    assert_eq!(cmds, ["linked", "sven", "sven/implement/research"]);
}

#[test]
fn eligibility_reasons_for_every_requirement_form() {
    let mut f = Fixture::new();
    f.fake_bin("git");
    f.extra_env.push(("HAVE_TOKEN".into(), "x".into()));
    let r = f.project_root();
    f.skill(
        &r,
        "needs-git",
        "description: d\nrequires: {bins: [git]}",
        "",
    );
    f.skill(
        &r,
        "needs-docker",
        "description: d\nrequires:\n  bins: [docker]",
        "",
    );
    f.skill(
        &r,
        "sven-env",
        "description: d\nsven:\n  requires_env: [MISSING_VAR]",
        "",
    );
    f.skill(
        &r,
        "sven-env-ok",
        "description: d\nsven: {requires_env: [HAVE_TOKEN], requires_bins: [git]}",
        "",
    );
    f.skill(
        &r,
        "claw",
        "description: d\nmetadata: {\"openclaw\": {\"requires\": {\"anyBins\": [\"rg\", \"ag\"]}}}",
        "",
    );
    f.skill(
        &r,
        "claw-old",
        "description: d\nmetadata: {\"clawdbot\": {\"requires\": {\"env\": [\"NOPE\"]}}}",
        "",
    );
    let other_os = if cfg!(target_os = "macos") {
        "windows"
    } else {
        "darwin"
    };
    f.skill(
        &r,
        "mac-only",
        &format!("description: d\nmetadata: {{\"openclaw\": {{\"os\": [\"{other_os}\"]}}}}"),
        "",
    );
    f.skill(
        &r,
        "here-os",
        &format!(
            "description: d\nrequires: {{os: [{}]}}",
            std::env::consts::OS
        ),
        "",
    );
    f.skill(
        &r,
        "mcp",
        "description: d\nrequires: {mcp: [rube], python: \">=3.10\"}",
        "",
    );
    f.skill(&r, "off", D, "");
    f.write(
        &f.project,
        "skills.toml",
        "[engine]\ndisabled = [\"off\"]\n",
    );
    let s = f.status_json();
    find(&s, "needs-git", "eligible");
    find(&s, "sven-env-ok", "eligible");
    find(&s, "here-os", "eligible");
    let code = |c: &str| {
        find(&s, c, "skipped")["reason"]["code"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(code("needs-docker"), "missing-bin");
    assert!(find(&s, "needs-docker", "skipped")["reason"]["detail"]
        .as_str()
        .unwrap()
        .contains("docker"));
    assert_eq!(code("sven-env"), "missing-env");
    assert_eq!(code("claw"), "missing-bin");
    assert_eq!(code("claw-old"), "missing-env");
    assert_eq!(code("mac-only"), "unsupported-os");
    assert_eq!(code("off"), "disabled");
    let mcp = find(&s, "mcp", "eligible");
    assert_eq!(mcp["unchecked"], serde_json::json!(["mcp", "python"]));
}

#[test]
fn conflicts_keep_the_higher_precedence_skill() {
    let f = Fixture::new();
    f.skill(
        &f.user_root(),
        "old-style",
        "description: d\nconflicts: [new-style]",
        "",
    );
    f.skill(&f.project_root(), "new-style", D, "");
    let s = f.status_json();
    find(&s, "new-style", "eligible");
    let lost = find(&s, "old-style", "skipped");
    assert_eq!(lost["reason"]["code"], "conflict");
    assert!(lost["reason"]["detail"]
        .as_str()
        .unwrap()
        .contains("new-style"));
}

#[test]
fn broken_files_are_reported_per_skill_and_never_fatal() {
    let f = Fixture::new();
    let r = f.project_root();
    f.skill(&r, "good", D, "");
    f.write(
        &r,
        "big/SKILL.md",
        format!("---\n{D}\n---\n{}", "x".repeat(300 * 1024)),
    );
    f.write(&r, "latin1/SKILL.md", b"---\ndescription: caf\xe9\n---\n");
    f.write(&r, "nofm/SKILL.md", "# just markdown\n");
    f.write(&r, "open/SKILL.md", "---\ndescription: never closed\n");
    f.write(
        &r,
        "yaml/SKILL.md",
        "---\nname: yaml\ndescription: [broken\n---\n",
    );
    f.write(&r, "nodesc/SKILL.md", "---\nname: nodesc\n---\n");
    f.write(
        &r,
        "crlf/SKILL.md",
        "\u{feff}---\r\ndescription: windows\r\n---\r\nbody\r\n",
    );
    f.write(
        &r,
        "lower/skill.md",
        "---\ndescription: lower case file\n---\n",
    );
    f.write(
        &r,
        "colon/SKILL.md",
        "---\ndescription: Use when: the user asks\n---\n",
    );
    let s = f.status_json();
    find(&s, "good", "eligible");
    find(&s, "crlf", "eligible");
    find(&s, "lower", "eligible");
    let colon = find(&s, "colon", "eligible");
    assert_eq!(colon["description"], "Use when: the user asks");
    assert!(!colon["warnings"].as_array().unwrap().is_empty());
    let code = |c: &str| {
        find(&s, c, "invalid")["reason"]["code"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(code("big"), "too-large");
    assert_eq!(code("latin1"), "not-utf8");
    assert_eq!(code("nofm"), "bad-frontmatter");
    assert_eq!(code("open"), "bad-frontmatter");
    assert_eq!(code("yaml"), "bad-frontmatter");
    assert!(find(&s, "yaml", "invalid")["reason"]["detail"]
        .as_str()
        .unwrap()
        .starts_with("line 3:"));
    assert_eq!(code("nodesc"), "missing-description");
    // The human view groups by state.
    let human = f.ok(&["status"]);
    for h in ["Eligible (", "Invalid (", "too-large"] {
        assert!(human.contains(h), "{human}");
    }
}

#[test]
fn status_is_byte_identical_across_runs() {
    let f = Fixture::new();
    for i in 0..30 {
        f.skill(&f.project_root(), &format!("s{i:02}/sub{}", i % 3), D, "");
    }
    let a = f.ok(&["status", "--json"]);
    let b = f.ok(&["status", "--json"]);
    assert_eq!(a, b);
    assert_eq!(f.ok(&["prompt"]), f.ok(&["prompt"]));
}

#[test]
fn prompt_budget_always_invocable_only_and_escaping() {
    let f = Fixture::new();
    let r = f.project_root();
    f.skill(&r, "a-first", "description: \"Uses <tags> & 'quotes'\"", "");
    for i in 0..5 {
        f.skill(
            &r,
            &format!("b-{i}"),
            &format!("description: {}", "x".repeat(100)),
            "",
        );
    }
    f.skill(
        &r,
        "z-always",
        "description: must stay\nsven: {always: true}",
        "",
    );
    f.skill(
        &r,
        "hidden",
        "description: user only\nsven: {user_invocable_only: true}",
        "",
    );
    let full = f.ok(&["prompt"]);
    assert!(full.starts_with("<available_skills>\n") && full.ends_with("</available_skills>\n"));
    assert!(full.contains("<description>Uses &lt;tags&gt; &amp; &apos;quotes&apos;</description>"));
    assert!(!full.contains("hidden"));
    assert_eq!(full.matches("<skill>").count(), 7);
    assert!(!full.contains("omitted"));
    let small = f.ok(&["prompt", "--budget", "400"]);
    assert!(small.contains("z-always"), "{small}");
    assert!(small.contains("a-first"));
    assert!(small.contains("more skill(s) omitted"), "{small}");
    let kept = small.matches("<skill>").count();
    assert!((2..7).contains(&kept), "{small}");
    let n_omitted = 7 - kept;
    assert!(
        small.contains(&format!("{n_omitted} more skill(s) omitted")),
        "{small}"
    );
    let agent = f.ok(&["prompt", "--format", "agent-skills"]);
    assert!(agent.contains("<location>") && !agent.contains("<command>"));
}

#[test]
fn load_prints_body_files_and_direct_sub_skills() {
    let f = Fixture::new();
    let r = f.project_root();
    f.skill(&r, "sven", "name: sven\ndescription: top", "Top body\n");
    f.skill(&r, "sven/plan", "description: plan it", "");
    f.skill(&r, "sven/plan/deeper", "description: too deep", "");
    for i in 0..25 {
        f.write(&r, &format!("sven/scripts/s{i:02}.sh"), "echo");
    }
    f.write(&r, "sven/plan/inside.md", "belongs to plan");
    let out = f.ok(&["load", "sven"]);
    assert!(out
        .starts_with("<skill_content command=\"sven\" name=\"sven\">\n<![CDATA[\nTop body\n]]>\n"));
    assert!(out.contains(&format!(
        "Base directory for this skill: {}",
        r.join("sven").display()
    )));
    assert_eq!(out.matches("<file>").count(), 20);
    assert!(out.contains("5 more file(s)"));
    assert!(!out.contains("inside.md"));
    assert!(out.contains("<skill command=\"sven/plan\">plan it</skill>"));
    assert!(!out.contains("sven/plan/deeper"));

    f.skill(&r, "-dash name", "description: odd", "Odd body");
    let odd = f.ok(&["load", "--", "-dash name"]);
    assert!(odd.contains("Odd body"));

    // A failed lookup exits 1 (2 is for bad usage).
    let missing = f.skillpm(&["load", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("no skill with command `nope`"));
    assert_eq!(stderr(&missing).lines().count(), 1);
}

#[test]
fn validate_lists_every_violation_with_file_and_line() {
    let f = Fixture::new();
    let dir = f.skill(
        f.root(),
        "bad-skill",
        "name: Bad_Skill\ndescription: \"\"\ncompatibility: ok\nversion: \"one\"\nmetadata:\n  nested: {a: b}\nhomepage: x",
        "",
    );
    let out = f.skillpm(&["validate", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    // Empty description makes the file unloadable: reported as such.
    assert!(stdout(&out).contains("description"), "{}", stdout(&out));

    let dir = f.skill(
        f.root(),
        "wrong",
        "name: Bad_Skill\ndescription: fine\nversion: \"one\"\nmetadata:\n  nested: {a: b}\nfavourite-colour: x",
        "",
    );
    // `version` is skillpm's key, not the spec's: checked under its dialect.
    let out = f.skillpm(&["validate", "--dialect", "skillpm", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let md = dir.join("SKILL.md");
    let md = md.display();
    assert!(
        text.contains(&format!("{md}:2: error: `name` \"Bad_Skill\"")),
        "{text}"
    );
    assert!(text.contains("equal the directory name"), "{text}");
    assert!(
        text.contains(&format!("{md}:4: error: `version`")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{md}:5: error: `metadata.nested`")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{md}:7: error: unknown frontmatter key `favourite-colour`"
        )),
        "{text}"
    );

    let good = f.skill(
        f.root(),
        "good-one",
        "name: good-one\ndescription: fine\nversion: \"1.0.0\"\nmetadata:\n  homepage: x",
        "",
    );
    let out = f.skillpm(&["validate", "--dialect", "skillpm", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn accepts_frontmatter_as_published_by_popular_collections() {
    let f = Fixture::new();
    let r = f.project_root();
    // Shapes taken from public collections: license/allowed-tools/metadata,
    // folded and literal multi-line descriptions, quoted strings.
    f.skill(&r, "docx", "name: docx\ndescription: \"Comprehensive document creation, editing, and analysis with support for tracked changes, comments, formatting preservation, and text extraction. When Claude needs to work with professional documents (.docx files) for: (1) Creating new documents, (2) Modifying or editing content\"\nlicense: Proprietary. LICENSE.txt has complete terms", "# DOCX\n");
    f.skill(&r, "mcp-builder", "name: mcp-builder\ndescription: >-\n  Guide for creating high-quality MCP (Model Context Protocol) servers\n  that enable LLMs to interact with external services.\nlicense: Complete terms in LICENSE.txt", "");
    f.skill(&r, "gh", "name: github\ndescription: 'Interact with GitHub using the `gh` CLI.'\nhomepage: https://cli.github.com\nmetadata: {\"openclaw\":{\"emoji\":\"🐙\",\"requires\":{\"bins\":[\"gh\"]},\"install\":[{\"id\":\"brew\",\"kind\":\"brew\",\"formula\":\"gh\"}]}}", "");
    f.skill(&r, "frontend", "name: frontend\ndescription: |\n  Create distinctive, production-grade frontend interfaces.\n  Use this skill when the user asks to build web components.\nallowed-tools:\n  - Read\n  - Write\ncompatibility: Requires Node.js 20+\nversion: 1.0.0\nmetadata:\n  author: example\n  version: \"2.1\"", "");
    let s = f.status_json();
    find(&s, "docx", "eligible");
    assert!(find(&s, "mcp-builder", "eligible")["description"]
        .as_str()
        .unwrap()
        .starts_with("Guide for creating"));
    assert_eq!(find(&s, "gh", "skipped")["reason"]["code"], "missing-bin");
    let fe = find(&s, "frontend", "eligible");
    assert_eq!(fe["version"], "1.0.0");
}
