//! Plugin marketplaces: `add REPO --plugin NAME` against real git
//! repositories made here, shaped like the public ones (anthropics/skills,
//! obra/superpowers, github/awesome-copilot; their layout, not their
//! content), and hostile marketplaces that must be refused with one line
//! and nothing written.

use crate::common;
use common::{commit_all, git, lock_skills, run_refused, stderr, Fixture};
use std::path::PathBuf;

/// A repository at `f.root()/name` with `files` (path, contents), each
/// `*/SKILL.md` made from its directory name, committed on `main`.
fn repo(f: &Fixture, name: &str, skills: &[&str], files: &[(&str, &str)]) -> (PathBuf, String) {
    let dir = f.root().join(name);
    for s in skills {
        let base = s.rsplit('/').next().unwrap();
        f.skill(
            &dir,
            s,
            &format!("name: {base}\ndescription: The {base} skill"),
            "body\n",
        );
    }
    for (path, text) in files {
        f.write(&dir, path, text);
    }
    commit_all(&dir);
    let url = format!("git+file://{}", dir.display());
    (dir, url)
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.link_bin("git");
    f
}

fn manifest(f: &Fixture) -> String {
    std::fs::read_to_string(f.project.join("skills.toml")).unwrap_or_default()
}

/// `(name, plugin, plugin-version)` of each lock entry, by name.
fn locked_plugins(f: &Fixture) -> Vec<(String, Option<String>, Option<String>)> {
    let s = |v: &toml::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    lock_skills(&f.project)
        .iter()
        .map(|e| {
            (
                s(e, "name").unwrap(),
                s(e, "plugin"),
                s(e, "plugin-version"),
            )
        })
        .collect()
}

/// anthropics/skills: one `skills/` directory, and a Claude Code
/// marketplace whose plugins group some of its skills by listing them.
fn anthropics_shaped(f: &Fixture) -> (PathBuf, String) {
    let market = r#"{
  "name": "anthropic-agent-skills",
  "owner": {"name": "A", "email": "a@example.com"},
  "metadata": {"description": "Example skills", "version": "1.0.0"},
  "plugins": [
    {"name": "document-skills", "description": "Document processing: Excel, Word, PowerPoint, PDF",
     "source": "./", "strict": false,
     "skills": ["./skills/xlsx", "./skills/docx", "./skills/pptx", "./skills/pdf"]},
    {"name": "example-skills", "description": "Examples", "source": "./", "strict": false,
     "skills": ["./skills/canvas-design", "./skills/mcp-builder"]}
  ]
}"#;
    repo(
        f,
        "anthropics-skills",
        &[
            "skills/xlsx",
            "skills/docx",
            "skills/pptx",
            "skills/pdf",
            "skills/canvas-design",
            "skills/mcp-builder",
            "template",
        ],
        &[(".claude-plugin/marketplace.json", market)],
    )
}

#[test]
fn add_without_a_choice_lists_the_plugins_beside_the_skills() {
    let f = fixture();
    let (_, url) = anthropics_shaped(&f);
    let out = f.skillpm(&["--quiet", "add", &url]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let plugins = err.split("plugins:\n").nth(1).expect("a plugins section");
    assert!(
        plugins.contains("document-skills")
            && plugins.contains("(4 skills) Document processing")
            && plugins.contains("(2 skills) Examples"),
        "{err}"
    );
    assert!(
        err.contains("holds 7 skills and 2 plugins (listed above); choose with --skill NAME..., --plugin NAME... or --all"),
        "{err}"
    );
    assert!(manifest(&f).is_empty());
}

#[test]
fn a_plugin_installs_the_skills_it_lists_each_as_its_own_entry_at_one_commit() {
    let f = fixture();
    let (dir, url) = anthropics_shaped(&f);
    f.ok(&["add", &url, "--plugin", "document-skills"]);
    let toml = manifest(&f);
    for s in ["xlsx", "docx", "pptx", "pdf"] {
        assert!(
            toml.contains(&format!(
                "{s} = {{ git = \"{}\", path = \"skills/{s}\", plugin = \"document-skills\" }}",
                url.trim_start_matches("git+")
            )),
            "{toml}"
        );
        assert!(f.project_root().join(s).join("SKILL.md").is_file(), "{s}");
    }
    assert!(!toml.contains("canvas-design"), "{toml}");
    let locked = lock_skills(&f.project);
    let head = {
        let out = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&dir)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(locked.len(), 4);
    for e in &locked {
        assert!(e["source"].as_str().unwrap().ends_with(&head), "{e}");
    }
    // No version declared: the plugin is recorded, without one.
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, p, v)| p.as_deref() == Some("document-skills") && v.is_none()));
    // As Claude Code spells it, NAME@MARKETPLACE.
    f.ok(&[
        "add",
        &url,
        "--plugin",
        "example-skills@anthropic-agent-skills",
    ]);
    assert!(f.project_root().join("mcp-builder/SKILL.md").is_file());
    // A frozen install agrees with the lock it wrote.
    f.ok(&["install", "--frozen"]);
}

