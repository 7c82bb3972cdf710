//! `skillpm audit`'s outputs: lines for a person, and SARIF 2.1.0 for
//! code-scanning tools (GitHub's, editors' viewers).

use skillpm::audit::{Rule, Severity, RULES};
use skillpm::ops::{AuditReport, Checked};
use std::path::Path;

/// One line per finding (the excerpt below it), then the summary.
pub fn human(report: &AuditReport) -> String {
    let mut out = String::new();
    let mut waived = 0;
    for skill in &report.skills {
        for Checked {
            finding: f,
            waived: why,
        } in &skill.findings
        {
            let label = match why {
                Some(_) => "waived".to_string(),
                None => f.severity.to_string(),
            };
            out.push_str(&format!(
                "{label:<9} {:<28} {}/{}:{}: {}\n",
                f.rule, skill.skill, f.file, f.line, f.message
            ));
            if !f.excerpt.is_empty() {
                out.push_str(&format!("{:<9} | {}\n", "", f.excerpt));
            }
            if let Some(why) = why {
                out.push_str(&format!("{:<9} = {why}\n", ""));
                waived += 1;
            }
        }
    }
    out.push_str(&summary(report, waived));
    out
}

fn summary(report: &AuditReport, waived: usize) -> String {
    let total = report.skills.len();
    let flagged = report
        .skills
        .iter()
        .filter(|s| s.findings.iter().any(|c| c.waived.is_none()))
        .count();
    let counts: Vec<String> = [
        Severity::Critical,
        Severity::Error,
        Severity::Warning,
        Severity::Note,
    ]
    .iter()
    .filter_map(|sev| {
        let n = report.standing().filter(|f| f.severity == *sev).count();
        (n > 0).then(|| format!("{n} {sev}"))
    })
    .collect();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut line = match counts.is_empty() {
        true => format!("No findings in {total} skill{}", plural(total)),
        false => format!(
            "{} in {flagged} of {total} skill{}",
            counts.join(", "),
            plural(total)
        ),
    };
    if waived > 0 {
        line.push_str(&format!("; {waived} waived"));
    }
    line.push('\n');
    line
}

/// SARIF's level for a severity: it has no "critical", so critical
/// findings are errors, told apart by the rule's `severity` property.
fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// The report as a SARIF 2.1.0 log: every rule in the driver, one result
/// per finding, a waived finding with an external suppression carrying
/// its reason. Paths below the working directory are relative to
/// `%SRCROOT%` (the working directory); others are `file:` URIs.
pub fn sarif(report: &AuditReport, cwd: &Path) -> serde_json::Value {
    use serde_json::json;
    let rules: Vec<serde_json::Value> = RULES
        .iter()
        .map(|r: &Rule| {
            json!({
                "id": r.id,
                "shortDescription": { "text": r.title },
                "fullDescription": { "text": r.help },
                "help": { "text": r.help },
                "defaultConfiguration": { "level": level(r.severity) },
                "properties": {
                    "severity": r.severity.as_str(),
                    "confidence": r.confidence.to_string(),
                    "tags": ["security"],
                },
            })
        })
        .collect();
    let mut results = Vec::new();
    for skill in &report.skills {
        for c in &skill.findings {
            let f = &c.finding;
            let index = RULES.iter().position(|r| r.id == f.rule);
            let (uri, base) = location(&Path::new(&skill.path).join(&f.file), cwd);
            let mut artifact = json!({ "uri": uri });
            if let Some(base) = base {
                artifact["uriBaseId"] = json!(base);
            }
            let mut result = json!({
                "ruleId": f.rule,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": { "startLine": f.line.max(1) },
                    },
                }],
                "properties": { "skill": skill.skill, "severity": f.severity.as_str() },
            });
            if let Some(i) = index {
                result["ruleIndex"] = json!(i);
            }
            if !f.excerpt.is_empty() {
                result["locations"][0]["physicalLocation"]["region"]["snippet"] =
                    json!({ "text": f.excerpt });
            }
            if let Some(why) = &c.waived {
                result["suppressions"] = json!([{ "kind": "external", "justification": why }]);
            }
            results.push(result);
        }
    }
    let root = url::Url::from_directory_path(cwd)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| "file:///".into());
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "skillpm",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                },
            },
            "originalUriBaseIds": { "SRCROOT": { "uri": root } },
            "results": results,
        }],
    })
}

/// A file's URI: relative (percent-encoded, against `SRCROOT`) when it is
/// below `cwd`, else absolute.
fn location(file: &Path, cwd: &Path) -> (String, Option<&'static str>) {
    let absolute = match file.is_absolute() {
        true => file.to_path_buf(),
        false => cwd.join(file),
    };
    if let Ok(rel) = absolute.strip_prefix(cwd) {
        let parts: Vec<String> = rel
            .components()
            .map(|c| {
                percent_encoding::utf8_percent_encode(
                    &c.as_os_str().to_string_lossy(),
                    percent_encoding::NON_ALPHANUMERIC,
                )
                .to_string()
            })
            .collect();
        return (parts.join("/"), Some("SRCROOT"));
    }
    match url::Url::from_file_path(&absolute) {
        Ok(u) => (u.to_string(), None),
        Err(()) => (absolute.display().to_string(), None),
    }
}
