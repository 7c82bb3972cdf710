//! skills.toml and a package's skill.toml: the readers (the client's, and
//! the registry's check of what a publish may depend on) and the editor
//! must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(me) = skillpm::name::SkillName::new("fuzz") {
        let _ = skillpm::publish::dependencies(data, &me);
    }
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("skills.toml");
    let _ = skillpm::project::manifest::Manifest::parse(s, path);
    let none = std::collections::BTreeMap::new();
    let _ = skillpm::project::package::PackageManifest::parse(s, Path::new("skill.toml"), &none);
    if let Ok(mut ed) = skillpm::project::manifest::ManifestEditor::parse(s, path) {
        if let Ok(name) = skillpm::name::SkillName::new("fuzz") {
            ed.remove_dependency(&name);
        }
        let _ = ed.to_string();
    }
});
