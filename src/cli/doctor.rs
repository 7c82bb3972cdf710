//! `skillpm doctor`: prints the checkup ([`skillpm::ops::doctor`]), and with
//! `--fix` shows the exact steps, asks, runs them and prints what each
//! did and how the skills stand afterwards.

use super::output::{print, Exit};
use super::render;
use anyhow::Result;
use serde_json::{json, Value};
use skillpm::engine::config::Environment;
use skillpm::engine::installers::{Archive, Fit, How, Offer, Step};
use skillpm::ops::{self, Checkup, Diagnosis, DoctorError, FixOptions, Fixed};
use skillpm_core::text::sanitize;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// What `doctor` was asked.
pub struct Request<'a> {
    pub skills: &'a [String],
    pub json: bool,
    pub fix: bool,
    pub yes: bool,
    pub allow_unverified: bool,
}

pub fn run(env: &Environment, req: &Request) -> Result<ExitCode> {
    let tools = ops::tools_dir(env).ok_or(skillpm::error::Error::from(DoctorError::NoToolsDir))?;
    let checkup = ops::doctor(env, req.skills, &tools).map_err(|e| match e {
        skillpm::error::Error::Doctor(d) if matches!(*d, DoctorError::Unknown(_)) => {
            Exit(1, d.to_string()).into()
        }
        e => anyhow::Error::from(e),
    })?;
    if !req.fix {
        match req.json {
            true => print(&render::json(&json!({
                "tools_dir": checkup.tools_dir,
                "skills": skills_json(&checkup),
            }))?)?,
            false => print(&report(&checkup))?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let steps = checkup.steps().count();
    if steps == 0 {
        let text = report(&checkup);
        match req.json {
            true => print(&render::json(&fixed_json(&checkup, None))?)?,
            false => print(&format!("{text}Nothing to run.\n"))?,
        }
        let all_eligible = checkup.skills.iter().all(|d| d.reason.is_none());
        return Ok(exit(all_eligible));
    }
    // The plan goes to stderr under --json, so stdout stays one document.
    let plan = report(&checkup);
    match req.json {
        true => super::output::eprint_line(plan.trim_end()),
        false => print(&plan)?,
    }
    if !req.yes && !confirm(steps)? {
        return Err(Exit(1, "nothing was run".into()).into());
    }
    let fixed = ops::fix(
        env,
        &checkup,
        &FixOptions {
            allow_unverified: req.allow_unverified,
        },
    )?;
    let ok = fixed.steps.iter().all(|s| s.outcome.is_ok())
        && fixed.after.skills.iter().all(|d| d.reason.is_none());
    match req.json {
        true => print(&render::json(&fixed_json(&checkup, Some(&fixed)))?)?,
        false => print(&outcome(&fixed))?,
    }
    Ok(exit(ok))
}

fn exit(ok: bool) -> ExitCode {
    match ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// Asks on the terminal; without one, refuses rather than guess.
fn confirm(steps: usize) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Err(Exit(
            2,
            "doctor --fix asks before it runs anything, and stdin is not a terminal; pass \
             --yes to run the steps above"
                .into(),
        )
        .into());
    }
    let plural = if steps == 1 { "" } else { "s" };
    eprint!("Run the {steps} step{plural} marked `will run`? [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The human report: per skill, what it lacks and each declared way.
fn report(c: &Checkup) -> String {
    if c.skills.is_empty() {
        return "Every skill is eligible on this machine.\n".into();
    }
    let mut out = String::new();
    for d in &c.skills {
        let Some(reason) = &d.reason else {
            out.push_str(&format!("{}: eligible\n", d.skill));
            continue;
        };
        out.push_str(&format!("{}: {}\n", d.skill, sanitize(&reason.detail)));
        for b in &d.off_path {
            out.push_str(&format!(
                "  `{b}` is in {}, which is not on PATH\n",
                c.tools_dir.join("bin").display()
            ));
        }
        if reason.code == "missing-bin" && d.offers.is_empty() {
            out.push_str("  the skill declares no way to install it that fits this machine\n");
        }
        for (i, o) in d.offers.iter().enumerate() {
            let mark = match (&o.fit, d.chosen.contains(&i)) {
                (Fit::Ready, true) => "will run",
                (Fit::Ready, false) => "also    ",
                (Fit::Unavailable(_), _) => "not here",
                (Fit::Refused(_), _) => "refused ",
            };
            out.push_str(&format!(
                "  {mark}  {}\n",
                shown(o, &d.pinned, &c.tools_dir)
            ));
            let why = match &o.fit {
                Fit::Ready => None,
                Fit::Unavailable(w) | Fit::Refused(w) => Some(w),
            };
            out.push_str(&format!(
                "            {}{}\n",
                one_line(&o.installer.label),
                why.map(|w| format!(": {}", one_line(w)))
                    .unwrap_or_default()
            ));
        }
    }
    let steps = c.steps().count();
    if steps > 0 {
        let plural = if steps == 1 { "" } else { "s" };
        out.push_str(&format!(
            "`skillpm doctor --fix` runs the {steps} step{plural} marked `will run`.\n"
        ));
    }
    out
}

/// One step as a command line (or the download it makes).
fn shown(o: &Offer, pinned: &[(String, String)], tools: &Path) -> String {
    match &o.installer.how {
        How::Run(Step::Download {
            url,
            sha256,
            archive,
        }) => {
            let locked = pinned.iter().find(|(u, _)| u == url).map(|(_, s)| s);
            let check = match (sha256, locked) {
                (Some(s), _) => format!("sha256 {}", &s[..12]),
                (None, Some(s)) => format!("sha256 {} from skills.lock", &s[..12]),
                (None, None) => "no sha256 declared: runs only with --allow-unverified".into(),
            };
            let from = match archive {
                Some(Archive::TarGz) => " (from its tar.gz)",
                None => "",
            };
            format!(
                "download {} -> {}{from} [{check}]",
                sanitize(url),
                o.installer
                    .bins
                    .iter()
                    .map(|b| tools.join("bin").join(b).display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        How::Run(step) => ops::invocation(step, tools)
            .map(|i| i.shown())
            .unwrap_or_default(),
        How::Refused { kind, .. } => match &o.installer.command {
            Some(c) => format!("{}: {}", sanitize(kind), one_line(c)),
            None => sanitize(kind).into_owned(),
        },
    }
}

/// Text from a skill (or a step's outcome, which quotes it) on one
/// line, cut at `OUTCOME_WIDTH` characters: hashes and URLs fit whole.
fn one_line(s: &str) -> String {
    skillpm::engine::catalog::one_line(&sanitize(s), OUTCOME_WIDTH)
}

const OUTCOME_WIDTH: usize = 400;

/// What `--fix` did, then how each skill stands.
fn outcome(f: &Fixed) -> String {
    let mut out = String::new();
    for s in &f.steps {
        match &s.outcome {
            Ok(what) => out.push_str(&format!("ok      {}: {}\n", s.skill, one_line(what))),
            Err(why) => out.push_str(&format!("failed  {}: {}\n", s.skill, one_line(why))),
        }
    }
    let bin = f.after.tools_dir.join("bin");
    for d in &f.after.skills {
        match &d.reason {
            None if !f.bin_on_path => out.push_str(&format!(
                "{}: eligible once {} is on PATH\n",
                d.skill,
                bin.display()
            )),
            None => out.push_str(&format!("{}: eligible\n", d.skill)),
            Some(r) => out.push_str(&format!(
                "{}: still not eligible: {}\n",
                d.skill,
                sanitize(&r.detail)
            )),
        }
    }
    if !f.bin_on_path && f.steps.iter().any(|s| s.outcome.is_ok()) {
        out.push_str(&format!(
            "Add {} to PATH so agents find the tools installed there.\n",
            bin.display()
        ));
    }
    out
}

fn skills_json(c: &Checkup) -> Vec<Value> {
    c.skills
        .iter()
        .map(|d| skill_json(d, &c.tools_dir))
        .collect()
}

fn skill_json(d: &Diagnosis, tools: &Path) -> Value {
    let installers: Vec<Value> = d
        .offers
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (fit, why) = match &o.fit {
                Fit::Ready => ("ready", None),
                Fit::Unavailable(w) => ("unavailable", Some(w)),
                Fit::Refused(w) => ("refused", Some(w)),
            };
            let (kind, run) = match &o.installer.how {
                How::Run(Step::Download {
                    url,
                    sha256,
                    archive,
                }) => (
                    "download".to_string(),
                    json!({"download": {"url": url, "sha256": sha256,
                        "locked_sha256": d.pinned.iter().find(|(u, _)| u == url).map(|(_, s)| s),
                        "archive": archive.map(|_| "tar.gz")}}),
                ),
                How::Run(step) => {
                    let inv = ops::invocation(step, tools);
                    let kind = step.manager().map(|m| m.program()).unwrap_or_default();
                    let argv = inv.map(|i| {
                        let mut v = vec![i.program.to_string()];
                        v.extend(i.args);
                        v
                    });
                    (kind.to_string(), json!({ "argv": argv }))
                }
                How::Refused { kind, .. } => {
                    (kind.clone(), json!({"command": o.installer.command}))
                }
            };
            let mut v = json!({
                "label": o.installer.label,
                "kind": kind,
                "bins": o.installer.bins,
                "fit": fit,
                "why": why,
                "chosen": d.chosen.contains(&i),
            });
            if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), run) {
                obj.extend(extra);
            }
            v
        })
        .collect();
    json!({
        "skill": d.skill,
        "path": d.path,
        "eligible": d.reason.is_none(),
        "reason": d.reason,
        "missing": d.missing,
        "off_path": d.off_path,
        "installers": installers,
    })
}

fn fixed_json(c: &Checkup, f: Option<&Fixed>) -> Value {
    let steps: Vec<Value> = f
        .map(|f| {
            f.steps
                .iter()
                .map(|s| {
                    let (ok, detail) = match &s.outcome {
                        Ok(d) => (true, d),
                        Err(d) => (false, d),
                    };
                    json!({"skill": s.skill, "label": s.label, "ok": ok, "detail": detail})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "tools_dir": c.tools_dir,
        "skills": skills_json(c),
        "steps": steps,
        "after": f.map(|f| skills_json(&f.after)).unwrap_or_else(|| skills_json(c)),
        "bin_on_path": f.map(|f| f.bin_on_path),
    })
}
