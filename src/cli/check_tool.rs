//! `skillpm check-tool`: the engine's tool authorization
//! (`engine::authorize`) for one call, answered by exit code (0 allows, 2
//! blocks) and a line, JSON, or a Claude Code `PreToolUse` hook's reply.

use super::output::{eprint_line, print, Exit};
use super::render;
use anyhow::{Context, Result};
use skillpm::engine::authorize::{
    ActiveSkill, Authorization, Decision, Mode, ToolGuard, ToolPattern,
};
use skillpm::engine::catalog::Catalog;
use skillpm::engine::config::Environment;
use skillpm::engine::load::LoadError;
use std::io::Read;
use std::process::ExitCode;

/// A hook's input is one small JSON object; more than this is refused.
const MAX_HOOK_INPUT: u64 = 1024 * 1024;

/// Exit code that makes Claude Code block a tool call.
const BLOCK: u8 = 2;

pub enum Answer {
    Human,
    Json,
    Hook,
}

/// What `check-tool` was asked.
pub struct Request<'a> {
    /// The active skill's command; empty when none is active.
    pub skill: &'a str,
    /// The call; `None` reads it from a hook's input on stdin.
    pub tool: Option<&'a str>,
    pub mode: Mode,
    /// Calls a human approved earlier in the session.
    pub approved: &'a [String],
}

pub fn run(env: &Environment, req: &Request, how: Answer) -> Result<ExitCode> {
    let hook = matches!(how, Answer::Hook);
    let mode = req.mode;
    match decide(env, req) {
        Ok(a) => answer(&a, how),
        // A hook that fails with any code but 2 lets the call through:
        // under strict or approval an error must block instead.
        Err(e) if hook && mode != Mode::Permissive => Err(Exit(
            BLOCK,
            format!("skillpm check-tool: {}", super::output::one_line(&e)),
        )
        .into()),
        Err(e) => Err(e),
    }
}

fn decide(env: &Environment, req: &Request) -> Result<Authorization> {
    let call = match req.tool {
        Some(t) => parse_call(t)?,
        None => read_hook_call()?,
    };
    let skill = req.skill;
    let mut guard = ToolGuard::new(req.mode);
    if !skill.is_empty() {
        let cat = Catalog::build(env)?;
        let entry = cat
            .find(skill)
            .ok_or_else(|| Exit(1, LoadError::Unknown(skill.to_string()).to_string()))?;
        guard.activate(ActiveSkill::from_entry(entry));
    }
    for a in req.approved {
        guard.approve(&parse_call(a)?);
    }
    Ok(guard.check(&call))
}

fn parse_call(t: &str) -> Result<ToolPattern> {
    ToolPattern::parse(t).ok_or_else(|| {
        Exit(
            2,
            format!("`{t}` is not a tool call; write `Name` or `Name(argument)`"),
        )
        .into()
    })
}

/// The call in a `PreToolUse` hook's input on stdin.
fn read_hook_call() -> Result<ToolPattern> {
    let mut raw = String::new();
    std::io::stdin()
        .take(MAX_HOOK_INPUT + 1)
        .read_to_string(&mut raw)
        .context("cannot read the hook input from stdin")?;
    if raw.len() as u64 > MAX_HOOK_INPUT {
        return Err(Exit(2, format!("the hook input is over {MAX_HOOK_INPUT} bytes")).into());
    }
    let value: serde_json::Value =
        serde_json::from_str(&raw).context("the hook input on stdin is not JSON")?;
    ToolPattern::from_claude_hook(&value).ok_or_else(|| {
        Exit(
            2,
            "the hook input on stdin has no usable `tool_name`".into(),
        )
        .into()
    })
}

/// Why a call is not simply allowed, for a person or a model to read.
fn sentence(a: &Authorization) -> String {
    let skills = a
        .skills
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let what = match a.decision {
        Decision::Deny => "blocked",
        Decision::Ask => "needs approval",
        Decision::Allow => "allowed",
    };
    format!(
        "`{}` is not in the allowed-tools of skill {skills}: {what} ({})",
        a.tool,
        a.reason.as_str()
    )
}

fn answer(a: &Authorization, how: Answer) -> Result<ExitCode> {
    if let Some(w) = &a.warning {
        eprint_line(&format!("warning: {w}"));
    }
    let code = match a.decision {
        Decision::Allow => ExitCode::SUCCESS,
        Decision::Deny | Decision::Ask => ExitCode::from(BLOCK),
    };
    match how {
        Answer::Human => {
            let why = match &a.matched {
                Some(m) => format!("{}: {m}", a.reason.as_str()),
                None => a.reason.as_str().to_string(),
            };
            print(&format!("{}: {} ({why})\n", a.decision.as_str(), a.tool))?;
            Ok(code)
        }
        Answer::Json => {
            print(&render::json(a)?)?;
            Ok(code)
        }
        // Allowed calls get no reply, so Claude Code's own permission rules
        // still apply: `permissionDecision: allow` would skip them.
        Answer::Hook => match a.decision {
            Decision::Allow => Ok(ExitCode::SUCCESS),
            Decision::Deny => {
                // On exit 2 Claude Code shows stderr to the model as the reason.
                eprint_line(&sentence(a));
                Ok(code)
            }
            Decision::Ask => {
                print(&render::json(&serde_json::json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "ask",
                        "permissionDecisionReason": sentence(a),
                    }
                }))?)?;
                Ok(ExitCode::SUCCESS)
            }
        },
    }
}
