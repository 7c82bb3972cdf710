//! `audit`: one rules engine for what a skill could do to the person who
//! installs it, run by the client before an install (`skillpm audit`) and
//! by the registry when a package is published.
//!
//! A skill is instructions an agent follows plus files it may run, so the
//! rules look for what a reader would not notice and a model would act on:
//! hidden characters and comments, remote code piped into a shell, reads
//! of credentials next to a network call, writes to the agent's own memory
//! and config, things that run without being asked, tool grants broader
//! than the text needs, and names made to pass for well-known skills.
//!
//! Every input is untrusted: files may hold any bytes, be huge, nest deep
//! or be symlinks. The scan is bounded ([`MAX_FILES`] entries, files up to
//! [`MAX_FILE_BYTES`]), never follows a symlink, never panics, and returns
//! its findings in one deterministic order, so a registry and a client that
//! scan the same files say the same thing. It does no I/O beyond reading
//! the directory it is given.
//!
//! [`Severity::Critical`] is meant to block an install, so the critical
//! rules are the ones whose matches are near-certain malice on real
//! public skills (see `examples/audit_corpus.rs` for the calibration).
//!
//! The only statics are the rule table and the compiled patterns (built
//! once, on first use, and shared by every scan); each scan's state lives
//! in its own values.

use serde::Serialize;
use std::fmt;
use std::path::Path;

mod agent_config;
mod autorun;
mod exec;
mod hidden;
mod imitation;
mod pattern;
mod rules;
mod secrets;
mod source;
mod tools;
mod walk;

#[cfg(test)]
mod tests;

pub use rules::RULES;
pub use walk::{MAX_FILES, MAX_FILE_BYTES};

/// Names of widely installed public skills (anthropics/skills,
/// openai/skills, obra/superpowers), for the name-imitation rule: a new
/// skill one or two edits from one of these, or one dressed up as it
/// (`pdf-official`), is worth a second look. The client and the registry
/// pass these as [`Context::known_names`].
pub const WELL_KNOWN_NAMES: &[&str] = &[
    "algorithmic-art",
    "brainstorming",
    "brand-guidelines",
    "canvas-design",
    "claude-api",
    "create-plan",
    "dispatching-parallel-agents",
    "doc-coauthoring",
    "docx",
    "executing-plans",
    "finishing-a-development-branch",
    "frontend-design",
    "gh-address-comments",
    "gh-fix-ci",
    "internal-comms",
    "linear",
    "mcp-builder",
    "notion-knowledge-capture",
    "notion-meeting-intelligence",
    "notion-research-documentation",
    "notion-spec-to-implementation",
    "pdf",
    "pptx",
    "receiving-code-review",
    "requesting-code-review",
    "skill-creator",
    "skill-installer",
    "slack-gif-creator",
    "subagent-driven-development",
    "systematic-debugging",
    "test-driven-development",
    "theme-factory",
    "using-git-worktrees",
    "using-superpowers",
    "verification-before-completion",
    "web-artifacts-builder",
    "webapp-testing",
    "writing-plans",
    "writing-skills",
    "xlsx",
];

/// How much a finding matters. Ordered: `Note` is the lowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Note,
    /// Worth a look before installing.
    Warning,
    /// Very likely harmful or deceptive; installing should need a yes.
    Error,
    /// Matches a known attack; blocks an install.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A severity name that is not one of `note`, `warning`, `error`,
/// `critical`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity `{0}`: expected note, warning, error or critical")]
pub struct ParseSeverityError(pub String);

impl std::str::FromStr for Severity {
    type Err = ParseSeverityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "note" => Ok(Severity::Note),
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            "critical" => Ok(Severity::Critical),
            _ => Err(ParseSeverityError(s.to_string())),
        }
    }
}

/// How sure a rule is that a match means what its title says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        })
    }
}

/// One rule: a stable id (never reused for another meaning), how much a
/// match matters, and what the user can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub confidence: Confidence,
    pub title: &'static str,
    pub help: &'static str,
}

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// One match of one rule in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's id ([`Rule::id`]).
    pub rule: &'static str,
    pub severity: Severity,
    /// The path relative to the skill directory, `/`-separated.
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// The offending text, sanitized ([`crate::text::sanitize`]), at most
    /// about 160 characters of the original.
    pub excerpt: String,
    /// What was found, specifically.
    pub message: String,
}

impl Finding {
    /// A finding of `rule` with no text to quote (a file as a whole).
    pub(crate) fn whole_file(rule: &'static Rule, file: &str, message: String) -> Finding {
        Finding {
            rule: rule.id,
            severity: rule.severity,
            file: file.to_string(),
            line: 1,
            excerpt: String::new(),
            message,
        }
    }
}

/// What the scan is told about the world beyond the skill.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// Well-known skill names a new name must not imitate; may be empty.
    pub known_names: &'a [&'a str],
}

impl Context<'static> {
    /// What the client and the registry scan with, so both say the same:
    /// [`WELL_KNOWN_NAMES`].
    pub const WELL_KNOWN: Context<'static> = Context {
        known_names: WELL_KNOWN_NAMES,
    };
}

/// Why a directory could not be scanned at all. Problems with single
/// files inside it are findings, not errors: one unreadable file must not
/// hide what the others say.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("{}: not a directory", path.display())]
    NotADirectory { path: std::path::PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Scans every file under `dir` (a skill's root), without following
/// symlinks. Findings are sorted by file, line and rule.
pub fn scan_dir(dir: &Path, cx: &Context) -> Result<Vec<Finding>, ScanError> {
    let mut findings = walk::scan(dir, cx)?;
    sort(&mut findings);
    Ok(findings)
}

/// Scans a skill's tree held in memory ([`crate::archive::MemEntry`], as
/// the unpacker keeps what it stages), with the same rules and bounds as
/// [`scan_dir`] on the same tree unpacked. Findings are sorted as
/// [`scan_dir`] sorts them.
pub fn scan_entries(entries: &[crate::archive::MemEntry], cx: &Context) -> Vec<Finding> {
    let mut findings = walk::scan_memory(entries, cx);
    sort(&mut findings);
    findings
}

/// Scans one file's bytes; `rel` is its path relative to the skill root,
/// `/`-separated. The top-level `SKILL.md` also gets the frontmatter rules.
/// Binary content (a NUL in the first 8 KiB) is not read as text.
pub fn scan_file(rel: &str, bytes: &[u8], cx: &Context) -> Vec<Finding> {
    let mut findings = source::scan_bytes(rel, bytes, cx);
    sort(&mut findings);
    findings
}

/// The one order every caller sees: by file, line and rule, then the rest
/// of the finding, so equal keys cannot come out in varying order.
fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (&a.file, a.line, a.rule, &a.message, &a.excerpt)
            .cmp(&(&b.file, b.line, b.rule, &b.message, &b.excerpt))
    });
}
