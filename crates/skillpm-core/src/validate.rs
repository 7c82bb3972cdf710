//! `validate`: the strict Agent Skills rules, for authors and publishers.
//!
//! Loading forgives a lot (see [`crate::skill`]); validation does not. Every
//! violation is reported with its file and line, not just the first, so an
//! author fixes everything in one pass. The registry server runs the same
//! checks before it accepts a package.

use crate::name::check_name;
use crate::skill::{self, SkillDoc, SkillError, SKILL_FILES};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_COMPATIBILITY: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// One finding about one file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub severity: Severity,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.line {
            Some(l) => write!(f, "{}:{l}: {sev}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {sev}: {}", self.file.display(), self.message),
        }
    }
}

/// A finding before it is tied to a file.
pub type Finding = (Option<usize>, Severity, String);

/// Checks a parsed document against the Agent Skills rules. `dir_name` is
/// the directory the skill lives in (its `name` must equal it), or `None`
/// when the directory name is not meaningful (a tarball's root).
pub fn check_doc(doc: &SkillDoc, dir_name: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let line = |k: &str| doc.key_lines.get(k).copied();
    let mut err = |l: Option<usize>, m: String| out.push((l, Severity::Error, m));
    match doc.frontmatter.get("name") {
        None => err(Some(2), "missing required `name`".to_string()),
        Some(Value::String(n)) => {
            if let Err(e) = check_name(n) {
                err(line("name"), format!("`name` {n:?}: {e}"));
            }
            if let Some(d) = dir_name {
                if n != d {
                    err(
                        line("name"),
                        format!("`name` {n:?} must equal the directory name {d:?}"),
                    );
                }
            }
        }
        Some(_) => err(line("name"), "`name` must be a string".to_string()),
    }
    let desc_len = doc.description().chars().count();
    if desc_len > MAX_DESCRIPTION {
        err(
            line("description"),
            format!(
                "`description` is {desc_len} characters; at most {MAX_DESCRIPTION} are allowed"
            ),
        );
    }
    match doc.frontmatter.get("compatibility") {
        None => {}
        Some(Value::String(c)) if c.chars().count() > MAX_COMPATIBILITY => err(
            line("compatibility"),
            format!(
                "`compatibility` is {} characters; at most {MAX_COMPATIBILITY} are allowed",
                c.chars().count()
            ),
        ),
        Some(Value::String(_)) => {}
        Some(_) => err(
            line("compatibility"),
            "`compatibility` must be a string".to_string(),
        ),
    }
    match doc.frontmatter.get("metadata") {
        None => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if !v.is_string() {
                    err(
                        line("metadata"),
                        format!(
                            "`metadata.{k}` must be a string (metadata maps strings to strings)"
                        ),
                    );
                }
            }
        }
        Some(_) => err(
            line("metadata"),
            "`metadata` must be a map of strings to strings".to_string(),
        ),
    }
    match doc.frontmatter.get("version") {
        None => {}
        Some(Value::String(v)) => {
            if let Err(e) = semver::Version::parse(v) {
                err(
                    line("version"),
                    format!("`version` {v:?} is not valid semver: {e}"),
                );
            }
        }
        Some(v) => err(
            line("version"),
            format!("`version` {v} must be a quoted semver string such as \"1.0.0\""),
        ),
    }
    for w in &doc.warnings {
        out.push((w.line, Severity::Warning, w.message.clone()));
    }
    out
}

fn error_finding(e: &SkillError) -> Finding {
    (e.line(), Severity::Error, e.to_string())
}

/// Validates one skill directory.
pub fn validate_skill_dir(dir: &Path) -> Vec<Violation> {
    let file = skill::find_skill_file(dir).unwrap_or_else(|| dir.join(SKILL_FILES[0]));
    let dir_name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    let findings = match skill::read(&file) {
        Ok(doc) => check_doc(&doc, dir_name.as_deref()),
        Err(e) => vec![error_finding(&e)],
    };
    findings
        .into_iter()
        .map(|(line, severity, message)| Violation {
            file: file.clone(),
            line,
            severity,
            message,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_violation_with_lines() {
        let doc = skill::parse(
            format!(
                "---\nname: Bad--Name\ndescription: {}\ncompatibility: ok\nmetadata:\n  a: {{b: c}}\nversion: \"1.x\"\nfoo: bar\n---\n",
                "d".repeat(1100)
            )
            .as_bytes(),
        )
        .unwrap();
        let f = check_doc(&doc, Some("bad-name"));
        let errors: Vec<_> = f.iter().filter(|x| x.1 == Severity::Error).collect();
        let lines: Vec<_> = errors.iter().map(|x| x.0).collect();
        assert_eq!(
            lines,
            [Some(2), Some(2), Some(3), Some(5), Some(7)],
            "{f:?}"
        );
        assert!(f
            .iter()
            .any(|x| x.1 == Severity::Warning && x.2.contains("foo")));
    }

    #[test]
    fn clean_skill_passes() {
        let doc = skill::parse(
            b"---\nname: good\ndescription: fine\nversion: \"1.0.0\"\nlicense: MIT\n---\nbody\n",
        )
        .unwrap();
        assert!(check_doc(&doc, Some("good")).is_empty());
    }
}
