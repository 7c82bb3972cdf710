//! Names made to pass for a well-known skill: one or two letters off, the
//! same words with different separators, or the real name dressed up as
//! official. Shadowing a skill of another source is the client's check,
//! not this one.

use super::rules;
use super::source::{cut_chars, Source};
use super::Context;
use crate::skill::SkillDoc;
use crate::text::sanitize;

/// Words an imitator adds to borrow a real skill's standing.
const DECORATIONS: &[&str] = &[
    "official",
    "anthropic",
    "claude",
    "openai",
    "real",
    "original",
    "verified",
    "secure",
    "safe",
    "pro",
    "plus",
    "premium",
    "v2",
    "new",
    "updated",
    "latest",
    "fixed",
];

/// How many edits still read as the same name: none for names under five
/// letters (`docs` is not an imitation of `docx`, nor `pdb` of `pdf`), one
/// up to eleven, two beyond. Calibrated on public skills: with two edits
/// from eight letters on, `cv-builder` imitated `mcp-builder` and
/// `plaud-api` imitated `claude-api`.
fn max_distance(len: usize) -> usize {
    match len {
        0..=4 => 0,
        5..=11 => 1,
        _ => 2,
    }
}

/// Whether `a` and `b` are the same letters with different separators.
fn same_but_separators(a: &str, b: &str) -> bool {
    let letters = |s: &'_ str| {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .collect::<Vec<_>>()
    };
    a.len().abs_diff(b.len()) <= 8 && letters(a) == letters(b)
}

/// The decoration `name` adds to `known` ("official-pdf", "pdf_pro"), if
/// that is all it adds.
fn decoration(name: &str, known: &str) -> Option<&'static str> {
    let sep = ['-', '_'];
    DECORATIONS.iter().copied().find(|d| {
        let before = name
            .strip_prefix(d)
            .map(|rest| rest.strip_prefix(sep).unwrap_or(rest));
        let after = name
            .strip_suffix(d)
            .map(|rest| rest.strip_suffix(sep).unwrap_or(rest));
        before == Some(known) || after == Some(known)
    })
}

/// Why `name` imitates `known` (both lowercase), if it does. Called for
/// every known name of every scanned skill, so the cheap tests come first.
fn imitates(name: &str, known: &str) -> Option<String> {
    if name == known || known.is_empty() {
        return None;
    }
    if same_but_separators(name, known) {
        return Some(format!("is {known:?} with different separators"));
    }
    if let Some(d) = decoration(name, known) {
        return Some(format!("is {known:?} with {d:?} added"));
    }
    let max = max_distance(known.chars().count());
    if max == 0 || name.len().abs_diff(known.len()) > max * 4 {
        return None;
    }
    let distance = strsim::levenshtein(name, known);
    (distance >= 1 && distance <= max)
        .then(|| format!("is {distance} letter(s) away from {known:?}"))
}

pub(super) fn check(src: &mut Source, doc: &SkillDoc, cx: &Context) {
    let Some(raw) = doc.name() else {
        return;
    };
    let name = raw.trim().to_lowercase();
    // A skill's name is at most 64 characters; anything longer is not
    // worth an edit distance against every known name.
    if name.is_empty() || name.chars().count() > 128 {
        return;
    }
    // The name itself is well known: nothing to imitate.
    if cx.known_names.iter().any(|k| k.to_lowercase() == name) {
        return;
    }
    let line = doc.key_lines.get("name").copied().unwrap_or(1);
    let hit = cx
        .known_names
        .iter()
        .find_map(|k| imitates(&name, &k.to_lowercase()));
    if let Some(why) = hit {
        let shown = cut_chars(&sanitize(raw), 80);
        src.push_at_line(
            &rules::NAME_IMITATION,
            line,
            format!("name: {shown}"),
            format!("the name {shown:?} {why}"),
        );
    }
}
