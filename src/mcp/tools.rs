//! Tools for hosts without the Skills extension (the seed design's
//! "searchSkills / loadSkill"): `list_skills`, `search_skills` and
//! `load_skill`. Each answers from the served snapshot only, so a hidden
//! skill cannot be reached through them either.

use super::loaded::Loaded;
use super::resources::{ServedSkill, Snapshot};
use crate::engine::load;
use crate::engine::prompt::xml_escape;
use crate::engine::tools::ToolStatus;
use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject, Tool};
use serde_json::{json, Value};
use std::sync::Arc;

/// Default and largest `limit` of `search_skills`.
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 100;

fn schema(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    })
}

/// The three tools, in a fixed order.
pub fn list() -> Vec<Tool> {
    vec![
        Tool::new(
            "list_skills",
            "List every skill this project serves: command, name, description, the URI of its SKILL.md, and its lifecycle in this session (eligible, or loaded once its instructions were fetched).",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "search_skills",
            "Find skills relevant to a task; returns ranked commands with scores, the kind of match (mention, phrase, keyword, pattern, text) and the fields that matched.",
            schema(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the task is about"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Most results (default 10)"}
                },
                "required": ["query"]
            })),
        ),
        Tool::new(
            "load_skill",
            "Load one skill's instructions: the <skill_content> block with its base directory, bundled files, direct sub-skills and the tools it names (with availability).",
            schema(json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's command (e.g. `sven/implement`) or its name"}
                },
                "required": ["name"]
            })),
        ),
    ]
}

/// Runs tool `name` for a session that has `loaded` what it has;
/// `None` when there is no such tool.
pub fn call(
    snap: &Snapshot,
    name: &str,
    args: &JsonObject,
    loaded: &mut Loaded,
) -> Option<CallToolResult> {
    let out = match name {
        "list_skills" => Ok(json_text(&Value::Array(
            snap.skills
                .iter()
                .map(|s| {
                    let mut v = summary(s);
                    v["lifecycle"] = json!(loaded.lifecycle(s).as_str());
                    v
                })
                .collect(),
        ))),
        "search_skills" => search_tool(snap, args),
        "load_skill" => load_tool(snap, args, loaded),
        _ => return None,
    };
    Some(match out {
        Ok(text) => CallToolResult::success(vec![Content::text(text)]),
        Err(e) => CallToolResult::error(vec![Content::text(e.to_string())]),
    })
}

/// Why a tool call is answered with an error result (for the model to
/// read and correct).
#[derive(Debug, thiserror::Error)]
enum ToolError {
    #[error("{tool} needs a string `{arg}`")]
    MissingArg {
        tool: &'static str,
        arg: &'static str,
    },
    #[error("`limit` must be an integer from 1 to {MAX_LIMIT}")]
    Limit,
    #[error("no served skill `{0}`; call list_skills for the commands")]
    NoSkill(String),
    #[error("no catalog loaded")]
    NoCatalog,
    #[error(transparent)]
    Load(#[from] load::LoadError),
}

/// A served skill as the tools list it. The command is a directory path
/// from disk, shown by the one rule (name and description come from the
/// served, already marked, `SKILL.md`).
fn summary(s: &ServedSkill) -> Value {
    let command = skillpm_core::text::sanitize(&s.command);
    json!({"command": command, "name": s.name, "description": s.description, "uri": s.uri})
}

fn json_text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn search_tool(snap: &Snapshot, args: &JsonObject) -> Result<String, ToolError> {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .ok_or(ToolError::MissingArg {
            tool: "search_skills",
            arg: "query",
        })?;
    let limit = match args.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_LIMIT as u64).contains(n))
            .ok_or(ToolError::Limit)? as usize,
    };
    Ok(json_text(&Value::Array(search(snap, query, limit))))
}

/// Ranks served skills for `query` with the engine's search (the same
/// ranking as `skillpm search --local`).
pub fn search(snap: &Snapshot, query: &str, limit: usize) -> Vec<Value> {
    snap.search()
        .search(query, limit)
        .into_iter()
        .filter_map(|hit| {
            let s = snap.skill_by_command(&hit.command)?;
            let mut v = summary(s);
            v["score"] = json!(hit.score);
            v["kind"] = json!(hit.kind.as_str());
            v["matched"] = json!(hit.fields);
            Some(v)
        })
        .collect()
}

fn load_tool(snap: &Snapshot, args: &JsonObject, loaded: &mut Loaded) -> Result<String, ToolError> {
    let name = args
        .get("name")
        .and_then(Value::as_str)
        .ok_or(ToolError::MissingArg {
            tool: "load_skill",
            arg: "name",
        })?;
    let skill = snap.skill_by_command(name).or_else(|| {
        let mut by_name = snap.skills.iter().filter(|s| s.name == name);
        match (by_name.next(), by_name.next()) {
            (Some(s), None) => Some(s),
            _ => None,
        }
    });
    // The name is the client's text, answered back: shown by the one rule.
    let skill =
        skill.ok_or_else(|| ToolError::NoSkill(skillpm_core::text::sanitize(name).into_owned()))?;
    let catalog = snap.catalog.as_ref().ok_or(ToolError::NoCatalog)?;
    let block = load::render(catalog, &skill.command)?;
    let tools = catalog
        .find(&skill.command)
        .map(|e| catalog.tool_statuses(e))
        .unwrap_or_default();
    loaded.record(skill);
    Ok(with_tools(block, &tools))
}

/// Adds a `<tools>` element listing the tools the skill names, each with
/// whether the host has it (`unknown` when no host tools are configured),
/// just before the block closes.
fn with_tools(block: String, tools: &[ToolStatus]) -> String {
    if tools.is_empty() {
        return block;
    }
    let mut xml = String::from("<tools>\n");
    for t in tools {
        let available = match t.available {
            Some(true) => "true",
            Some(false) => "false",
            None => "unknown",
        };
        xml.push_str(&format!(
            "<tool name=\"{}\" required=\"{}\" available=\"{available}\">{}</tool>\n",
            xml_escape(&t.name),
            t.required,
            xml_escape(t.purpose.as_deref().unwrap_or_default())
        ));
    }
    xml.push_str("</tools>\n");
    match block.rfind("</skill_content>") {
        Some(at) => format!("{}{xml}{}", &block[..at], &block[at..]),
        None => block + &xml,
    }
}
