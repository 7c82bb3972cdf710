//! What runs without anyone asking: hooks, commands a `SKILL.md` runs when
//! it loads, and npm install-time scripts. None is wrong in itself; each
//! is code to read before installing, so each is a warning that names the
//! command.

use super::rules;
use super::source::{cut_chars, Source};
use crate::skill::SkillDoc;
use crate::text::sanitize;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// Claude Code's dynamic context: "!`cmd`" in a skill runs `cmd` when the
/// skill loads and puts its output in the prompt. It is a plain text
/// substitution, so it applies in code blocks too. The `!` must start a
/// word, so "Done!`x`" in prose and `a != b` are not taken for it.
static LOAD_COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^|[\s(>*\-])!`([^`\n]+)`").expect("audit pattern compiles")
});

/// The npm lifecycle scripts `npm install` runs on its own.
const NPM_INSTALL_SCRIPTS: &[&str] = &["preinstall", "install", "postinstall"];

pub(super) fn check_load_commands(src: &mut Source) {
    let text = src.text;
    if !src.mentions("!`") {
        return;
    }
    let hits: Vec<(usize, usize, String)> = LOAD_COMMAND
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(0)?;
            let cmd = c.get(1)?;
            Some((m.start(), m.end(), cmd.as_str().to_string()))
        })
        .collect();
    for (start, end, cmd) in hits {
        let start = start + text[start..end].find('!').unwrap_or(0);
        // "`.gitignore !`-rules": the `!` closes a code span, it does not
        // open a command.
        if super::source::in_inline_code(text, start) {
            continue;
        }
        src.push(
            &rules::LOAD_TIME_COMMAND,
            start..end,
            format!(
                "runs `{}` when the skill loads",
                cut_chars(&sanitize(&cmd), 100)
            ),
        );
    }
}

/// A `hooks` key in the frontmatter.
pub(super) fn check_frontmatter(src: &mut Source, doc: &SkillDoc) {
    let Some(hooks) = doc.frontmatter.get("hooks") else {
        return;
    };
    let line = doc.key_lines.get("hooks").copied().unwrap_or(1);
    let at = line_offset(src.text, line);
    src.push(
        &rules::FRONTMATTER_HOOKS,
        at..at,
        format!("frontmatter hooks {}", describe_hooks(hooks)),
    );
}

/// Hook files: a `hooks.json`, OpenClaw's `HOOK.md`, or an agent settings
/// file with a `hooks` table; and `package.json` install scripts.
pub(super) fn check_file(src: &mut Source) {
    let name = src.file_name().to_ascii_lowercase();
    match name.as_str() {
        "hooks.json" => {
            let what = match serde_json::from_str::<Value>(src.text) {
                Ok(v) => describe_hooks(v.get("hooks").unwrap_or(&v)),
                Err(_) => "(not valid JSON)".to_string(),
            };
            src.push_at_line(
                &rules::HOOKS_FILE,
                1,
                String::new(),
                format!("{} defines hooks {what}", src.rel),
            );
        }
        "hook.md" => src.push_at_line(
            &rules::HOOKS_FILE,
            1,
            String::new(),
            format!("{} defines an OpenClaw hook, run on agent events", src.rel),
        ),
        "settings.json" | "settings.local.json" => {
            if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(src.text) {
                if let Some(hooks) = m.get("hooks") {
                    let line = key_line(src.text, "\"hooks\"");
                    let at = line_offset(src.text, line);
                    src.push(
                        &rules::HOOKS_FILE,
                        at..at,
                        format!("{} defines hooks {}", src.rel, describe_hooks(hooks)),
                    );
                }
            }
        }
        "package.json" => package_json(src),
        _ => {}
    }
}

fn package_json(src: &mut Source) {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(src.text) else {
        return;
    };
    let Some(Value::Object(scripts)) = m.get("scripts") else {
        return;
    };
    for &name in NPM_INSTALL_SCRIPTS {
        if let Some(cmd) = scripts
            .get(name)
            .and_then(Value::as_str)
            .filter(|c| !only_echo(c))
        {
            let line = key_line(src.text, &format!("\"{name}\""));
            let at = line_offset(src.text, line);
            src.push(
                &rules::INSTALL_SCRIPT,
                at..at,
                format!(
                    "`npm install` runs the {name} script `{}`",
                    cut_chars(&sanitize(cmd), 100)
                ),
            );
        }
    }
}

/// A script that only prints a message ("echo 'Installed! Run ...'").
fn only_echo(cmd: &str) -> bool {
    let cmd = cmd.trim();
    cmd.starts_with("echo ")
        && !["&", ";", "|", "$(", "`", ">", "<"]
            .iter()
            .any(|op| cmd.contains(op))
}

/// "on PreToolUse, Stop: `cmd`, `cmd`" — the events and the first few
/// commands of a hooks value, whatever its exact shape.
fn describe_hooks(v: &Value) -> String {
    let events: Vec<String> = match v {
        Value::Object(m) => m
            .keys()
            .take(6)
            .map(|k| cut_chars(&sanitize(k), 40))
            .collect(),
        _ => Vec::new(),
    };
    let mut commands = Vec::new();
    collect_commands(v, &mut commands, 0);
    let mut out = String::new();
    if !events.is_empty() {
        out.push_str(&format!("on {}", events.join(", ")));
    }
    if !commands.is_empty() {
        let shown: Vec<String> = commands
            .iter()
            .take(3)
            .map(|c| format!("`{}`", cut_chars(&sanitize(c), 80)))
            .collect();
        if !out.is_empty() {
            out.push_str(" running ");
        } else {
            out.push_str("running ");
        }
        out.push_str(&shown.join(", "));
        if commands.len() > 3 {
            out.push_str(&format!(" and {} more", commands.len() - 3));
        }
    }
    out
}

/// Every string under a `command` key, depth-first, bounded (the value is
/// untrusted and could nest deep).
fn collect_commands(v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 16 || out.len() > 32 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("command", Value::String(s)) => out.push(s.clone()),
                    _ => collect_commands(v, out, depth + 1),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_commands(v, out, depth + 1)),
        _ => {}
    }
}

/// The line of the first occurrence of `needle`, or 1.
fn key_line(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |i| text[..i].bytes().filter(|&b| b == b'\n').count() + 1)
}

/// The byte offset where 1-based `line` starts.
fn line_offset(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}
