//! The served snapshot: every file of every served skill, read once, with
//! its digest, so a manifest and the bytes a client then reads always
//! agree. A reload builds a new snapshot beside the old one and swaps it in
//! whole (see `watch`), so a client never sees half of a change.
//!
//! What is served is exactly what `status` calls eligible, minus
//! `user_invocable_only` skills (which the prompt hides from the agent
//! too): the catalog's `visible()` set.
//! Inside a skill the walk skips dot-entries and the installer's marker,
//! and refuses symlinks that resolve outside the skill. Nested skills are
//! served as skills of their own and their files are in the enclosing
//! skill's manifest too, as the MCP Skills extension (SEP-2640) wants
//! manifests complete. A skill over the extension's limits is not served.

use super::uri::{self, INDEX_URI};
use crate::engine::catalog::{Catalog, SkillEntry};
use crate::engine::files as files_walk;
use crate::engine::search::SearchIndex;
use serde_json::{json, Map, Value};
use skillpm_core::checksum::Checksum;
use skillpm_core::skill;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most files in one skill, `SKILL.md` and nested skills' files included,
/// and most bytes served from it: the MCP Skills extension's limits (as
/// rmcp's reference `SkillCatalog` states them, `SKILL_FILE_LIMIT` and
/// `SKILL_BYTE_LIMIT`), above which hosts need not load a skill. A manifest
/// must be complete, so a skill over them is not served at all (with a
/// note on stderr) rather than served with files left out.
pub const MAX_MANIFEST_FILES: usize = 512;
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The `$schema` of the Agent Skills discovery index (RFC v0.2.0).
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// One file of a served skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedFile {
    /// `/`-separated path inside the skill; the skill file is `SKILL.md`.
    pub rel: String,
    pub uri: String,
    pub bytes: Arc<[u8]>,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
}

/// One served skill: its frontmatter as parsed from the very bytes served.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedSkill {
    pub command: String,
    /// The frontmatter `name`, else the directory name.
    pub name: String,
    pub description: String,
    pub frontmatter: Map<String, Value>,
    /// `skill://<command>/SKILL.md`.
    pub uri: String,
    /// `skill://<command>`, the skill's directory resource.
    pub base: String,
    /// Sorted by `rel`.
    pub files: Vec<ServedFile>,
}

/// What a client can read, fixed at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The catalog this snapshot was built from (`load_skill` renders from it).
    pub catalog: Option<Arc<Catalog>>,
    /// Sorted by command.
    pub skills: Vec<ServedSkill>,
    /// File URI → (skill, file).
    files: HashMap<String, (usize, usize)>,
    /// Directory URI → (skill, path inside the skill, `""` for its root).
    dirs: HashMap<String, (usize, String)>,
    pub index_json: Arc<[u8]>,
    /// The engine's ranked search over the served skills: made on the
    /// first search rather than before the server answers `initialize`, as
    /// compiling every skill's trigger patterns is a sizeable part of a
    /// start and many sessions never search.
    search: std::sync::OnceLock<SearchIndex>,
    /// The `skills/list` entries, sorted by URI.
    pub listed: Vec<rmcp::model::Skill>,
    /// The `resources/list` entries, sorted by URI: made on the first
    /// request rather than before the server answers `initialize`, and
    /// once rather than for each page (20 000 entries over 10 000 skills,
    /// each file's bytes checked for text, were most of a page's time).
    pub resources: std::sync::OnceLock<Vec<rmcp::model::Resource>>,
    /// Something changed on disk while this snapshot was read; the watcher
    /// builds again before serving it.
    pub unsettled: bool,
    /// One line per thing left out (symlink out, too large, ...), for stderr.
    pub notes: Vec<String>,
}

