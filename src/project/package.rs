//! `skill.toml`: what a skill package declares beside its `SKILL.md`.
//!
//! The Agent Skills specification allows no new top-level frontmatter keys
//! and keeps `metadata` to strings, so a package's dependencies live in a
//! file of their own. Its `[dependencies]` entries read exactly like
//! skills.toml's `[skills]` entries and go through the same parser; a
//! `path` names a sibling skill, relative to the declaring skill's
//! directory. The file comes from packages, so it is untrusted: bounded,
//! strict (unknown tables are errors), every error naming the file and line.

use super::manifest::ManifestErrorKind;
use super::manifest::{parse_skill_table, Ctx, Dependency, ManifestError};
use skillpm_core::archive::{read_top_file, Limits, UnpackError};
use skillpm_core::checksum::Verified;
use skillpm_core::name::SkillName;
use std::collections::BTreeMap;
use std::path::Path;

/// The file's name, at the top of a skill's directory.
pub const FILE: &str = skillpm_core::publish::SKILL_TOML;

/// Microsoft APM's manifest, read when a package has no `skill.toml`, so
/// APM's hybrid packages (a skill with an `apm.yml`) install with theirs.
pub const APM_FILE: &str = "apm.yml";

/// Largest `skill.toml` read, the same bound as the registry's.
const MAX_BYTES: u64 = skillpm_core::publish::MAX_SKILL_TOML as u64;

/// The most dependencies one package may declare.
pub const MAX_DEPENDENCIES: usize = 256;

/// What a package declares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PackageManifest {
    /// `[dependencies]`, in the file's order.
    pub dependencies: Vec<(SkillName, Dependency)>,
}

/// Why a package's `skill.toml` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PackageManifestError {
    #[error(transparent)]
    Invalid(#[from] ManifestError),
    #[error("{file}: larger than {MAX_BYTES} bytes")]
    TooLarge { file: String },
    #[error("{file}: not UTF-8")]
    NotUtf8 { file: String },
    #[error("cannot read {FILE} from the package: {0}")]
    Unpack(#[from] UnpackError),
    #[error("{file}:{line}: {message}")]
    Apm {
        file: String,
        line: usize,
        message: String,
    },
}

impl PackageManifest {
    /// Parses a `skill.toml`; `file` is only used in errors. Registry
    /// entries may name only `default` or a registry of the project's
    /// `[registries]`, which `registries` lists.
    pub fn parse(
        text: &str,
        file: &Path,
        registries: &BTreeMap<String, String>,
    ) -> Result<PackageManifest, ManifestError> {
        let cx = Ctx { text, file };
        let doc = cx.document()?;
        let root = doc.as_table();
        let mut out = PackageManifest::default();
        for (key, item) in root.iter() {
            let k = root.key(key).expect("a key of this table");
            if key != "dependencies" {
                return Err(cx.at(
                    k,
                    item,
                    ManifestErrorKind::UnknownTable {
                        table: key.to_string(),
                        expected: "[dependencies]",
                    },
                ));
            }
            out.dependencies = parse_skill_table(&cx, "dependencies", k, item, registries)?;
            if out.dependencies.len() > MAX_DEPENDENCIES {
                return Err(cx.at(k, item, ManifestErrorKind::TooMany(MAX_DEPENDENCIES)));
            }
        }
        Ok(out)
    }

    /// The `skill.toml` at the top of a packed tree, else its `apm.yml`,
    /// if it has either. `origin` names the package in errors; a GitHub
    /// shorthand in `apm.yml` expands against `github_base`.
    pub fn of_package(
        tree: &Verified,
        origin: &str,
        registries: &BTreeMap<String, String>,
        github_base: &str,
    ) -> Result<Option<PackageManifest>, PackageManifestError> {
        if let Some(text) = top_text(tree, FILE, origin)? {
            let file = format!("{FILE} of {origin}");
            return Ok(Some(PackageManifest::parse(
                &text,
                Path::new(&file),
                registries,
            )?));
        }
        match top_text(tree, APM_FILE, origin)? {
            Some(text) => Ok(Some(apm::read(
                &text,
                &format!("{APM_FILE} of {origin}"),
                github_base,
            )?)),
            None => Ok(None),
        }
    }
}

/// The text of the file `name` at the top of `tree`, bounded and UTF-8.
fn top_text(
    tree: &Verified,
    name: &str,
    origin: &str,
) -> Result<Option<String>, PackageManifestError> {
    let file = format!("{name} of {origin}");
    let data = match read_top_file(tree.bytes(), name, MAX_BYTES, &Limits::default()) {
        Ok(Some(data)) => data,
        Ok(None) => return Ok(None),
        Err(UnpackError::TooLarge { .. }) => return Err(PackageManifestError::TooLarge { file }),
        Err(e) => return Err(e.into()),
    };
    String::from_utf8(data)
        .map(Some)
        .map_err(|_| PackageManifestError::NotUtf8 { file })
}

mod apm;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::spec::GitRef;

    fn parse(text: &str) -> Result<PackageManifest, ManifestError> {
        PackageManifest::parse(text, Path::new("skill.toml"), &BTreeMap::new())
    }

    #[test]
    fn dependencies_read_like_skills_entries() {
        let m = parse(
            "[dependencies]\ncode-style = \"^1\"\nhelper = { path = \"../helper\" }\n\
             lint = { git = \"https://example.com/r.git\", tag = \"v1\", path = \"skills/lint\" }\n",
        )
        .unwrap();
        let names: Vec<&str> = m.dependencies.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["code-style", "helper", "lint"]);
        assert!(
            matches!(&m.dependencies[0].1, Dependency::Registry { req, registry: None } if req.to_string() == "^1")
        );
        assert!(matches!(&m.dependencies[1].1, Dependency::Path { path } if path == "../helper"));
        assert!(
            matches!(&m.dependencies[2].1, Dependency::Git { reference: Some(GitRef::Tag(t)), path: Some(p), .. } if t == "v1" && p == "skills/lint")
        );
    }

    #[test]
    fn unknown_tables_names_and_registries_are_refused_with_their_line() {
        let e = parse("[package]\nname = \"x\"\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().contains("unknown table `package`"), "{e}");
        let e = parse("[dependencies]\nok = \"1\"\n\"Bad Name\" = \"1\"\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e =
            parse("[dependencies]\nx = { version = \"1\", registry = \"corp\" }\n").unwrap_err();
        assert!(e.to_string().contains("corp"), "{e}");
        let many: String = (0..=MAX_DEPENDENCIES)
            .map(|i| format!("d{i} = \"1\"\n"))
            .collect();
        let e = parse(&format!("[dependencies]\n{many}")).unwrap_err();
        assert!(e.to_string().contains("more than 256 dependencies"), "{e}");
    }
}
