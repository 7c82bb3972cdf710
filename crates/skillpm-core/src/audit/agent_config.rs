//! Writes to the agent's own memory and config, and instructions to keep
//! things from the user.
//!
//! Memory and config files (CLAUDE.md, AGENTS.md, settings, MCP configs)
//! are read at the start of every session, so a skill that writes to them
//! outlives its own use. Plenty of honest skills scaffold them ("add this
//! to your CLAUDE.md"), so a write alone is a low-confidence warning; what
//! turns it into an attack is the skill also telling the agent to keep
//! quiet, and only that pair is an error.

use super::pattern::{self, Words};
use super::rules;
use super::source::{cut_chars, Source};
use crate::text::sanitize;
use regex::Regex;
use std::sync::LazyLock;

/// Agent memory and config files, lowercase (the patterns here run on
/// [`Source::lower`]). OpenClaw's workspace files (SOUL.md, MEMORY.md,
/// HEARTBEAT.md, IDENTITY.md) are its agent's memory; its more generic
/// names (USER.md, TOOLS.md) are left out.
static TARGET: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?:claude\.md|claude\.local\.md|agents\.md|gemini\.md|\.claude[/\\]+settings(?:\.local)?\.json|\.cursorrules|\.cursor[/\\]+(?:rules|mcp\.json)|\.windsurfrules|\.clinerules|\.codex[/\\]+[^\s`'\x22)]*|\.gemini[/\\]+[^\s`'\x22)]*|copilot-instructions\.md|\.mcp\.json|(?-u:\b)mcp\.json|claude_desktop_config\.json|soul\.md|memory\.md|heartbeat\.md|identity\.md)(?-u:\b)",
    )
});

/// A write into the target that ends the text: a verb shortly before it
/// (in the same sentence: a `.` ends it unless a path goes on),
/// a shell redirection or `tee`, or a Python/Node write naming it. Run on
/// the stretch of line before each [`TARGET`] match (verbs such as "add"
/// and redirections are everywhere; targets are rare).
static WRITE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r#"(?x)
        (?:(?-u:\b)(?:write|writes|writing|append|appends|appending|add|adds|adding|insert|inserts|inserting|modify|modifies|modifying|update|updates|updating|edit|edits|editing|overwrite|overwrites|overwriting|replace|replaces|inject|injects|injecting|prepend|prepends|save|saves|saving|persist|persists)(?-u:\b)(?:[^\n.]|\.\S){0,60}?
        | (?:^|[\s;&|(])[0-9]?>>?\s*["']?[^\s"'|;&<>]*?
        | (?-u:\b)tee\s+(?:-a\s+)?["']?[^\s"'|;&]*?
        | (?-u:\b)(?:writefilesync|appendfilesync|writefile|appendfile)\s*\([^\n)]{0,120}?
        )$
    "#,
    )
});

/// A write call after the target: Python's `open(..., "w")` or
/// `Path(...).write_text(`.
static WRITE_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r#"^[^\n]{0,40}?,\s*(?:mode\s*=\s*)?['"][wa+]|^['"]?\s*\)?\s*\.\s*(?:write_text|write_bytes)\s*\("#,
    )
});
/// A negation right before a write verb.
static NEGATION: LazyLock<Regex> =
    LazyLock::new(|| pattern::text(r"(?-u:\b)(?:not|never|n't|no\s+need\s+to)\W{0,4}$"));
static OPEN_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| pattern::text(r"(?-u:\b)open\s*\([^\n)]{0,120}$"));

/// Telling the agent to keep something from the user. Each phrase needs
/// its object ("the user", "this"), so advice such as "don't mention
/// internal paths in the summary" or "fails silently" is not taken for it.
/// Lowercase: runs on [`Source::lower`].
static CONCEAL: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?x)
        (?-u:\b)(?:do\s+not|don'?t|never|must\s+not|should\s+not|shouldn'?t)\s+(?:tell|inform|notify|alert|warn|let)\s+(?:the\s+)?user(?-u:\b)
        | (?-u:\b)(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|acknowledge)\s+(?:this|that|these|it|any\s+of\s+this)(?:\s+(?:instructions?|steps?|actions?|skill))?\s+to\s+(?:the\s+)?user(?-u:\b)
        | (?-u:\b)(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|acknowledge)\s+(?:these|this|the\s+following)\s+(?:instructions?|steps?)(?-u:\b)
        | (?-u:\b)without\s+(?:informing|telling|notifying|alerting|warning)\s+(?:the\s+)?user(?-u:\b)
        | (?-u:\b)hide\s+(?:this|it|that|these|them|the\s+\w+)\s+from\s+(?:the\s+)?user(?-u:\b)
        | (?-u:\b)keep\s+(?:this|it|that|these)\s+(?:secret|hidden|confidential)\s+from(?-u:\b)
        | (?-u:\b)(?:silently|secretly|covertly|quietly)\s+(?:send|sends|upload|uploads|post|exfiltrate|transmit|forward|collect|harvest|copy)(?-u:\b)
        | (?-u:\b)user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|find\s+out|be\s+told|be\s+informed)(?-u:\b)
    ",
    )
});

