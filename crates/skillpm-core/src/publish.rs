//! What a package must say about itself to be published: one check, run
//! by the registry on every upload and by `skillpm publish` (and its
//! `--dry-run`) before anything leaves the machine: `SKILL.md`
//! ([`check`]) and the dependencies of `skill.toml` ([`dependencies`]).

use crate::name::{NameError, SkillName};
use crate::protocol::IndexDep;
use crate::skill::SkillDoc;
use crate::text::{line_of, toml_message};
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

/// Refusals as one message, for an answer or an error that has one line.
pub fn joined<R: std::fmt::Display>(refusals: &[R]) -> String {
    let said: Vec<String> = refusals.iter().map(ToString::to_string).collect();
    said.join("; ")
}

/// The file beside `SKILL.md` that declares a package's dependencies.
pub const SKILL_TOML: &str = "skill.toml";

/// Largest `skill.toml` read: a list of dependencies, not a document.
pub const MAX_SKILL_TOML: usize = 64 * 1024;

/// The one registry a published package's dependency may name: the one
/// it is published to, whatever its URL.
const SAME_REGISTRY: &str = "default";

/// One reason a package's `skill.toml` cannot go into a registry, at its
/// line when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{SKILL_TOML}{}: {why}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct DepRefusal {
    pub line: Option<usize>,
    pub why: DepWhy,
}

#[derive(Debug, thiserror::Error)]
pub enum DepWhy {
    #[error("larger than {MAX_SKILL_TOML} bytes")]
    TooLarge,
    #[error("not UTF-8")]
    NotUtf8(#[source] std::str::Utf8Error),
    #[error("not TOML: {message}")]
    Syntax {
        message: String,
        #[source]
        source: toml_edit::TomlError,
    },
    #[error("unknown table `{0}`; {SKILL_TOML} has only [dependencies]")]
    UnknownTable(String),
    #[error("`dependencies` must be a table")]
    NotATable,
    #[error("dependency {name:?}: {source}")]
    BadName {
        name: String,
        #[source]
        source: NameError,
    },
    /// A git, path or well-known dependency: the registry could not
    /// promise that it resolves, or resolves to the same thing, for
    /// everyone who installs the package.
    #[error(
        "dependency `{name}` is a {kind} dependency; a package published to a registry \
         may depend only on registry packages (`{name} = \"^1\"`)"
    )]
    NotRegistry { name: String, kind: &'static str },
    #[error(
        "dependency `{name}` names the registry `{registry}`; a package published to a \
         registry may depend only on registry packages of that same registry (leave \
         `registry` out)"
    )]
    OtherRegistry { name: String, registry: String },
    #[error("dependency `{name}` has no `version`; write `{name} = \"^1\"`")]
    NoVersion { name: String },
    #[error("dependency `{name}`: unknown key `{key}`")]
    UnknownKey { name: String, key: String },
    #[error("dependency `{name}`: `{key}` must be {expected}")]
    WrongType {
        name: String,
        key: String,
        expected: &'static str,
    },
    #[error("dependency `{name}`: {req:?} is not a version requirement: {source}")]
    BadReq {
        name: String,
        req: String,
        #[source]
        source: semver::Error,
    },
    #[error("dependency `{0}`: a package may not depend on itself")]
    OnItself(SkillName),
}

