//! `validate`: the strict Agent Skills rules, for authors and publishers.
//!
//! Loading forgives a lot (see [`crate::skill`]); validation does not: it is
//! the authoring gate, so it follows the specification
//! (<https://agentskills.io/specification>, checked by its reference
//! validator `skills-ref`) rather than what skillpm happens to read. Every
//! violation is reported with its file and line, not just the first, so an
//! author fixes everything in one pass.
//!
//! Keys skillpm's engine reads beyond the specification are a [`Dialect`]
//! the author opts into. The registry server runs the same checks before it
//! accepts a package, in [`Dialect::Registry`], so packages that published
//! before `validate` became strict still publish.

use crate::name::check_name;
use crate::skill::{self, SkillDoc, SkillError, MAX_SKILL_MD_BYTES};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_COMPATIBILITY: usize = 500;

/// The top-level keys the specification defines; any other property
/// belongs under `metadata`.
pub const SPEC_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Top-level keys skillpm reads beyond the specification: eligibility
/// (`requires`, `os`, `conflicts`, `always`, `user_invocable_only`), the
/// package `version` the registry indexes, search `triggers` and
/// `brief_description`, and tool references (`tools`, `toolValidation`). An
/// agent's own block (`sven: {requires_bins, ...}`) is accepted with them.
pub const SKILLPM_KEYS: &[&str] = &[
    "version",
    "requires",
    "os",
    "conflicts",
    "always",
    "user_invocable_only",
    "triggers",
    "brief_description",
    "tools",
    "toolValidation",
];

/// `metadata` entries the engine reads as maps (OpenClaw's requirements,
/// under its current and older names) rather than as strings.
pub const SKILLPM_METADATA_MAPS: &[&str] = &["openclaw", "clawdbot", "clawdis"];

/// Which frontmatter a skill may use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    /// The specification alone: what every Agent Skills client can read.
    #[default]
    AgentSkills,
    /// The specification plus [`SKILLPM_KEYS`], agent blocks and
    /// [`SKILLPM_METADATA_MAPS`], for skills written for skillpm's engine.
    Skillpm,
    /// The skillpm dialect, with the rules `validate` gained when it began
    /// following the specification to the letter (unknown keys, repaired
    /// YAML, `allowed-tools` lists, empty `compatibility`, flag types) only
    /// warned about: what the registry accepted before stays publishable.
    Registry,
}

impl Dialect {
    fn reads_skillpm_keys(self) -> bool {
        self != Dialect::AgentSkills
    }

