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
//!
//! Descriptions and hints are served escaped (hidden text and controls made
//! visible), as every other answer of this server; a command whose name
//! would need escaping is not served as a prompt at all, since a client
//! names the prompt back and an escaped name would name nothing.

use super::resources::Snapshot;
use crate::engine::commands::{Command, CommandTable, RAW_ARGUMENT};
use rmcp::model::{
    ErrorData, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;
use skillpm_core::text::sanitize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Whether `name` reaches a client as it is.
fn servable(name: &str) -> bool {
    matches!(sanitize(name), Cow::Borrowed(_))
}

/// Every command as a prompt, sorted by name.
pub fn list(snap: &Snapshot) -> Vec<Prompt> {
    let Some(cat) = snap.catalog.as_deref() else {
        return Vec::new();
    };
    CommandTable::build(cat)
        .commands
        .iter()
        .filter(|c| servable(&c.skill.command))
        .map(|c| {
            Prompt::new(
                c.skill.command.clone(),
                Some(sanitize(&c.skill.description)),
                Some(arguments(c)),
            )
        })
        .collect()
}

fn arguments(c: &Command<'_>) -> Vec<PromptArgument> {
    if c.arguments.is_empty() {
        let what = match &c.argument_hint {
            Some(h) => format!("The arguments, as typed after the command: {}", sanitize(h)),
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
    // The error quotes the client's name (cut short by the engine).
    let command = match table.require(name) {
        Ok(c) if servable(&c.skill.command) => c,
        Ok(_) => return Err(invalid("no served prompt has this name".into())),
        Err(e) => return Err(invalid(sanitize(&e.to_string()).into_owned())),
    };
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
        .with_description(sanitize(&command.skill.description));
    Ok((inv.command, result))
}
