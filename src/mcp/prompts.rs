//! Skill commands as MCP prompts: `prompts/list` names every command of
//! the served catalogue with its arguments, and `prompts/get` answers with
//! the command's instructions filled in, as one user message. Prompts are
//! what a user picks in an MCP host's menu, so commands the model is never
//! offered (`disable-model-invocation`) are served here too.
//!
//! A command that declares `arguments` takes each of them, required; one
//! that declares none takes one optional `arguments`, the string as typed
//! after the name. An unknown prompt, a missing or undeclared argument, or
//! a value that is not a string is -32602.

use super::resources::Snapshot;
use crate::engine::commands::{Command, CommandTable, RAW_ARGUMENT};
use rmcp::model::{
    ErrorData, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every command as a prompt, sorted by name.
pub fn list(snap: &Snapshot) -> Vec<Prompt> {
    let Some(cat) = snap.catalog.as_deref() else {
        return Vec::new();
    };
    CommandTable::build(cat)
        .commands
        .iter()
        .map(|c| {
            Prompt::new(
                c.skill.command.clone(),
                Some(c.skill.description.clone()),
                Some(arguments(c)),
            )
        })
        .collect()
}

fn arguments(c: &Command<'_>) -> Vec<PromptArgument> {
    if c.arguments.is_empty() {
        let what = match &c.argument_hint {
            Some(h) => format!("The arguments, as typed after the command: {h}"),
            None => "The arguments, as typed after the command".to_string(),
        };
        return vec![PromptArgument::new(RAW_ARGUMENT)
            .with_description(what)
            .with_required(false)];
    }
    c.arguments
        .iter()
        .map(|n| PromptArgument::new(n.clone()).with_required(true))
        .collect()
}

/// Command `name` filled in with `given`, and the command it resolved to
/// (for the session's lifecycle).
pub fn get(
    snap: &Snapshot,
    name: &str,
    given: Option<&JsonObject>,
) -> Result<(String, GetPromptResult), ErrorData> {
    let invalid = |e: String| ErrorData::invalid_params(e, None);
    let cat = snap
        .catalog
        .as_deref()
        .ok_or_else(|| invalid("no skills are served".into()))?;
    let table = CommandTable::build(cat);
    let command = table.require(name).map_err(|e| invalid(e.to_string()))?;
    let mut args = BTreeMap::new();
    for (k, v) in given.into_iter().flatten() {
        let Value::String(s) = v else {
            let shown: String = k.chars().take(64).collect();
            return Err(invalid(format!("argument `{shown}` must be a string")));
        };
        args.insert(k.clone(), s.clone());
    }
    let inv = command
        .fill_named(&args)
        .map_err(|e| invalid(e.to_string()))?;
    let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, inv.text)])
        .with_description(command.skill.description.clone());
    Ok((inv.command, result))
}
