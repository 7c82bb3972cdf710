//! skills.toml's `[audit]` table: the severity `skillpm audit` fails on,
//! and the findings a person reviewed and accepted, each with why.
//!
//! ```toml
//! [audit]
//! fail-on = "warning"
//!
//! [audit.waive]
//! "pipe-to-shell@setup-uv" = "reviewed: runs astral.sh's official installer"
//! ```
//!
//! A waiver names one rule for one skill (`RULE@SKILL`), the same form as
//! `--allow`; it covers every finding of that rule in that skill, and
//! needs a reason, which `audit` prints (and SARIF carries) beside the
//! finding it waives.

use super::{wrong_type, Ctx, ManifestError, ManifestErrorKind};
use skillpm_core::audit::{self, Severity};
use skillpm_core::name::SkillName;
use toml_edit::Item;

/// One rule allowed for one skill: a waiver's key, or `--allow`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Allow {
    pub rule: &'static str,
    pub skill: SkillName,
}

impl Allow {
    /// Parses `RULE@SKILL`; the rule must be one the audit has.
    pub fn parse(s: &str) -> Result<Allow, String> {
        let (rule, skill) = s
            .split_once('@')
            .ok_or_else(|| format!("`{s}` is not RULE@SKILL (e.g. pipe-to-shell@setup-uv)"))?;
        let rule = audit::rule(rule)
            .ok_or_else(|| {
                format!("unknown audit rule `{rule}`; the book's security page lists them")
            })?
            .id;
        let skill = SkillName::new(skill).map_err(|e| format!("`{s}`: {e}"))?;
        Ok(Allow { rule, skill })
    }

    pub fn covers(&self, rule: &str, skill: &str) -> bool {
        self.rule == rule && self.skill.as_str() == skill
    }
}

impl std::fmt::Display for Allow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.rule, self.skill)
    }
}

/// A reviewed finding: which rule for which skill, and why it is fine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    pub allow: Allow,
    pub reason: String,
}

/// `[audit]`: nothing set means `audit` fails on errors and nothing is
/// waived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditPolicy {
    pub fail_on: Option<Severity>,
    pub waivers: Vec<Waiver>,
}

impl AuditPolicy {
    /// The waiver for `rule` in `skill`, if any.
    pub fn waiver(&self, rule: &str, skill: &str) -> Option<&Waiver> {
        self.waivers.iter().find(|w| w.allow.covers(rule, skill))
    }
}

const WAIVE: &str = "\"RULE@SKILL\" = \"why it is fine\" entries";

pub(super) fn parse(
    cx: &Ctx<'_>,
    key: &toml_edit::Key,
    item: &Item,
) -> Result<AuditPolicy, ManifestError> {
    let bad = |k: &toml_edit::Key, v: &Item, message: String| {
        cx.at(k, v, ManifestErrorKind::Audit(message))
    };
    let table = item
        .as_table_like()
        .ok_or_else(|| cx.at(key, item, wrong_type("audit".into(), "a table")))?;
    let mut policy = AuditPolicy::default();
    for (name, _) in table.iter() {
        let Some((k, v)) = table.get_key_value(name) else {
            continue;
        };
        match name {
            "fail-on" => {
                let severity = v.as_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
                    cx.at(
                        k,
                        v,
                        wrong_type(
                            "audit.fail-on".into(),
                            "one of \"note\", \"warning\", \"error\", \"critical\"",
                        ),
                    )
                })?;
                policy.fail_on = Some(severity);
            }
            "waive" => {
                let waivers = v
                    .as_table_like()
                    .ok_or_else(|| cx.at(k, v, wrong_type("audit.waive".into(), WAIVE)))?;
                for (entry, _) in waivers.iter() {
                    let Some((wk, wv)) = waivers.get_key_value(entry) else {
                        continue;
                    };
                    let allow = Allow::parse(entry).map_err(|m| bad(wk, wv, m))?;
                    let reason = match wv.as_str().map(str::trim) {
                        Some(r) if !r.is_empty() && !r.chars().any(char::is_control) => r,
                        _ => {
                            return Err(bad(
                                wk,
                                wv,
                                format!("waiver `{entry}` needs a reason: one line saying why the finding is fine"),
                            ))
                        }
                    };
                    policy.waivers.push(Waiver {
                        allow,
                        reason: reason.to_string(),
                    });
                }
            }
            other => {
                return Err(bad(
                    k,
                    v,
                    format!("unknown key `audit.{other}`; expected fail-on or waive"),
                ))
            }
        }
    }
    policy.waivers.sort_by(|a, b| a.allow.cmp(&b.allow));
    Ok(policy)
}
