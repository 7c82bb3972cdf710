//! The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! `skills/list` and `skills/get` entries, and `resources/directory/read`
//! listings, built from the served snapshot.
//!
//! An entry carries the frontmatter verbatim (as parsed from the bytes of
//! `SKILL.md` that `resources/read` returns) and a manifest of every file
//! with its `sha256:` digest and size. The extension requires a skill's
//! `name` to follow the Agent Skills naming rules and to equal the last
//! segment of its URI; skillpm's loader is lenient and serves skills whose
//! name differs from their directory, so such a skill stays a plain
//! resource (and is reachable through the tools) but is left out of
//! `skills/list`, with a note on stderr. The same holds for frontmatter
//! whose Agent Skills fields have other types than the extension's schema
//! (`metadata` values that are maps, as OpenClaw writes them).

use super::resources::{mime_type, ServedSkill, Snapshot};
use rmcp::model::{
    Resource, Skill, SkillFrontmatter, SkillResource, SkillResources, DIRECTORY_MIME_TYPE,
};
use serde_json::{Map, Value};

/// A served skill left out of `skills/list`, and why.
#[derive(Debug, thiserror::Error)]
#[error("{command}: not in skills/list: {why}")]
pub struct NotListed {
    command: String,
    why: Unlistable,
}

/// What keeps a skill out of `skills/list`.
#[derive(Debug, thiserror::Error)]
enum Unlistable {
    #[error("`description` must be 1-1024 characters")]
    Description,
    #[error("`{0}` must be a string")]
    NotAString(&'static str),
    #[error("`compatibility` must be 1-500 characters")]
    Compatibility,
    #[error("`metadata` must map strings to strings")]
    Metadata,
    #[error("{0}")]
    Invalid(rmcp::model::SkillValidationError),
}

/// Whether the frontmatter has the types the extension's schema gives the
/// Agent Skills fields; hosts (FastMCP's client among them) reject a whole
/// `skills/list` page over one entry that breaks them, so such a skill is
/// left out of the list rather than sent.
fn wire_conformant(fm: &Map<String, Value>) -> Result<(), Unlistable> {
    let description = fm
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if description.trim().is_empty() || description.chars().count() > 1024 {
        return Err(Unlistable::Description);
    }
    for key in ["license", "allowed-tools", "compatibility"] {
        if fm.get(key).is_some_and(|v| !v.is_string()) {
            return Err(Unlistable::NotAString(key));
        }
    }
    if fm
        .get("compatibility")
        .and_then(Value::as_str)
        .is_some_and(|c| !(1..=500).contains(&c.chars().count()))
    {
        return Err(Unlistable::Compatibility);
    }
    match fm.get("metadata") {
        None => Ok(()),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => Ok(()),
        Some(_) => Err(Unlistable::Metadata),
    }
}

/// The extension entry for one served skill, or why it cannot be listed.
pub fn entry(s: &ServedSkill) -> Result<Skill, NotListed> {
    let not_listed = |why| NotListed {
        command: s.command.clone(),
        why,
    };
    wire_conformant(&s.frontmatter).map_err(not_listed)?;
    let mut fm = SkillFrontmatter::new(s.name.clone(), s.description.clone());
    for (k, v) in &s.frontmatter {
        if k != "name" && k != "description" {
            fm = fm.with_field(k.clone(), v.clone());
        }
    }
    let files = s
        .files
        .iter()
        .map(|f| SkillResource::new(f.uri.clone(), f.digest.to_string(), f.size))
        .collect();
    let skill = Skill::new(s.uri.clone(), fm, SkillResources::Files(files));
    skill
        .validate()
        .map(|()| skill)
        .map_err(|e| not_listed(Unlistable::Invalid(e)))
}

/// Every listable entry of `snap`, sorted by URI, and a note per skill
/// left out.
pub fn entries(snap: &Snapshot) -> (Vec<Skill>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for s in &snap.skills {
        match entry(s) {
            Ok(e) => out.push(e),
            Err(n) => notes.push(n.to_string()),
        }
    }
    out.sort_by(|a, b| a.uri.cmp(&b.uri));
    (out, notes)
}

/// The children of a directory resource as `resources/directory/read`
/// returns them: directories with the `inode/directory` MIME type, files
/// with their size.
pub fn directory(snap: &Snapshot, canonical_uri: &str) -> Option<Vec<Resource>> {
    let children = snap.directory(canonical_uri)?;
    Some(
        children
            .into_iter()
            .map(|(uri, name, file)| match file {
                None => Resource::new(uri, name).with_mime_type(DIRECTORY_MIME_TYPE),
                Some(f) => Resource::new(uri, name)
                    .with_mime_type(mime_type(&f.rel, f.text))
                    .with_size(f.size),
            })
            .collect(),
    )
}