    /// The severity of a rule the registry did not enforce before.
    fn strict(self) -> Severity {
        match self {
            Dialect::Registry => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

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

/// Collects findings for one document, each at the line of its key.
struct Checker<'a> {
    doc: &'a SkillDoc,
    dialect: Dialect,
    out: Vec<Finding>,
}

impl Checker<'_> {
    fn line(&self, key: &str) -> Option<usize> {
        self.doc.key_lines.get(key).copied()
    }

    fn push(&mut self, key: &str, severity: Severity, message: String) {
        let line = self.line(key);
        self.out.push((line, severity, message));
    }

    fn error(&mut self, key: &str, message: String) {
        self.push(key, Severity::Error, message);
    }

    fn strict(&mut self, key: &str, message: String) {
        self.push(key, self.dialect.strict(), message);
    }

    fn name(&mut self, dir_name: Option<&str>) {
        match self.doc.frontmatter.get("name") {
            // The frontmatter's first line: there is no `name` line to point at.
            None => self
                .out
                .push((Some(2), Severity::Error, "missing required `name`".into())),
            Some(Value::String(n)) => {
                if let Err(e) = check_name(n) {
                    self.error("name", format!("`name` {n:?}: {e}"));
                }
                if let Some(d) = dir_name.filter(|d| d != n) {
                    self.error(
                        "name",
                        format!("`name` {n:?} must equal the directory name {d:?}"),
                    );
                }
            }
            Some(_) => self.error("name", "`name` must be a string".into()),
        }
    }

    fn description(&mut self) {
        let len = self.doc.description().chars().count();
        if len > MAX_DESCRIPTION {
            self.error(
                "description",
                format!("`description` is {len} characters; at most {MAX_DESCRIPTION} are allowed"),
            );
        }
    }

    fn keys(&mut self) {
        let fm = &self.doc.frontmatter;
        let dialect = self.dialect;
        for key in fm.keys() {
            let skillpm_key = SKILLPM_KEYS.contains(&key.as_str()) || skill::is_tool_block(fm, key);
            if SPEC_KEYS.contains(&key.as_str()) || (skillpm_key && dialect.reads_skillpm_keys()) {
                continue;
            }
            let hint = if key == "version" {
                "write it as `metadata.version` (under `metadata:`), where `skillpm publish` \
                 reads it, or pass `--dialect skillpm` to allow it"
            } else if skillpm_key {
                "skillpm reads it: pass `--dialect skillpm` to allow it, or move it under `metadata`"
            } else {
                "the Agent Skills spec allows only name, description, license, compatibility, \
                 metadata and allowed-tools; put other properties under `metadata`"
            };
            self.strict(key, format!("unknown frontmatter key `{key}`; {hint}"));
        }
    }

    fn compatibility(&mut self) {
        match self.doc.frontmatter.get("compatibility") {
            None => {}
            Some(Value::String(c)) if c.trim().is_empty() => self.strict(
                "compatibility",
                format!(
                    "`compatibility` is empty; it must be 1-{MAX_COMPATIBILITY} characters, or left out"
                ),
            ),
            Some(Value::String(c)) if c.chars().count() > MAX_COMPATIBILITY => self.error(
                "compatibility",
                format!(
                    "`compatibility` is {} characters; at most {MAX_COMPATIBILITY} are allowed",
                    c.chars().count()
                ),
            ),
            Some(Value::String(_)) => {}
            Some(_) => self.error("compatibility", "`compatibility` must be a string".into()),
        }
    }

    fn allowed_tools(&mut self) {
        let generic = || "Read Bash(git:*)".to_string();
        let example = match self.doc.frontmatter.get("allowed-tools") {
            None | Some(Value::String(_)) => return,
            // The author's own list, joined, when it is a short list of
            // strings; a message must not echo a quarter megabyte back.
            Some(Value::Array(items)) => items
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<_>>>()
                .map(|tools| tools.join(" "))
                .filter(|joined| joined.len() <= 200)
                .unwrap_or_else(generic),
            Some(_) => generic(),
        };
        self.strict(
            "allowed-tools",
            format!(
                "`allowed-tools` must be one space-separated string, such as `allowed-tools: {example}`"
            ),
        );
    }

    fn license(&mut self) {
        if self
            .doc
            .frontmatter
            .get("license")
            .is_some_and(|l| !l.is_string())
        {
            self.strict("license", "`license` must be a string".into());
        }
    }

    fn metadata(&mut self) {
        let entries = match self.doc.frontmatter.get("metadata") {
            None => return,
            Some(Value::Object(m)) => m,
            Some(_) => {
                return self.error(
                    "metadata",
                    "`metadata` must be a map of strings to strings".into(),
                )
            }
        };
        for (k, v) in entries {
            let engine_map = SKILLPM_METADATA_MAPS.contains(&k.as_str()) && v.is_object();
            if v.is_string() || (engine_map && self.dialect.reads_skillpm_keys()) {
                continue;
            }
            let hint = match v {
                Value::Object(_) | Value::Array(_) if engine_map => {
                    "; skillpm reads it: pass `--dialect skillpm` to allow it"
                }
                Value::Object(_) | Value::Array(_) => " (metadata maps strings to strings)",
                _ => "; quote it, YAML reads it as a number, boolean or null",
            };
            self.error("metadata", format!("`metadata.{k}` must be a string{hint}"));
        }
    }

    fn version(&mut self) {
        match self.doc.frontmatter.get("version") {
            None => {}
            Some(Value::String(v)) => {
                if let Err(e) = semver::Version::parse(v) {
                    self.error(
                        "version",
                        format!("`version` {v:?} is not valid semver: {e}"),
                    );
                }
            }
            Some(v) => self.error(
                "version",
                format!("`version` {v} must be a quoted semver string such as \"1.0.0\""),
            ),
        }
    }

    /// `always` and `user_invocable_only`, at the top level and in agent
    /// blocks, must be real booleans: under YAML 1.2 `yes` and `on` are
    /// strings, which the engine does not read as true.
    fn flags(&mut self) {
        let fm = &self.doc.frontmatter;
        let blocks = fm
            .iter()
            .filter(|(k, _)| skill::is_tool_block(fm, k))
            .filter_map(|(k, v)| Some((format!("{k}."), k.as_str(), v.as_object()?)));
        let top = std::iter::once((String::new(), "", fm));
        let mut bad = Vec::new();
        for (prefix, key, map) in top.chain(blocks) {
            for flag in ["always", "user_invocable_only"] {
                if map.get(flag).is_some_and(|v| !v.is_boolean()) {
                    let at = if key.is_empty() { flag } else { key };
                    bad.push((at.to_string(), format!("{prefix}{flag}")));
                }
            }
        }
        for (at, path) in bad {
            self.strict(
                &at,
                format!(
                    "`{path}` must be true or false (YAML 1.2 reads `yes` and `on` as strings)"
                ),
            );
        }
    }

    fn repaired_yaml(&mut self) {
        for &line in &self.doc.repaired_lines {
            self.out.push((
                Some(line),
                self.dialect.strict(),
                "invalid YAML: unquoted `: ` inside a value; quote the whole value \
                 (skillpm's loader recovers it, other clients may not)"
                    .into(),
            ));
        }
    }
}

/// Checks a parsed document against the Agent Skills rules. `dir_name` is
/// the directory the skill lives in (its `name` must equal it), or `None`
/// when the directory name is not meaningful (a tarball's root). Findings
/// are sorted by line.
pub fn check_doc(doc: &SkillDoc, dir_name: Option<&str>, dialect: Dialect) -> Vec<Finding> {
    let mut c = Checker {
        doc,
        dialect,
        out: Vec::new(),
    };
    c.repaired_yaml();
    c.name(dir_name);
    c.description();
    c.keys();
    c.compatibility();
    c.allowed_tools();
    c.license();
    c.metadata();
    if dialect.reads_skillpm_keys() {
        c.version();
        c.flags();
    }
    c.out.sort();
    c.out
}

fn error_finding(e: &SkillError) -> Finding {
    let message = match e {
        // The cap protects the engine's memory; the specification sets none.
        SkillError::TooLarge { size } => format!(
            "SKILL.md is {size} bytes; skillpm's safety limit is {MAX_SKILL_MD_BYTES} bytes (not a spec rule)"
        ),
        e => e.to_string(),
    };
    (e.line(), Severity::Error, message)
}

/// The name a directory has where the user reached it. Through a symlink
/// that is the link's name, the one an agent sees (and the reference
/// validator checks); only `.`, `..` and `` need resolving.
fn dir_name(dir: &Path) -> Option<String> {
    let resolved;
    let named = match dir.file_name() {
        Some(n) => n,
        None => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            resolved = dir.canonicalize().ok()?;
            resolved.file_name()?
        }
    };
    Some(named.to_string_lossy().into_owned())
}