#[test]
fn a_plugin_that_is_not_listed_is_refused_with_the_list() {
    let f = fixture();
    let (_, url) = anthropics_shaped(&f);
    let out = f.skillpm(&[
        "--quiet",
        "add",
        &url,
        "--plugin",
        "document-skills@elsewhere",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.contains("has no plugin `document-skills@elsewhere` (its 2 plugins are listed above); choose with --plugin NAME..."),
        "{err}"
    );
    assert!(err.starts_with("  document-skills "), "{err}");
    assert!(manifest(&f).is_empty());
    f.skill(&f.project, "local", "name: local\ndescription: L", "body\n");
    run_refused(
        &f,
        &["add", "./local", "--plugin", "x"],
        &["--plugin chooses among the plugins of a git repository"],
    );
}

/// obra/superpowers: one plugin at the root, its version in
/// `.claude-plugin/plugin.json`, its skills in `skills/`, listed by Claude
/// Code's and Codex's marketplaces both.
fn superpowers_shaped(f: &Fixture, version: &str) -> (PathBuf, String) {
    let claude = format!(
        r#"{{"name": "superpowers-dev", "description": "Dev marketplace",
  "owner": {{"name": "J"}},
  "plugins": [{{"name": "superpowers", "description": "Core skills library", "version": "{version}",
                "source": "./", "author": {{"name": "J"}}}}]}}"#
    );
    let plugin = format!(
        r#"{{"name": "superpowers", "description": "Core skills library", "version": "{version}",
  "author": {{"name": "J"}}, "license": "MIT", "keywords": ["tdd"]}}"#
    );
    let codex = r#"{"name": "superpowers-dev", "interface": {"displayName": "Superpowers Dev"},
  "plugins": [{"name": "superpowers", "source": {"source": "url", "url": "./"},
               "policy": {"installation": "AVAILABLE"}, "category": "Developer Tools"}]}"#;
    let codex_plugin = format!(
        r#"{{"name": "superpowers", "version": "{version}", "skills": "./skills/", "hooks": {{}},
  "interface": {{"displayName": "Superpowers", "capabilities": ["Read"]}}}}"#
    );
    repo(
        f,
        "superpowers",
        &[
            "skills/brainstorming",
            "skills/test-driven-development",
            "skills/writing-plans",
        ],
        &[
            (".claude-plugin/marketplace.json", &claude),
            (".claude-plugin/plugin.json", &plugin),
            (".agents/plugins/marketplace.json", codex),
            (".codex-plugin/plugin.json", &codex_plugin),
        ],
    )
}

#[test]
fn a_plugin_version_is_locked_and_follows_the_plugin_on_update() {
    let f = fixture();
    let (dir, url) = superpowers_shaped(&f, "6.2.0");
    // Listed once, though two marketplace files list it.
    let err = stderr(&f.skillpm(&["--quiet", "add", &url]));
    assert_eq!(err.matches("Core skills library").count(), 1, "{err}");
    assert!(err.contains("superpowers  6.2.0  (3 skills)"), "{err}");
    f.ok(&["add", &url, "--plugin", "superpowers"]);
    let locked = locked_plugins(&f);
    assert_eq!(locked.len(), 3);
    for (name, plugin, version) in &locked {
        assert_eq!(plugin.as_deref(), Some("superpowers"), "{name}");
        assert_eq!(version.as_deref(), Some("6.2.0"), "{name}");
    }
    // A new release of the plugin: `update` locks the version it declares.
    let bumped = std::fs::read_to_string(dir.join(".claude-plugin/plugin.json"))
        .unwrap()
        .replace("6.2.0", "6.3.0");
    f.write(&dir, ".claude-plugin/plugin.json", bumped);
    git(&dir, &["commit", "-qam", "6.3.0"]);
    // `outdated` shows the versions the plugin declares, before and after.
    let rows: serde_json::Value = serde_json::from_str(&f.ok(&["outdated", "--json"])).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "writing-plans")
        .expect("a row for writing-plans");
    assert!(
        row["current"]
            .as_str()
            .unwrap()
            .starts_with("0.0.0 (superpowers 6.2.0, "),
        "{row}"
    );
    assert!(
        row["wanted"]
            .as_str()
            .unwrap()
            .starts_with("0.0.0 (superpowers 6.3.0, "),
        "{row}"
    );
    f.ok(&["update"]);
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, _, v)| v.as_deref() == Some("6.3.0")));
}