/// What a read of one URI found.
pub enum Found<'a> {
    File(&'a ServedFile),
    Index(&'a [u8]),
}

impl Snapshot {
    /// Reads every served skill of `catalog`.
    pub fn build(catalog: Catalog) -> Snapshot {
        let mut snap = Snapshot::default();
        for entry in catalog.visible() {
            if let Some(s) = read_skill(entry, &mut snap) {
                snap.skills.push(s);
            }
        }
        // Skills are sorted by command, so a nested skill comes after the
        // skills enclosing it and its own entry wins for the URIs they
        // share (its `SKILL.md` is its skill's, not just a file of theirs).
        for (i, s) in snap.skills.iter().enumerate() {
            snap.dirs.insert(s.base.clone(), (i, String::new()));
            for (j, f) in s.files.iter().enumerate() {
                if let Some((k, l)) = snap.files.insert(f.uri.clone(), (i, j)) {
                    // Each skill read the file on its own: bytes that differ
                    // changed between the reads, so read the tree again.
                    snap.unsettled |= snap.skills[k].files[l].digest != f.digest;
                }
                let mut dir = f.rel.as_str();
                while let Some((parent, _)) = dir.rsplit_once('/') {
                    snap.dirs
                        .entry(uri::file_uri(&s.command, parent))
                        .or_insert_with(|| (i, parent.to_string()));
                    dir = parent;
                }
            }
        }
        snap.index_json = index_json(&snap.skills).into();
        let (listed, notes) = super::skills_ext::entries(&snap);
        snap.listed = listed;
        snap.notes.extend(notes);
        snap.catalog = Some(Arc::new(catalog));
        snap
    }

    /// The engine's search over the skills served (see `search`).
    pub fn search(&self) -> &SearchIndex {
        self.search.get_or_init(|| match self.catalog.as_deref() {
            Some(catalog) => SearchIndex::from_entries(
                catalog
                    .visible()
                    .filter(|e| self.skill_by_command(&e.command).is_some()),
            ),
            None => SearchIndex::default(),
        })
    }

    /// The file or enumeration resource at a canonical URI.
    pub fn find(&self, canonical_uri: &str) -> Option<Found<'_>> {
        if canonical_uri == INDEX_URI {
            return Some(Found::Index(&self.index_json));
        }
        let &(i, j) = self.files.get(canonical_uri)?;
        Some(Found::File(&self.skills[i].files[j]))
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub fn skill_by_uri(&self, canonical_uri: &str) -> Option<&ServedSkill> {
        let &(i, j) = self.files.get(canonical_uri)?;
        let s = &self.skills[i];
        (s.files[j].uri == s.uri).then_some(s)
    }

    /// Whether `skills[skill]` is where the file at `uri` is listed as a
    /// resource: a nested skill's files are in the enclosing skills'
    /// manifests too, but listed once, under the innermost skill.
    pub fn lists(&self, skill: usize, canonical_uri: &str) -> bool {
        self.files
            .get(canonical_uri)
            .is_some_and(|&(i, _)| i == skill)
    }

    pub fn skill_by_command(&self, command: &str) -> Option<&ServedSkill> {
        self.skills
            .binary_search_by(|s| s.command.as_str().cmp(command))
            .ok()
            .map(|i| &self.skills[i])
    }

    /// Direct children of a directory resource: `(uri, name, Some(file))`
    /// for files and `(uri, name, None)` for directories, sorted by name.
    pub fn directory(
        &self,
        canonical_uri: &str,
    ) -> Option<Vec<(String, String, Option<&ServedFile>)>> {
        let (i, prefix) = self.dirs.get(canonical_uri)?;
        let s = &self.skills[*i];
        let mut out: BTreeMap<String, (String, Option<&ServedFile>)> = BTreeMap::new();
        for f in &s.files {
            let rest = if prefix.is_empty() {
                f.rel.as_str()
            } else {
                match f
                    .rel
                    .strip_prefix(prefix.as_str())
                    .and_then(|r| r.strip_prefix('/'))
                {
                    Some(r) => r,
                    None => continue,
                }
            };
            match rest.split_once('/') {
                Some((dir, _)) => {
                    let rel = if prefix.is_empty() {
                        dir.to_string()
                    } else {
                        format!("{prefix}/{dir}")
                    };
                    out.entry(dir.to_string())
                        .or_insert_with(|| (uri::file_uri(&s.command, &rel), None));
                }
                None => {
                    out.insert(rest.to_string(), (f.uri.clone(), Some(f)));
                }
            }
        }
        Some(
            out.into_iter()
                .map(|(name, (uri, f))| (uri, name, f))
                .collect(),
        )
    }

    /// Every served file URI with its digest, for change detection.
    pub fn digests(&self) -> BTreeMap<&str, &str> {
        self.skills
            .iter()
            .flat_map(|s| s.files.iter())
            .map(|f| (f.uri.as_str(), f.digest.as_str()))
            .collect()
    }
}

/// A MIME type from the file name; text types only when the bytes are text.
pub fn mime_type(rel: &str, is_text: bool) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match (ext.as_deref(), is_text) {
        (Some("md" | "markdown"), true) => "text/markdown",
        (Some("json"), true) => "application/json",
        (Some("html" | "htm"), true) => "text/html",
        (_, true) => "text/plain",
        (Some("png"), false) => "image/png",
        (Some("jpg" | "jpeg"), false) => "image/jpeg",
        (Some("gif"), false) => "image/gif",
        (Some("pdf"), false) => "application/pdf",
        (_, false) => "application/octet-stream",
    }
}

