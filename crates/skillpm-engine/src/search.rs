//! Ranked local search over the skills an agent may use: one
//! implementation for `skillpm search --local`, `prompt --query` and the
//! MCP server's `search_skills`.
//!
//! A [`SearchIndex`] is built once from a catalog's visible skills
//! ([`Catalog::visible`]: eligible and not `user_invocable_only`) and then
//! answers queries without touching the catalog. Every hit has a
//! [`MatchKind`]; hits are ranked by kind first, in this order:
//!
//! 1. [`MatchKind::Mention`]: the query names the skill (its `name` or its
//!    command, as a whole token: `use code-review`, `/code-review`,
//!    `sven/implement`);
//! 2. [`MatchKind::TriggerPhrase`]: a trigger phrase occurs in the query,
//!    whole words;
//! 3. [`MatchKind::Keyword`]: a trigger keyword or verb occurs, whole words;
//! 4. [`MatchKind::Pattern`]: a trigger pattern matches the query;
//! 5. [`MatchKind::Text`]: TF-IDF only.
//!
//! Within a kind, hits are ordered by TF-IDF relevance over weighted
//! fields (name 4, triggers 3, description 2, body 1): for each query word
//! that is not a stop word, `idf × (1 + ln(tf))`, with `tf` the weighted
//! count and `idf = ln(1 + N / df)`. The score shown is the kind's rank
//! (4 for a mention down to 0 for text) plus `rel / (1 + rel)`, rounded to
//! four decimals, so a higher score always ranks higher; equal scores are
//! ordered by command.
//!
//! Everything a query needs is precomputed: a map from lower-cased names
//! and commands to skills, a map from trigger word sequences to skills,
//! the compiled patterns, and term postings with their weights. A query
//! does hash lookups for its own words and word sequences, runs the
//! patterns, and allocates one score table.

use crate::catalog::{Catalog, SkillEntry};
use crate::triggers::{for_each_word, word_key};
use serde::Serialize;
use std::collections::HashMap;

/// Field weights for TF-IDF.
const W_NAME: f32 = 4.0;
const W_TRIGGERS: f32 = 3.0;
const W_DESCRIPTION: f32 = 2.0;
const W_BODY: f32 = 1.0;
/// Only this much of a body is indexed (bytes, at a character boundary).
pub const MAX_BODY_INDEXED: usize = 64 * 1024;
/// Only this much of a query is read (bytes, at a character boundary).
pub const MAX_QUERY_BYTES: usize = 4096;
/// Longest trigger, in words, matched as a sequence.
const MAX_TRIGGER_WORDS: usize = 8;
/// Longest name, in space-separated parts, matched as a mention.
const MAX_NAME_PARTS: usize = 4;

/// Why a skill matched, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchKind {
    Mention,
    TriggerPhrase,
    Keyword,
    Pattern,
    Text,
}

impl MatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Mention => "mention",
            MatchKind::TriggerPhrase => "trigger-phrase",
            MatchKind::Keyword => "keyword",
            MatchKind::Pattern => "pattern",
            MatchKind::Text => "text",
        }
    }

    /// Whether the skill asked for this query (a mention or a trigger), as
    /// opposed to sharing words with it.
    pub fn is_trigger(self) -> bool {
        self != MatchKind::Text
    }

    fn rank(self) -> u32 {
        match self {
            MatchKind::Mention => 4,
            MatchKind::TriggerPhrase => 3,
            MatchKind::Keyword => 2,
            MatchKind::Pattern => 1,
            MatchKind::Text => 0,
        }
    }
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub command: String,
    pub score: f64,
    pub kind: MatchKind,
    /// The fields that matched, in a fixed order: `name`, `command`,
    /// `phrases`, `keywords`, `verbs`, `patterns`, `triggers` (words of a
    /// trigger, when no trigger matched as a whole), `description`, `body`.
    pub fields: Vec<&'static str>,
}

