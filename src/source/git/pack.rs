//! A skill's tree in a commit, packed as its canonical tar: the lock's
//! checksum is the sha256 of that tar, which makes a git skill verifiable
//! exactly like a registry one.

use super::{export, objects, SourceError};
use crate::project::spec::GitUrl;
use skillpm_core::archive::{self, Limits};
use skillpm_core::checksum::Verified;
use skillpm_core::name::SkillName;
use skillpm_core::skill::{SkillDoc, SkillError};

/// A skill packed from a commit: what it says it is, its canonical tar,
/// and the id of the git tree it was packed from.
#[derive(Clone)]
pub(super) struct Packed {
    pub name: SkillName,
    pub version: semver::Version,
    pub tree: Verified,
    pub tree_id: String,
}

/// Exports `subpath` of `commit` (through the commit's shared listing and
/// object reader) and packs it.
pub(super) fn pack_commit(
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    subpath: Option<&str>,
    limits: &Limits,
) -> Result<Packed, SourceError> {
    let shown = shown(url, commit, subpath);
    let entries = export::tree(shared, url, subpath, limits).map_err(refused(&shown))?;
    let tree_id = shared.tree_id(url, subpath)?;
    packed(entries, &shown, tree_id.to_string())
}

/// Exports the tree `tree` of `commit` (a skill's directory the lock
/// records, read by its id without listing the commit) and packs it; `None` when the repository does
/// not hold that tree. Not identified: the lock names the skill and its
/// checksum pins these bytes, so reading `SKILL.md`'s frontmatter again
/// (a YAML parse per skill, a tenth of a 10-skill restore's packing)
/// would only be thrown away.
pub(super) fn pack_tree(
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    tree: &str,
    subpath: Option<&str>,
    limits: &Limits,
) -> Result<Option<Verified>, SourceError> {
    let shown = shown(url, commit, subpath);
    let id = gix::ObjectId::from_hex(tree.as_bytes())
        .map_err(|e| objects::error("reading", url, format!("tree {tree:?}: {e}")))?;
    match export::tree_by_id(shared, url, id, limits).map_err(refused(&shown))? {
        Some(entries) => Ok(Some(Verified::of(archive::tar_entries(entries)?))),
        None => Ok(None),
    }
}

/// How a skill of a commit is named in errors.
pub(super) fn shown(url: &GitUrl, commit: &str, subpath: Option<&str>) -> String {
    let short = &commit[..12.min(commit.len())];
    format!("{}@{short}:{}", url.redacted(), subpath.unwrap_or("."))
}

/// A tree over a cap is named, as a refused registry package is.
fn refused(shown: &str) -> impl Fn(SourceError) -> SourceError + '_ {
    move |e| match e {
        SourceError::Unpack(source) => SourceError::Refused {
            package: shown.to_string(),
            source,
        },
        other => other,
    }
}

/// The exported `entries` (already within the unpacked-size and entry
/// caps) as a skill: identified by its `SKILL.md`, and packed.
fn packed(
    entries: Vec<archive::MemEntry>,
    shown: &str,
    tree_id: String,
) -> Result<Packed, SourceError> {
    let doc = crate::source::verify::entries_doc(&entries);
    packed_with(entries, doc, shown, tree_id)
}

/// [`packed`] of a tree whose `SKILL.md` is parsed already.
pub(super) fn packed_with(
    entries: Vec<archive::MemEntry>,
    doc: Option<Result<SkillDoc, SkillError>>,
    shown: &str,
    tree_id: String,
) -> Result<Packed, SourceError> {
    let (name, version) = crate::source::verify::identify_doc(doc, shown)?;
    Ok(Packed {
        name,
        version,
        tree: Verified::of(archive::tar_entries(entries)?),
        tree_id,
    })
}