/// Every character of `text` that is not shown as is to a reader or a
/// model ([`crate::text::must_escape`]: controls, bidi overrides, tag
/// characters, zero-width and other invisible characters), each an error
/// with its line and code point. A byte-order mark at the very start is
/// an encoding mark, not text.
pub fn check_hidden(text: &str) -> Vec<Finding> {
    let lines = crate::text::LineIndex::new(text);
    crate::text::escaped_chars(text)
        .filter(|&(at, c)| !(at == 0 && c == '\u{feff}'))
        .map(|(at, c)| {
            let what = if crate::text::is_invisible_char(c) {
                "an invisible character"
            } else {
                "a control or bidi character"
            };
            let message = format!(
                "U+{:04X} is {what}: text a reader does not see can still instruct a model \
                 (`load`, `prompt` and MCP show it escaped)",
                c as u32
            );
            (Some(lines.line(at)), Severity::Error, message)
        })
        .collect()
}

/// Validates one `SKILL.md` file; its parent directory names the skill.
pub fn validate_skill_file(file: &Path, dialect: Dialect) -> Vec<Violation> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let bytes = skill::read_bytes(file);
    let mut findings = match bytes
        .as_deref()
        .map_err(Clone::clone)
        .and_then(skill::parse)
    {
        Ok(doc) => check_doc(&doc, dir_name(dir).as_deref(), dialect),
        Err(e) => vec![error_finding(&e)],
    };
    if let Some(text) = bytes
        .as_deref()
        .ok()
        .and_then(|b| std::str::from_utf8(b).ok())
    {
        findings.extend(check_hidden(text));
        findings.sort();
    }
    findings
        .into_iter()
        .map(|(line, severity, message)| Violation {
            file: file.to_path_buf(),
            line,
            severity,
            message,
        })
        .collect()
}

