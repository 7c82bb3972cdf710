//! `skillpm audit`: the core crate's rules run over installed skills (or
//! the directories given), findings matched against skills.toml's
//! waivers and `--allow`, and the gate `add`, `install` and `update` run
//! on what they are about to install.

use super::Options;
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::{Allow, AuditPolicy};
use crate::project::Project;
use skillpm_core::audit::{self, Context, Finding, Severity};
use std::path::{Path, PathBuf};

/// Most skill directories one `audit PATH` walk looks at.
const MAX_SKILLS: usize = 10_000;
/// How deep below a given directory skills are looked for.
const MAX_DEPTH: usize = 6;

/// One finding and, when it was accepted, why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    #[serde(flatten)]
    pub finding: Finding,
    /// The waiver's reason or `--allow`; `None` if the finding stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waived: Option<String>,
}

/// What the audit found in one skill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkillReport {
    pub skill: String,
    /// The directory scanned, as given or as installed.
    pub path: String,
    pub findings: Vec<Checked>,
}

/// What `audit` found, and the severity it fails on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AuditReport {
    pub fail_on: Severity,
    pub skills: Vec<SkillReport>,
}

impl AuditReport {
    /// Findings that stand (not waived) at or above `fail_on`.
    pub fn failing(&self) -> usize {
        self.standing()
            .filter(|f| f.severity >= self.fail_on)
            .count()
    }

    pub fn standing(&self) -> impl Iterator<Item = &Finding> {
        self.skills
            .iter()
            .flat_map(|s| &s.findings)
            .filter(|c| c.waived.is_none())
            .map(|c| &c.finding)
    }
}

/// The rules a finding is checked against: skills.toml's waivers and the
/// command's `--allow`s.
#[derive(Debug, Clone, Default)]
pub struct Acceptance {
    pub policy: AuditPolicy,
    pub allow: Vec<Allow>,
}

impl Acceptance {
    fn check(&self, skill: &str, finding: Finding) -> Checked {
        let waived = match self.policy.waiver(finding.rule, skill) {
            Some(w) => Some(w.reason.clone()),
            None => self
                .allow
                .iter()
                .find(|a| a.covers(finding.rule, skill))
                .map(|a| format!("allowed by --allow {a}")),
        };
        Checked { finding, waived }
    }
}

/// Scans one skill directory: every finding, checked against `accept`.
pub fn scan(skill: &str, dir: &Path, accept: &Acceptance) -> Result<SkillReport> {
    let findings = audit::scan_dir(dir, &Context::WELL_KNOWN)?;
    Ok(SkillReport {
        skill: skill.to_string(),
        path: dir.display().to_string(),
        findings: findings
            .into_iter()
            // The install marker is skillpm's own file, not the skill's.
            .filter(|f| f.file != crate::MARKER)
            .map(|f| accept.check(skill, f))
            .collect(),
    })
}

/// `skillpm audit [PATH...]`: the given directories (each a skill, or a
/// tree holding skills), or else every skill the project's lock installs.
pub fn audit(
    env: &Environment,
    opts: &Options,
    paths: &[PathBuf],
    allow: &[Allow],
    fail_on: Option<Severity>,
) -> Result<AuditReport> {
    let project = Project::locate(env, opts.global).ok();
    let manifest = match &project {
        Some(p) if p.manifest_path.exists() => Some(p.read_manifest()?),
        _ => None,
    };
    let accept = Acceptance {
        policy: manifest
            .as_ref()
            .map(|m| m.audit.clone())
            .unwrap_or_default(),
        allow: allow.to_vec(),
    };
    let targets: Vec<(String, PathBuf)> = if paths.is_empty() {
        let (Some(project), Some(manifest)) = (&project, &manifest) else {
            return Err(Error::NothingToAudit(
                "no skills.toml here: give the skill directories to audit, or run it in a project"
                    .into(),
            ));
        };
        let lock = project.read_lock()?;
        let root = project.targets(manifest)?.into_iter().next();
        lock.skills
            .iter()
            .filter_map(|s| {
                let dir = root.as_ref()?.join(s.name.as_str());
                dir.is_dir().then(|| (s.name.to_string(), dir))
            })
            .collect()
    } else {
        let mut found = Vec::new();
        for p in paths {
            let before = found.len();
            find_skills(p, MAX_DEPTH, &mut found);
            if found.len() == before {
                return Err(Error::NothingToAudit(format!(
                    "{}: no SKILL.md in it or below it",
                    p.display()
                )));
            }
        }
        found
    };
    let skills = env
        .workers
        .each(&targets, 8, |(name, dir)| scan(name, dir, &accept))
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    Ok(AuditReport {
        fail_on: fail_on.or(accept.policy.fail_on).unwrap_or(Severity::Error),
        skills,
    })
}

/// Skill directories at or below `dir` (not following symlinks), named
/// by their directory, in path order.
fn find_skills(dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    if out.len() >= MAX_SKILLS {
        return;
    }
    if dir.join("SKILL.md").is_file() {
        let name = std::fs::canonicalize(dir)
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        out.push((name, dir.to_path_buf()));
        return;
    }
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        // Hidden directories too (openai/skills keeps its skills in
        // `.system` and `.curated`), but not a repository's own `.git`.
        .filter(|e| e.file_name() != ".git")
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        find_skills(&d, depth - 1, out);
    }
}

/// The install gate: weighs what the audit found in every staged tree
/// (scanned as it was staged). A critical finding that no waiver or
/// `--allow` accepts fails the command (the staged trees are dropped, so
/// nothing is installed and nothing recorded); errors and warnings are
/// reported, one line per skill, and let it go on.
pub(super) fn gate(
    staged: &std::collections::HashMap<skillpm_core::name::SkillName, crate::install::Staged>,
    accept: &Acceptance,
    reporter: &dyn crate::report::Reporter,
) -> Result<()> {
    let mut reports: Vec<SkillReport> = staged
        .iter()
        .map(|(name, s)| SkillReport {
            skill: name.to_string(),
            path: s.path().display().to_string(),
            findings: s
                .findings
                .iter()
                .map(|f| accept.check(name.as_str(), f.clone()))
                .collect(),
        })
        .collect();
    reports.sort_by(|a, b| a.skill.cmp(&b.skill));
    for r in &reports {
        let standing: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|c| c.waived.is_none())
            .map(|c| &c.finding)
            .collect();
        if let Some(f) = standing.iter().find(|f| f.severity == Severity::Critical) {
            let others = standing
                .iter()
                .filter(|g| g.severity == Severity::Critical)
                .count()
                - 1;
            return Err(Error::AuditBlocked {
                skill: r.skill.clone(),
                rule: f.rule,
                file: f.file.clone(),
                line: f.line,
                message: f.message.clone(),
                more: match others {
                    0 => String::new(),
                    n => format!(" (and {n} more critical)"),
                },
            });
        }
    }
    for r in &reports {
        let mut rules: Vec<&str> = r
            .findings
            .iter()
            .filter(|c| c.waived.is_none() && c.finding.severity >= Severity::Warning)
            .map(|c| c.finding.rule)
            .collect();
        rules.sort_unstable();
        rules.dedup();
        if !rules.is_empty() {
            reporter.report(crate::report::Event::Warning {
                message: format!(
                    "audit: {}: {}; `skillpm audit` shows where",
                    r.skill,
                    rules.join(", ")
                ),
            });
        }
    }
    Ok(())
}