/// The registry dependencies `skill.toml` (its bytes) declares for
/// `package`, as the index carries them, in the file's order. A package
/// published to a registry may depend only on registry packages (as on
/// crates.io): what it needs must be there for everyone who installs it,
/// at a version the registry can promise. So only `NAME = "REQ"` and
/// `NAME = { version = "REQ" }` (with `registry = "default"`, the same
/// registry, allowed) pass; git, path, well-known and other registries'
/// entries are refused. Every refusal, not the first.
pub fn dependencies(bytes: &[u8], package: &SkillName) -> Result<Vec<IndexDep>, Vec<DepRefusal>> {
    let whole = |why| vec![DepRefusal { line: None, why }];
    if bytes.len() > MAX_SKILL_TOML {
        return Err(whole(DepWhy::TooLarge));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| whole(DepWhy::NotUtf8(e)))?;
    let line = |span: Option<std::ops::Range<usize>>| span.map(|s| line_of(text, s.start));
    let doc = toml_edit::Document::parse(text).map_err(|source| {
        vec![DepRefusal {
            line: line(source.span()),
            why: DepWhy::Syntax {
                message: toml_message(&source),
                source,
            },
        }]
    })?;
    let root = doc.as_table();
    let mut refusals = Vec::new();
    let mut out = Vec::new();
    for (key, item) in root.iter() {
        let at = line(root.key(key).and_then(|k| k.span()).or_else(|| item.span()));
        if key != "dependencies" {
            refusals.push(DepRefusal {
                line: at,
                why: DepWhy::UnknownTable(key.to_string()),
            });
            continue;
        }
        let Some(table) = item.as_table_like() else {
            refusals.push(DepRefusal {
                line: at,
                why: DepWhy::NotATable,
            });
            continue;
        };
        for (name, value) in table.iter() {
            let span = table.key(name).and_then(|k| k.span());
            match dependency(name, value, package) {
                Ok(dep) => out.push(dep),
                Err(why) => refusals.push(DepRefusal {
                    line: line(span.or_else(|| value.span())),
                    why,
                }),
            }
        }
    }
    if refusals.is_empty() {
        Ok(out)
    } else {
        Err(refusals)
    }
}

