//! `validate` over a tree: finds every skill below a path and applies the
//! strict Agent Skills rules of [`skillpm_core::validate`] to each.

pub use skillpm_core::validate::*;

use crate::discover::{scan_root_with, Found};
use skillpm_core::skill::SKILL_FILES;
use std::path::Path;

/// How much of a tree to validate, and against which rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub dialect: Dialect,
    /// Also descend into dot-directories, which discovery skips.
    pub hidden: bool,
}

/// What validating one path found.
#[derive(Debug, Default)]
pub struct Report {
    pub violations: Vec<Violation>,
    /// Skills below dot-directories that were left out (their paths
    /// relative to the validated directory), so the CLI can say so: a
    /// collection kept entirely under `.curated/` would otherwise pass
    /// with nothing checked.
    pub hidden_skipped: Vec<String>,
    /// The skill validated alone, if it names no version
    /// (`metadata.version`): valid, but
    /// `skillpm publish` refuses them unless given `--version`, which the
    /// CLI says rather than let `validate` pass what `publish` refuses.
    pub unversioned: Option<std::path::PathBuf>,
}

impl Report {
    /// One line saying which skills `publish` would refuse for want of a
    /// version, if any.
    pub fn version_note(&self) -> Option<String> {
        let first = self.unversioned.as_ref()?;
        Some(format!(
            "note: {} declares no version; to publish, add `version: \"1.0.0\"` \
             under `metadata:` or run `skillpm publish --version 1.0.0`",
            first.display()
        ))
    }

    /// One line naming what `--hidden` would add, if anything was skipped.
    pub fn hidden_note(&self, path: &Path) -> Option<String> {
        if self.hidden_skipped.is_empty() {
            return None;
        }
        let mut tops: Vec<&str> = self
            .hidden_skipped
            .iter()
            .filter_map(|c| c.split('/').find(|part| part.starts_with('.')))
            .collect();
        tops.sort_unstable();
        tops.dedup();
        Some(format!(
            "note: skipped {} skill(s) under dot-directories of {} ({}); pass --hidden to validate them",
            self.hidden_skipped.len(),
            path.display(),
            tops.join(", ")
        ))
    }
}

fn problem(path: &Path, message: &str) -> Report {
    Report {
        violations: vec![Violation {
            file: path.to_path_buf(),
            line: None,
            severity: Severity::Error,
            message: message.to_string(),
        }],
        ..Report::default()
    }
}

fn scan(path: &Path, hidden: bool) -> Vec<Found> {
    let mut found = Vec::new();
    scan_root_with(path, 0, hidden, &mut found);
    found
}

fn is_hidden(command: &str) -> bool {
    command.split('/').any(|part| part.starts_with('.'))
}

/// Validates `path`: a `SKILL.md` file, a skill directory, or a tree of
/// skills.
pub fn validate_path(path: &Path, opts: Options) -> Report {
    let mut report = validate_only(path, opts);
    // Only a skill with no violation: one with any hears about those first.
    report.unversioned = skill_file(path)
        .filter(|f| !report.violations.iter().any(|v| v.file == *f))
        .filter(|f| skillpm_core::skill::read(f).is_ok_and(|d| d.version().is_none()));
    report
}

/// The `SKILL.md` of `path` when it names one skill (the file, or its
/// directory): what one is about to publish. A tree of skills (a
/// collection) is not checked for versions.
fn skill_file(path: &Path) -> Option<std::path::PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    SKILL_FILES
        .iter()
        .map(|f| path.join(f))
        .find(|f| f.is_file())
}

fn validate_only(path: &Path, opts: Options) -> Report {
    let Ok(meta) = std::fs::metadata(path) else {
        return problem(path, "no such file or directory");
    };
    if meta.is_file() {
        let is_skill_md = path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case(SKILL_FILES[0]));
        if !is_skill_md {
            return problem(path, "not a SKILL.md file or a directory of skills");
        }
        return Report {
            violations: validate_skill_file(path, opts.dialect),
            ..Report::default()
        };
    }
    if SKILL_FILES.iter().any(|f| path.join(f).is_file()) {
        return Report {
            violations: validate_skill_dir(path, opts.dialect),
            ..Report::default()
        };
    }
    let found = scan(path, opts.hidden);
    // A second walk, only to tell the user what the first one left out.
    let hidden_skipped = if opts.hidden {
        Vec::new()
    } else {
        scan(path, true)
            .into_iter()
            .map(|f| f.command)
            .filter(|c| is_hidden(c))
            .collect()
    };
    if found.is_empty() {
        let mut report = problem(path, "no SKILL.md found here or below");
        report.hidden_skipped = hidden_skipped;
        return report;
    }
    Report {
        violations: found
            .iter()
            .flat_map(|f| validate_skill_dir(&f.dir, opts.dialect))
            .collect(),
        hidden_skipped,
        ..Report::default()
    }
}
