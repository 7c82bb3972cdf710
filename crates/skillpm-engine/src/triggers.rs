//! Triggers: the words and patterns a skill says should bring it forward,
//! and the brief description shown where space is short.
//!
//! Two frontmatter dialects are in use and both are read:
//! `triggers: {keywords: [...], verbs: [...], patterns: [...]}` (a map;
//! `phrases: [...]` is read in it too) and `triggers: [phrase, ...]` (a
//! list of phrases; a single string is one phrase). Keywords, verbs and
//! phrases match whole words, case-insensitively, so `pdf` matches "a PDF
//! file" but not "pdfs" or "mypdf". Patterns are regular expressions
//! (the `regex` crate: no backtracking, linear time), case-insensitive
//! unless the pattern says `(?-i)`, compiled with size limits; a pattern
//! that does not compile is a per-skill warning, never a failure.
//!
//! Loading is lenient: shapes the engine does not understand are
//! warnings, and every list is capped so a hostile `SKILL.md` cannot make
//! the index large.

use serde_json::{Map, Value};

/// At most this many entries are read from each trigger list.
pub const MAX_TRIGGERS_PER_LIST: usize = 64;
/// Longest keyword, verb, phrase or pattern read (in characters).
pub const MAX_TRIGGER_CHARS: usize = 256;
/// Compiled-program limit for one pattern; bigger ones are refused.
pub const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
/// Lazy-DFA cache limit for one pattern.
pub const PATTERN_DFA_LIMIT: usize = 256 * 1024;
/// Longest brief description, in characters.
pub const MAX_BRIEF_CHARS: usize = 200;

/// One compiled `patterns` entry.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as written.
    pub source: String,
    pub regex: regex::Regex,
}

/// What a skill declares under `triggers`. Lists keep the author's order,
/// without duplicates.
#[derive(Debug, Clone, Default)]
pub struct Triggers {
    pub keywords: Vec<String>,
    pub verbs: Vec<String>,
    pub phrases: Vec<String>,
    pub patterns: Vec<Pattern>,
}

impl Triggers {
    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty()
            && self.verbs.is_empty()
            && self.phrases.is_empty()
            && self.patterns.is_empty()
    }

    /// Reads `triggers` from a frontmatter. Returns the triggers and the
    /// warnings (bad patterns, shapes that were ignored).
    pub fn from_frontmatter(fm: &Map<String, Value>) -> (Triggers, Vec<String>) {
        let mut t = Triggers::default();
        let mut warnings = Vec::new();
        match fm.get("triggers") {
            None | Some(Value::Null) => {}
            Some(v @ (Value::Array(_) | Value::String(_))) => {
                t.phrases = strings(v, "triggers", &mut warnings)
            }
            Some(Value::Object(map)) => {
                for (key, v) in map {
                    let list = match key.as_str() {
                        "keywords" => &mut t.keywords,
                        "verbs" => &mut t.verbs,
                        "phrases" => &mut t.phrases,
                        "patterns" => {
                            for p in strings(v, "triggers.patterns", &mut warnings) {
                                match compile(&p) {
                                    Ok(regex) => t.patterns.push(Pattern { source: p, regex }),
                                    Err(e) => warnings.push(format!(
                                        "triggers.patterns: `{}` is not used: {e}",
                                        crate::catalog::one_line(&p, 60)
                                    )),
                                }
                            }
                            continue;
                        }
                        other => {
                            warnings.push(format!("triggers: unknown key `{other}` (ignored)"));
                            continue;
                        }
                    };
                    *list = strings(v, &format!("triggers.{key}"), &mut warnings);
                }
            }
            Some(_) => warnings.push(
                "triggers: expected a list of phrases or a map of keywords/verbs/patterns (ignored)"
                    .to_string(),
            ),
        }
        (t, warnings)
    }
}

/// Why a trigger pattern is not used.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("it compiles to more than the {0}-byte limit")]
    TooBig(usize),
    /// The last line of the syntax error: what is wrong.
    #[error("{reason}")]
    Syntax {
        reason: String,
        #[source]
        source: regex::Error,
    },
}

/// Compiles one pattern with the size limits; the error is one line.
pub fn compile(pattern: &str) -> Result<regex::Regex, PatternError> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_DFA_LIMIT)
        .nest_limit(64)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => PatternError::TooBig(limit),
            source => {
                let text = source.to_string();
                let last = text.lines().rev().find(|l| !l.trim().is_empty());
                let reason = last.unwrap_or("invalid pattern").trim().to_string();
                PatternError::Syntax { reason, source }
            }
        })
}

/// A string or list of strings, trimmed, without empties or duplicates,
/// capped in count and length.
fn strings(v: &Value, what: &str, warnings: &mut Vec<String>) -> Vec<String> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut out: Vec<String> = Vec::new();
    let mut odd = 0usize;
    for item in items {
        let Some(s) = item.as_str().map(str::trim) else {
            odd += 1;
            continue;
        };
        if s.is_empty() || out.iter().any(|o| o == s) {
            continue;
        }
        if s.chars().count() > MAX_TRIGGER_CHARS {
            warnings.push(format!(
                "{what}: an entry longer than {MAX_TRIGGER_CHARS} characters is ignored"
            ));
            continue;
        }
        if out.len() == MAX_TRIGGERS_PER_LIST {
            warnings.push(format!(
                "{what}: only the first {MAX_TRIGGERS_PER_LIST} entries are used"
            ));
            break;
        }
        out.push(s.to_string());
    }
    if odd > 0 {
        warnings.push(format!(
            "{what}: {odd} entry(ies) that are not strings ignored"
        ));
    }
    out
}

