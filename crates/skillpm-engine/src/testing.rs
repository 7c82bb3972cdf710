//! Test support for engine unit tests: real skill trees in a temporary
//! directory, read through the same catalog an agent gets.

use crate::catalog::Catalog;
use crate::config::Environment;
use crate::tools::ToolPolicy;
use serde_json::{Map, Value};

/// A frontmatter map from YAML text, read as the loader reads it.
pub fn frontmatter(yaml: &str) -> Map<String, Value> {
    match serde_saphyr::from_str::<Value>(yaml).expect("yaml") {
        Value::Object(m) => m,
        other => panic!("not a map: {other}"),
    }
}

/// A skill to write: command, description, more frontmatter lines, body.
pub type Spec<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Writes `skills` under a fresh root and builds the catalog over it with
/// an isolated environment and `tools`. Keep the directory while the
/// catalog's files are read.
pub fn catalog_with(skills: &[Spec], tools: ToolPolicy) -> (tempfile::TempDir, Catalog) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (command, description, extra, body) in skills {
        let d = dir.path().join(command);
        std::fs::create_dir_all(&d).expect("mkdir");
        let fm = format!(
            "---\ndescription: {}\n{extra}\n---\n{body}",
            serde_json::Value::String(description.to_string())
        );
        std::fs::write(d.join("SKILL.md"), fm).expect("write");
    }
    let cat = Catalog::from_roots(&Environment::isolated(), &[dir.path().to_path_buf()], tools);
    (dir, cat)
}

pub fn catalog(skills: &[Spec]) -> (tempfile::TempDir, Catalog) {
    catalog_with(skills, ToolPolicy::default())
}
