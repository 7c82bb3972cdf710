//! `allowed-tools` grants broader than the skill's text needs.
//!
//! A granted tool runs without the agent asking the user first, so a grant
//! is worth exactly what the instructions use. The test for "needs" is
//! deliberately generous (any mention of running or writing anything):
//! the rule is for the skill that asks for a shell and never says why,
//! not for arguing about scopes.

use super::pattern;
use super::rules;
use super::source::{cut_chars, Source};
use crate::skill::SkillDoc;
use crate::text::sanitize;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// The body asks to run something: a shell code block, or the words.
static RUNS_COMMANDS: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?im)^\s*(?:```|~~~)\s*(?:bash|sh|shell|zsh|console|terminal|powershell|pwsh|ps1|cmd|bat)(?-u:\b)|(?-u:\b)(?:run|runs|running|execute|executes|executing|command|commands|script|scripts|terminal|shell|cli|invoke|npm|npx|pnpm|yarn|pip|uv|git|gh|python3?|node|make|cargo|go|docker|kubectl|curl)(?-u:\b)",
    )
});

/// The body asks to create or change files.
static WRITES_FILES: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?i)(?-u:\b)(?:write|writes|writing|written|create|creates|creating|edit|edits|editing|modify|modifies|modifying|save|saves|saving|update|updates|updating|generate|generates|generating|output|outputs|patch|patches|refactor|rewrite|scaffold|append|overwrite|replace|rename|fix|fixes|implement|implements|change|changes|insert|delete|remove)(?-u:\b)",
    )
});

/// One granted tool: `Bash`, `Bash(git status:*)`, `Read`.
struct Grant<'a> {
    name: &'a str,
    scope: Option<&'a str>,
    text: &'a str,
}

/// Splits "Read Bash(git status:*) Write" on spaces and commas outside
/// parentheses (a scope may hold spaces).
fn grants(s: &str) -> Vec<Grant<'_>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = None;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if let Some(st) = start.take() {
                    out.push(grant(&s[st..i]));
                }
                continue;
            }
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(st) = start {
        out.push(grant(&s[st..]));
    }
    out
}

fn grant(text: &str) -> Grant<'_> {
    match text.split_once('(') {
        Some((name, rest)) => Grant {
            name: name.trim(),
            scope: Some(rest.trim_end_matches(')').trim()),
            text,
        },
        None => Grant {
            name: text.trim(),
            scope: None,
            text,
        },
    }
}

pub(super) fn check(src: &mut Source, doc: &SkillDoc) {
    let Some(value) = doc.frontmatter.get("allowed-tools") else {
        return;
    };
    let items: Vec<String> = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => return,
    };
    let line = doc.key_lines.get("allowed-tools").copied().unwrap_or(1);
    let excerpt = |g: &Grant| cut_chars(&sanitize(g.text), 80);
    let runs = RUNS_COMMANDS.is_match(&doc.body);
    let writes = WRITES_FILES.is_match(&doc.body);
    let mut reported_unused = false;
    for item in &items {
        for g in grants(item) {
            let unscoped = g
                .scope
                .is_none_or(|s| matches!(s, "" | "*" | ":*" | "* *" | "**"));
            if g.name == "*" || g.name.eq_ignore_ascii_case("all") {
                src.push_at_line(
                    &rules::ALLOWED_TOOLS_WILDCARD,
                    line,
                    excerpt(&g),
                    format!("`allowed-tools` grants every tool (`{}`)", excerpt(&g)),
                );
            } else if g.name.eq_ignore_ascii_case("bash") && unscoped {
                if runs {
                    src.push_at_line(
                        &rules::ALLOWED_TOOLS_UNSCOPED_BASH,
                        line,
                        excerpt(&g),
                        "`allowed-tools` grants `Bash` for any command".into(),
                    );
                } else if !reported_unused {
                    reported_unused = true;
                    src.push_at_line(
                        &rules::ALLOWED_TOOLS_UNUSED,
                        line,
                        excerpt(&g),
                        "`allowed-tools` grants `Bash`, but the instructions never run a command"
                            .into(),
                    );
                }
            } else if matches!(g.name, "Write" | "Edit" | "MultiEdit" | "NotebookEdit")
                && !writes
                && !reported_unused
            {
                reported_unused = true;
                src.push_at_line(
                    &rules::ALLOWED_TOOLS_UNUSED,
                    line,
                    excerpt(&g),
                    format!(
                        "`allowed-tools` grants `{}`, but the instructions never create or change a file",
                        g.name
                    ),
                );
            }
        }
    }
}
