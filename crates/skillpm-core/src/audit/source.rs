//! One file under scan: its text, where its lines and markdown code blocks
//! are, and the findings collected for it. Every rule module reads a
//! [`Source`] and pushes into it, so excerpts, line numbers and caps are
//! made one way.

use super::pattern::{floor_char_boundary, Words};
use super::rules;
use super::{Context, Finding, Rule};
use crate::text::{sanitize, LineIndex};
use std::cell::OnceCell;
use std::collections::HashSet;
use std::ops::Range;

/// At most this many findings per rule per file: a generated file with a
/// match on every line must not bury the rest of the report (the last one
/// kept says how many more there were).
const MAX_PER_RULE: usize = 20;
/// How much of the original text an excerpt shows, in characters.
const EXCERPT_CHARS: usize = 160;
/// How much of that comes before the match, so the match itself is in
/// view on a long line.
const EXCERPT_LEAD: usize = 40;
/// A sanitized excerpt grows (each hidden character becomes `\u{…}`); it
/// is cut again past this many characters.
const EXCERPT_SHOWN: usize = 240;
/// Binary sniffing: a NUL in this many leading bytes means "not text".
const SNIFF_BYTES: usize = 8 * 1024;

/// Names of markdown files: the only ones whose HTML comments are hidden
/// when rendered.
fn is_markdown(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    [".md", ".markdown", ".mdx", ".mdc"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Names of data files: read as data by the skill's code, not followed
/// by the agent or run. A path in a JSON list of patterns is not a read.
fn is_data(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    [
        ".json", ".jsonl", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".txt", ".xml", ".svg",
        ".lock", ".log",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

pub(crate) struct Source<'a> {
    pub rel: &'a str,
    pub text: &'a str,
    /// `text` with ASCII letters lowercased: the same length, so offsets
    /// carry over. The patterns that ignore case run on it, written in
    /// lowercase: a case-insensitive pattern has a weak literal prefilter
    /// (every case variant of every word), a lowercase one a strong one,
    /// and scanning for rare literals is most of what keeps a scan fast.
    pub lower: &'a str,
    pub markdown: bool,
    /// A data file ([`is_data`]).
    pub data: bool,
    /// Line starts, found when the first finding needs a line number.
    lines: OnceCell<LineIndex>,
    /// Byte ranges of fenced code blocks, in order (markdown only), found
    /// when a rule first asks: most files have no match to place.
    fences: OnceCell<Vec<Range<usize>>>,
    out: Vec<Finding>,
    seen: HashSet<(&'static str, usize)>,
}

impl<'a> Source<'a> {
    /// `lower` must be `text.to_ascii_lowercase()`.
    pub fn new(rel: &'a str, text: &'a str, lower: &'a str) -> Self {
        debug_assert_eq!(text.len(), lower.len());
        let markdown = is_markdown(rel);
        Source {
            rel,
            text,
            markdown,
            data: is_data(rel),
            lower,
            lines: OnceCell::new(),
            fences: OnceCell::new(),
            out: Vec::new(),
            seen: HashSet::new(),
        }
    }

    /// The file's name, without its directories.
    pub fn file_name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or(self.rel)
    }

    pub fn line(&self, at: usize) -> usize {
        self.lines
            .get_or_init(|| LineIndex::new(self.text))
            .line(at)
    }

    /// Whether any of `words` (lowercase) occurs in the file, in any case:
    /// a cheap test before a pattern that has no rare literal to start
    /// from.
    pub fn has_any(&self, words: &Words) -> bool {
        words.occur_in(self.lower)
    }

    /// Whether `word` (lowercase) occurs in the file, in any case: the
    /// same test as [`Source::has_any`] for one word, vectorised (the
    /// standard library's `str::contains` walks the text a byte at a
    /// time).
    pub fn mentions(&self, word: &str) -> bool {
        memchr::memmem::find(self.lower.as_bytes(), word.as_bytes()).is_some()
    }

    /// Whether byte `at` is inside a fenced code block of a markdown file.
    pub fn in_code_block(&self, at: usize) -> bool {
        self.code_block(at).is_some()
    }

    /// The byte range of the fenced code block holding `at`, if any.
    pub fn code_block(&self, at: usize) -> Option<Range<usize>> {
        let fences = self.fences.get_or_init(|| {
            if self.markdown {
                fenced_blocks(self.text)
            } else {
                Vec::new()
            }
        });
        let i = fences.partition_point(|r| r.end <= at);
        fences.get(i).filter(|r| r.contains(&at)).cloned()
    }

    /// Records a finding of `rule` for the text at `span`, quoting the line
    /// around it. One finding per rule and line: a second match on the same
    /// line adds nothing a reader needs.
    pub fn push(&mut self, rule: &'static Rule, span: Range<usize>, message: String) {
        let line = self.line(span.start);
        self.push_at_line(rule, line, excerpt(self.text, span), message);
    }

    /// Records a finding at a known line with its own excerpt (frontmatter
    /// keys, whole files).
    pub fn push_at_line(
        &mut self,
        rule: &'static Rule,
        line: usize,
        excerpt: String,
        message: String,
    ) {
        if !self.seen.insert((rule.id, line)) {
            return;
        }
        self.out.push(Finding {
            rule: rule.id,
            severity: rule.severity,
            file: self.rel.to_string(),
            line,
            excerpt,
            message,
        });
    }

    /// The findings, at most [`MAX_PER_RULE`] per rule.
    pub fn finish(mut self) -> Vec<Finding> {
        self.out
            .sort_by(|a, b| (a.rule, a.line).cmp(&(b.rule, b.line)));
        let mut kept: Vec<Finding> = Vec::with_capacity(self.out.len());
        let mut run = 0;
        let mut dropped = 0;
        for f in self.out {
            if kept.last().is_some_and(|k| k.rule == f.rule) {
                run += 1;
            } else {
                note_dropped(&mut kept, dropped);
                run = 1;
                dropped = 0;
            }
            if run > MAX_PER_RULE {
                dropped += 1;
            } else {
                kept.push(f);
            }
        }
        note_dropped(&mut kept, dropped);
        kept
    }
}

fn note_dropped(kept: &mut [Finding], dropped: usize) {
    if dropped > 0 {
        if let Some(last) = kept.last_mut() {
            last.message.push_str(&format!(
                " ({dropped} more like this in the file, not listed)"
            ));
        }
    }
}

/// The line holding `span`, cut to at most [`EXCERPT_CHARS`] characters
/// around the match's start, trimmed and sanitized.
pub(crate) fn excerpt(text: &str, span: Range<usize>) -> String {
    let at = floor_char_boundary(text, span.start.min(text.len()));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let before = &text[line_start..at];
    let from = before
        .char_indices()
        .rev()
        .nth(EXCERPT_LEAD - 1)
        .map_or(line_start, |(i, _)| line_start + i);
    let rest = &text[from..line_end];
    let to = rest
        .char_indices()
        .nth(EXCERPT_CHARS)
        .map_or(line_end, |(i, _)| from + i);
    let mut shown = String::new();
    if from > line_start {
        shown.push('…');
    }
    shown.push_str(&sanitize(text[from..to].trim()));
    if to < line_end {
        shown.push('…');
    }
    cut_chars(&shown, EXCERPT_SHOWN)
}

/// Whether `at` follows an odd number of backticks on its line: inside
/// inline code, shown as text.
pub(crate) fn in_inline_code(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at].bytes().filter(|&b| b == b'`').count() % 2 == 1
}

/// `s` cut to `max` characters, marked when cut.
pub(crate) fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Byte ranges of the fenced code blocks (```` ``` ```` or `~~~`, indented
/// at most three spaces) of a markdown text. An unclosed fence runs to the
/// end, as CommonMark reads it.
fn fenced_blocks(text: &str) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, u8, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        let fence_char = body.bytes().next().filter(|b| matches!(b, b'`' | b'~'));
        if let (true, Some(c)) = (indent <= 3, fence_char) {
            let len = body.bytes().take_while(|&b| b == c).count();
            if len >= 3 {
                match open {
                    None => open = Some((at, c, len)),
                    Some((start, oc, olen))
                        if oc == c && len >= olen && body[len..].trim().is_empty() =>
                    {
                        blocks.push(start..at + line.len());
                        open = None;
                    }
                    Some(_) => {}
                }
            }
        }
        at += line.len();
    }
    if let Some((start, _, _)) = open {
        blocks.push(start..text.len());
    }
    blocks
}

/// Compiled-program magic numbers: ELF, PE ("MZ"), Mach-O (both byte
/// orders, 32 and 64 bit) and fat Mach-O (which Java class files share:
/// compiled code either way).
fn executable_kind(bytes: &[u8]) -> Option<&'static str> {
    const MAGICS: &[(&[u8], &str)] = &[
        (b"\x7fELF", "an ELF (Linux) executable"),
        (b"MZ", "a Windows (PE) executable"),
        (b"\xfe\xed\xfa\xce", "a Mach-O (macOS) executable"),
        (b"\xfe\xed\xfa\xcf", "a Mach-O (macOS) executable"),
        (b"\xce\xfa\xed\xfe", "a Mach-O (macOS) executable"),
        (b"\xcf\xfa\xed\xfe", "a Mach-O (macOS) executable"),
        (
            b"\xca\xfe\xba\xbe",
            "a universal Mach-O executable or Java class",
        ),
    ];
    MAGICS
        .iter()
        .find(|(m, _)| bytes.starts_with(m))
        .map(|&(_, what)| what)
}

