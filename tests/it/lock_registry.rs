//! The lock is the truth for where locked skills come from: a lock made
//! with only `SKILLPM_REGISTRY` set installs where nothing is set (a fresh
//! CI machine), from the registry the lock records.

use crate::common;
use common::{stderr, Fixture, Registry};

fn publish(f: &Fixture, reg: &Registry, name: &str, version: &str) {
    let dir = f.skill(
        &f.root().join("src").join(version),
        name,
        &format!("name: {name}\ndescription: The {name} skill\nversion: \"{version}\""),
        &format!("{name} {version}"),
    );
    f.publish_to(reg, &dir);
}

#[test]
fn a_lock_made_with_only_skillpm_registry_installs_without_it() {
    let mut dev = Fixture::new();
    let reg = Registry::start(&dev.root().join("registry-data"));
    publish(&dev, &reg, "code-review", "1.0.0");
    dev.extra_env
        .push(("SKILLPM_REGISTRY".into(), reg.url.clone()));
    dev.ok(&["init"]);
    dev.ok(&["add", "code-review@^1"]);
    // `add` records the registry as `[registries] default`
    // (add_registry.rs); the lock must serve a skills.toml without it too:
    // one written by hand, or before `add` recorded it.
    let manifest = std::fs::read_to_string(dev.project.join("skills.toml")).unwrap();
    let recorded = format!("\n[registries]\ndefault = \"{}\"\n", reg.url);
    assert!(manifest.contains(&recorded), "{manifest}");
    let without = manifest.replace(&recorded, "\n");
    assert!(!without.contains(&reg.url), "{without}");

    // CI: the checked-in files, no variable, an empty cache.
    let ci = Fixture::new();
    std::fs::write(ci.project.join("skills.toml"), without).unwrap();
    std::fs::copy(
        dev.project.join("skills.lock"),
        ci.project.join("skills.lock"),
    )
    .unwrap();
    ci.ok(&["install", "--locked"]);
    let body = std::fs::read_to_string(ci.project_root().join("code-review/SKILL.md")).unwrap();
    assert!(body.contains("code-review 1.0.0"), "{body}");
    ci.ok(&["verify"]);
    assert_eq!(
        std::fs::read(ci.project.join("skills.lock")).unwrap(),
        std::fs::read(dev.project.join("skills.lock")).unwrap()
    );

    // A plain install (which may re-resolve) keeps the lock too, and an
    // update refreshes from the lock's registry.
    publish(&dev, &reg, "code-review", "1.1.0");
    ci.ok(&["install"]);
    ci.ok(&["update", "code-review"]);
    let lock = std::fs::read_to_string(ci.project.join("skills.lock")).unwrap();
    assert!(lock.contains("version = \"1.1.0\""), "{lock}");
    assert!(lock.contains(&format!("registry+{}", reg.url)), "{lock}");

    // A dependency the lock does not pin still needs a configured registry.
    let out = ci.skillpm(&["add", "pdf@1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no registry configured"),
        "{}",
        stderr(&out)
    );
}