/// One `[dependencies]` entry as a registry dependency.
fn dependency(
    name: &str,
    value: &toml_edit::Item,
    package: &SkillName,
) -> Result<IndexDep, DepWhy> {
    let skill = SkillName::new(name).map_err(|source| DepWhy::BadName {
        name: name.to_string(),
        source,
    })?;
    let name = name.to_string();
    let raw = match (value.as_str(), value.as_table_like()) {
        (Some(req), _) => req.to_string(),
        (None, Some(table)) => {
            let mut version = None;
            for (key, v) in table.iter() {
                let kind = match key {
                    "git" | "tag" | "branch" | "rev" | "ref" => "git",
                    "path" => "path",
                    "wellknown" => "well-known",
                    "version" | "registry" => "",
                    _ => {
                        return Err(DepWhy::UnknownKey {
                            name,
                            key: key.to_string(),
                        })
                    }
                };
                if !kind.is_empty() {
                    return Err(DepWhy::NotRegistry { name, kind });
                }
                let Some(s) = v.as_str() else {
                    return Err(DepWhy::WrongType {
                        name,
                        key: key.to_string(),
                        expected: "a string",
                    });
                };
                if key == "version" {
                    version = Some(s.to_string());
                } else if s != SAME_REGISTRY {
                    return Err(DepWhy::OtherRegistry {
                        name,
                        registry: s.to_string(),
                    });
                }
            }
            version.ok_or(DepWhy::NoVersion { name: name.clone() })?
        }
        (None, None) => {
            return Err(DepWhy::WrongType {
                name: name.clone(),
                key: name,
                expected: "a version requirement string or a table like { version = \"^1\" }",
            })
        }
    };
    let req = semver::VersionReq::parse(raw.trim()).map_err(|source| DepWhy::BadReq {
        name,
        req: raw.clone(),
        source,
    })?;
    if skill == *package {
        return Err(DepWhy::OnItself(skill));
    }
    Ok(IndexDep { name: skill, req })
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

    fn deps(text: &str) -> Result<Vec<IndexDep>, Vec<DepRefusal>> {
        dependencies(text.as_bytes(), &SkillName::new("me").unwrap())
    }

    #[test]
    fn registry_requirements_become_index_deps_in_order() {
        let got = deps(
            "# what this skill needs\n[dependencies]\nstyle-guide = \"^1\"\n\
             lint = { version = \">=1.1, <3\" }\nbase = { version = \"2\", registry = \"default\" }\n",
        )
        .unwrap();
        let said: Vec<String> = got
            .iter()
            .map(|d| format!("{} {}", d.name, d.req))
            .collect();
        assert_eq!(said, ["style-guide ^1", "lint >=1.1, <3", "base ^2"]);
        assert!(deps("").unwrap().is_empty());
        assert!(deps("[dependencies]\n").unwrap().is_empty());
    }

    #[test]
    fn only_registry_packages_of_the_same_registry_may_be_depended_on() {
        let refused = deps(
            "[dependencies]\nok = \"1\"\n\
             a = { git = \"https://example.com/r.git\", tag = \"v1\" }\n\
             b = { path = \"../b\" }\n\
             c = { wellknown = \"https://example.com\" }\n\
             d = { version = \"1\", registry = \"corp\" }\n\
             e = { branch = \"main\" }\n",
        )
        .unwrap_err();
        let said: Vec<String> = refused.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 5, "{said:?}");
        assert_eq!(
            refused.iter().map(|r| r.line).collect::<Vec<_>>(),
            [3, 4, 5, 6, 7].map(Some)
        );
        assert!(said[0].starts_with("skill.toml line 3: dependency `a` is a git dependency"));
        assert!(
            said[0].contains("may depend only on registry packages"),
            "{said:?}"
        );
        assert!(said[1].contains("`b` is a path dependency"), "{said:?}");
        assert!(
            said[2].contains("`c` is a well-known dependency"),
            "{said:?}"
        );
        assert!(said[3].contains("the registry `corp`"), "{said:?}");
        assert!(said[4].contains("`e` is a git dependency"), "{said:?}");
    }

    #[test]
    fn names_requirements_tables_and_self_are_checked() {
        let refusal = |text: &str| {
            let mut r = deps(text).unwrap_err();
            assert_eq!(r.len(), 1, "{r:?}");
            r.remove(0)
        };
        let r = refusal("[dependencies]\n\"Bad Name\" = \"1\"\n");
        assert!(
            matches!(r.why, DepWhy::BadName { .. }) && r.line == Some(2),
            "{r}"
        );
        let r = refusal("[dependencies]\nx = \"one\"\n");
        assert!(matches!(r.why, DepWhy::BadReq { .. }), "{r}");
        let r = refusal("[dependencies]\nx = { registry = \"default\" }\n");
        assert!(matches!(r.why, DepWhy::NoVersion { .. }), "{r}");
        let r = refusal("[dependencies]\nx = { version = \"1\", features = \"a\" }\n");
        assert!(matches!(r.why, DepWhy::UnknownKey { .. }), "{r}");
        let r = refusal("[dependencies]\nx = 1\n");
        assert!(matches!(r.why, DepWhy::WrongType { .. }), "{r}");
        let r = refusal("[dependencies]\nme = \"^1\"\n");
        assert!(matches!(r.why, DepWhy::OnItself(_)), "{r}");
        let r = refusal("[package]\nname = \"me\"\n");
        assert!(
            matches!(r.why, DepWhy::UnknownTable(_)) && r.line == Some(1),
            "{r}"
        );
        let r = refusal("dependencies = \"x\"\n");
        assert!(matches!(r.why, DepWhy::NotATable), "{r}");
        let r = refusal("[dependencies]\nx = \n");
        assert!(
            matches!(r.why, DepWhy::Syntax { .. }) && r.line == Some(2),
            "{r}"
        );
    }

    #[test]
    fn size_and_encoding_are_bounded() {
        let me = SkillName::new("me").unwrap();
        let big = format!("# {}\n", "x".repeat(MAX_SKILL_TOML));
        let r = dependencies(big.as_bytes(), &me).unwrap_err();
        assert!(matches!(r[0].why, DepWhy::TooLarge), "{}", r[0]);
        let r = dependencies(b"[dependencies]\nx = \"\xff\"\n", &me).unwrap_err();
        assert!(matches!(r[0].why, DepWhy::NotUtf8(_)), "{}", r[0]);
    }
}