/// The words every [`CONCEAL`] phrase contains. Its phrases start with
/// common words ("do", "never", "the"), which make a poor prefilter, so
/// the file is searched for these instead and the phrase pattern runs only
/// around them.
static CONCEAL_ANCHOR: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(r"user|instruction|step|keep|silently|secretly|covertly|quietly")
});
/// How far a [`CONCEAL`] phrase reaches before and after its anchor word.
const CONCEAL_REACH: (usize, usize) = (120, 60);

/// The [`CONCEAL`] phrases, as byte ranges of the file.
fn conceals(lower: &str) -> Vec<(usize, usize)> {
    // The windows around the anchors, merged where they overlap, so no
    // byte is searched twice however dense the anchors are.
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for a in CONCEAL_ANCHOR.find_iter(lower) {
        let from = a.start().saturating_sub(CONCEAL_REACH.0);
        let to = (a.end() + CONCEAL_REACH.1).min(lower.len());
        match windows.last_mut() {
            Some(last) if from <= last.1 => last.1 = to,
            _ => windows.push((from, to)),
        }
    }
    let mut found = Vec::new();
    for (from, to) in windows {
        let (from, to) = word_edges(lower, from, to);
        found.extend(
            CONCEAL
                .find_iter(&lower[from..to])
                .map(|m| (from + m.start(), from + m.end())),
        );
    }
    found
}

/// `from..to` moved out to character boundaries and, by at most a few
/// bytes, to word edges: a window cut inside a word would give the
/// pattern a word boundary the text does not have.
fn word_edges(s: &str, from: usize, to: usize) -> (usize, usize) {
    let bytes = s.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'\'';
    let mut from = pattern::floor_char_boundary(s, from);
    let mut to = to.min(s.len());
    while to < s.len() && !s.is_char_boundary(to) {
        to += 1;
    }
    for _ in 0..32 {
        if from > 0 && word(bytes[from - 1]) {
            from -= 1;
        }
        if to < bytes.len() && word(bytes[to]) {
            to += 1;
        }
    }
    (from, to)
}

/// What every [`TARGET`] name contains one of: most files hold none, and
/// then [`TARGET`] (whose dots make a weak prefilter) neither runs nor
/// is compiled. Names, not their common endings: `.md` or `rules` would
/// be found in most files (and start at bytes too common to skip by).
static TARGET_WORDS: Words = Words::new(&[
    "claude",
    "agents.md",
    "gemini",
    "cursor",
    "windsurf",
    "clinerules",
    "codex",
    "copilot-instructions",
    "mcp.json",
    "soul.md",
    "memory.md",
    "heartbeat.md",
    "identity.md",
]);

/// The writes into agent memory or config: for each target, the span from
/// the write's start to the target's end.
fn writes(src: &Source) -> Vec<(usize, usize)> {
    let lower = src.lower;
    let mut out = Vec::new();
    if !src.has_any(&TARGET_WORDS) {
        return out;
    }
    for t in TARGET.find_iter(lower) {
        let line_start = lower[..t.start()].rfind('\n').map_or(0, |i| i + 1);
        let from =
            pattern::floor_char_boundary(lower, t.start().saturating_sub(160).max(line_start));
        let before = &lower[from..t.start()];
        let line_end = lower[t.end()..]
            .find('\n')
            .map_or(lower.len(), |i| t.end() + i);
        let after = &lower[t.end()..line_end];
        if let Some(m) = WRITE_BEFORE.find(before) {
            // "Do not modify AGENTS.md" forbids the write.
            if NEGATION.is_match(&before[..m.start()]) {
                continue;
            }
            out.push((from + m.start(), t.end()));
        } else if WRITE_AFTER.is_match(after) {
            let start = OPEN_BEFORE
                .find(before)
                .map_or(t.start(), |m| from + m.start());
            out.push((start, t.end()));
        }
    }
    out
}

pub(super) fn check(src: &mut Source) {
    let text = src.text;
    let writes = writes(src);
    let conceals = conceals(src.lower);
    let first_conceal = conceals
        .first()
        .map(|&(s, e)| (src.line(s), cut_chars(&sanitize(&text[s..e]), 60)));
    for &(start, end) in &writes {
        let shown = cut_chars(&sanitize(text[start..end].trim()), 80);
        match &first_conceal {
            Some((line, words)) => src.push(
                &rules::AGENT_CONFIG_WRITE_CONCEALED,
                start..end,
                format!("`{shown}` changes agent memory or config, and line {line} says {words:?}"),
            ),
            None => src.push(
                &rules::AGENT_CONFIG_WRITE,
                start..end,
                format!("`{shown}` changes agent memory or config"),
            ),
        }
    }
    for (start, end) in conceals {
        let words = cut_chars(&sanitize(&text[start..end]), 60);
        src.push(
            &rules::CONCEALMENT,
            start..end,
            format!("tells the agent to hide its actions: {words:?}"),
        );
    }
}
