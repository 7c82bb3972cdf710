//! What a package must say about itself to be published: one check, run
//! by the registry on every upload and by `skillpm publish` (and its
//! `--dry-run`) before anything leaves the machine.

use crate::name::{NameError, SkillName};
use crate::skill::SkillDoc;
use crate::validate::{check_doc, Dialect, Severity};

/// Who a publishable package is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: SkillName,
    pub version: semver::Version,
}

/// One reason a package cannot be published, at a line of its `SKILL.md`
/// when there is one.
#[derive(Debug, thiserror::Error)]
#[error("SKILL.md{}: {why}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct Refusal {
    pub line: Option<usize>,
    pub why: Why,
}

#[derive(Debug, thiserror::Error)]
pub enum Why {
    /// An error of the registry dialect of `validate`.
    #[error("{0}")]
    Invalid(String),
    #[error("`name` is required to publish")]
    NoName,
    #[error("`name` {name:?}: {source}")]
    BadName {
        name: String,
        #[source]
        source: NameError,
    },
    #[error(
        "a version is required to publish: add `version: \"1.0.0\"` under `metadata:` \
         (the Agent Skills specification's place for it), or publish with `--version`"
    )]
    NoVersion,
    #[error("`{key}` says {declared}, but the publish asks for {given}")]
    VersionMismatch {
        key: &'static str,
        declared: semver::Version,
        given: semver::Version,
    },
    #[error("`{key}` {raw:?} is not a semver version: {source}")]
    BadVersion {
        key: &'static str,
        raw: String,
        #[source]
        source: semver::Error,
    },
}

/// Checks `doc` as the registry does: the registry dialect's errors, then
/// a valid `name` and a semver version (`metadata.version`, or the
/// top-level `version` skillpm read first). `given` is the version the
/// publisher named (`skillpm publish --version`): it stands in for a
/// `SKILL.md` that declares none, and must equal one that does. Every
/// refusal, not the first.
pub fn check(doc: &SkillDoc, given: Option<&semver::Version>) -> Result<Identity, Vec<Refusal>> {
    let mut refusals: Vec<Refusal> = check_doc(doc, None, Dialect::Registry)
        .into_iter()
        .filter(|(_, severity, _)| *severity == Severity::Error)
        .map(|(line, _, message)| Refusal {
            line,
            why: Why::Invalid(message),
        })
        .collect();
    let name = match doc.name() {
        None => Err(Why::NoName),
        Some(raw) => SkillName::new(raw).map_err(|source| Why::BadName {
            name: raw.to_string(),
            source,
        }),
    };
    let key = match doc.frontmatter.contains_key("version") {
        true => "version",
        false => "metadata.version",
    };
    let declared = doc.version().map(|raw| {
        semver::Version::parse(raw.trim()).map_err(|source| Why::BadVersion { key, raw, source })
    });
    let version = match (declared, given) {
        (None, None) => Err(Why::NoVersion),
        (None, Some(given)) => Ok(given.clone()),
        (Some(Ok(declared)), Some(given)) if declared != *given => Err(Why::VersionMismatch {
            key,
            declared,
            given: given.clone(),
        }),
        (Some(declared), _) => declared,
    };
    let line = |k: &str| doc.key_lines.get(k).copied();
    let vers_line = line("version").or_else(|| line("metadata"));
    match (name, version) {
        (Ok(name), Ok(version)) if refusals.is_empty() => Ok(Identity { name, version }),
        (name, version) => {
            if let Err(why) = name {
                refusals.push(Refusal {
                    line: line("name"),
                    why,
                });
            }
            if let Err(why) = version {
                let line = match why {
                    Why::NoVersion => None,
                    _ => vers_line,
                };
                refusals.push(Refusal { line, why });
            }
            Err(refusals)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(frontmatter: &str) -> SkillDoc {
        crate::skill::parse(format!("---\n{frontmatter}\n---\nbody\n").as_bytes()).unwrap()
    }

    #[test]
    fn metadata_version_publishes_and_its_absence_says_where_it_goes() {
        let ok = check(
            &doc("name: pdf\ndescription: d\nmetadata:\n  version: \"1.2.0\""),
            None,
        )
        .unwrap();
        assert_eq!(ok.version, semver::Version::new(1, 2, 0));
        let refused = check(&doc("name: pdf\ndescription: d"), None).unwrap_err();
        let said: Vec<String> = refused.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("under `metadata:`"), "{said:?}");
        let bad = check(
            &doc("name: pdf\ndescription: d\nmetadata:\n  version: one"),
            None,
        )
        .unwrap_err();
        assert!(
            bad[0].to_string().contains("`metadata.version` \"one\""),
            "{}",
            bad[0]
        );
        assert_eq!(bad[0].line, Some(4));
    }

    /// `--version` stands in for a missing version and must agree with a
    /// declared one.
    #[test]
    fn a_given_version_fills_in_and_must_agree() {
        let v = semver::Version::new(2, 0, 0);
        let filled = check(&doc("name: pdf\ndescription: d"), Some(&v)).unwrap();
        assert_eq!(filled.version, v);
        let declared = doc("name: pdf\ndescription: d\nmetadata:\n  version: \"1.0.0\"");
        let clash = check(&declared, Some(&v)).unwrap_err();
        assert!(
            matches!(clash[0].why, Why::VersionMismatch { .. }),
            "{}",
            clash[0]
        );
        let same = semver::Version::new(1, 0, 0);
        assert_eq!(check(&declared, Some(&same)).unwrap().version, same);
    }

    #[test]
    fn every_refusal_is_reported() {
        let refused = check(&doc("name: Not A Name\ndescription: d"), None).unwrap_err();
        assert!(refused.iter().any(|r| matches!(r.why, Why::NoVersion)));
        assert!(refused
            .iter()
            .any(|r| matches!(r.why, Why::BadName { .. } | Why::Invalid(_))));
    }
}
