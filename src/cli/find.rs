//! The engine's query commands: `search --local` (ranked local search)
//! and `prompt --query` (progressive disclosure). Both build the catalog
//! and its index once and print; the ranking and the tiers live in the
//! engine (`engine::search`, `engine::disclose`).

use super::output::print;
use super::render::{self, LocalHit};
use anyhow::Result;
use skillpm::engine::catalog::Catalog;
use skillpm::engine::config::Environment;
use skillpm::engine::disclose::{self, Options};
use skillpm::engine::prompt;
use skillpm::engine::search::SearchIndex;

/// `skillpm search --local QUERY [--limit N] [--json]`.
pub fn search(env: &Environment, query: &str, limit: usize, json: bool, quiet: bool) -> Result<()> {
    let cat = Catalog::build(env)?;
    let hits = SearchIndex::build(&cat).search(query, limit);
    let rows: Vec<LocalHit> = hits
        .iter()
        .filter_map(|h| {
            let s = cat.find(&h.command)?;
            Some(LocalHit {
                command: &h.command,
                name: &s.name,
                score: h.score,
                kind: h.kind.as_str(),
                fields: &h.fields,
                brief: &s.brief,
            })
        })
        .collect();
    print(&render::local_search(query, &rows, json, quiet)?)
}

/// `skillpm prompt`: the whole `<available_skills>` block, or with
/// `--query` the tier's text (or `{"tier", "commands", "text"}`).
pub fn prompt(env: &Environment, query: Option<&str>, opts: &Options, json: bool) -> Result<()> {
    let cat = Catalog::build(env)?;
    let Some(query) = query else {
        return print(&prompt::render(&cat, opts.budget, opts.format));
    };
    let index = SearchIndex::build(&cat);
    let d = disclose::disclose(&cat, &index, query, opts);
    if json {
        return print(&render::json(&serde_json::json!({
            "tier": d.tier.number(),
            "commands": d.commands,
            "text": d.text,
        }))?);
    }
    print(&d.text)
}
