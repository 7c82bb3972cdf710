//! Turns command results into the text the CLI prints: one place for the
//! human layouts and the `--json` forms.
//!
//! Everything printed passes through [`text::sanitize`] (in `main`'s
//! `print`, its error line and `note`, and the progress reporter), so text
//! from a `SKILL.md`, a registry or git never reaches the terminal with its
//! control characters. The two forms that need more care are here: colour
//! is added after sanitizing ([`paint`]), and JSON escapes those characters
//! itself ([`json`]) so it stays valid JSON.

use skillpm::engine::catalog::{self, Styled, Tone};
use skillpm::engine::validate::{Severity, Violation};
use skillpm::ops::{self, OutdatedRow, TreeLine, VerifyIssue};
use skillpm::protocol::{IndexFile, SearchResults};
use skillpm_core::name::SkillName;
use skillpm_core::text;
use std::fmt::Write;

/// Pretty JSON and a newline. serde escapes C0 controls but writes DEL,
/// C1 controls, bidi overrides and invisible characters raw; they can only
/// occur inside strings, where `\uXXXX` (a surrogate pair above U+FFFF) is
/// the same value, so they are escaped that way instead of by
/// [`text::sanitize`], whose `\x1b` form is not valid JSON.
pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> anyhow::Result<String> {
    let raw = serde_json::to_string_pretty(v)?;
    let mut out = String::with_capacity(raw.len() + 1);
    let mut prev = None;
    for c in raw.chars() {
        if text::must_escape(prev, c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{:04x}", unit);
            }
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out.push('\n');
    Ok(out)
}

/// `styled` as terminal text: each run sanitized, then wrapped in its ANSI
/// colour when `color` is set, so the only escapes in the result are ours.
pub fn paint(styled: &Styled, color: bool) -> String {
    let mut out = String::new();
    for (tone, run) in &styled.0 {
        let run = text::sanitize(run);
        let code = match tone {
            Tone::Plain => None,
            Tone::Green => Some("32"),
            Tone::Yellow => Some("33"),
            Tone::Dim => Some("2"),
            Tone::Red => Some("31"),
        };
        match code.filter(|_| color) {
            Some(code) => {
                let _ = write!(out, "\x1b[{code}m{run}\x1b[0m");
            }
            None => out.push_str(&run),
        }
    }
    out
}

/// Rows as pretty JSON, or one formatted line each after an optional header.
pub fn rows<T: serde::Serialize>(
    json: bool,
    rows: &[T],
    header: Option<String>,
    line: impl Fn(&T) -> String,
) -> anyhow::Result<String> {
    Ok(if json {
        self::json(rows)?
    } else {
        header.into_iter().chain(rows.iter().map(line)).collect()
    })
}

/// `tree`: one skill per line under its parent, drawn as `cargo tree`
/// draws; `(*)` marks a skill whose dependencies were shown above.
pub fn tree(lines: &[TreeLine]) -> String {
    let mut out = String::new();
    for l in lines {
        for (i, last) in l.last.iter().enumerate().skip(1) {
            let at_end = i + 1 == l.last.len();
            out.push_str(match (at_end, last) {
                (true, true) => "└── ",
                (true, false) => "├── ",
                (false, true) => "    ",
                (false, false) => "│   ",
            });
        }
        let mark = if l.repeated { " (*)" } else { "" };
        out.push_str(&format!("{} {} ({}){mark}\n", l.name, l.version, l.source));
    }
    out
}

/// `why`: each chain from skills.toml, one per line.
pub fn why(chains: &[Vec<SkillName>]) -> String {
    chains
        .iter()
        .map(|c| {
            let names: Vec<&str> = c.iter().map(SkillName::as_str).collect();
            format!("skills.toml -> {}\n", names.join(" -> "))
        })
        .collect()
}

pub fn outdated(json: bool, r: &[OutdatedRow]) -> anyhow::Result<String> {
    // Each column as wide as its widest cell (at least the old 32/12/12),
    // so a `(yanked)` mark or a plugin's version never shifts the next.
    let cells = |r: &OutdatedRow| [r.name.clone(), r.current.clone(), r.wanted.clone()];
    let mut widths = [32, 12, 12];
    for row in r {
        for (w, c) in widths.iter_mut().zip(cells(row)) {
            *w = (*w).max(c.chars().count());
        }
    }
    let [n, c, w] = widths;
    let line = |a: &str, b: &str, x: &str, d: &str| {
        format!("{a:<n$} {b:<c$} {x:<w$} {d}")
            .trim_end()
            .to_string()
            + "\n"
    };
    let header = line("name", "current", "wanted", "latest");
    rows(json, r, Some(header), |r| {
        let row = line(&r.name, &r.current, &r.wanted, &r.latest);
        match r.direct {
            true => row,
            false => format!("{}  (dependency)\n", row.trim_end()),
        }
    })
}

pub fn verify(issues: &[VerifyIssue]) -> String {
    issues
        .iter()
        .map(|i| format!("{} ({}): {}\n", i.skill, i.root, i.problem))
        .collect()
}

/// `audit signatures`: one line per locked registry skill, then the
/// totals.
pub fn signatures(a: &ops::SignatureAudit) -> String {
    let mut s = String::new();
    for c in &a.checks {
        let (state, detail) = match &c.signed {
            ops::Signed::Verified {
                keyid,
                pinned: None,
            } => ("verified", format!("key {keyid}")),
            ops::Signed::Verified {
                keyid,
                pinned: Some(p),
            } => (
                "verified",
                format!("key {keyid} (skills.lock records {p}: the registry rotated its keys)"),
            ),
            ops::Signed::Unsigned => ("unsigned", format!("{} does not sign", c.registry)),
            ops::Signed::Failed(why) => ("FAILED", why.clone()),
        };
        s.push_str(&format!("{state:<9} {} {}  {detail}\n", c.name, c.version));
    }
    let verified = a.count(|x| matches!(x, ops::Signed::Verified { .. }));
    let unsigned = a.count(|x| matches!(x, ops::Signed::Unsigned));
    let mut totals = match a.checks.len() {
        0 => "no registry skills in skills.lock".to_string(),
        _ => format!(
            "{verified} verified, {unsigned} unsigned, {} failed",
            a.failed()
        ),
    };
    if a.other > 0 {
        totals.push_str(&format!(
            "; {} not from a registry (git, local or well-known: not checked)",
            a.other
        ));
    }
    s.push_str(&totals);
    s.push('\n');
    s
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
            let audit = match &h.audit {
                Some(c) if !c.is_empty() => format!("  [audit: {}]", c.phrase()),
                _ => String::new(),
            };
            format!(
                "{} {}  {}{audit}\n",
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
        return self::json(index);
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
        if let Some(a) = v.audit.as_ref().filter(|a| !a.counts.is_empty()) {
            s.push_str(&format!("    audit: {}\n", audit_line(a)));
        }
    }
    Ok(s)
}

/// `1 error (pipe-to-shell), 2 warnings (concealment, credential-read)`:
/// the counts per severity, most severe first, each with the distinct
/// rule ids listed at that severity.
fn audit_line(a: &skillpm::protocol::AuditSummary) -> String {
    let mut parts = Vec::new();
    for (sev, many, n) in [
        ("critical", "critical", a.counts.critical),
        ("error", "errors", a.counts.error),
        ("warning", "warnings", a.counts.warning),
        ("note", "notes", a.counts.note),
    ] {
        if n == 0 {
            continue;
        }
        let mut rules: Vec<&str> = Vec::new();
        for f in a.findings.iter().filter(|f| f.severity == sev) {
            if !rules.contains(&f.rule.as_str()) {
                rules.push(&f.rule);
            }
        }
        let listed = if rules.is_empty() {
            String::new()
        } else {
            format!(" ({})", rules.join(", "))
        };
        let word = if n == 1 { sev } else { many };
        parts.push(format!("{n} {word}{listed}"));
    }
    if a.omitted > 0 {
        parts.push(format!("{} more not itemized", a.omitted));
    }
    parts.join(", ")
}

/// One `search --local` result, with what a reader needs to choose.
#[derive(serde::Serialize)]
pub struct LocalHit<'a> {
    pub command: &'a str,
    pub name: &'a str,
    pub score: f64,
    pub kind: &'static str,
    pub fields: &'a [&'static str],
    pub brief: &'a str,
}

/// `search --local`: `{"query", "hits"}` as JSON, or one line per hit
/// (score, kind, command, matched fields, brief description).
pub fn local_search(
    query: &str,
    hits: &[LocalHit],
    json: bool,
    quiet: bool,
) -> anyhow::Result<String> {
    if json {
        return self::json(&serde_json::json!({ "query": query, "hits": hits }));
    }
    let width = hits
        .iter()
        .map(|h| h.command.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut s: String = hits
        .iter()
        .map(|h| {
            format!(
                "{:>7.4}  {:<14} {:<width$}  [{}]  {}\n",
                h.score,
                h.kind,
                h.command,
                h.fields.join(", "),
                catalog::one_line(h.brief, 80)
            )
        })
        .collect();
    if hits.is_empty() && !quiet {
        s.push_str("No local skill matches.\n");
    }
    Ok(s)
}