/// `--plugin NAME@REQ`: the version the plugin declares must meet the
/// requirement, which skills.toml keeps as `plugin-version`; `update`
/// refuses a release outside it, leaving the lock as it was.
#[test]
fn a_plugin_version_requirement_is_kept_and_met() {
    let f = fixture();
    let (dir, url) = superpowers_shaped(&f, "6.2.0");
    // Fetched into the cache first, so the refusal is seen to write nothing.
    f.skillpm(&["add", &url]);
    run_refused(
        &f,
        &["add", &url, "--plugin", "superpowers@^7"],
        &["the plugin `superpowers` declares version 6.2.0 here, which does not meet `^7`"],
    );
    f.ok(&["add", &url, "--plugin", "superpowers@superpowers-dev@^6"]);
    let toml = manifest(&f);
    assert_eq!(
        toml.matches("plugin = \"superpowers\", plugin-version = \"^6\"")
            .count(),
        3,
        "{toml}"
    );
    let bumped = std::fs::read_to_string(dir.join(".claude-plugin/plugin.json"))
        .unwrap()
        .replace("6.2.0", "7.0.0");
    f.write(&dir, ".claude-plugin/plugin.json", bumped);
    git(&dir, &["commit", "-qam", "7.0.0"]);
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();
    let out = f.skillpm(&["--quiet", "update"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("declares version 7.0.0 here, which does not meet `^6`"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.lock")).unwrap(),
        lock
    );
    assert_eq!(manifest(&f), toml);
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, _, v)| v.as_deref() == Some("6.2.0")));
    // `outdated` says why nothing is wanted.
    let err = stderr(&f.skillpm(&["outdated"]));
    assert!(
        err.contains("`update` would fail, so nothing is wanted")
            && err.contains("does not meet `^6`"),
        "{err}"
    );
    let out = f.skillpm(&["--quiet", "add", &url, "--plugin", "superpowers@^x"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("invalid version requirement `^x`"), "{err}");
    assert_eq!(manifest(&f), toml);
}

/// `--plugin NAME@REQ` on a repository that tags its releases: the
/// requirement chooses the highest matching tag, not the default branch.
#[test]
fn a_plugin_version_requirement_chooses_among_release_tags() {
    let f = fixture();
    let (dir, url) = superpowers_shaped(&f, "6.2.0");
    git(&dir, &["tag", "v6.2.0"]);
    for (from, to) in [("6.2.0", "6.3.0"), ("6.3.0", "7.0.0")] {
        for file in [
            ".claude-plugin/plugin.json",
            ".claude-plugin/marketplace.json",
        ] {
            let bumped = std::fs::read_to_string(dir.join(file))
                .unwrap()
                .replace(from, to);
            f.write(&dir, file, bumped);
        }
        git(&dir, &["commit", "-qam", to]);
        git(&dir, &["tag", &format!("v{to}")]);
    }
    let tagged = |tag: &str| common::git_stdout(&dir, &["rev-parse", &format!("{tag}^{{commit}}")]);
    f.ok(&["add", &url, "--plugin", "superpowers@^6"]);
    let lock = lock_skills(&f.project);
    assert_eq!(lock.len(), 3);
    for s in &lock {
        assert_eq!(s["plugin-version"].as_str(), Some("6.3.0"), "{s}");
        let source = s["source"].as_str().unwrap();
        assert!(
            source.ends_with(&format!("#{}", tagged("v6.3.0"))),
            "{source}"
        );
    }
    // Asking for the next major moves to its tag.
    f.ok(&["add", &url, "--plugin", "superpowers@^7"]);
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, _, v)| v.as_deref() == Some("7.0.0")));
}

