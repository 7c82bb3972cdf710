//! The audit's findings as the registry keeps them: one JSON text per
//! version (the `audit` column), written at publish and by `rescan`, read
//! into the index entry's, the search hit's and the well-known entry's
//! summaries.
//!
//! A stored record counts every finding per severity and lists the first
//! [`MAX_LISTED`] (most severe first, then by file, line and rule) with
//! their messages; the excerpts, which quote the package, are not kept.
//! A NULL column is a version never scanned (published before the
//! registry kept findings); `rescan` fills it in.

use serde::{Deserialize, Serialize};
use skillpm_core::audit::{self, Finding};
use skillpm_core::protocol::{AuditCounts, AuditNote, AuditSummary};
use std::path::Path;

/// Findings listed per version; the rest are counted as `omitted`.
pub const MAX_LISTED: usize = 50;

/// Longest file path and message kept, in characters.
const MAX_FILE: usize = 256;
const MAX_MESSAGE: usize = 300;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    #[serde(default)]
    pub counts: AuditCounts,
    #[serde(default)]
    pub findings: Vec<StoredFinding>,
    #[serde(default)]
    pub omitted: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFinding {
    pub rule: String,
    pub severity: String,
    pub file: String,
    pub line: u64,
    #[serde(default)]
    pub message: String,
}

/// Scans an unpacked package with the rules clients use, told the same
/// well-known names. Blocking.
pub fn scan(dir: &Path) -> Result<Vec<Finding>, audit::ScanError> {
    audit::scan_dir(dir, &audit::Context::WELL_KNOWN)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

impl Stored {
    /// The record of `findings` (any order).
    pub fn of(findings: &[Finding]) -> Stored {
        let mut counts = AuditCounts::default();
        for f in findings {
            counts.add(f.severity.as_str());
        }
        let mut sorted: Vec<&Finding> = findings.iter().collect();
        // Stable: scan order (file, line, rule) within a severity.
        sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
        let listed = sorted
            .iter()
            .take(MAX_LISTED)
            .map(|f| StoredFinding {
                rule: f.rule.to_string(),
                severity: f.severity.as_str().to_string(),
                file: cut(&f.file, MAX_FILE),
                line: f.line as u64,
                message: cut(&f.message, MAX_MESSAGE),
            })
            .collect();
        Stored {
            counts,
            findings: listed,
            omitted: findings.len().saturating_sub(MAX_LISTED) as u64,
        }
    }

    /// The column's text.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// A stored column; `None` when NULL or not readable.
    pub fn decode(column: Option<&str>) -> Option<Stored> {
        serde_json::from_str(column?).ok()
    }

    /// What the index and the well-known index serve: `None` when there
    /// is nothing to say.
    pub fn summary(&self) -> Option<AuditSummary> {
        if self.counts.is_empty() {
            return None;
        }
        Some(AuditSummary {
            counts: self.counts,
            findings: self
                .findings
                .iter()
                .map(|f| AuditNote {
                    rule: f.rule.clone(),
                    severity: f.severity.clone(),
                    file: f.file.clone(),
                    line: f.line,
                })
                .collect(),
            omitted: self.omitted,
        })
    }
}

/// The summary of a stored column, for the index and the well-known
/// index.
pub fn summary(column: Option<&str>) -> Option<AuditSummary> {
    Stored::decode(column)?.summary()
}

/// The counts of a stored column, for search hits.
pub fn counts(column: Option<&str>) -> Option<AuditCounts> {
    Stored::decode(column)
        .map(|s| s.counts)
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillpm_core::audit::Severity;

    fn finding(rule: &'static str, severity: Severity, line: usize) -> Finding {
        Finding {
            rule,
            severity,
            file: "SKILL.md".into(),
            line,
            excerpt: "quoted".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn caps_the_list_most_severe_first_and_counts_all() {
        let mut all: Vec<Finding> = (1..=60)
            .map(|l| finding("concealment", Severity::Warning, l))
            .collect();
        all.push(finding("pipe-to-shell", Severity::Error, 99));
        let s = Stored::of(&all);
        assert_eq!(s.counts.warning, 60);
        assert_eq!(s.counts.error, 1);
        assert_eq!(s.findings.len(), MAX_LISTED);
        assert_eq!(s.findings[0].rule, "pipe-to-shell");
        assert_eq!(s.omitted, 11);
        let back = Stored::decode(Some(&s.encode())).unwrap();
        assert_eq!(back, s);
        assert!(!s.encode().contains("quoted"));
    }

    #[test]
    fn clean_is_stored_but_not_served() {
        let s = Stored::of(&[]);
        assert_eq!(summary(Some(&s.encode())), None);
        assert_eq!(counts(Some(&s.encode())), None);
        assert_eq!(summary(None), None);
        assert_eq!(summary(Some("not json")), None);
    }
}
