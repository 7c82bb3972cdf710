//! Text a reader does not see and a model does: hidden characters, and
//! instructions inside HTML comments.
//!
//! Which characters count as hidden is [`crate::text::escaped_chars`]'s
//! call, the same one the CLI uses to escape what it prints, so an emoji's
//! zero-width joiner or presentation selector (real text) is never
//! reported and anything the CLI would show escaped is.
//!
//! Severity by how much can hide: tag characters spell ASCII one for one
//! (critical); bidi overrides reorder what is shown (error); a run of
//! zero-width characters or variation selectors long enough to encode a
//! message is an error; a stray one is a warning, because copy-pasted text
//! is full of them (a zero-width space from a web page, a soft hyphen, a
//! BOM in the middle of a concatenated file) and one alone carries a bit
//! or so, not an instruction.

use super::rules;
use super::source::{cut_chars, in_inline_code, Source};
use crate::text::{escaped_chars, sanitize};
use memchr::memmem;
use regex::Regex;
use std::sync::LazyLock;

/// A run of invisible characters this long is a message, not residue: eight
/// zero-width characters are a byte in the binary encodings.
const PAYLOAD_RUN: usize = 8;
/// Variation selectors smuggle a byte each, so fewer make a message.
const PAYLOAD_SELECTORS: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tag,
    Bidi,
    Control,
    Invisible,
}

fn kind(c: char) -> Kind {
    match c {
        '\u{e0000}'..='\u{e007f}' => Kind::Tag,
        // Embeddings, overrides and isolates reorder what is displayed.
        // The marks (LRM, RLM, ALM) only nudge neutral characters and are
        // common in right-to-left text: invisible, not reordering.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Kind::Bidi,
        '\u{200e}' | '\u{200f}' | '\u{61c}' => Kind::Invisible,
        c if crate::text::is_unsafe_char(c) => Kind::Control,
        _ => Kind::Invisible,
    }
}

fn is_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

/// The byte a variation selector stands for in the "emoji smuggling"
/// encoding (VS1-16 are 0-15, VS17-256 are 16-255).
fn selector_byte(c: char) -> Option<u8> {
    match c as u32 {
        v @ 0xfe00..=0xfe0f => Some((v - 0xfe00) as u8),
        v @ 0xe0100..=0xe01ef => Some((v - 0xe0100 + 16) as u8),
        _ => None,
    }
}

pub(super) fn check(src: &mut Source) {
    let text = src.text;
    if src.markdown {
        html_comments(src);
    }
    // Runs of adjacent escaped characters, each as (start, end, chars).
    let mut runs: Vec<(usize, usize, Vec<char>)> = Vec::new();
    for (at, c) in hidden_chars(text) {
        // A byte-order mark that opens the file is an encoding mark.
        if at == 0 && c == '\u{feff}' {
            continue;
        }
        match runs.last_mut() {
            Some((_, end, chars)) if *end == at => {
                *end = at + c.len_utf8();
                chars.push(c);
            }
            _ => runs.push((at, at + c.len_utf8(), vec![c])),
        }
    }
    for (start, end, chars) in runs {
        run(src, start, end, &chars);
    }
}

/// Printable ASCII, newline and tab: never escaped, whatever surrounds it.
fn plain(b: u8) -> bool {
    matches!(b, b' '..=b'~' | b'\n' | b'\t')
}

/// Where the first byte that is not [`plain`] is. Whole blocks are tested
/// without an early exit, a loop the compiler turns into vector compares;
/// only the block that holds one is searched byte by byte.
fn first_not_plain(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 32;
    let mut blocks = bytes.chunks_exact(BLOCK);
    for (n, block) in (&mut blocks).enumerate() {
        if !block.iter().fold(true, |all, &b| all & plain(b)) {
            return block.iter().position(|&b| !plain(b)).map(|k| n * BLOCK + k);
        }
    }
    let tail = blocks.remainder();
    tail.iter()
        .position(|&b| !plain(b))
        .map(|k| bytes.len() - tail.len() + k)
}