/// All the rules for one file's bytes (unsorted).
pub(crate) fn scan_bytes(rel: &str, bytes: &[u8], cx: &Context) -> Vec<Finding> {
    let sniff = &bytes[..bytes.len().min(SNIFF_BYTES)];
    let binary = sniff.contains(&0);
    // "MZ" alone starts plenty of text; a PE image has NULs right after.
    if let Some(what) = executable_kind(bytes).filter(|_| binary) {
        return vec![Finding::whole_file(
            &rules::BUNDLED_EXECUTABLE,
            rel,
            format!("{rel} is {what}"),
        )];
    }
    if binary {
        return Vec::new();
    }
    // Invalid UTF-8 is read with replacement characters: the rules look
    // for ASCII commands and paths, which survive, and an agent that
    // reads the file sees much the same.
    // (Checked first: valid UTF-8, the common case, is validated far
    // faster than the lossy decoder walks it.)
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let lower = text.to_ascii_lowercase();
    let mut src = Source::new(rel, &text, &lower);
    super::hidden::check(&mut src);
    super::exec::check(&mut src);
    super::secrets::check(&mut src);
    super::agent_config::check(&mut src);
    super::autorun::check_file(&mut src);
    if crate::skill::SKILL_FILES.contains(&rel) {
        skill_md(&mut src, cx);
    }
    src.finish()
}

/// The rules that read a `SKILL.md`'s frontmatter.
fn skill_md(src: &mut Source, cx: &Context) {
    super::autorun::check_load_commands(src);
    // The frontmatter is at the top; a body past the loader's cap must not
    // stop the rules that read it. The lossy text, so invalid UTF-8 in the
    // body does not either.
    let head = &src.text[..floor_char_boundary(
        src.text,
        src.text
            .len()
            .min(crate::skill::MAX_SKILL_MD_BYTES as usize),
    )];
    match crate::skill::parse_frontmatter(head.as_bytes()) {
        Ok(doc) => {
            super::autorun::check_frontmatter(src, &doc);
            super::tools::check(src, &doc);
            super::imitation::check(src, &doc, cx);
        }
        // No frontmatter at all is a file no agent loads as a skill; there
        // is nothing for these rules to read.
        Err(crate::skill::SkillError::NoFrontmatter) => {}
        Err(e) => {
            let line = e.line().unwrap_or(1);
            src.push_at_line(
                &rules::FRONTMATTER_UNREADABLE,
                line,
                String::new(),
                format!(
                    "{}; the hook, tool-grant and name rules did not run",
                    e.detail()
                ),
            );
        }
    }
}