/// Validates one skill directory.
pub fn validate_skill_dir(dir: &Path, dialect: Dialect) -> Vec<Violation> {
    let file = skill::find_skill_file(dir).unwrap_or_else(|| dir.join(skill::SKILL_FILES[0]));
    validate_skill_file(&file, dialect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(frontmatter: &str) -> SkillDoc {
        skill::parse(format!("---\n{frontmatter}\n---\nbody\n").as_bytes()).unwrap()
    }

    fn errors(f: &[Finding]) -> Vec<(Option<usize>, &str)> {
        f.iter()
            .filter(|x| x.1 == Severity::Error)
            .map(|x| (x.0, x.2.as_str()))
            .collect()
    }

    #[test]
    fn reports_every_violation_with_lines() {
        let d = doc(&format!(
            "name: Bad--Name\ndescription: {}\ncompatibility: ok\nmetadata:\n  a: {{b: c}}\nversion: \"1.x\"\nfoo: bar",
            "d".repeat(1100)
        ));
        let f = check_doc(&d, Some("bad-name"), Dialect::Skillpm);
        let lines: Vec<_> = errors(&f).iter().map(|x| x.0).collect();
        assert_eq!(
            lines,
            [Some(2), Some(2), Some(3), Some(5), Some(7), Some(8)],
            "{f:?}"
        );
    }

    #[test]
    fn clean_skill_passes() {
        let d = doc("name: good\ndescription: fine\nlicense: MIT\ncompatibility: git\nallowed-tools: Read Bash(git:*)\nmetadata:\n  version: \"1.0\"");
        assert!(check_doc(&d, Some("good"), Dialect::AgentSkills).is_empty());
    }

    #[test]
    fn unknown_keys_are_errors_unless_the_dialect_reads_them() {
        let d = doc("name: a\ndescription: d\nversion: \"1.0.0\"\nsven:\n  requires_bins: [git]\nhomepage: x\nmetadata:\n  openclaw: {always: true}");
        let strict = check_doc(&d, Some("a"), Dialect::AgentSkills);
        let e = errors(&strict);
        assert_eq!(
            e.iter().map(|x| x.0).collect::<Vec<_>>(),
            [Some(4), Some(5), Some(7), Some(8)],
            "{strict:?}"
        );
        assert!(e[0].1.contains("`version`") && e[0].1.contains("--dialect skillpm"));
        assert!(e[2].1.contains("`homepage`") && e[2].1.contains("under `metadata`"));
        assert!(e[3].1.contains("`metadata.openclaw`"));

        let skillpm = check_doc(&d, Some("a"), Dialect::Skillpm);
        assert_eq!(errors(&skillpm), [(Some(7), e[2].1)]);

        let registry = check_doc(&d, Some("a"), Dialect::Registry);
        assert!(errors(&registry).is_empty(), "{registry:?}");
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn repaired_yaml_is_an_error_with_its_line() {
        let d = doc("name: a\ndescription: Use when: you need it");
        let f = check_doc(&d, Some("a"), Dialect::AgentSkills);
        assert_eq!(errors(&f).len(), 1, "{f:?}");
        assert_eq!(f[0].0, Some(3));
        assert!(f[0].2.starts_with("invalid YAML"));
        let f = check_doc(&d, Some("a"), Dialect::Registry);
        assert_eq!(f[0].1, Severity::Warning);
    }

    #[test]
    fn compatibility_and_allowed_tools_follow_the_spec() {
        let d = doc("name: a\ndescription: d\ncompatibility: \"\"\nallowed-tools:\n  - Read\n  - Bash(git:*)");
        let f = check_doc(&d, Some("a"), Dialect::AgentSkills);
        let e = errors(&f);
        assert_eq!(e.len(), 2, "{f:?}");
        assert!(e[0].1.contains("`compatibility` is empty"), "{e:?}");
        assert!(
            e[1].1.contains("`allowed-tools: Read Bash(git:*)`"),
            "{e:?}"
        );
        let long = format!(
            "name: a\ndescription: d\nallowed-tools: [{}]",
            "Read, ".repeat(100)
        );
        let f = check_doc(&doc(&long), Some("a"), Dialect::AgentSkills);
        assert!(
            f[0].2.ends_with("`allowed-tools: Read Bash(git:*)`"),
            "{f:?}"
        );
        let d = doc(&format!(
            "name: a\ndescription: d\ncompatibility: {}",
            "c".repeat(501)
        ));
        let f = check_doc(&d, Some("a"), Dialect::Registry);
        assert_eq!(errors(&f).len(), 1, "{f:?}");
    }

    #[test]
    fn flags_must_be_booleans_in_the_skillpm_dialect() {
        let d = doc("name: a\ndescription: d\nalways: yes\nsven:\n  user_invocable_only: on");
        let f = check_doc(&d, Some("a"), Dialect::Skillpm);
        let e = errors(&f);
        assert_eq!(e.len(), 2, "{f:?}");
        assert!(e[0].1.starts_with("`always`"));
        assert!(e[1].1.starts_with("`sven.user_invocable_only`"));
    }

    #[test]
    fn size_cap_is_reported_as_skillpms_own_limit() {
        let (_, _, m) = error_finding(&SkillError::TooLarge { size: 300_000 });
        assert_eq!(
            m,
            "SKILL.md is 300000 bytes; skillpm's safety limit is 262144 bytes (not a spec rule)"
        );
    }
}
