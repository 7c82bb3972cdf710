//! The typosquat guard on new names.
//!
//! A name is checked once, at the first publish of it: someone who
//! publishes `c0de-review` or `codereview` next to `code-review` is
//! betting on a typo in somebody's `skills.toml`, and after the fact no
//! one can tell which package a mistyped install wanted.
//!
//! The rule: a new name is refused when, for some existing package,
//! - their [`skeleton`]s are equal (lower case, separators `-` `_` `.`
//!   removed, look-alikes folded: `0`→`o`; `1`, `i`, `|`→`l`; `5`→`s`;
//!   `3`→`e`; `4`→`a`; `7`→`t`; `rn`→`m`; `vv`→`w`), or
//! - both skeletons have at least [`MIN_EDIT_LEN`] characters and are one
//!   Damerau-Levenshtein edit apart (one character inserted, deleted or
//!   replaced, or two adjacent ones swapped: `code-reveiw`, `code-reviews`).
//!
//! The override: a publisher who already owns every such existing package
//! may publish the name (a maintainer adding `pdf-tool` beside their own
//! `pdf-tools`); anyone else can ask an owner to publish it or to add them
//! as an owner first. Short names are compared by skeleton only, because
//! between short names one edit is the normal distance of unrelated words.

/// Below this many skeleton characters only equal skeletons clash.
pub const MIN_EDIT_LEN: usize = 5;

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
    folded.replace("rn", "m").replace("vv", "w")
}

/// Whether `a` and `b` are at most one insertion, deletion, substitution
/// or adjacent swap apart.
fn within_one_edit(a: &[u8], b: &[u8]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        0 => {
            let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).take(3).collect();
            match diff[..] {
                [] | [_] => true,
                [i, j] => j == i + 1 && a[i] == b[j] && a[j] == b[i],
                _ => false,
            }
        }
        1 => {
            let i = short.iter().zip(long).take_while(|(x, y)| x == y).count();
            short[i..] == long[i + 1..]
        }
        _ => false,
    }
}

/// Whether `new` could pass for `existing` (see the module doc).
pub fn similar(new: &str, existing: &str) -> bool {
    let (a, b) = (skeleton(new), skeleton(existing));
    if a == b {
        return true;
    }
    a.chars().count() >= MIN_EDIT_LEN
        && b.chars().count() >= MIN_EDIT_LEN
        && within_one_edit(a.as_bytes(), b.as_bytes())
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
