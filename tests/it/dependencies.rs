//! Dependencies between skills (`skill.toml`): real git repositories and a
//! real registry on 127.0.0.1, through the real binary. A diamond, a
//! sibling at the same commit, a cycle, a conflict explained with both
//! chains, `tree`/`why`, orphans removed, `--locked` on a changed graph.

use crate::common;
use common::{commit_all, git, lock_skills, stderr, tree, Fixture, Registry};
use std::path::{Path, PathBuf};

fn url(repo: &Path) -> String {
    format!("git+file://{}", repo.display())
}

/// A skill directory `skills/NAME` of `repo`, declaring `deps` (the text
/// of its `[dependencies]` table) when given.
fn skill(f: &Fixture, repo: &Path, name: &str, deps: Option<&str>) {
    f.write(
        repo,
        &format!("skills/{name}/SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill\n---\n{name} body\n"),
    );
    if let Some(d) = deps {
        f.write(
            repo,
            &format!("skills/{name}/skill.toml"),
            format!("[dependencies]\n{d}\n"),
        );
    }
}

/// The lock's entries as `name -> [dependencies]`.
fn edges(project: &Path) -> Vec<(String, Vec<String>)> {
    lock_skills(project)
        .iter()
        .map(|s| {
            let deps = s
                .get("dependencies")
                .and_then(|d| d.as_array())
                .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            (s["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

fn installed(f: &Fixture) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(f.project_root())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `app` needs its sibling `helper` (by path, so at the same commit) and
/// `style` from a second repository; `helper` needs `app` back (a cycle)
/// and `style` too (a diamond).
fn repos(f: &Fixture) -> (PathBuf, PathBuf) {
    let styles = f.root().join("styles");
    skill(f, &styles, "style", None);
    commit_all(&styles);
    let main = f.root().join("main");
    let style_dep = format!(
        "style = {{ git = \"file://{}\", path = \"skills/style\" }}",
        styles.display()
    );
    skill(
        f,
        &main,
        "app",
        Some(&format!("helper = {{ path = \"../helper\" }}\n{style_dep}")),
    );
    skill(
        f,
        &main,
        "helper",
        Some(&format!("app = {{ path = \"../app\" }}\n{style_dep}")),
    );
    skill(f, &main, "unrelated", None);
    commit_all(&main);
    (main, styles)
}

#[test]
fn add_installs_what_a_skill_needs_and_the_lock_records_the_graph() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let empty = f.skillpm(&["tree"]);
    assert!(empty.status.success() && stderr(&empty).contains("nothing is locked yet"));
    let (main, _) = repos(&f);
    let out = f.skillpm(&["add", &url(&main), "--skill", "app"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("Added helper 0.0.0, needed by app\n"),
        "{said}"
    );
    assert!(
        said.contains("Added style 0.0.0, needed by app, helper\n"),
        "{said}"
    );

    assert_eq!(installed(&f), ["app", "helper", "style"]);
    assert_eq!(
        edges(&f.project),
        [
            (
                "app".to_string(),
                vec!["helper".to_string(), "style".to_string()]
            ),
            (
                "helper".to_string(),
                vec!["app".to_string(), "style".to_string()]
            ),
            ("style".to_string(), vec![]),
        ]
    );
    // Only what the user asked for is in skills.toml.
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(f.project.join("skills.toml")).unwrap()).unwrap();
    let named: Vec<&String> = manifest["skills"].as_table().unwrap().keys().collect();
    assert_eq!(named, ["app"]);
    // The sibling is locked at the commit `app` came from.
    let lock = lock_skills(&f.project);
    let source = |n: &str| {
        lock.iter().find(|s| s["name"].as_str() == Some(n)).unwrap()["source"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(source("app"), source("helper"));

    // tree: skills.toml's entry, its dependencies, the cycle marked.
    let tree = f.ok(&["tree"]);
    let names: Vec<&str> = tree
        .lines()
        .map(|l| l.trim_start_matches(['│', '├', '└', '─', ' ']))
        .collect();
    assert!(names[0].starts_with("app 0.0.0"), "{tree}");
    assert!(names[1].starts_with("helper 0.0.0"), "{tree}");
    assert!(
        names[2].starts_with("app 0.0.0") && names[2].ends_with("(*)"),
        "{tree}"
    );
    assert!(names[3].starts_with("style 0.0.0"), "{tree}");
    assert!(
        names[4].starts_with("style 0.0.0") && names[4].ends_with("(*)"),
        "{tree}"
    );
    assert_eq!(names.len(), 5, "{tree}");
    let inverted = f.ok(&["tree", "--invert", "style", "--depth", "1"]);
    assert_eq!(inverted.lines().count(), 3, "{inverted}");
    assert!(
        inverted.contains("app") && inverted.contains("helper"),
        "{inverted}"
    );

    // why: every chain from skills.toml, shortest first.
    assert_eq!(
        f.ok(&["why", "style"]),
        "skills.toml -> app -> style\nskills.toml -> app -> helper -> style\n"
    );
    let json: serde_json::Value = serde_json::from_str(&f.ok(&["tree", "--json"])).unwrap();
    let style = json
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "style")
        .unwrap();
    assert_eq!(style["direct"], false);
    assert_eq!(style["dependents"], serde_json::json!(["app", "helper"]));
    let list = f.ok(&["list"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with("style ") && l.ends_with("(dependency)")),
        "{list}"
    );

    // A restore from the lock alone installs the same graph.
    std::fs::remove_dir_all(f.project_root()).unwrap();
    f.ok(&["install", "--frozen"]);
    assert_eq!(installed(&f), ["app", "helper", "style"]);

    // remove: what nothing needs any more goes with it.
    let out = f.skillpm(&["remove", "app"]);
    assert!(
        stderr(&out).contains("No longer needed: helper, style\n"),
        "{}",
        stderr(&out)
    );
    assert_eq!(installed(&f), Vec::<String>::new());
    assert!(lock_skills_or_empty(&f.project).is_empty());
}

fn lock_skills_or_empty(project: &Path) -> Vec<toml::Value> {
    let text = std::fs::read_to_string(project.join("skills.lock")).unwrap();
    let lock: toml::Value = toml::from_str(&text).unwrap();
    lock.get("skill")
        .and_then(|s| s.as_array())
        .cloned()
        .unwrap_or_default()
}

/// A skill the user names stays when the skill that needed it goes, and
/// one both need stays while either does.
#[test]
fn a_skill_the_user_named_is_never_removed_as_an_orphan() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let (main, styles) = repos(&f);
    f.ok(&["add", &url(&main), "--skill", "app"]);
    f.ok(&["add", &url(&styles), "--skill", "style"]);
    f.ok(&["remove", "app"]);
    assert_eq!(installed(&f), ["style"]);
    assert_eq!(edges(&f.project), [("style".to_string(), vec![])]);
}

/// `--locked` refuses a lock whose graph skills.toml's entries no longer
/// produce, and a lock naming a dependency it does not list is refused
/// with its line.
#[test]
fn locked_installs_refuse_a_changed_graph() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let (main, _) = repos(&f);
    f.ok(&["add", &url(&main), "--skill", "app"]);
    let lock_path = f.project.join("skills.lock");
    let text = std::fs::read_to_string(&lock_path).unwrap();

    // An edge to a skill the lock does not hold.
    let dangling = text.replacen(
        "dependencies = [\"helper\", \"style\"]",
        "dependencies = [\"ghost\", \"helper\", \"style\"]",
        1,
    );
    assert_ne!(dangling, text);
    std::fs::write(&lock_path, &dangling).unwrap();
    let out = f.skillpm(&["install", "--locked"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("depends on `ghost`"),
        "{}",
        stderr(&out)
    );

    // A new upstream dependency: `update --locked` may not take it.
    std::fs::write(&lock_path, &text).unwrap();
    f.write(&main, "skills/app/skill.toml", "[dependencies]\nhelper = { path = \"../helper\" }\nunrelated = { path = \"../unrelated\" }\n");
    git(&main, &["commit", "-qam", "app needs unrelated"]);
    let out = f.skillpm(&["update", "--locked"]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), text);
    // Without --locked, the new graph is taken: `unrelated` comes in;
    // `style` is still needed by `helper`.
    f.ok(&["update"]);
    assert_eq!(installed(&f), ["app", "helper", "style", "unrelated"]);
}

fn publish(f: &Fixture, reg: &Registry, name: &str, version: &str) {
    let dir = f.package_src(name, version, &format!("{name} {version}"), "body");
    f.publish_to(reg, &dir);
}

/// Requirements on a registry skill from two git skills are intersected;
/// when they cannot meet, the error names both.
#[test]
fn registry_requirements_meet_or_the_conflict_names_both_chains() {
    let mut f = Fixture::new();
    f.link_bin("git");
    let reg = Registry::for_fixture(&mut f);
    for v in ["1.0.0", "1.5.0", "2.1.0"] {
        publish(&f, &reg, "style-guide", v);
    }
    f.ok(&["init"]);
    let repo = f.root().join("repo");
    skill(&f, &repo, "review", Some("style-guide = \">=1.2\""));
    skill(&f, &repo, "lint", Some("style-guide = \"<2\""));
    skill(&f, &repo, "modern", Some("style-guide = \">=2\""));
    commit_all(&repo);

    f.ok(&["add", &url(&repo), "--skill", "review", "--skill", "lint"]);
    let lock = lock_skills(&f.project);
    let guide = lock
        .iter()
        .find(|s| s["name"].as_str() == Some("style-guide"))
        .unwrap();
    assert_eq!(
        guide["version"].as_str(),
        Some("1.5.0"),
        "the one version both allow"
    );
    let before = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();

    let out = f.skillpm(&["add", &url(&repo), "--skill", "modern"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("modern"), "{err}");
    assert!(err.contains("style-guide >=2.0.0"), "{err}");
    assert!(err.contains("style-guide <2.0.0"), "{err}");
    assert!(!err.contains("0.0.0 is forbidden"), "{err}");
    // Nothing of the refused command is left behind.
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.lock")).unwrap(),
        before
    );
    assert!(!installed(&f).contains(&"modern".to_string()));

    // Without `lint`, `modern` fits: the locked style-guide 1.5.0 does not
    // (held as locked, there is no solution), so the graph is solved again
    // from the real requirements and style-guide moves to 2.1.0, which
    // `review` (>=1.2) allows.
    f.ok(&["remove", "lint"]);
    f.ok(&["add", &url(&repo), "--skill", "modern"]);
    let lock = lock_skills(&f.project);
    let guide = lock
        .iter()
        .find(|s| s["name"].as_str() == Some("style-guide"))
        .unwrap();
    assert_eq!(guide["version"].as_str(), Some("2.1.0"));
    assert_eq!(installed(&f), ["modern", "review", "style-guide"]);
}

/// The commit a tag of `repo` points at.
fn tag_commit(repo: &Path, tag: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", &format!("{tag}^{{commit}}")])
        .current_dir(repo)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn locked(project: &Path, name: &str) -> toml::Value {
    lock_skills(project)
        .into_iter()
        .find(|s| s["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("{name} is not locked"))
}

/// `owner/repo@^1` (here `git+URL@^1`) takes the highest tag the range
/// allows, skipping pre-releases; the lock pins its commit and records
/// its version; a monorepo's per-skill tags (`NAME-v1.2.3`) win over
/// plain ones; a dependency can name a range the same way.
#[test]
fn semver_ranges_choose_among_a_repositorys_tags() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let repo = f.root().join("tagged");
    skill(&f, &repo, "house-style", None);
    commit_all(&repo);
    for (i, tag) in ["v1.0.0", "v1.1.0", "v2.0.0", "v2.1.0-rc.1"]
        .iter()
        .enumerate()
    {
        f.write(&repo, "skills/house-style/notes.md", format!("release {i}"));
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", tag]);
        git(&repo, &["tag", tag]);
    }
    let spec = format!("{}@^1", url(&repo));
    f.ok(&["add", &spec, "--skill", "house-style"]);
    let l = locked(&f.project, "house-style");
    assert_eq!(l["version"].as_str(), Some("1.1.0"));
    let source = l["source"].as_str().unwrap();
    assert!(source.ends_with(&tag_commit(&repo, "v1.1.0")), "{source}");
    let manifest = std::fs::read_to_string(f.project.join("skills.toml")).unwrap();
    assert!(manifest.contains("version = \"^1\""), "{manifest}");

    // A new tag in range: `install` keeps the lock, `update` takes it.
    f.write(&repo, "skills/house-style/notes.md", "release 1.2");
    git(&repo, &["commit", "-qam", "1.2"]);
    git(&repo, &["tag", "v1.2.0"]);
    f.ok(&["install"]);
    assert_eq!(
        locked(&f.project, "house-style")["version"].as_str(),
        Some("1.1.0")
    );
    f.ok(&["update"]);
    assert_eq!(
        locked(&f.project, "house-style")["version"].as_str(),
        Some("1.2.0")
    );

    // Per-skill tags of a monorepo count before plain ones, and a
    // dependency may ask for a range of them.
    git(&repo, &["tag", "house-style-v3.0.0"]);
    git(&repo, &["tag", "other-v9.0.0"]);
    let app = f.root().join("app");
    skill(
        &f,
        &app,
        "app",
        Some(&format!(
            "house-style = {{ git = \"file://{}\", version = \">=3\", path = \"skills/house-style\" }}",
            repo.display()
        )),
    );
    commit_all(&app);
    f.ok(&["remove", "house-style"]);
    f.ok(&["add", &url(&app), "--skill", "app"]);
    let l = locked(&f.project, "house-style");
    assert_eq!(l["version"].as_str(), Some("3.0.0"));

    // Nothing in range: the error lists the tags there are.
    let out = f.skillpm(&[
        "add",
        &format!("{}@^7", url(&repo)),
        "--skill",
        "house-style",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("^7") && err.contains("v1.2.0"), "{err}");
}

/// What the agent sees: `status` carries the edges, says who needs a
/// skill, and a skill whose dependency is gone is not eligible, nor is
/// what needs it in turn.
#[test]
fn status_skips_a_skill_whose_dependency_is_missing() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let (main, _) = repos(&f);
    f.ok(&["add", &url(&main), "--skill", "app"]);
    let status = f.status_json();
    let skill = |name: &str| {
        status["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(skill("app")["state"], "eligible");
    assert_eq!(
        skill("app")["dependencies"],
        serde_json::json!(["helper", "style"])
    );
    assert_eq!(
        skill("style")["needed_by"],
        serde_json::json!(["app", "helper"])
    );
    assert!(f.ok(&["status"]).contains("(needed by app, helper)"));

    std::fs::remove_dir_all(f.project_root().join("style")).unwrap();
    let status = f.status_json();
    for name in ["app", "helper"] {
        let s = status["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap();
        assert_eq!(s["state"], "skipped", "{s}");
        assert_eq!(s["reason"]["code"], "missing-dependency", "{s}");
    }
}

/// A dependency that cannot be fetched fails the whole command, which
/// leaves nothing behind: not the skill that needed it, not a line of
/// skills.toml or skills.lock.
#[test]
fn a_dependency_that_fails_leaves_nothing_of_the_command() {
    let f = Fixture::new();
    f.link_bin("git");
    f.ok(&["init"]);
    let repo = f.root().join("broken");
    let gone = f.root().join("no-such-repository");
    skill(
        &f,
        &repo,
        "needy",
        Some(&format!("lost = {{ git = \"file://{}\" }}", gone.display())),
    );
    skill(&f, &repo, "fine", None);
    commit_all(&repo);
    f.ok(&["add", &url(&repo), "--skill", "fine"]);
    // The project, that is: the cache may keep what it fetched.
    let project = || tree::snapshot(&f.project, &|_| false);
    let before = project();
    let out = f.skillpm(&["add", &url(&repo), "--skill", "needy"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no-such-repository"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree::changes(&before, &project()), None);
    assert_eq!(installed(&f), ["fine"]);
}

/// A skill from elsewhere may not point the project at this machine: its
/// `file://` dependency is refused, naming both, and nothing is installed.
#[test]
fn a_remote_skill_may_not_depend_on_this_machines_repositories() {
    let server = skillpm_test_support::git_https::GitHttps::start();
    let (f, name) = common::remote_by_name(&server);
    f.ok(&["init"]);
    let private = f.root().join("private");
    skill(&f, &private, "secrets", None);
    commit_all(&private);
    let repo = f.root().join("remote");
    let dep = format!(
        "secrets = {{ git = \"file://{}\", path = \"skills/secrets\" }}",
        private.display()
    );
    skill(&f, &repo, "app", Some(&dep));
    commit_all(&repo);
    server.serve("remote", &repo);
    let by_name = server.url("remote").replace("127.0.0.1", &name);

    let before = tree::snapshot(&f.project, &|_| false);
    let out = f.skillpm(&["add", &format!("git+{by_name}"), "--skill", "app"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("on this machine") && err.contains("secrets"),
        "{err}"
    );
    assert_eq!(
        tree::changes(&before, &tree::snapshot(&f.project, &|_| false)),
        None
    );
}

/// An APM hybrid package (a skill with an `apm.yml` and no `skill.toml`)
/// installs with its `dependencies.apm`: a GitHub shorthand (against the
/// project's `[sources] github`, here a local mirror) with a sub-path and
/// `#ref`, and a sibling; its `mcp` servers are APM's and left alone.
#[test]
fn an_apm_packages_dependencies_install_with_it() {
    let f = Fixture::new();
    f.link_bin("git");
    let mirror = f.root().join("mirror");
    let lint = mirror.join("acme/lint.git");
    skill(&f, &lint, "lint-rules", None);
    commit_all(&lint);
    git(&lint, &["tag", "v2.0.0"]);
    let repo = f.root().join("hybrid");
    skill(&f, &repo, "helper", None);
    skill(&f, &repo, "review", None);
    f.write(
        &repo,
        "skills/review/apm.yml",
        "name: review\nversion: 1.0.0\ndependencies:\n  apm:\n    \
         - acme/lint/skills/lint-rules#v2.0.0\n    - ../helper\n  \
         mcp:\n    - io.github.github/github-mcp-server\n",
    );
    commit_all(&repo);
    f.write(
        &f.project,
        "skills.toml",
        format!(
            "[sources]\ngithub = \"file://{}\"\n\n[skills]\n",
            mirror.display()
        ),
    );
    f.ok(&["add", &url(&repo), "--skill", "review"]);
    assert_eq!(installed(&f), ["helper", "lint-rules", "review"]);
    assert_eq!(
        edges(&f.project)[2],
        (
            "review".to_string(),
            vec!["helper".to_string(), "lint-rules".to_string()]
        )
    );
}

/// Publishes `name@version` declaring `deps` (its `[dependencies]`).
fn publish_depending(f: &Fixture, reg: &Registry, name: &str, version: &str, deps: &str) {
    let dir = f.package_src(name, version, &format!("{name} {version}"), "body");
    f.write(&dir, "skill.toml", format!("[dependencies]\n{deps}\n"));
    f.publish_to(reg, &dir);
}

/// A diamond of registry packages, their dependencies read from the
/// index the registry filled at publish: `left` and `right` both need
/// `base`, and get the one version both allow.
#[test]
fn registry_packages_bring_their_published_dependencies() {
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    for v in ["1.0.0", "1.1.0", "2.0.0"] {
        publish(&f, &reg, "base", v);
    }
    publish_depending(&f, &reg, "left", "1.0.0", "base = \"^1\"");
    publish_depending(&f, &reg, "right", "1.0.0", "base = { version = \">=1.1\" }");

    f.ok(&["init"]);
    f.ok(&["add", "left", "right"]);
    assert_eq!(installed(&f), ["base", "left", "right"]);
    assert_eq!(
        edges(&f.project),
        [
            ("base".to_string(), vec![]),
            ("left".to_string(), vec!["base".to_string()]),
            ("right".to_string(), vec!["base".to_string()]),
        ]
    );
    let lock = lock_skills(&f.project);
    let base = lock
        .iter()
        .find(|s| s["name"].as_str() == Some("base"))
        .unwrap();
    assert_eq!(base["version"].as_str(), Some("1.1.0"));

    let tree = f.ok(&["tree"]);
    let names: Vec<&str> = tree
        .lines()
        .map(|l| l.trim_start_matches(['│', '├', '└', '─', ' ']))
        .collect();
    assert_eq!(names.len(), 4, "{tree}");
    assert!(names[0].starts_with("left 1.0.0"), "{tree}");
    assert!(names[1].starts_with("base 1.1.0"), "{tree}");
    assert!(names[2].starts_with("right 1.0.0"), "{tree}");
    assert!(names[3].starts_with("base 1.1.0"), "{tree}");
}

/// `outdated` shows what `update` would do to the skills others pull in:
/// `base` may move to 1.2.0 (left's `^1`), not to the 2.0.0 its registry
/// lists, and it is marked as a dependency. Nothing is written.
#[test]
fn outdated_shows_pulled_in_skills_within_every_requirement() {
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    publish(&f, &reg, "base", "1.0.0");
    publish_depending(&f, &reg, "left", "1.0.0", "base = \"^1\"");
    f.ok(&["init"]);
    f.ok(&["add", "left"]);
    for v in ["1.2.0", "2.0.0"] {
        publish(&f, &reg, "base", v);
    }
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();

    let rows: serde_json::Value = serde_json::from_str(&f.ok(&["outdated", "--json"])).unwrap();
    let base = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "base")
        .expect("a row for the pulled-in skill");
    assert_eq!(
        (
            &base["current"],
            &base["wanted"],
            &base["latest"],
            &base["direct"]
        ),
        (
            &serde_json::json!("1.0.0"),
            &serde_json::json!("1.2.0"),
            &serde_json::json!("2.0.0"),
            &serde_json::json!(false)
        )
    );
    let human = f.ok(&["outdated"]);
    let line = human.lines().find(|l| l.starts_with("base ")).unwrap();
    assert!(line.ends_with("(dependency)"), "{human}");
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.lock")).unwrap(),
        lock,
        "outdated wrote the lock"
    );
    assert!(
        std::fs::read_to_string(f.project_root().join("base/SKILL.md"))
            .unwrap()
            .contains("1.0.0")
    );
}

/// `publish` refuses a dependency from outside the registry before
/// anything is sent, and `--dry-run` lists the ones it would publish.
#[test]
fn publish_checks_dependencies_before_upload() {
    let f = Fixture::new();
    let dir = f.package_src("lint", "1.0.0", "lint", "body");
    f.write(
        &dir,
        "skill.toml",
        "[dependencies]\nbase = \"^1\"\nhelper = { path = \"../helper\" }\n",
    );
    // No registry is running: the refusal comes from the client.
    let out = f.skillpm(&[
        "publish",
        dir.to_str().unwrap(),
        "--registry",
        "http://127.0.0.1:9",
        "--token",
        "t",
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("skill.toml line 3: dependency `helper` is a path dependency"),
        "{err}"
    );
    f.write(&dir, "skill.toml", "[dependencies]\nbase = \"^1\"\n");
    let out = f.skillpm(&["publish", "--dry-run", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("depends on base ^1"), "{listed}");
    assert!(stderr(&out).contains("1 dependency;"), "{}", stderr(&out));
}