/// The brief description: the frontmatter's `brief_description` when it is
/// a non-empty string, else the first sentence of `description`; whitespace
/// collapsed, at most [`MAX_BRIEF_CHARS`] characters.
pub fn brief_description(fm: &Map<String, Value>, description: &str) -> String {
    let explicit = fm
        .get("brief_description")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let text = explicit.unwrap_or_else(|| first_sentence(description));
    crate::catalog::one_line(text, MAX_BRIEF_CHARS)
}

/// The first sentence of `s`: up to and including the first `.`, `!` or
/// `?` that ends the text or is followed by whitespace and then something
/// other than a lower-case letter (so "e.g. forms" does not end it), or up
/// to the first blank line, whichever comes first.
pub fn first_sentence(s: &str) -> &str {
    let s = s.trim();
    let para_end = s.find("\n\n").or_else(|| s.find("\r\n\r\n"));
    let s = &s[..para_end.unwrap_or(s.len())];
    for (i, c) in s.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let end = i + c.len_utf8();
        let rest = &s[end..];
        let after = rest.trim_start();
        if rest.is_empty() {
            return s;
        }
        if rest.len() != after.len() && !after.starts_with(char::is_lowercase) {
            return &s[..end];
        }
    }
    s
}

/// Calls `f` with each word of `s`, lower-cased: maximal runs of
/// alphanumeric characters. One buffer is reused, so tokenizing allocates
/// nothing per word.
pub fn for_each_word(s: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    for c in s.chars() {
        if c.is_alphanumeric() {
            if c.is_ascii() {
                buf.push(c.to_ascii_lowercase());
            } else {
                buf.extend(c.to_lowercase());
            }
        } else if !buf.is_empty() {
            f(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        f(&buf);
    }
}

/// The words of `s` joined by single spaces: the form keywords, verbs and
/// phrases are matched in, so `Pull-Request` and "pull request" are one key.
pub fn word_key(s: &str) -> String {
    let mut out = String::new();
    for_each_word(s, |w| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::frontmatter as fm;

    #[test]
    fn reads_both_dialects() {
        let (t, w) = Triggers::from_frontmatter(&fm(
            "triggers: {keywords: [pdf, PDF, ' forms '], verbs: [convert], patterns: ['\\bpage \\d+']}",
        ));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(t.keywords, ["pdf", "PDF", "forms"]);
        assert_eq!(t.verbs, ["convert"]);
        assert_eq!(t.patterns.len(), 1);
        assert!(t.patterns[0].regex.is_match("go to PAGE 12"));
        let (t, w) = Triggers::from_frontmatter(&fm("triggers: [review my code, 'audit']"));
        assert!(w.is_empty());
        assert_eq!(t.phrases, ["review my code", "audit"]);
        let (t, _) = Triggers::from_frontmatter(&fm("triggers: just one"));
        assert_eq!(t.phrases, ["just one"]);
    }

    #[test]
    fn bad_pattern_is_a_warning_not_a_failure() {
        let (t, w) = Triggers::from_frontmatter(&fm(
            "triggers: {keywords: [k], patterns: ['(unclosed', 'ok', 'a{1000}{1000}']}",
        ));
        assert_eq!(t.keywords, ["k"]);
        assert_eq!(
            t.patterns
                .iter()
                .map(|p| p.source.as_str())
                .collect::<Vec<_>>(),
            ["ok"]
        );
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("(unclosed") && w[0].contains("not used"),
            "{w:?}"
        );
        assert!(w[1].contains("limit"), "{w:?}");
    }

    #[test]
    fn odd_shapes_are_warnings() {
        let (t, w) = Triggers::from_frontmatter(&fm("triggers: {keywords: [1, x], colour: red}"));
        assert_eq!(t.keywords, ["x"]);
        assert_eq!(w.len(), 2, "{w:?}");
        let (t, w) = Triggers::from_frontmatter(&fm("triggers: 5"));
        assert!(t.is_empty() && w.len() == 1);
    }

    #[test]
    fn brief_is_the_field_or_the_first_sentence() {
        let f = fm("brief_description: Short one");
        assert_eq!(brief_description(&f, "Long. Longer."), "Short one");
        let f = Map::new();
        assert_eq!(
            brief_description(&f, "Fill PDF forms, e.g. tax forms. Then more."),
            "Fill PDF forms, e.g. tax forms."
        );
        assert_eq!(first_sentence("Does it work? Yes."), "Does it work?");
        assert_eq!(first_sentence("No stop at all"), "No stop at all");
        assert_eq!(
            first_sentence("Version 1.2 is here. Next"),
            "Version 1.2 is here."
        );
        assert_eq!(first_sentence("Para one\n\nPara two."), "Para one");
        assert_eq!(first_sentence("Ends here."), "Ends here.");
    }

    #[test]
    fn words_are_alphanumeric_runs_lowercased() {
        let mut w = Vec::new();
        for_each_word("Pull-Request, PDF2text ÄBC_x", |s| w.push(s.to_string()));
        assert_eq!(w, ["pull", "request", "pdf2text", "äbc", "x"]);
        assert_eq!(word_key("  Code  Review! "), "code review");
    }
}