// Field bits, in the order `fields` lists them.
const F_NAME: u16 = 1 << 0;
const F_COMMAND: u16 = 1 << 1;
const F_PHRASES: u16 = 1 << 2;
const F_KEYWORDS: u16 = 1 << 3;
const F_VERBS: u16 = 1 << 4;
const F_PATTERNS: u16 = 1 << 5;
const F_TRIGGERS: u16 = 1 << 6;
const F_DESCRIPTION: u16 = 1 << 7;
const F_BODY: u16 = 1 << 8;
const FIELD_NAMES: [&str; 9] = [
    "name",
    "command",
    "phrases",
    "keywords",
    "verbs",
    "patterns",
    "triggers",
    "description",
    "body",
];
const F_WHOLE_TRIGGER: u16 = F_PHRASES | F_KEYWORDS | F_VERBS | F_PATTERNS;

/// One term's postings: the documents holding it, with weighted term
/// frequency and which text fields hold it.
#[derive(Debug, Default)]
struct Postings {
    idf: f32,
    docs: Vec<(u32, f32, u16)>,
}

/// The precomputed index. Built once; queries take `&self`, so one index
/// can serve many threads.
#[derive(Debug, Default)]
pub struct SearchIndex {
    commands: Vec<String>,
    /// Each doc's place in command order, and the doc at each place, so
    /// ties are broken by comparing integers.
    order: Vec<u32>,
    by_order: Vec<u32>,
    /// Lower-cased name or command → (doc, F_NAME or F_COMMAND).
    mentions: HashMap<String, Vec<(u32, u16)>>,
    /// Word key of a phrase, keyword or verb → (doc, its field bit).
    triggers: HashMap<String, Vec<(u32, u16)>>,
    max_trigger_words: usize,
    patterns: Vec<(u32, regex::Regex)>,
    postings: HashMap<String, Postings>,
}

impl SearchIndex {
    /// Indexes `cat`'s visible skills.
    pub fn build(cat: &Catalog) -> SearchIndex {
        Self::from_entries(cat.visible())
    }

