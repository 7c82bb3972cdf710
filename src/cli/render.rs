//! Turns command results into the text the CLI prints: one place for the
//! human layouts and the `--json` forms.

use skillpm::engine::catalog;
use skillpm::engine::validate::{Severity, Violation};
use skillpm::ops::{OutdatedRow, VerifyIssue};
use skillpm::protocol::{IndexFile, SearchResults};

/// Rows as pretty JSON, or one formatted line each after an optional header.
pub fn rows<T: serde::Serialize>(
    json: bool,
    rows: &[T],
    header: Option<String>,
    line: impl Fn(&T) -> String,
) -> anyhow::Result<String> {
    Ok(if json {
        format!("{}\n", serde_json::to_string_pretty(rows)?)
    } else {
        header.into_iter().chain(rows.iter().map(line)).collect()
    })
}

pub fn outdated(json: bool, r: &[OutdatedRow]) -> anyhow::Result<String> {
    let line = |a: &str, b: &str, c: &str, d: &str| format!("{a:<32} {b:<12} {c:<12} {d:<12}\n");
    let header = line("name", "current", "wanted", "latest");
    rows(json, r, Some(header), |r| {
        line(&r.name, &r.current, &r.wanted, &r.latest)
    })
}

pub fn verify(issues: &[VerifyIssue]) -> String {
    issues
        .iter()
        .map(|i| format!("{} ({}): {}\n", i.skill, i.root, i.problem))
        .collect()
}

/// Every violation, then `ok: no errors` unless quiet or there were errors.
/// Returns the text and the number of errors.
pub fn violations(all: &[Violation], quiet: bool) -> (String, usize) {
    let errors = all.iter().filter(|v| v.severity == Severity::Error).count();
    let mut s: String = all.iter().map(|v| format!("{v}\n")).collect();
    if errors == 0 && !quiet {
        s.push_str("ok: no errors\n");
    }
    (s, errors)
}

pub fn search(r: &SearchResults, quiet: bool) -> String {
    let mut s: String = r
        .skills
        .iter()
        .map(|h| {
            format!(
                "{} {}  {}\n",
                h.name,
                h.max_version,
                catalog::one_line(&h.description, 80)
            )
        })
        .collect();
    if !quiet {
        s.push_str(&format!("({} of {} shown)\n", r.skills.len(), r.meta.total));
    }
    s
}

pub fn info(index: &IndexFile, json: bool) -> anyhow::Result<String> {
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(index)?));
    }
    let mut s = format!("{}\n", index.name);
    if let Some(latest) = index.versions.iter().rfind(|v| !v.yanked) {
        s.push_str(&format!(
            "{}\n",
            catalog::one_line(&latest.description, 200)
        ));
        if !latest.requires.is_empty() {
            s.push_str(&format!(
                "requires: {}\n",
                serde_json::Value::Object(latest.requires.clone())
            ));
        }
    }
    s.push_str("versions:\n");
    for v in &index.versions {
        let y = if v.yanked { "  (yanked)" } else { "" };
        s.push_str(&format!("  {}  {}{y}\n", v.vers, v.cksum));
    }
    Ok(s)
}
