//! How the rules' constant patterns are compiled and matched.
//!
//! Prose patterns (wording that presents a download as required, hidden
//! instructions) are `&str` regexes with Unicode classes: any space
//! between two words is a space to a reader.
//!
//! Code patterns (shell commands, program text, paths) are byte regexes
//! with Unicode off: `\s` is an ASCII blank, `\S` and `[^\n]` any other
//! byte, `(?i)` folds ASCII only. That is what a shell or an interpreter
//! reads (a no-break space does not end a shell word), and it is much
//! cheaper to compile: a Unicode class repeated inside a bounded gap
//! (`curl ... | sh` within 400 characters) compiles to an automaton larger
//! than the rest of the rule table together, paid by every process before
//! its first file (BENCHMARKS.md, audit.py). A gap then counts bytes, not
//! characters, which only narrows it on non-ASCII lines.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{bytes, Regex};
use std::ops::Range;
use std::sync::OnceLock;

/// Compiles one of the rules' constant prose patterns.
pub(crate) fn text(pattern: &str) -> Regex {
    Regex::new(pattern).expect("audit pattern compiles")
}

/// Compiles one of the rules' constant code patterns (see the module
/// comment).
pub(crate) fn code(pattern: &str) -> bytes::Regex {
    bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("audit pattern compiles")
}

/// The matches of a [`code`] pattern in `hay`, as ranges on it.
pub(crate) fn code_matches<'a>(
    re: &'a bytes::Regex,
    hay: &'a str,
) -> impl Iterator<Item = Range<usize>> + 'a {
    re.find_iter(hay.as_bytes()).map(move |m| span(hay, m))
}

/// A [`code`] match (or group) in `hay` as a range on it, widened to
/// character boundaries: a byte class at either end of a match could
/// otherwise split a character, and the range is used to slice `hay`.
pub(crate) fn span(hay: &str, m: bytes::Match) -> Range<usize> {
    floor_char_boundary(hay, m.start())..ceil_char_boundary(hay, m.end())
}

/// Words that gate a pattern with no rare literal of its own: the pattern
/// runs only on text holding one of them. All are looked for in one pass
/// (built on first use), not one pass per word.
pub(crate) struct Words {
    list: List,
    matcher: OnceLock<AhoCorasick>,
}

enum List {
    Own(&'static [&'static str]),
    /// Every word of these: one pass that passes a file over for several
    /// gates at once (most files hold none of their words).
    AnyOf(&'static [&'static Words]),
}

impl Words {
    pub(crate) const fn new(list: &'static [&'static str]) -> Words {
        Words {
            list: List::Own(list),
            matcher: OnceLock::new(),
        }
    }

    /// The words of all of `gates`.
    pub(crate) const fn any_of(gates: &'static [&'static Words]) -> Words {
        Words {
            list: List::AnyOf(gates),
            matcher: OnceLock::new(),
        }
    }

    fn words(&self) -> Vec<&'static str> {
        match self.list {
            List::Own(list) => list.to_vec(),
            List::AnyOf(gates) => gates.iter().flat_map(|g| g.words()).collect(),
        }
    }

    /// Whether any of the words occurs in `hay`.
    pub(crate) fn occur_in(&self, hay: &str) -> bool {
        self.matcher
            .get_or_init(|| {
                // Leftmost matching lets the searcher use its vectorised
                // path; which word matches does not matter here. Most of
                // a search is that prefilter, so the automaton behind it
                // is the one quickest to build (a DFA took longer to
                // build, once per process, than most scans spend in it).
                let mut words = self.words();
                words.sort_unstable();
                words.dedup();
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(words)
                    .expect("audit words compile")
            })
            .is_match(hay)
    }
}

/// The largest character boundary of `s` at or before `at`.
pub(crate) fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `s` at or after `at`.
fn ceil_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_match_never_splits_a_character() {
        // The byte class can start or end inside "é" (two bytes); the
        // range handed back must still slice the text.
        let re = code(r"[^\n]{1,3}x[^\n]{1,2}");
        let hay = "aéxé\n";
        let ranges: Vec<_> = code_matches(&re, hay).collect();
        assert_eq!(ranges.len(), 1);
        let r = ranges[0].clone();
        assert!(hay.is_char_boundary(r.start) && hay.is_char_boundary(r.end));
        assert_eq!(&hay[r], "aéxé");
    }

    #[test]
    fn words_occur_when_any_one_does() {
        static W: Words = Words::new(&["curl", "wget", "url"]);
        assert!(W.occur_in("then wget it"));
        assert!(W.occur_in("a url"));
        assert!(!W.occur_in("nothing here"));
        static V: Words = Words::new(&["base64", "curl"]);
        static BOTH: Words = Words::any_of(&[&W, &V]);
        assert!(BOTH.occur_in("then wget it"));
        assert!(BOTH.occur_in("base64 -d"));
        assert!(!BOTH.occur_in("nothing here"));
    }

    #[test]
    fn boundaries_clamp_to_the_text() {
        assert_eq!(floor_char_boundary("é", 1), 0);
        assert_eq!(ceil_char_boundary("é", 1), 2);
        assert_eq!(floor_char_boundary("ab", 9), 2);
    }
}