/// The bytes as text, when they are UTF-8 without NUL.
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

fn read_skill(entry: &SkillEntry, snap: &mut Snapshot) -> Option<ServedSkill> {
    let command = &entry.command;
    let Ok(base_dir) = entry.path.canonicalize() else {
        snap.notes
            .push(format!("{command}: skill directory vanished"));
        snap.unsettled = true;
        return None;
    };
    let mut notes = Vec::new();
    let over = |snap: &mut Snapshot, what: String| -> Option<ServedSkill> {
        snap.notes.push(format!(
            "{command}: not served: {what}, over the MCP Skills extension's limits \
             ({MAX_MANIFEST_FILES} files, {MAX_SKILL_BYTES} bytes)"
        ));
        None
    };
    let Some(paths) = walk(&base_dir, &entry.skill_md, &mut notes) else {
        snap.notes.push(format!(
            "{command}: not served: more than {} entries to walk, so its manifest \
             cannot be known complete",
            files_walk::MAX_WALK_ENTRIES
        ));
        return None;
    };
    if paths.len() > MAX_MANIFEST_FILES {
        return over(snap, format!("{} files", paths.len()));
    }
    // Sizes on disk first, so a skill plainly over is not read at all.
    let on_disk: u64 = paths
        .iter()
        .filter_map(|(_, p)| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    if on_disk > MAX_SKILL_BYTES {
        return over(snap, format!("{on_disk} bytes"));
    }
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut frontmatter = None;
    let mut marked = false;
    for (rel, path) in paths {
        let is_skill_md = rel == "SKILL.md";
        let bytes = match skillpm_core::bounded::read(&path, MAX_SKILL_BYTES) {
            Ok(b) => b,
            Err(e) => {
                notes.push(format!("{rel}: {e}"));
                if is_skill_md {
                    snap.unsettled = true;
                    snap.notes
                        .extend(notes.into_iter().map(|n| format!("{command}: {n}")));
                    return None;
                }
                continue;
            }
        };
        // The file may have been replaced by a link out while we read it.
        if !path.canonicalize().is_ok_and(|p| p.starts_with(&base_dir)) {
            notes.push(format!("{rel}: changed into a link out of the skill"));
            continue;
        }
        // Text reaches the model: what must not reach it as is (controls,
        // bidi overrides, invisible carriers) is served escaped, the same
        // rule as the CLI's and `load`'s, and the digest is of what is
        // served.
        let bytes = match as_text(&bytes).map(skillpm_core::text::sanitize) {
            Some(std::borrow::Cow::Owned(shown)) => {
                marked |= is_skill_md;
                shown.into_bytes()
            }
            _ => bytes,
        };
        // What a host loads is what is served, escapes included.
        total += bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            snap.notes
                .extend(notes.into_iter().map(|n| format!("{command}: {n}")));
            return over(snap, format!("more than {MAX_SKILL_BYTES} bytes as served"));
        }
        let digest = Checksum::of_bytes(&bytes);
        if is_skill_md {
            // The frontmatter of the bytes served, so it always matches
            // SKILL.md's digest: the catalog's parse when it read these very
            // bytes (neither changed since nor escaped), else parsed again.
            let parsed = match entry
                .doc
                .as_ref()
                .filter(|_| entry.doc_digest == Some(digest))
            {
                Some(doc) => Ok(doc.frontmatter.clone()),
                None => skill::parse(&bytes).map(|doc| doc.frontmatter),
            };
            match parsed {
                Ok(fm) => frontmatter = Some(fm),
                Err(e) => {
                    snap.unsettled = true;
                    snap.notes.push(format!(
                        "{command}: SKILL.md changed while read: {}",
                        e.detail()
                    ));
                    return None;
                }
            }
        }
        let uri = uri::file_uri(command, &rel);
        files.push(ServedFile {
            digest: digest.to_string(),
            rel,
            uri,
            bytes: bytes.into(),
        });
    }
    snap.notes
        .extend(notes.into_iter().map(|n| format!("{command}: {n}")));
    let frontmatter = frontmatter?;
    if !marked && entry.doc.as_ref().map(|d| &d.frontmatter) != Some(&frontmatter) {
        // Eligibility was judged on other frontmatter: judge again first.
        snap.unsettled = true;
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Some(ServedSkill {
        command: command.clone(),
        name: str_key(&frontmatter, "name")
            .unwrap_or(&entry.name)
            .to_string(),
        description: str_key(&frontmatter, "description")
            .unwrap_or_default()
            .to_string(),
        frontmatter,
        uri: uri::file_uri(command, "SKILL.md"),
        base: uri::skill_base(command),
        files,
    })
}

/// A frontmatter key's value when it is a string, as `SkillDoc` reads it.
fn str_key<'a>(frontmatter: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    frontmatter.get(key).and_then(Value::as_str)
}