/// github/awesome-copilot: a Copilot marketplace listing `plugins/NAME`
/// directories whose Agent Plugins `plugin.json` lists skills kept at the
/// repository root, and a plugin that lives in another repository.
fn copilot_shaped(f: &Fixture) -> (PathBuf, String) {
    let market = r#"{"name": "awesome-copilot", "metadata": {"version": "1.0.0"},
  "owner": {"name": "GitHub"},
  "plugins": [
    {"name": "arize-ax", "source": "plugins/arize-ax", "description": "Arize skills", "version": "1.0.0"},
    {"name": "agent-council", "description": "Elsewhere", "version": "0.1.3",
     "source": {"source": "github", "repo": "someone/agent-council", "ref": "v0.1.3"}}
  ]}"#;
    let plugin = r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
  "name": "arize-ax", "description": "Arize skills", "version": "1.0.1",
  "extensions": {"com.github.awesome-copilot": {
     "agents": ["./agents/a.md"],
     "skills": ["./skills/arize-trace/", "./skills/arize-link/"]}}}"#;
    repo(
        f,
        "awesome-copilot",
        &["skills/arize-trace", "skills/arize-link", "skills/other"],
        &[
            (".github/plugin/marketplace.json", market),
            ("plugins/arize-ax/plugin.json", plugin),
            ("plugins/arize-ax/README.md", "readme"),
        ],
    )
}

#[test]
fn copilot_plugins_take_their_skills_from_the_repository_root() {
    let f = fixture();
    let (_, url) = copilot_shaped(&f);
    f.ok(&["add", &url, "--plugin", "arize-ax"]);
    let locked = locked_plugins(&f);
    let names: Vec<&str> = locked.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(names, ["arize-link", "arize-trace"]);
    // The plugin's own manifest declares the version.
    assert!(locked.iter().all(|l| l.2.as_deref() == Some("1.0.1")));
    // The plugin of another repository is listed with where it lives.
    let err = stderr(&f.skillpm(&["--quiet", "add", &url]));
    assert!(
        err.contains(
            "agent-council  0.1.3  (from https://github.com/someone/agent-council.git) Elsewhere"
        ),
        "{err}"
    );
}

fn head(dir: &std::path::Path) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A plugin in a repository of its own, with a later commit its
/// marketplace does not pin; the marketplace, in another repository,
/// holds no skill itself and pins the plugin by `sha`.
fn plugin_elsewhere(f: &Fixture, source: &str) -> (PathBuf, String, String) {
    let (dir, url) = repo(
        f,
        "council",
        &["skills/debate", "skills/vote"],
        &[(
            ".claude-plugin/plugin.json",
            r#"{"name": "council", "version": "0.1.3"}"#,
        )],
    );
    let pinned = head(&dir);
    f.write(
        &dir,
        "skills/vote/SKILL.md",
        "---\nname: vote\ndescription: Changed\n---\nlater\n",
    );
    f.write(
        &dir,
        ".claude-plugin/plugin.json",
        r#"{"name": "council", "version": "0.2.0"}"#,
    );
    git(&dir, &["commit", "-qam", "0.2.0"]);
    let source = source
        .replace("URL", url.trim_start_matches("git+"))
        .replace("SHA", &pinned);
    let market = format!(
        r#"{{"name": "market", "owner": {{"name": "M"}},
  "plugins": [{{"name": "council", "description": "Elsewhere", "source": {source}}}]}}"#
    );
    let (_, market_url) = repo(
        f,
        "market",
        &[],
        &[(".claude-plugin/marketplace.json", &market)],
    );
    (dir, market_url, pinned)
}

/// A plugin whose source is another git repository installs from there,
/// at the commit its marketplace pins: each skill an entry pointing at
/// that repository, so a frozen install from the lock reproduces it.
#[test]
fn a_plugin_in_another_repository_installs_from_there_at_its_pinned_commit() {
    let f = fixture();
    let (dir, market, pinned) =
        plugin_elsewhere(&f, r#"{"source": "url", "url": "URL", "sha": "SHA"}"#);
    f.ok(&["add", &market, "--plugin", "council@market"]);
    let toml = manifest(&f);
    for s in ["debate", "vote"] {
        assert!(
            toml.contains(&format!(
                "{s} = {{ git = \"file://{}\", rev = \"{pinned}\", path = \"skills/{s}\", plugin = \"council\" }}",
                dir.display()
            )),
            "{toml}"
        );
    }
    let locked = lock_skills(&f.project);
    assert_eq!(locked.len(), 2);
    for e in &locked {
        assert!(e["source"].as_str().unwrap().ends_with(&pinned), "{e}");
    }
    // The version the plugin's manifest declares at that commit.
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, p, v)| p.as_deref() == Some("council") && v.as_deref() == Some("0.1.3")));
    let vote = f.project_root().join("vote/SKILL.md");
    assert!(!std::fs::read_to_string(&vote).unwrap().contains("Changed"));
    std::fs::remove_dir_all(f.project_root()).unwrap();
    f.ok(&["install", "--frozen"]);
    assert!(!std::fs::read_to_string(&vote).unwrap().contains("Changed"));
}

