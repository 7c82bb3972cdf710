//! `add --registry NAME|URL`, a registry known only from
//! `SKILLPM_REGISTRY` recorded by `add`, and the messages for specs that
//! name no skill (`@pdf`, `/etc`): each against a real `skillpm-registry`
//! on 127.0.0.1, through the real binary.

use crate::common;
use common::{stderr, Fixture, Registry};
use std::path::{Path, PathBuf};

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

/// Publishes `name@version` to `reg`, naming it on the command line (the
/// fixture has no SKILLPM_REGISTRY).
fn publish(f: &Fixture, reg: &Registry, name: &str, version: &str) {
    let dir = f.package_src(
        name,
        version,
        &format!("The {name} skill, version {version}"),
        &format!("{name} body {version}"),
    );
    f.publish_to(reg, &dir);
}

/// A clone of the project: its skills.toml and skills.lock, nothing else.
fn clone_project(f: &Fixture, to: &str) -> PathBuf {
    let fresh = f.root().join(to);
    std::fs::create_dir_all(&fresh).unwrap();
    for file in ["skills.toml", "skills.lock"] {
        std::fs::copy(f.project.join(file), fresh.join(file)).unwrap();
    }
    fresh
}

/// The `[registries]` name `add` derives for a loopback URL.
fn derived_name(url: &str) -> String {
    let port = url.rsplit(':').next().unwrap().trim_end_matches('/');
    format!("127-0-0-1-{port}")
}

/// Runs `skillpm --quiet ARGS`, which must fail as a usage error (exit 2)
/// with one line naming `mention`, and leave skills.toml as it was.
fn refused_as_usage(f: &Fixture, args: &[&str], mention: &str) {
    let before = std::fs::read(f.project.join("skills.toml")).ok();
    let mut full = vec!["--quiet"];
    full.extend_from_slice(args);
    let out = f.skillpm(&full);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(
        err.contains(mention),
        "{args:?} should say {mention:?}: {err}"
    );
    assert_eq!(std::fs::read(f.project.join("skills.toml")).ok(), before);
}

/// `add NAME --registry URL` installs from that registry and records it
/// (under `[registries]`, named after its host and port, and on the
/// entry), keeping skills.toml's comments; a clone of the project then
/// installs and updates against it with neither the flag nor
/// SKILLPM_REGISTRY.
#[test]
fn add_with_a_registry_url_records_it_for_a_clone() {
    let f = Fixture::new();
    let reg = Registry::start(&f.root().join("registry-data"));
    publish(&f, &reg, "pdf", "1.0.0");
    f.ok(&["init"]);
    f.ok(&["add", "pdf", "--registry", &reg.url]);
    assert!(read(f.project_root().join("pdf/SKILL.md")).contains("pdf body 1.0.0"));
    let name = derived_name(&reg.url);
    let manifest = read(f.project.join("skills.toml"));
    assert!(
        manifest.contains(&format!(
            "pdf = {{ version = \"^1.0.0\", registry = \"{name}\" }}"
        )),
        "{manifest}"
    );
    assert!(
        manifest.contains(&format!("[registries]\n{name} = \"{}\"", reg.url)),
        "{manifest}"
    );
    assert!(
        manifest.contains("# Skills this project uses."),
        "comments kept: {manifest}"
    );
    // Adding from the same URL again reuses the recorded name.
    publish(&f, &reg, "docx", "1.0.0");
    f.ok(&["add", "docx", "--registry", &format!("{}/", reg.url)]);
    let manifest = read(f.project.join("skills.toml"));
    assert_eq!(manifest.matches(&reg.url).count(), 1, "{manifest}");
    assert!(
        manifest.contains(&format!(
            "docx = {{ version = \"^1.0.0\", registry = \"{name}\" }}"
        )),
        "{manifest}"
    );

    publish(&f, &reg, "pdf", "1.1.0");
    let fresh = clone_project(&f, "clone");
    let fresh = fresh.to_str().unwrap();
    f.ok(&["-C", fresh, "install"]);
    let installed = Path::new(fresh).join(".agents/skills/pdf/SKILL.md");
    assert!(read(&installed).contains("pdf body 1.0.0"));
    f.ok(&["-C", fresh, "update", "pdf"]);
    assert!(read(&installed).contains("pdf body 1.1.0"));
    let lock = read(Path::new(fresh).join("skills.lock"));
    assert!(
        lock.contains(&format!("source = \"registry+{}\"", reg.url)),
        "{lock}"
    );
}

