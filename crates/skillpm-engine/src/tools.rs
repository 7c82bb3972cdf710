//! Tool references: which host tools a skill relies on, and what happens
//! when the host does not offer them.
//!
//! Two frontmatter forms are read and merged: the Agent Skills
//! specification's `allowed-tools`, a space-separated string such as
//! `Bash(git add:*) Read Grep` (a YAML list is accepted too; parentheses
//! may hold spaces), and `tools: [...]`, whose items are names or
//! `{name, purpose, required}` maps (`required` defaults to true). An
//! `allowed-tools` entry names the tool before its `(`; every such entry is
//! required. Names are compared case-insensitively (`read` is `Read`).
//!
//! The host's tools come from `status --tools a,b,c` or `[engine] tools`;
//! when neither is given nothing is checked. The policy is
//! `[engine] tool_validation` (default `warn`), which a skill may override
//! with its own `toolValidation`:
//! - `strict`: a skill missing a required tool is skipped, `missing-tool`;
//! - `warn`: it stays eligible, with a warning naming the missing tools;
//! - `ignore`: nothing is checked.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// At most this many tool references are read per skill.
pub const MAX_TOOLS: usize = 128;

/// What to do when a skill names a tool the host does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolValidation {
    Strict,
    #[default]
    Warn,
    Ignore,
}

impl ToolValidation {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "strict" => Some(Self::Strict),
            "warn" => Some(Self::Warn),
            "ignore" => Some(Self::Ignore),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Warn => "warn",
            Self::Ignore => "ignore",
        }
    }
}

/// One tool a skill names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolRef {
    /// The tool's name (`Bash` for `Bash(git:*)`).
    pub name: String,
    /// Why the skill uses it, when `tools:` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    pub required: bool,
}

/// A skill's tool references and its own `toolValidation`, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRefs {
    /// Sorted by lower-cased name, one entry per tool.
    pub tools: Vec<ToolRef>,
    pub validation: Option<ToolValidation>,
}

impl ToolRefs {
    /// Reads `allowed-tools`, `tools` and `toolValidation`. Returns the
    /// references and warnings for shapes that were ignored.
    pub fn from_frontmatter(fm: &Map<String, Value>) -> (ToolRefs, Vec<String>) {
        let mut refs = Vec::new();
        let mut warnings = Vec::new();
        match fm.get("allowed-tools") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                refs.extend(split_allowed(s).into_iter().map(|n| required(&n)))
            }
            Some(Value::Array(items)) => {
                for i in items {
                    match i.as_str() {
                        Some(s) => refs.extend(split_allowed(s).into_iter().map(|n| required(&n))),
                        None => {
                            warnings.push("allowed-tools: a non-string entry is ignored".into())
                        }
                    }
                }
            }
            Some(_) => warnings.push("allowed-tools: expected a space-separated string".into()),
        }
        match fm.get("tools") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match tool_item(item) {
                        Some(t) => refs.push(t),
                        None => warnings.push(
                            "tools: an entry that is neither a name nor {name, purpose, required} is ignored"
                                .into(),
                        ),
                    }
                }
            }
            Some(Value::String(s)) => {
                refs.extend(split_allowed(s).into_iter().map(|n| required(&n)))
            }
            Some(_) => warnings.push("tools: expected a list".into()),
        }
        let validation = match fm.get("toolValidation") {
            None => None,
            Some(v) => {
                let parsed = v.as_str().and_then(ToolValidation::parse);
                if parsed.is_none() {
                    warnings.push(
                        "toolValidation: expected `strict`, `warn` or `ignore` (ignored)".into(),
                    );
                }
                parsed
            }
        };
        refs.retain(|r| !r.name.is_empty());
        refs.sort_by_cached_key(|r| key(&r.name));
        // One entry per tool: required if any mention requires it, the
        // first purpose given.
        let mut tools: Vec<ToolRef> = Vec::with_capacity(refs.len());
        for r in refs {
            match tools.last_mut() {
                Some(last) if key(&last.name) == key(&r.name) => {
                    last.required |= r.required;
                    if last.purpose.is_none() {
                        last.purpose = r.purpose;
                    }
                }
                _ => tools.push(r),
            }
        }
        if tools.len() > MAX_TOOLS {
            warnings.push(format!("only the first {MAX_TOOLS} tools are checked"));
            tools.truncate(MAX_TOOLS);
        }
        (ToolRefs { tools, validation }, warnings)
    }

    /// The required tools `host` lacks, in order.
    pub fn missing<'a>(&'a self, host: &'a HostTools) -> impl Iterator<Item = &'a ToolRef> + 'a {
        self.tools
            .iter()
            .filter(move |t| t.required && !host.has(&t.name))
    }
}