/// Without a pin the plugin's repository is taken at its default branch;
/// a bad `sha` is refused with one line and nothing written.
#[test]
fn a_plugin_in_another_repository_follows_its_branch_and_bad_pins_are_refused() {
    let f = fixture();
    let (_, market, _) = plugin_elsewhere(&f, r#"{"source": "git", "url": "URL"}"#);
    f.ok(&["add", &market, "--plugin", "council"]);
    assert!(locked_plugins(&f)
        .iter()
        .all(|(_, _, v)| v.as_deref() == Some("0.2.0")));
    let vote = f.project_root().join("vote/SKILL.md");
    assert!(std::fs::read_to_string(&vote).unwrap().contains("Changed"));

    let g = fixture();
    let (_, market, _) = plugin_elsewhere(
        &g,
        r#"{"source": "url", "url": "URL", "sha": "not-a-commit"}"#,
    );
    // Fetched into the cache first, so the refusal is seen to write nothing.
    g.skillpm(&["add", &market]);
    run_refused(
        &g,
        &["add", &market, "--plugin", "council"],
        &[
            "plugin `council`",
            "`sha` `not-a-commit` is not a full commit id",
        ],
    );
}

/// A `git-subdir` source: the plugin is a directory of a monorepo, with
/// its manifest there; only its skills are taken, with its version.
#[test]
fn a_git_subdir_plugin_takes_the_skills_of_its_directory() {
    let f = fixture();
    let (dir, url) = repo(
        &f,
        "mono",
        &["plugins/council/skills/debate", "plugins/other/skills/lint"],
        &[
            (
                "plugins/council/.claude-plugin/plugin.json",
                r#"{"name": "council", "version": "3.1.0"}"#,
            ),
            ("plugin.json", r#"{"name": "mono", "version": "9.9.9"}"#),
        ],
    );
    let market = format!(
        r#"{{"name": "m", "plugins": [{{"name": "council", "source":
  {{"source": "git-subdir", "url": "{}", "path": "plugins/council", "ref": "main"}}}}]}}"#,
        url.trim_start_matches("git+")
    );
    let (_, market) = repo(
        &f,
        "market",
        &[],
        &[(".claude-plugin/marketplace.json", &market)],
    );
    f.ok(&["add", &market, "--plugin", "council@^3"]);
    let toml = manifest(&f);
    assert!(
        toml.contains(&format!(
            "debate = {{ git = \"file://{}\", ref = \"main\", path = \"plugins/council/skills/debate\", plugin = \"council\", plugin-version = \"^3\" }}",
            dir.display()
        )),
        "{toml}"
    );
    assert!(!toml.contains("lint"), "{toml}");
    assert_eq!(
        locked_plugins(&f),
        [(
            "debate".to_string(),
            Some("council".to_string()),
            Some("3.1.0".to_string())
        )]
    );
}