/// `add NAME --registry NAME` takes the URL from `[registries]` and
/// records the name on the entry, adding no registry; `info --registry
/// NAME` reads the same table. A name that is not listed is a one-line
/// error that changes nothing.
#[test]
fn add_with_a_registry_name_from_registries() {
    let f = Fixture::new();
    let reg = Registry::start(&f.root().join("registry-data"));
    publish(&f, &reg, "pdf", "1.0.0");
    f.write(
        &f.project,
        "skills.toml",
        format!(
            "# our skills\n[skills]\n\n[registries]\ncompany = \"{}\" # the team's\n",
            reg.url
        ),
    );
    f.ok(&["add", "pdf", "--registry", "company"]);
    let manifest = read(f.project.join("skills.toml"));
    assert!(
        manifest.contains("pdf = { version = \"^1.0.0\", registry = \"company\" }"),
        "{manifest}"
    );
    assert!(
        manifest.contains(&format!("company = \"{}\" # the team's", reg.url)),
        "{manifest}"
    );
    assert_eq!(manifest.matches("[registries]").count(), 1, "{manifest}");
    let lock = read(f.project.join("skills.lock"));
    assert!(
        lock.contains(&format!("source = \"registry+{}\"", reg.url)),
        "{lock}"
    );
    let info = f.ok(&["info", "pdf", "--registry", "company", "--json"]);
    assert!(info.contains("\"1.0.0\""), "{info}");

    let err = common::run_refused(
        &f,
        &["add", "pdf", "--registry", "elsewhere"],
        &["registry `elsewhere` is not listed under [registries]"],
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// A first `add` with the registry given only by SKILLPM_REGISTRY writes
/// it as `[registries] default`, so a teammate without the variable adds
/// another skill (and installs) from the same registry instead of being
/// told no registry is configured.
#[test]
fn a_registry_from_the_environment_is_recorded_as_the_default() {
    let mut f = Fixture::new();
    let reg = Registry::for_fixture(&mut f);
    publish(&f, &reg, "pdf", "1.0.0");
    publish(&f, &reg, "docx", "2.0.0");
    f.ok(&["init"]);
    f.ok(&["add", "pdf"]);
    let manifest = read(f.project.join("skills.toml"));
    assert!(manifest.contains("pdf = \"^1.0.0\""), "{manifest}");
    assert!(
        manifest.contains(&format!("[registries]\ndefault = \"{}\"", reg.url)),
        "{manifest}"
    );

    f.extra_env.retain(|(k, _)| k != "SKILLPM_REGISTRY");
    let fresh = clone_project(&f, "teammate");
    let fresh = fresh.to_str().unwrap();
    f.ok(&["-C", fresh, "add", "docx"]);
    let team = Path::new(fresh).join(".agents/skills");
    assert!(read(team.join("docx/SKILL.md")).contains("docx body 2.0.0"));
    assert!(read(team.join("pdf/SKILL.md")).contains("pdf body 1.0.0"));
}

/// `add @pdf` says the name is missing, not that `pdf` is a bad version
/// requirement; `add /etc` names the path as typed and why it is no
/// skill, not a `../../..` path relative to the project.
#[test]
fn specs_that_name_no_skill_say_what_is_wrong() {
    let f = Fixture::new();
    f.ok(&["init"]);
    refused_as_usage(&f, &["add", "@pdf"], "`@pdf` has no name before `@`");
    refused_as_usage(&f, &["add", "pdf@"], "`pdf@` has no version requirement");
    let err_dir = f.root().join("empty");
    std::fs::create_dir_all(&err_dir).unwrap();
    let empty = err_dir.to_str().unwrap();
    refused_as_usage(
        &f,
        &["add", empty],
        &format!("`{empty}` is not a skill directory: no SKILL.md"),
    );
    refused_as_usage(
        &f,
        &["add", "./missing"],
        "`./missing` is not a skill directory: it does not exist",
    );
    if Path::new("/etc").is_dir() && !Path::new("/etc/SKILL.md").exists() {
        refused_as_usage(
            &f,
            &["add", "/etc"],
            "`/etc` is not a skill directory: no SKILL.md",
        );
    }
}