/// What [`escaped_chars`] reports for `text`, found by handing it only the
/// stretches that hold something other than [`plain`] bytes, each with the
/// plain character before it (its `prev`) and after it (so a CR before LF
/// is still a line ending). Most text is plain, and this skips it at the
/// speed of a byte comparison instead of decoding every character.
fn hidden_chars(text: &str) -> Vec<(usize, char)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = first_not_plain(&bytes[i..]) {
        let first = i + k;
        let end_of_run = bytes[first..]
            .iter()
            .position(|&b| plain(b))
            .map_or(bytes.len(), |n| first + n);
        // Both ends fall next to ASCII bytes: character boundaries.
        let from = first.saturating_sub(1);
        let to = (end_of_run + 1).min(bytes.len());
        out.extend(escaped_chars(&text[from..to]).map(|(at, c)| (from + at, c)));
        i = to;
    }
    out
}

fn run(src: &mut Source, start: usize, end: usize, chars: &[char]) {
    let text = src.text;
    let prev = text[..start].chars().next_back();
    let tags: Vec<char> = chars
        .iter()
        .copied()
        .filter(|&c| kind(c) == Kind::Tag)
        .collect();
    // A subdivision flag (🏴 + tag letters + cancel tag, "England") is the
    // one honest use of tag characters.
    let flag = prev == Some('\u{1f3f4}')
        && tags.len() == chars.len()
        && tags.len() <= 8
        && tags.last() == Some(&'\u{e007f}');
    if !tags.is_empty() && !flag {
        let decoded: String = tags
            .iter()
            .filter_map(|&c| char::from_u32(c as u32 - 0xe0000))
            .filter(|c| c.is_ascii_graphic() || *c == ' ')
            .collect();
        src.push(
            &rules::HIDDEN_TAG_CHARS,
            start..end,
            format!(
                "{} Unicode tag character(s), invisible to a reader, spelling {:?}",
                tags.len(),
                cut_chars(&decoded, 120)
            ),
        );
    }
    let bidi: Vec<char> = chars
        .iter()
        .copied()
        .filter(|&c| kind(c) == Kind::Bidi)
        .collect();
    if !bidi.is_empty() {
        src.push(
            &rules::BIDI_CONTROL,
            start..end,
            format!("bidirectional control(s) {}", code_points(&bidi)),
        );
    }
    let mut controls: Vec<char> = Vec::new();
    let mut at = start;
    for &c in chars {
        if kind(c) == Kind::Control && rewrites_terminal(text, at, c) {
            controls.push(c);
        }
        at += c.len_utf8();
    }
    if !controls.is_empty() {
        src.push(
            &rules::CONTROL_CHARS,
            start..end,
            format!("control character(s) {}", code_points(&controls)),
        );
    }
    let mut invisible: Vec<char> = chars
        .iter()
        .copied()
        .filter(|&c| kind(c) == Kind::Invisible)
        .collect();
    if invisible.is_empty() {
        return;
    }
    // The first selector after a visible character is not escaped (it may
    // be an emoji's), but in a run of selectors it is the payload's first
    // byte.
    if prev.is_some_and(is_selector) && invisible.first().copied().is_some_and(is_selector) {
        invisible.insert(0, prev.unwrap_or_default());
    }
    let selectors = invisible.iter().filter(|&&c| is_selector(c)).count();
    if invisible.len() >= PAYLOAD_RUN || selectors >= PAYLOAD_SELECTORS {
        let bytes: Vec<u8> = invisible.iter().filter_map(|&c| selector_byte(c)).collect();
        let decoded = if selectors >= PAYLOAD_SELECTORS {
            format!(
                "; as variation-selector bytes they read {:?}",
                cut_chars(&sanitize(&String::from_utf8_lossy(&bytes)), 120)
            )
        } else {
            String::new()
        };
        src.push(
            &rules::INVISIBLE_PAYLOAD,
            start..end,
            format!(
                "{} invisible characters in a row ({}){decoded}",
                invisible.len(),
                code_points(&invisible)
            ),
        );
    } else {
        src.push(
            &rules::INVISIBLE_CHARS,
            start..end,
            format!("invisible character(s) {}", code_points(&invisible)),
        );
    }
}

/// Whether the control character `c` at `at` can change what a terminal
/// shows: an escape sequence (CSI, OSC, DCS, charset switch), a backspace,
/// or a carriage return in mid-line that sends the cursor back over the
/// text before it. Other controls (a stray BEL, CP437 arrows read as
/// SUB/ESC, the C1 bytes of double-encoded UTF-8, which UTF-8 terminals do
/// not act on) are garbage, not concealment, and are left to the
/// sanitizer.
fn rewrites_terminal(text: &str, at: usize, c: char) -> bool {
    let next = text[at + c.len_utf8()..].chars().next();
    match c {
        '\u{1b}' => matches!(next, Some('[' | ']' | 'P' | '(' | ')' | 'c')),
        '\u{8}' => true,
        '\r' => {
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            !text[line_start..at].trim().is_empty() && !matches!(next, None | Some('\n' | '\r'))
        }
        _ => false,
    }
}