fn key(name: &str) -> String {
    name.to_lowercase()
}

fn required(name: &str) -> ToolRef {
    ToolRef {
        name: name.to_string(),
        purpose: None,
        required: true,
    }
}

fn tool_item(v: &Value) -> Option<ToolRef> {
    match v {
        Value::String(s) => Some(required(tool_name(s))),
        Value::Object(m) => {
            let name = m.get("name")?.as_str()?;
            Some(ToolRef {
                name: tool_name(name).to_string(),
                purpose: m
                    .get("purpose")
                    .and_then(Value::as_str)
                    .map(|p| crate::catalog::one_line(p, 200)),
                required: !matches!(m.get("required"), Some(Value::Bool(false))),
            })
        }
        _ => None,
    }
}

/// `Bash(git:*)` names `Bash`.
fn tool_name(entry: &str) -> &str {
    let e = entry.trim();
    e.split('(').next().unwrap_or(e).trim()
}

/// Splits an `allowed-tools` string on whitespace outside parentheses and
/// returns each entry's tool name.
fn split_allowed(s: &str) -> Vec<String> {
    split_entries(s)
        .iter()
        .map(|e| tool_name(e).to_string())
        .collect()
}

/// The `allowed-tools` entries as written (`Bash(git add:*)`, `Read`), a
/// string or a list of strings, at most [`MAX_TOOLS`]; what
/// [`crate::authorize`] matches calls against.
pub fn allowed_entries(fm: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = match fm.get("allowed-tools") {
        Some(Value::String(s)) => split_entries(s),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(split_entries)
            .collect(),
        _ => Vec::new(),
    };
    out.truncate(MAX_TOOLS);
    out
}

/// Splits on whitespace outside parentheses.
fn split_entries(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The tools a host offers; lookups ignore case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTools(BTreeSet<String>);

impl HostTools {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        HostTools(
            names
                .into_iter()
                .map(|n| n.as_ref().trim().to_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        )
    }

    pub fn has(&self, tool: &str) -> bool {
        self.0.contains(&tool.to_lowercase())
    }
}

/// The host's tools and what a missing one does; `host: None` checks
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    pub host: Option<HostTools>,
    pub validation: ToolValidation,
}

impl ToolPolicy {
    /// The verdict for one skill's references.
    pub fn check(&self, refs: &ToolRefs) -> Verdict {
        check(refs, self.host.as_ref(), self.validation)
    }

    /// `refs` with their availability on this host.
    pub fn statuses(&self, refs: &ToolRefs) -> Vec<ToolStatus> {
        statuses(refs, self.host.as_ref())
    }
}

/// A tool reference with whether the host has it (`None`: no host tools
/// were given, so nothing is known). This is what `load_skill` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolStatus {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    pub required: bool,
    pub available: Option<bool>,
}

/// `refs` with availability against `host`.
pub fn statuses(refs: &ToolRefs, host: Option<&HostTools>) -> Vec<ToolStatus> {
    refs.tools
        .iter()
        .map(|t| ToolStatus {
            name: t.name.clone(),
            purpose: t.purpose.clone(),
            required: t.required,
            available: host.map(|h| h.has(&t.name)),
        })
        .collect()
}