/// A marketplace fetched from elsewhere may not point at this machine's
/// repositories, as a skill's dependencies may not: the plugin is
/// refused, naming where, and nothing is written.
#[test]
fn a_remote_marketplace_may_not_point_at_this_machines_repositories() {
    let server = skillpm_test_support::git_https::GitHttps::start();
    let (f, name) = common::remote_by_name(&server);
    let (dir, _, _) = plugin_elsewhere(&f, r#"{"source": "url", "url": "URL"}"#);
    server.serve("market", &f.root().join("market"));
    let remote = server.url("market").replace("127.0.0.1", &name);
    let remote = format!("git+{remote}");
    f.skillpm(&["add", &remote]);
    let out = run_refused(
        &f,
        &["add", &remote, "--plugin", "council"],
        &[
            "plugin `council`",
            "on this machine",
            &dir.display().to_string(),
        ],
    );
    assert!(out.contains("may not point"), "{out}");
    assert!(manifest(&f).is_empty());
}

/// A repository whose marketplace lists hostile plugins, next to one
/// good skill; fetched into the cache once (by listing it), so that a
/// refusal is seen to change nothing at all.
fn hostile(f: &Fixture, market: &str) -> String {
    let dir = f.root().join("hostile");
    f.skill(
        &dir,
        "skills/good",
        "name: good\ndescription: Good",
        "body\n",
    );
    f.skill(
        &f.root().join("outside"),
        "skills/evil",
        "name: evil\ndescription: Evil",
        "body\n",
    );
    f.write(&dir, ".claude-plugin/marketplace.json", market);
    std::os::unix::fs::symlink(f.root().join("outside"), dir.join("linked")).unwrap();
    commit_all(&dir);
    let url = format!("git+file://{}", dir.display());
    f.skillpm(&["add", &url, "--path", "skills/nothing"]);
    url
}

#[test]
fn plugins_that_leave_the_repository_are_refused_and_nothing_is_written() {
    let f = fixture();
    let url = hostile(
        &f,
        r#"{"name": "h", "plugins": [
      {"name": "up", "source": "../outside"},
      {"name": "abs", "source": "/etc"},
      {"name": "deep", "source": "./", "skills": ["./skills/../../outside/skills/evil"]},
      {"name": "linked", "source": "./linked"},
      {"name": "via-link", "source": "./", "skills": ["./linked/skills/evil"]}
    ]}"#,
    );
    for (plugin, why) in [
        ("up", "must not contain `..`"),
        ("abs", "is not relative"),
        ("deep", "must not contain `..`"),
        ("linked", "goes through the symlink `linked`"),
        ("via-link", "goes through the symlink `linked`"),
    ] {
        run_refused(
            &f,
            &["add", &url, "--plugin", plugin],
            &[&format!("plugin `{plugin}`"), why],
        );
    }
    assert!(!f.project_root().join("evil").exists());
}

#[test]
fn a_broken_or_oversized_marketplace_is_one_line_and_nothing_written() {
    let f = fixture();
    let url = hostile(
        &f,
        r#"{"name": "h", "plugins": [{"name": "x", "source": "./""#,
    );
    run_refused(
        &f,
        &["add", &url, "--plugin", "x"],
        &[
            ".claude-plugin/marketplace.json is not valid JSON",
            "line 1",
        ],
    );
    let g = fixture();
    let big = format!(
        r#"{{"name": "h", "pad": "{}", "plugins": []}}"#,
        "x".repeat(2 << 20)
    );
    let url = hostile(&g, &big);
    run_refused(
        &g,
        &["add", &url, "--plugin", "x"],
        &["marketplace.json is over the 1048576-byte limit"],
    );
    // Without --plugin the skills can still be listed and picked.
    g.ok(&["add", &url, "--skill", "good"]);
}

/// Skills of a plugin are plain skills: a frozen install from the lock
/// alone (no marketplace read) installs the same bytes.
#[test]
fn a_fresh_clone_of_the_project_installs_the_plugin_skills_from_the_lock() {
    let f = fixture();
    let (_, url) = anthropics_shaped(&f);
    f.ok(&["add", &url, "--plugin", "document-skills"]);
    std::fs::remove_dir_all(f.project_root()).unwrap();
    f.ok(&["install", "--frozen"]);
    for s in ["xlsx", "docx", "pptx", "pdf"] {
        assert!(f.project_root().join(s).join("SKILL.md").is_file(), "{s}");
    }
}

/// An agent that installs plugins itself says so in `status --agent`;
/// one that does not has no such line.
#[test]
fn status_says_which_agents_read_plugins_themselves() {
    let f = fixture();
    for (agent, file) in [
        ("claude-code", Some(".claude-plugin/marketplace.json")),
        ("codex", Some(".agents/plugins/marketplace.json")),
        ("github-copilot", Some(".github/plugin/marketplace.json")),
        ("cursor", None),
    ] {
        let out = f.ok(&["status", "--agent", agent]);
        let line = out.lines().find(|l| l.starts_with("Plugins: "));
        match file {
            Some(file) => assert_eq!(
                line,
                Some(format!("Plugins: it installs plugins itself from {file}; skills skillpm adds from a plugin are plain skills to it").as_str()),
                "{out}"
            ),
            None => assert_eq!(line, None, "{out}"),
        }
        let json: serde_json::Value =
            serde_json::from_str(&f.ok(&["status", "--agent", agent, "--json"])).unwrap();
        assert_eq!(json["agent"]["plugins"].as_str(), file, "{json}");
    }
}