    /// Indexes the given skills (in command order, for stable ids).
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = &'a SkillEntry>) -> SearchIndex {
        let mut ix = SearchIndex::default();
        let mut local: HashMap<String, (f32, u16)> = HashMap::new();
        for s in entries {
            let id = ix.commands.len() as u32;
            ix.commands.push(s.command.clone());
            for (text, bit) in [(&s.name, F_NAME), (&s.command, F_COMMAND)] {
                let key = text.trim().to_lowercase();
                if !key.is_empty() {
                    let list = ix.mentions.entry(key).or_default();
                    if !list.iter().any(|&(d, b)| d == id && b == bit) {
                        list.push((id, bit));
                    }
                }
            }
            let t = &s.triggers;
            for (list, bit) in [
                (&t.phrases, F_PHRASES),
                (&t.keywords, F_KEYWORDS),
                (&t.verbs, F_VERBS),
            ] {
                for p in list {
                    let key = word_key(p);
                    let words = key.split(' ').count();
                    if key.is_empty() || words > MAX_TRIGGER_WORDS {
                        continue;
                    }
                    ix.max_trigger_words = ix.max_trigger_words.max(words);
                    let list = ix.triggers.entry(key).or_default();
                    if !list.contains(&(id, bit)) {
                        list.push((id, bit));
                    }
                }
            }
            ix.patterns
                .extend(t.patterns.iter().map(|p| (id, p.regex.clone())));

            // Weighted term counts for this skill, then into the postings.
            let mut add = |text: &str, w: f32, bit: u16| {
                for_each_word(text, |word| match local.get_mut(word) {
                    Some(e) => {
                        e.0 += w;
                        e.1 |= bit;
                    }
                    None => {
                        local.insert(word.to_string(), (w, bit));
                    }
                });
            };
            add(&s.name, W_NAME, F_NAME);
            if s.command != s.name {
                add(&s.command, W_NAME, F_NAME);
            }
            for p in t.phrases.iter().chain(&t.keywords).chain(&t.verbs) {
                add(p, W_TRIGGERS, F_TRIGGERS);
            }
            add(&s.description, W_DESCRIPTION, F_DESCRIPTION);
            if let Some(doc) = &s.doc {
                add(prefix(&doc.body, MAX_BODY_INDEXED), W_BODY, F_BODY);
            }
            for (word, (tf, bits)) in local.drain() {
                ix.postings
                    .entry(word)
                    .or_default()
                    .docs
                    .push((id, tf, bits));
            }
        }
        let mut by_order: Vec<u32> = (0..ix.commands.len() as u32).collect();
        by_order.sort_by(|&a, &b| ix.commands[a as usize].cmp(&ix.commands[b as usize]));
        ix.order = vec![0; by_order.len()];
        for (place, &doc) in by_order.iter().enumerate() {
            ix.order[doc as usize] = place as u32;
        }
        ix.by_order = by_order;
        let n = ix.commands.len() as f32;
        for p in ix.postings.values_mut() {
            p.idf = (1.0 + n / p.docs.len() as f32).ln();
            // Store 1 + ln(tf) so a query only multiplies.
            for d in &mut p.docs {
                d.1 = 1.0 + d.1.ln();
            }
        }
        ix
    }

    /// How many skills are indexed.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Whether any indexed skill declares triggers.
    pub fn has_triggers(&self) -> bool {
        !self.triggers.is_empty() || !self.patterns.is_empty()
    }

    /// The best `limit` hits for `query`, ranked as the module describes.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        if limit == 0 || self.commands.is_empty() {
            return Vec::new();
        }
        let query = prefix(query, MAX_QUERY_BYTES);
        let mut acc = vec![Acc::default(); self.commands.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut hit = |doc: u32, kind: Option<MatchKind>, bits: u16, rel: f32| {
            let a = &mut acc[doc as usize];
            if a.bits == 0 && a.kind.is_none() && a.rel == 0.0 {
                touched.push(doc);
            }
            if let Some(k) = kind {
                a.kind = Some(a.kind.map_or(k, |old| old.min(k)));
            }
            a.bits |= bits;
            a.rel += rel;
        };

        self.mentions_in(query, |doc, bit| {
            hit(doc, Some(MatchKind::Mention), bit, 0.0)
        });

        let mut words: Vec<String> = Vec::new();
        for_each_word(query, |w| words.push(w.to_string()));
        if self.max_trigger_words > 0 {
            let mut key = String::new();
            for start in 0..words.len() {
                key.clear();
                for (n, w) in words[start..]
                    .iter()
                    .take(self.max_trigger_words)
                    .enumerate()
                {
                    if n > 0 {
                        key.push(' ');
                    }
                    key.push_str(w);
                    if let Some(list) = self.triggers.get(&key) {
                        for &(doc, bit) in list {
                            let kind = if bit == F_PHRASES {
                                MatchKind::TriggerPhrase
                            } else {
                                MatchKind::Keyword
                            };
                            hit(doc, Some(kind), bit, 0.0);
                        }
                    }
                }
            }
        }
        for (doc, re) in &self.patterns {
            if re.is_match(query) {
                hit(*doc, Some(MatchKind::Pattern), F_PATTERNS, 0.0);
            }
        }

        words.sort_unstable();
        words.dedup();
        for w in words.iter().filter(|w| !is_stop_word(w)) {
            if let Some(p) = self.postings.get(w.as_str()) {
                for &(doc, tf, bits) in &p.docs {
                    hit(doc, None, bits, p.idf * tf);
                }
            }
        }

        // One sortable key per hit: score units descending, then command
        // order ascending, packed in a u64 so ranking compares integers.
        let mut keys: Vec<u64> = touched
            .iter()
            .filter_map(|&doc| {
                let a = &acc[doc as usize];
                let kind = a.kind.unwrap_or(MatchKind::Text);
                let units = score_units(kind, a.rel);
                (kind != MatchKind::Text || units > 0).then(|| {
                    (u64::from(u32::MAX - units) << 32) | u64::from(self.order[doc as usize])
                })
            })
            .collect();
        if keys.len() > limit {
            keys.select_nth_unstable(limit - 1);
            keys.truncate(limit);
        }
        keys.sort_unstable();
        keys.into_iter()
            .map(|key| {
                let doc = self.by_order[(key & u64::from(u32::MAX)) as usize];
                let a = &acc[doc as usize];
                SearchHit {
                    command: self.commands[doc as usize].clone(),
                    score: f64::from(u32::MAX - (key >> 32) as u32) / SCORE_UNITS,
                    kind: a.kind.unwrap_or(MatchKind::Text),
                    fields: field_names(a.bits),
                }
            })
            .collect()
    }

    /// Calls `f(doc, F_NAME | F_COMMAND)` for every skill the query names.
    /// A mention is a token of letters, digits, `-`, `_`, `.` and `/`
    /// (so `code-review` is one token and "code review" is not a mention),
    /// any `/`-separated run of its parts, or up to [`MAX_NAME_PARTS`]
    /// such tokens joined by spaces, for names that hold spaces.
    fn mentions_in(&self, query: &str, mut f: impl FnMut(u32, u16)) {
        if self.mentions.is_empty() {
            return;
        }
        let lower = query.to_lowercase();
        let tokens: Vec<&str> = lower
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
            .map(|t| t.trim_matches(|c| matches!(c, '.' | '/')))
            .filter(|t| !t.is_empty())
            .collect();
        let mut seen: Vec<(u32, u16)> = Vec::new();
        let mut emit = |key: &str, seen: &mut Vec<(u32, u16)>| {
            if let Some(list) = self.mentions.get(key) {
                for &m in list {
                    if !seen.contains(&m) {
                        seen.push(m);
                        f(m.0, m.1);
                    }
                }
            }
        };
        let mut key = String::new();
        for (i, t) in tokens.iter().enumerate() {
            let parts: Vec<&str> = t.split('/').filter(|p| !p.is_empty()).collect();
            for a in 0..parts.len() {
                for b in a + 1..=parts.len() {
                    key.clear();
                    key.push_str(&parts[a..b].join("/"));
                    emit(&key, &mut seen);
                }
            }
            key.clear();
            key.push_str(t);
            for next in tokens.iter().skip(i + 1).take(MAX_NAME_PARTS - 1) {
                key.push(' ');
                key.push_str(next);
                emit(&key, &mut seen);
            }
        }
    }
}