/// The outcome of checking one skill's tools under a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to say: no host tools, `ignore`, or nothing missing.
    Fine,
    /// `warn`: eligible, with this warning.
    Warn(String),
    /// `strict`: skipped with reason `missing-tool` and this detail.
    Skip(String),
}

/// Checks `refs` against `host` under `default` (the config's mode), which
/// the skill's own `toolValidation` overrides.
pub fn check(refs: &ToolRefs, host: Option<&HostTools>, default: ToolValidation) -> Verdict {
    let Some(host) = host else {
        return Verdict::Fine;
    };
    let mode = refs.validation.unwrap_or(default);
    if mode == ToolValidation::Ignore {
        return Verdict::Fine;
    }
    let missing: Vec<&str> = refs.missing(host).map(|t| t.name.as_str()).collect();
    if missing.is_empty() {
        return Verdict::Fine;
    }
    let list = format!("`{}`", missing.join("`, `"));
    match mode {
        ToolValidation::Strict => Verdict::Skip(format!("the host has no {list}")),
        _ => Verdict::Warn(format!("needs tool(s) the host does not offer: {list}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::frontmatter as fm;

    #[test]
    fn reads_allowed_tools_and_tools_lists() {
        let (r, w) = ToolRefs::from_frontmatter(&fm(
            "allowed-tools: Bash(git add:*) Read  Grep\ntools: [read, {name: WebFetch, purpose: fetch docs, required: false}, {purpose: x}]\ntoolValidation: strict",
        ));
        assert_eq!(w.len(), 1, "{w:?}");
        let names: Vec<_> = r
            .tools
            .iter()
            .map(|t| (t.name.as_str(), t.required))
            .collect();
        assert_eq!(
            names,
            [
                ("Bash", true),
                ("Grep", true),
                ("Read", true),
                ("WebFetch", false)
            ]
        );
        assert_eq!(r.tools[3].purpose.as_deref(), Some("fetch docs"));
        assert_eq!(r.validation, Some(ToolValidation::Strict));
    }

    #[test]
    fn modes_decide_the_verdict() {
        let (r, _) = ToolRefs::from_frontmatter(&fm(
            "allowed-tools: Read Bash\ntools: [{name: Web, required: false}]",
        ));
        let host = HostTools::new(["read"]);
        assert_eq!(check(&r, None, ToolValidation::Strict), Verdict::Fine);
        assert_eq!(
            check(&r, Some(&host), ToolValidation::Strict),
            Verdict::Skip("the host has no `Bash`".into())
        );
        assert!(matches!(
            check(&r, Some(&host), ToolValidation::Warn),
            Verdict::Warn(w) if w.contains("`Bash`") && !w.contains("Web")
        ));
        assert_eq!(
            check(&r, Some(&host), ToolValidation::Ignore),
            Verdict::Fine
        );
        let full = HostTools::new(["READ", "bash"]);
        assert_eq!(
            check(&r, Some(&full), ToolValidation::Strict),
            Verdict::Fine
        );
        // The skill's own toolValidation overrides the host's mode.
        let (mut r2, _) =
            ToolRefs::from_frontmatter(&fm("allowed-tools: Bash\ntoolValidation: ignore"));
        assert_eq!(
            check(&r2, Some(&host), ToolValidation::Strict),
            Verdict::Fine
        );
        r2.validation = Some(ToolValidation::Strict);
        assert!(matches!(
            check(&r2, Some(&host), ToolValidation::Ignore),
            Verdict::Skip(_)
        ));
        let st = statuses(&r, Some(&host));
        assert_eq!(
            st.iter()
                .map(|s| (s.name.as_str(), s.available))
                .collect::<Vec<_>>(),
            [
                ("Bash", Some(false)),
                ("Read", Some(true)),
                ("Web", Some(false))
            ]
        );
    }
}
