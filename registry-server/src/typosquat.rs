//! The typosquat guard on new names.
//!
//! A name is checked once, at the first publish of it: someone who
//! publishes `c0de-review` or `codereview` next to `code-review` is
//! betting on a typo in somebody's `skills.toml`, and after the fact no
//! one can tell which package a mistyped install wanted.
//!
//! The rule: a new name is refused when, for some existing package,
//! - their [`skeleton`]s are equal (lower case, separators `-` `_` `.`
//!   removed, look-alikes folded as Unicode TR39's confusables do for
//!   ASCII: `0`→`o`; `1`, `i`, `|`→`l`; `5`→`s`; `3`→`e`; `4`→`a`;
//!   `7`→`t`; `rn`, `nn`→`m`; `cl`→`d`; `vv`→`w`), or
//! - both skeletons have at least [`MIN_EDIT_LEN`] characters and are one
//!   edit apart (one character inserted, deleted or replaced, or two
//!   adjacent ones swapped: `code-reveiw`, `code-reviews`), or
//! - both have at least [`MIN_TWO_EDIT_LEN`] characters, the same length,
//!   and are two replacements or swaps apart (`code-rewiev`): a misspelt
//!   word, where two insertions are a derived name (`code-reviewer`), or
//! - the existing name is short and the new one is it with a separator
//!   and one more character (`pdf-s`, `pdf-2`).
//!
//! The override: a publisher who already owns every such existing package
//! may publish the name (a maintainer adding `pdf-tool` beside their own
//! `pdf-tools`); anyone else can ask an owner to publish it or to add them
//! as an owner first. Short names are otherwise compared by skeleton only,
//! because between short names one edit is the normal distance of
//! unrelated words.

/// Below this many skeleton characters only equal skeletons clash.
pub const MIN_EDIT_LEN: usize = 5;
/// From this many skeleton characters, two replacements or swaps clash.
pub const MIN_TWO_EDIT_LEN: usize = 8;

/// `name` as it reads to a hurried human.
pub fn skeleton(name: &str) -> String {
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .map(|c| match c.to_ascii_lowercase() {
            '0' => 'o',
            '1' | 'i' | '|' => 'l',
            '5' => 's',
            '3' => 'e',
            '4' => 'a',
            '7' => 't',
            other => other,
        })
        .collect();
    folded
        .replace("rn", "m")
        .replace("nn", "m")
        .replace("cl", "d")
        .replace("vv", "w")
}

/// Whether `new` is the short `existing` with a separator and one more
/// character (`pdf-s` beside `pdf`).
fn short_with_suffix(new: &str, existing: &str) -> bool {
    let (new, existing) = (new.to_ascii_lowercase(), existing.to_ascii_lowercase());
    match new.strip_prefix(existing.as_str()).map(str::as_bytes) {
        Some([sep, c]) => matches!(sep, b'-' | b'_' | b'.') && c.is_ascii_alphanumeric(),
        _ => false,
    }
}

/// Whether `new` could pass for `existing` (see the module doc).
pub fn similar(new: &str, existing: &str) -> bool {
    let (a, b) = (skeleton(new), skeleton(existing));
    if a == b {
        return true;
    }
    let shorter = a.len().min(b.len());
    if shorter < MIN_EDIT_LEN {
        return short_with_suffix(new, existing);
    }
    // Optimal string alignment: insertions, deletions, replacements and
    // swaps of two adjacent characters.
    match strsim::osa_distance(&a, &b) {
        1 => true,
        2 => shorter >= MIN_TWO_EDIT_LEN && a.len() == b.len(),
        _ => false,
    }
}

/// The first existing package (in the given order) that `new` could pass
/// for and that `existing` does not mark as owned by the publisher.
/// `existing` yields `(name, publisher owns it)`.
pub fn clash<I>(new: &str, existing: I) -> Option<String>
where
    I: IntoIterator<Item = (String, bool)>,
{
    existing
        .into_iter()
        .find(|(name, owned)| !owned && name != new && similar(new, name))
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusables_and_separators_fold_together() {
        for squat in [
            "codereview",
            "c0de-review",
            "code_review",
            "code.review",
            "c0de-rev1ew",
            "CODE-REVIEW",
        ] {
            assert!(similar(squat, "code-review"), "{squat}");
        }
        assert!(similar("rnodern", "modem"));
        assert!(similar("pdf5", "pdfs"));
        // TR39's ASCII pairs, and `nn` for `m`.
        assert!(similar("cocle-review", "code-review"));
        assert!(similar("nncp-builder", "mcp-builder"));
        assert!(similar("vvriter", "writer"));
    }

    #[test]
    fn two_replacements_clash_in_long_names_and_suffixes_of_short_ones() {
        assert!(similar("code-rewiev", "code-review"));
        assert!(similar("mcp-bulider", "mcp-builder"));
        assert!(!similar("code-reviewer", "code-review"), "a derived name");
        assert!(!similar("abcdx", "abdcy"), "too short for two");
        for squat in ["pdf-s", "pdf_2", "PDF.x"] {
            assert!(similar(squat, "pdf"), "{squat}");
        }
        assert!(!similar("pdf-tools", "pdf"), "more than one character");
        assert!(!similar("pdfs", "pdf"), "short names: skeleton only");
    }

    #[test]
    fn one_edit_apart_clashes_from_five_characters() {
        for squat in [
            "code-reveiw",
            "code-reviews",
            "code-rview",
            "code-rexiew",
            "xcode-review",
        ] {
            assert!(similar(squat, "code-review"), "{squat}");
        }
        assert!(!similar("code-reviewer", "code-review"));
        assert!(!similar("pdf", "pdx"), "short names clash only by skeleton");
        assert!(!similar("docs", "doc"));
        assert!(!similar("code-review", "doc-review"));
        assert!(!similar("abcde", "badce"));
    }

    #[test]
    fn owners_of_every_similar_package_may_publish() {
        let names = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
            v.iter().map(|(n, o)| (n.to_string(), *o)).collect()
        };
        assert_eq!(
            clash("codereview", names(&[("code-review", false)])),
            Some("code-review".into())
        );
        assert_eq!(clash("codereview", names(&[("code-review", true)])), None);
        assert_eq!(
            clash(
                "pdf-tool",
                names(&[("pdf-tools", true), ("pdftool", false)])
            ),
            Some("pdftool".into())
        );
        assert_eq!(clash("writer", names(&[("reader", false)])), None);
        assert_eq!(clash("writer", names(&[("writer", false)])), None);
    }
}