/// The files of the skill at `base` (canonical), as `(rel, path)`: its
/// `SKILL.md` first, then what [`crate::engine::files`] finds, nested
/// skills included; `None` when the walk stopped at its entry cap, as the
/// files found then are not all of the skill.
fn walk(base: &Path, skill_md: &Path, notes: &mut Vec<String>) -> Option<Vec<(String, PathBuf)>> {
    let found = files_walk::skill_tree_files(base);
    if found.truncated {
        return None;
    }
    notes.extend(found.notes);
    let mut out = Vec::with_capacity(found.files.len() + 1);
    match skill_md.canonicalize() {
        Ok(real) if real.starts_with(base) => out.push(("SKILL.md".to_string(), real)),
        Ok(_) => notes.push("SKILL.md: refused, a symlink out of the skill".to_string()),
        Err(_) => {}
    }
    out.extend(found.files);
    Some(out)
}

/// `skill://index.json`: the Agent Skills discovery-index shape, one
/// `skill-md` entry per served skill, sorted by command.
fn index_json(skills: &[ServedSkill]) -> Vec<u8> {
    let entries: Vec<Value> = skills
        .iter()
        .map(|s| {
            let digest = s
                .files
                .iter()
                .find(|f| f.uri == s.uri)
                .map(|f| f.digest.as_str())
                .unwrap_or_default();
            json!({
                "name": s.name,
                "type": "skill-md",
                "description": s.description,
                "url": s.uri,
                "digest": digest,
            })
        })
        .collect();
    let doc = json!({"$schema": DISCOVERY_SCHEMA, "skills": entries});
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

/// URIs whose content differs between two snapshots (added, edited or
/// removed), sorted; and whether the set of resources changed.
pub fn changes(old: &Snapshot, new: &Snapshot) -> (BTreeSet<String>, bool) {
    let (a, b) = (old.digests(), new.digests());
    let mut changed = BTreeSet::new();
    for (uri, d) in &a {
        if b.get(uri) != Some(d) {
            changed.insert(uri.to_string());
        }
    }
    for uri in b.keys() {
        if !a.contains_key(uri) {
            changed.insert(uri.to_string());
        }
    }
    let list_changed = !changed.is_empty() || old.index_json != new.index_json;
    if old.index_json != new.index_json {
        changed.insert(INDEX_URI.to_string());
    }
    (changed, list_changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::Environment;
    use crate::engine::tools::ToolPolicy;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn snapshot(root: &Path) -> Snapshot {
        let env = Environment::isolated();
        Snapshot::build(Catalog::from_roots(
            &env,
            &[root.to_path_buf()],
            ToolPolicy::default(),
        ))
    }

    #[test]
    fn serves_files_inside_the_skill_and_lists_directories() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("skills");
        let a = root.join("a");
        write(
            &a.join("SKILL.md"),
            "---\nname: a\ndescription: d\n---\nbody\n",
        );
        write(&a.join("references/x.md"), "x");
        write(&a.join("references/deep/y.md"), "y");
        write(
            &a.join("sub/SKILL.md"),
            "---\nname: sub\ndescription: d\n---\n",
        );
        write(&t.path().join("outside.txt"), "secret");
        #[cfg(unix)]
        std::os::unix::fs::symlink(t.path().join("outside.txt"), a.join("link.txt")).unwrap();
        let snap = snapshot(&root);
        let rels: Vec<&str> = snap.skills[0]
            .files
            .iter()
            .map(|f| f.rel.as_str())
            .collect();
        assert_eq!(
            rels,
            [
                "SKILL.md",
                "references/deep/y.md",
                "references/x.md",
                "sub/SKILL.md"
            ]
        );
        assert_eq!(snap.skills[1].command, "a/sub");
        assert!(snap.lists(1, "skill://a/sub/SKILL.md"));
        assert!(!snap.lists(0, "skill://a/sub/SKILL.md"));
        assert!(snap.notes.iter().any(|n| n.contains("link.txt: refused")));
        let children: Vec<(String, bool)> = snap
            .directory("skill://a/references")
            .unwrap()
            .into_iter()
            .map(|(uri, _, f)| (uri, f.is_some()))
            .collect();
        assert_eq!(
            children,
            [
                ("skill://a/references/deep".to_string(), false),
                ("skill://a/references/x.md".to_string(), true)
            ]
        );
        assert!(
            matches!(snap.find("skill://a/references/x.md"), Some(Found::File(f)) if &*f.bytes == b"x")
        );
        assert!(snap.find("skill://a/link.txt").is_none());
    }

    /// The catalog's parse is reused only for the very bytes it parsed: a
    /// `SKILL.md` rewritten (same size) between the catalog's read and the
    /// snapshot's is parsed again, served as it now is, and marks the
    /// snapshot unsettled so eligibility is judged again.
    #[test]
    fn frontmatter_is_of_the_bytes_served() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("skills");
        let md = root.join("a/SKILL.md");
        write(&md, "---\nname: a\ndescription: First\n---\n");
        let env = Environment::isolated();
        let catalog =
            || Catalog::from_roots(&env, std::slice::from_ref(&root), ToolPolicy::default());
        let same = Snapshot::build(catalog());
        assert_eq!(same.skills[0].description, "First");
        assert!(!same.unsettled);
        let before = catalog();
        write(&md, "---\nname: a\ndescription: Other\n---\n");
        let changed = Snapshot::build(before);
        assert_eq!(changed.skills[0].description, "Other");
        assert_eq!(
            changed.skills[0].files[0].digest,
            Checksum::of_bytes(&std::fs::read(&md).unwrap()).to_string()
        );
        assert!(changed.unsettled);
    }

    #[test]
    fn changes_name_added_edited_and_removed_uris() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("skills");
        write(
            &root.join("a/SKILL.md"),
            "---\nname: a\ndescription: d\n---\n",
        );
        write(&root.join("a/r.md"), "1");
        let before = snapshot(&root);
        assert_eq!(changes(&before, &snapshot(&root)), (BTreeSet::new(), false));
        write(&root.join("a/r.md"), "2");
        write(
            &root.join("b/SKILL.md"),
            "---\nname: b\ndescription: d\n---\n",
        );
        let (uris, list) = changes(&before, &snapshot(&root));
        assert!(list);
        assert_eq!(
            uris.into_iter().collect::<Vec<_>>(),
            ["skill://a/r.md", "skill://b/SKILL.md", "skill://index.json"]
        );
    }
}