/// "U+200B ZERO WIDTH SPACE, U+00AD" — the distinct code points, the common
/// ones named, at most four.
fn code_points(chars: &[char]) -> String {
    let mut distinct: Vec<char> = Vec::new();
    for &c in chars {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let mut parts: Vec<String> = distinct
        .iter()
        .take(4)
        .map(|&c| match name(c) {
            Some(n) => format!("U+{:04X} {n}", c as u32),
            None => format!("U+{:04X}", c as u32),
        })
        .collect();
    if distinct.len() > 4 {
        parts.push(format!("and {} more", distinct.len() - 4));
    }
    parts.join(", ")
}

fn name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{200b}' => "ZERO WIDTH SPACE",
        '\u{200c}' => "ZERO WIDTH NON-JOINER",
        '\u{200d}' => "ZERO WIDTH JOINER",
        '\u{2060}' => "WORD JOINER",
        '\u{feff}' => "ZERO WIDTH NO-BREAK SPACE (BOM)",
        '\u{ad}' => "SOFT HYPHEN",
        '\u{200e}' => "LEFT-TO-RIGHT MARK",
        '\u{200f}' => "RIGHT-TO-LEFT MARK",
        '\u{202e}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{202d}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{1b}' => "ESCAPE",
        '\r' => "CARRIAGE RETURN",
        '\u{8}' => "BACKSPACE",
        c if is_selector(c) => "VARIATION SELECTOR",
        _ => return None,
    })
}

/// Words that make a hidden comment an instruction rather than a note to
/// the file's maintainer: overriding earlier instructions, talking as or
/// to the model, keeping things from the user.
static COMMENT_INSTRUCTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        (?-u:\b)(?:ignore|disregard|forget|override)(?-u:\b)[^.\n]{0,40}(?-u:\b)(?:instructions?|previous|prior|above|earlier|rules|guidelines)(?-u:\b)
        | (?-u:\b)(?:system|developer)\s+(?:prompt|message|instructions?)(?-u:\b)
        | (?m:^)\s*(?:system|assistant)\s*:
        | (?-u:\b)(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|mention|reveal|disclose|alert)(?-u:\b)
        | (?-u:\b)without\s+(?:telling|informing|notifying|alerting)(?-u:\b)
        | (?-u:\b)(?:you\s+are\s+now|from\s+now\s+on|pretend\s+to\s+be|new\s+instructions?)(?-u:\b)
        | (?-u:\b)instructions?\s*(?:for|to)\s+(?:the\s+)?(?:ai|llm|assistant|agent|model|claude|copilot|gpt|codex|gemini)(?-u:\b)
        | (?-u:\b)(?:ai|llm|assistant|agent|model|claude|copilot|gpt|codex|gemini)s?(?-u:\b)[^.\n]{0,30}(?-u:\b)(?:must|should|shall|always|never)(?-u:\b)
        | (?-u:\b)(?:secretly|silently|covertly)(?-u:\b)
        ",
    )
    .expect("comment pattern compiles")
});

/// Markdown HTML comments that hold instructions. Comments inside code
/// blocks or inline code are shown as text, so they hide nothing and are
/// left alone; an unclosed comment hides the rest of the file and is read
/// to the end.
fn html_comments(src: &mut Source) {
    let text = src.text;
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = memmem::find(&bytes[from..], b"<!--") {
        let open = from + i;
        let body_start = open + 4;
        let close =
            memmem::find(&bytes[body_start..], b"-->").map_or(text.len(), |j| body_start + j);
        from = (close + 3).min(text.len()).max(body_start);
        if src.in_code_block(open) || in_inline_code(text, open) {
            continue;
        }
        let body = &text[body_start..close];
        if let Some(m) = COMMENT_INSTRUCTION.find(body) {
            let words = cut_chars(&sanitize(m.as_str().trim()), 60);
            let at = body_start + m.start();
            src.push(
                &rules::HTML_COMMENT_INSTRUCTIONS,
                at..body_start + m.end(),
                format!("an HTML comment (hidden when rendered, read by the agent) says {words:?}"),
            );
        }
    }
}
