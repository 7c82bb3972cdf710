//! Progressive disclosure: how much of the catalog a query earns, in four
//! tiers (`skillpm prompt --query`, and any runtime embedding the engine).
//!
//! The rules, first that applies wins; "skills" are the visible ones
//! ([`Catalog::visible`]):
//!
//! - **Tier 0**, nothing: there are no skills.
//! - **Tier 2**, the registry (`<available_skills>` with brief
//!   descriptions, within the character budget): the query asks what is
//!   available ([`asks_for_listing`]).
//! - **Tier 3**, full instructions (each skill's `<skill_content>` block,
//!   as `load` prints it) for the top N skills the query mentions or
//!   triggers (a search hit of kind mention, trigger phrase, keyword or
//!   pattern; words merely shared with a description do not count).
//! - **Tier 1**, a one-line breadcrumb `[N skills available]`: some skill
//!   declares triggers, and none matched.
//! - **Tier 2** again: no skill declares triggers, so the agent needs the
//!   registry to choose.

use crate::catalog::Catalog;
use crate::load;
use crate::prompt::{self, Detail, Format};
use crate::search::SearchIndex;
use crate::triggers::word_key;
use serde::Serialize;

/// Default number of skills whose instructions tier 3 includes.
pub const DEFAULT_MAX_SKILLS: usize = 3;

/// How much was disclosed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    Nothing = 0,
    Breadcrumb = 1,
    Registry = 2,
    Instructions = 3,
}

impl Tier {
    pub fn number(self) -> u8 {
        self as u8
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Tier 3 includes at most this many skills.
    pub max_skills: usize,
    /// Character budget of the tier 2 registry.
    pub budget: usize,
    /// Dialect of the tier 2 registry.
    pub format: Format,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_skills: DEFAULT_MAX_SKILLS,
            budget: prompt::DEFAULT_BUDGET,
            format: Format::Seed,
        }
    }
}

/// What to put in the prompt for one query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disclosure {
    pub tier: Tier,
    /// The skills whose instructions tier 3 included, best first.
    pub commands: Vec<String>,
    /// The text for the prompt (empty for tier 0).
    pub text: String,
}

/// Picks the tier for `query` and renders it. `index` must have been
/// built from `cat`.
pub fn disclose(cat: &Catalog, index: &SearchIndex, query: &str, opts: &Options) -> Disclosure {
    let count = cat.visible().count();
    let done = |tier, commands, text| Disclosure {
        tier,
        commands,
        text,
    };
    if count == 0 {
        return done(Tier::Nothing, Vec::new(), String::new());
    }
    let registry =
        || prompt::render_entries(cat.visible(), opts.budget, opts.format, Detail::Brief);
    if asks_for_listing(query) {
        return done(Tier::Registry, Vec::new(), registry());
    }
    let commands: Vec<String> = index
        .search(query, opts.max_skills)
        .into_iter()
        .filter(|h| h.kind.is_trigger())
        .map(|h| h.command)
        .collect();
    if !commands.is_empty() {
        let text = commands
            .iter()
            .filter_map(|c| load::render(cat, c).ok())
            .collect();
        return done(Tier::Instructions, commands, text);
    }
    if index.has_triggers() {
        let noun = if count == 1 { "skill" } else { "skills" };
        return done(
            Tier::Breadcrumb,
            Vec::new(),
            format!("[{count} {noun} available]\n"),
        );
    }
    done(Tier::Registry, Vec::new(), registry())
}

/// Word sequences that ask what is available; the query asks when its
/// words (lower-cased, punctuation dropped) contain one of them, or are
/// exactly `help`, `skills` or `list`.
pub const LISTING_PHRASES: &[&str] = &[
    "what can you do",
    "what can you help",
    "what are your skills",
    "what skills",
    "which skills",
    "list skills",
    "list the skills",
    "list all skills",
    "list your skills",
    "list available skills",
    "show skills",
    "show me skills",
    "show all skills",
    "show me your skills",
    "available skills",
    "skills available",
    "skills do you have",
];

/// Whether `query` asks what skills are available.
pub fn asks_for_listing(query: &str) -> bool {
    let q = word_key(query);
    if matches!(q.as_str(), "help" | "skills" | "list") {
        return true;
    }
    let padded = format!(" {q} ");
    LISTING_PHRASES
        .iter()
        .any(|p| padded.contains(&format!(" {p} ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::catalog;

    fn tier(skills: &[crate::testing::Spec], q: &str) -> Disclosure {
        let (_dir, cat) = catalog(skills);
        let ix = SearchIndex::build(&cat);
        disclose(&cat, &ix, q, &Options::default())
    }

    #[test]
    fn four_tiers() {
        assert_eq!(tier(&[], "anything").tier, Tier::Nothing);
        assert_eq!(tier(&[], "anything").text, "");
        let with = [
            (
                "pdf",
                "Fill PDF forms. Long details.",
                "triggers: [fill a form]",
                "PDF BODY",
            ),
            (
                "git",
                "Git helper.",
                "triggers: {keywords: [commit]}",
                "GIT BODY",
            ),
            ("plain", "No triggers here.", "", "PLAIN BODY"),
        ];
        let d = tier(&with, "the weather is nice");
        assert_eq!(
            (d.tier, d.text.as_str()),
            (Tier::Breadcrumb, "[3 skills available]\n")
        );
        let d = tier(&with, "What can you do?");
        assert_eq!(d.tier, Tier::Registry);
        assert!(
            d.text
                .contains("<description>Fill PDF forms.</description>"),
            "{}",
            d.text
        );
        assert!(d.text.contains("<keyword>commit</keyword>"), "{}", d.text);
        let d = tier(&with, "please fill a form and commit it");
        assert_eq!(d.tier, Tier::Instructions);
        assert_eq!(d.commands, ["pdf", "git"]);
        assert!(d.text.contains("PDF BODY") && d.text.contains("GIT BODY"));
        assert!(!d.text.contains("PLAIN BODY"));
        // Shared words alone do not earn instructions.
        assert_eq!(tier(&with, "no triggers").tier, Tier::Breadcrumb);
        // Without triggers anywhere, the registry is the answer.
        let d = tier(&[("plain", "No triggers here.", "", "")], "hello");
        assert_eq!(d.tier, Tier::Registry);
        // A mention earns instructions even without triggers.
        let d = tier(&[("plain", "No triggers here.", "", "")], "use plain");
        assert_eq!((d.tier, d.commands.len()), (Tier::Instructions, 1));
    }

    #[test]
    fn max_skills_caps_tier_three() {
        let skills: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .map(|c| (*c, "Does things.", "triggers: {keywords: [deploy]}", ""))
            .collect();
        let (_dir, cat) = catalog(&skills);
        let ix = SearchIndex::build(&cat);
        let opts = Options {
            max_skills: 2,
            ..Options::default()
        };
        let d = disclose(&cat, &ix, "deploy now", &opts);
        assert_eq!(d.commands, ["a", "b"]);
        assert_eq!(
            disclose(&cat, &ix, "deploy", &Options::default())
                .commands
                .len(),
            3
        );
    }

    #[test]
    fn listing_questions() {
        for q in [
            "what can you do",
            "List skills!",
            "help",
            "Which skills do you have?",
        ] {
            assert!(asks_for_listing(q), "{q}");
        }
        for q in [
            "help me fix this bug",
            "skills.toml is broken",
            "list files",
        ] {
            assert!(!asks_for_listing(q), "{q}");
        }
    }
}