/// Scores are kept in ten-thousandths: four decimals, as printed.
const SCORE_UNITS: f64 = 10_000.0;

/// The kind's rank plus `rel / (1 + rel)`, in [`SCORE_UNITS`]; the
/// fraction is capped below one so a kind never reaches the next.
fn score_units(kind: MatchKind, rel: f32) -> u32 {
    let rel = f64::from(rel.max(0.0));
    let frac = ((rel / (1.0 + rel)) * SCORE_UNITS)
        .round()
        .min(SCORE_UNITS - 1.0);
    kind.rank() * SCORE_UNITS as u32 + frac as u32
}

#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    kind: Option<MatchKind>,
    bits: u16,
    rel: f32,
}

fn field_names(bits: u16) -> Vec<&'static str> {
    let bits = if bits & F_WHOLE_TRIGGER != 0 {
        bits & !F_TRIGGERS
    } else {
        bits
    };
    FIELD_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// The first `max` bytes of `s`, cut at a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Words too common to rank by. Trigger and mention matching still see
/// them; only TF-IDF skips them.
fn is_stop_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "can"
            | "do"
            | "for"
            | "from"
            | "how"
            | "i"
            | "in"
            | "is"
            | "it"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "please"
            | "so"
            | "that"
            | "the"
            | "this"
            | "to"
            | "use"
            | "we"
            | "what"
            | "when"
            | "with"
            | "you"
            | "your"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{catalog, Spec};

    fn index(skills: &[Spec]) -> SearchIndex {
        let (_dir, cat) = catalog(skills);
        SearchIndex::build(&cat)
    }

    fn ranked(ix: &SearchIndex, q: &str) -> Vec<(String, MatchKind)> {
        ix.search(q, 10)
            .into_iter()
            .map(|h| (h.command, h.kind))
            .collect()
    }

    #[test]
    fn ranking_order_is_mention_phrase_keyword_pattern_text() {
        let ix = index(&[
            (
                "e-text",
                "Handles invoices and invoice totals.",
                "",
                "invoice invoice invoice",
            ),
            (
                "d-pattern",
                "Something else.",
                "triggers: {patterns: ['inv\\w+ total']}",
                "",
            ),
            ("c-keyword", "Other.", "triggers: {keywords: [invoice]}", ""),
            (
                "b-phrase",
                "Other.",
                "triggers: [sum the invoice total]",
                "",
            ),
            ("a-invoice", "Unrelated.", "", ""),
        ]);
        let got = ranked(&ix, "please sum the invoice total with a-invoice");
        assert_eq!(
            got,
            [
                ("a-invoice".to_string(), MatchKind::Mention),
                ("b-phrase".to_string(), MatchKind::TriggerPhrase),
                ("c-keyword".to_string(), MatchKind::Keyword),
                ("d-pattern".to_string(), MatchKind::Pattern),
                ("e-text".to_string(), MatchKind::Text),
            ]
        );
        let hits = ix.search("please sum the invoice total with a-invoice", 10);
        assert!(hits.windows(2).all(|w| w[0].score > w[1].score), "{hits:?}");
        assert_eq!(hits[0].fields, ["name", "command"]);
        assert_eq!(hits[1].fields, ["phrases"]);
        assert_eq!(hits[2].fields, ["keywords"]);
        assert_eq!(hits[4].fields, ["description", "body"]);
    }

    #[test]
    fn ties_break_by_command() {
        let ix = index(&[
            ("zeta", "Formats tables.", "", ""),
            ("alpha", "Formats tables.", "", ""),
            ("mid", "Formats tables.", "", ""),
        ]);
        let hits = ix.search("format the tables", 10);
        let cmds: Vec<_> = hits.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(cmds, ["alpha", "mid", "zeta"]);
        assert!(hits.iter().all(|h| h.score == hits[0].score));
        assert_eq!(ix.search("format the tables", 2).len(), 2);
        assert_eq!(ix.search("format the tables", 2)[1].command, "mid");
    }

    #[test]
    fn keywords_match_on_word_boundaries() {
        let ix = index(&[(
            "doc-tool",
            "Works with documents.",
            "triggers: {keywords: [pdf, pull request], verbs: [merge]}",
            "",
        )]);
        assert_eq!(ix.search("open the PDF.", 5)[0].kind, MatchKind::Keyword);
        assert_eq!(
            ix.search("open the Pull-Request", 5)[0].kind,
            MatchKind::Keyword
        );
        assert_eq!(ix.search("merge it", 5)[0].fields, ["verbs"]);
        assert!(ix.search("mypdfs and pdfx", 5).is_empty());
        assert!(ix.search("merged", 5).is_empty());
    }

    #[test]
    fn mentions_need_whole_tokens() {
        let ix = index(&[("sven/implement", "Implements.", "name: implement", "")]);
        let h = ix.search("run sven/implement now", 5);
        assert_eq!(h[0].kind, MatchKind::Mention);
        assert_eq!(h[0].fields, ["name", "command"]);
        assert_eq!(ix.search("/implement", 5)[0].kind, MatchKind::Mention);
        // Part of a longer token is not a mention.
        assert_ne!(
            ix.search("reimplement", 5).first().map(|h| h.kind),
            Some(MatchKind::Mention)
        );
    }
}
