//! Ranked text search.
//!
//! Deliberately simple and predictable: each query term scores by where it
//! occurs (exact name > name substring > description > body), scores add
//! up over terms, and ties break by name so results never reorder between
//! identical requests. It scans one entry per package, prepared at publish
//! time (description and the distinct words of the body, see
//! `store::search_words`), never the SKILL.md bodies themselves: scanning
//! every body under the database lock let search load stall `/index`.

use crate::store::SearchRow;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{SearchHit, SearchMeta, SearchResults};

const EXACT_NAME: u64 = 1000;
const NAME_CONTAINS: u64 = 100;
const DESCRIPTION: u64 = 10;
const BODY: u64 = 1;
/// More terms than this are ignored: they cannot change a useful ranking,
/// only the cost of a request.
const MAX_TERMS: usize = 16;

fn score(row: &SearchRow, full_query: &str, terms: &[String]) -> u64 {
    let name = row.name.as_str();
    let description = row.description.to_lowercase();
    let mut total = 0;
    if !full_query.is_empty() && name == full_query {
        total += EXACT_NAME;
    }
    for t in terms {
        if name == t {
            total += EXACT_NAME;
        } else if name.contains(t.as_str()) {
            total += NAME_CONTAINS;
        }
        if description.contains(t.as_str()) {
            total += DESCRIPTION;
        }
        if row.words.contains(t.as_str()) {
            total += BODY;
        }
    }
    total
}

/// Ranks `rows` for `q`; an empty query lists everything by name.
pub fn rank(rows: Vec<SearchRow>, q: &str, per_page: usize) -> SearchResults {
    let q = q.trim().to_lowercase();
    let terms: Vec<String> = q
        .split_whitespace()
        .take(MAX_TERMS)
        .map(str::to_string)
        .collect();
    let joined = terms.join("-");
    let mut scored: Vec<(u64, SearchRow)> = rows
        .into_iter()
        .filter_map(|r| {
            if terms.is_empty() {
                return Some((0, r));
            }
            let s = score(&r, &joined, &terms);
            (s > 0).then_some((s, r))
        })
        .collect();
    scored.sort_by(|(sa, a), (sb, b)| sb.cmp(sa).then_with(|| a.name.cmp(&b.name)));
    let total = scored.len() as u64;
    let skills = scored
        .into_iter()
        .take(per_page)
        .filter_map(|(_, r)| {
            Some(SearchHit {
                name: SkillName::new(&r.name).ok()?,
                max_version: r.vers,
                audit: crate::audit::counts(r.audit.as_deref()),
                description: r.description,
            })
        })
        .collect();
    SearchResults {
        skills,
        meta: SearchMeta { total },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, description: &str, body: &str) -> SearchRow {
        SearchRow {
            name: name.to_string(),
            vers: semver::Version::new(1, 0, 0),
            description: description.to_string(),
            words: crate::store::search_words(body),
            audit: None,
        }
    }

    #[test]
    fn ranks_name_over_description_over_body() {
        let rows = vec![
            row("zeta", "nothing", "talks about pdf files"),
            row("alpha", "Edit PDF documents", ""),
            row("pdf-tools", "tools", ""),
            row("pdf", "the pdf skill", ""),
            row("other", "unrelated", ""),
        ];
        let r = rank(rows, "PDF", 10);
        let names: Vec<_> = r.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf", "pdf-tools", "alpha", "zeta"]);
        assert_eq!(r.meta.total, 4);
    }

    #[test]
    fn multiple_terms_add_up_and_ties_break_by_name() {
        let rows = vec![
            row("b", "git review", ""),
            row("a", "git", ""),
            row("c", "review", ""),
        ];
        let r = rank(rows, "git review", 2);
        let names: Vec<_> = r.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(r.meta.total, 3);
    }
}
