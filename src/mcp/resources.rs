//! The served snapshot: every file of every served skill with its digest,
//! so a manifest and the bytes a client then reads always agree. A file is
//! read when the snapshot is built, or, when what an earlier read gave is
//! known unchanged ([`Known`]), on the first request, and then served only
//! if it still has the digest listed. A reload builds a new snapshot beside
//! the old one and swaps it in whole (see `watch`), so a client never sees
//! half of a change.
//!
//! What is served is exactly what `status` calls eligible, minus
//! `user_invocable_only` skills (which the prompt hides from the agent
//! too): the catalog's `visible()` set.
//! Inside a skill the walk skips dot-entries and the installer's marker,
//! and refuses symlinks that resolve outside the skill. Nested skills are
//! served as skills of their own and their files are in the enclosing
//! skill's manifest too, as the MCP Skills extension (SEP-2640) wants
//! manifests complete. A skill over the extension's limits is not served.

use super::kept::{Known, KnownFile};
use super::uri::{self, INDEX_URI};
use crate::engine::catalog::{Catalog, SkillEntry};
use crate::engine::files as files_walk;
use crate::engine::parallel::Workers;
use crate::engine::search::SearchIndex;
use serde_json::{json, Map, Value};
use skillpm_core::checksum::Checksum;
use skillpm_core::fingerprint::Fingerprint;
use skillpm_core::skill;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// Where it is read from: its real path, inside the skill.
    pub path: PathBuf,
    /// Of the bytes served.
    pub digest: Checksum,
    /// Bytes served.
    pub size: u64,
    /// Whether the bytes served are text ([`as_text`]).
    pub text: bool,
    /// The file's fingerprint when its digest was taken, if the next
    /// build may trust it ([`Fingerprint::settled`]).
    pub fingerprint: Option<Fingerprint>,
    /// The bytes served: read when the snapshot was built, or on the
    /// first request when the file was known unchanged ([`Known`]).
    bytes: OnceLock<Arc<[u8]>>,
}

/// A file changed on disk since its digest was taken: it is not served
/// until the snapshot is built again.
#[derive(Debug, thiserror::Error)]
#[error("{0} changed on disk since it was listed; the server reloads it")]
pub struct Changed(pub String);

impl ServedFile {
    /// A file read now; `bytes` are what is served.
    fn read(
        rel: String,
        uri: String,
        path: PathBuf,
        bytes: Vec<u8>,
        digest: Checksum,
        fingerprint: Option<Fingerprint>,
    ) -> ServedFile {
        ServedFile {
            size: bytes.len() as u64,
            text: as_text(&bytes).is_some(),
            digest,
            rel,
            uri,
            path,
            fingerprint,
            bytes: OnceLock::from(Arc::from(bytes)),
        }
    }

    /// A file known unchanged since an earlier read: not read now.
    fn kept(
        rel: String,
        uri: String,
        path: PathBuf,
        k: &KnownFile,
        fingerprint: Option<Fingerprint>,
    ) -> ServedFile {
        ServedFile {
            rel,
            uri,
            path,
            digest: k.digest,
            size: k.size,
            text: k.text,
            fingerprint,
            bytes: OnceLock::new(),
        }
    }

    /// The bytes served. A file not read since the snapshot was built is
    /// read now, and served only if it is still the file its digest was
    /// taken of: at the same real path (not a link put in its place) and
    /// with the same digest once escaped, so what a client reads always
    /// matches the manifest.
    pub fn bytes(&self) -> Result<Arc<[u8]>, Changed> {
        if let Some(b) = self.bytes.get() {
            return Ok(b.clone());
        }
        let changed = || Changed(self.uri.clone());
        let raw =
            skillpm_core::bounded::read(&self.path, MAX_SKILL_BYTES).map_err(|_| changed())?;
        if self.path.canonicalize().ok().as_deref() != Some(self.path.as_path()) {
            return Err(changed());
        }
        let (served, _) = served_bytes(raw);
        if Checksum::of_bytes(&served) != self.digest {
            return Err(changed());
        }
        Ok(self.bytes.get_or_init(|| served.into()).clone())
    }
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
    /// How many files were read to build it, rather than known unchanged.
    pub read: usize,
}

/// What a read of one URI found.
pub enum Found<'a> {
    File(&'a ServedFile),
    Index(&'a [u8]),
}

impl Snapshot {
    /// Reads every served skill of `catalog`, but not the files `known`
    /// holds unchanged.
    pub fn build(catalog: Catalog, known: &Known, workers: &Workers) -> Snapshot {
        // Each skill is walked and stated (and read, where not known) on
        // the pool.
        let entries: Vec<&SkillEntry> = catalog.visible().collect();
        let looked = workers.chunked(&entries, 64, |part| {
            part.iter()
                .map(|entry| {
                    let mut look = Look::default();
                    (read_skill(entry, &mut look, known), look)
                })
                .collect()
        });
        let mut snap = Snapshot::default();
        for (skill, look) in looked {
            snap.skills.extend(skill);
            snap.notes.extend(look.notes);
            snap.unsettled |= look.unsettled;
            snap.read += look.read;
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
    pub fn digests(&self) -> BTreeMap<&str, Checksum> {
        self.skills
            .iter()
            .flat_map(|s| s.files.iter())
            .map(|f| (f.uri.as_str(), f.digest))
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

/// What reading one skill found besides the skill: the snapshot's fields
/// of the same names, summed over the skills.
#[derive(Default)]
struct Look {
    notes: Vec<String>,
    unsettled: bool,
    read: usize,
}

fn read_skill(entry: &SkillEntry, snap: &mut Look, known: &Known) -> Option<ServedSkill> {
    let command = &entry.command;
    let mut notes = Vec::new();
    let over = |snap: &mut Look, what: String| -> Option<ServedSkill> {
        snap.notes.push(format!(
            "{command}: not served: {what}, over the MCP Skills extension's limits \
             ({MAX_MANIFEST_FILES} files, {MAX_SKILL_BYTES} bytes)"
        ));
        None
    };
    let found = files_walk::skill_tree_files(&entry.path);
    let Some(base_dir) = found.base.clone() else {
        snap.notes
            .push(format!("{command}: skill directory vanished"));
        snap.unsettled = true;
        return None;
    };
    let Some(paths) = walk(found, &entry.skill_md, &mut notes) else {
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
    let metas: Vec<Option<std::fs::Metadata>> = paths
        .iter()
        .map(|(_, p)| std::fs::metadata(p).ok())
        .collect();
    let on_disk: u64 = metas.iter().flatten().map(|m| m.len()).sum();
    if on_disk > MAX_SKILL_BYTES {
        return over(snap, format!("{on_disk} bytes"));
    }
    let now = std::time::SystemTime::now();
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut frontmatter = None;
    let mut marked = false;
    for ((rel, path), meta) in paths.into_iter().zip(metas) {
        let is_skill_md = rel == "SKILL.md";
        let fingerprint = meta.as_ref().map(Fingerprint::of);
        let uri = uri::file_uri(command, &rel);
        // A file whose fingerprint is as it was when last read is not
        // read now: its bytes are read, and checked against the digest,
        // when a client asks for them. `SKILL.md` so only when the
        // catalogue parsed the bytes of that digest, so the frontmatter
        // served is theirs.
        let kept = fingerprint
            .and_then(|fp| known.get(&path, fp))
            .filter(|k| !is_skill_md || entry.doc.is_some() && entry.doc_digest == Some(k.digest));
        let file = match kept {
            Some(k) => {
                if is_skill_md {
                    frontmatter = entry.doc.as_ref().map(|d| d.frontmatter.clone());
                }
                ServedFile::kept(rel, uri, path, k, fingerprint)
            }
            None => {
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
                let (bytes, escaped) = served_bytes(bytes);
                marked |= is_skill_md && escaped;
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
                // Kept for the next build only if no change can hide in
                // the file system's clock tick (see `Fingerprint::settled`).
                let fingerprint = fingerprint.filter(|fp| fp.settled(now));
                snap.read += 1;
                ServedFile::read(rel, uri, path, bytes, digest, fingerprint)
            }
        };
        // What a host loads is what is served, escapes included.
        total += file.size;
        if total > MAX_SKILL_BYTES {
            snap.notes
                .extend(notes.into_iter().map(|n| format!("{command}: {n}")));
            return over(snap, format!("more than {MAX_SKILL_BYTES} bytes as served"));
        }
        files.push(file);
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

/// What is served of a file's bytes: text reaches the model, so what must
/// not reach it as is (controls, bidi overrides, invisible carriers) is
/// escaped, the same rule as the CLI's and `load`'s, and the digest is of
/// what is served. True when something was escaped.
fn served_bytes(bytes: Vec<u8>) -> (Vec<u8>, bool) {
    match as_text(&bytes).map(skillpm_core::text::sanitize) {
        Some(std::borrow::Cow::Owned(shown)) => (shown.into_bytes(), true),
        _ => (bytes, false),
    }
}

/// A frontmatter key's value when it is a string, as `SkillDoc` reads it.
fn str_key<'a>(frontmatter: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    frontmatter.get(key).and_then(Value::as_str)
}

/// The files of a skill as `(rel, path)`: its `SKILL.md` first, then what
/// [`crate::engine::files`] `found`, nested skills included; `None` when
/// the walk stopped at its entry cap, as the files found then are not all
/// of the skill.
fn walk(
    found: files_walk::SkillFiles,
    skill_md: &Path,
    notes: &mut Vec<String>,
) -> Option<Vec<(String, PathBuf)>> {
    let base = found.base.as_deref()?;
    if found.truncated {
        return None;
    }
    // A `SKILL.md` that is no link is where the real directory says; only
    // a link needs resolving (the same as resolving every one, at a
    // fraction of the system calls over thousands of skills).
    let name = skill_md.file_name().unwrap_or_default();
    let real = match std::fs::symlink_metadata(skill_md) {
        Ok(m) if !m.file_type().is_symlink() => Ok(base.join(name)),
        _ => skill_md.canonicalize(),
    };
    let mut out = Vec::with_capacity(found.files.len() + 1);
    match real {
        Ok(real) if real.starts_with(base) => out.push(("SKILL.md".to_string(), real)),
        Ok(_) => notes.push("SKILL.md: refused, a symlink out of the skill".to_string()),
        Err(_) => {}
    }
    notes.extend(found.notes);
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
                .map(|f| f.digest.to_string())
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
        Snapshot::build(
            Catalog::from_roots(&env, &[root.to_path_buf()], ToolPolicy::default()),
            &Known::default(),
            &env.workers,
        )
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
            matches!(snap.find("skill://a/references/x.md"), Some(Found::File(f)) if &*f.bytes().unwrap() == b"x")
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
        let same = Snapshot::build(catalog(), &Known::default(), &env.workers);
        assert_eq!(same.skills[0].description, "First");
        assert!(!same.unsettled);
        let before = catalog();
        write(&md, "---\nname: a\ndescription: Other\n---\n");
        let changed = Snapshot::build(before, &Known::default(), &env.workers);
        assert_eq!(changed.skills[0].description, "Other");
        assert_eq!(
            changed.skills[0].files[0].digest,
            Checksum::of_bytes(&std::fs::read(&md).unwrap())
        );
        assert!(changed.unsettled);
    }

    /// A snapshot that knows a file unchanged does not read it; its bytes
    /// are read on request and served only while they still have the
    /// digest listed: a file rewritten since, or swapped for a link out of
    /// the skill, is refused, and a rewrite is read at the next build.
    #[test]
    fn known_files_are_read_on_request_and_checked() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("skills");
        write(
            &root.join("a/SKILL.md"),
            "---\nname: a\ndescription: d\n---\n",
        );
        write(&root.join("a/r.md"), "one");
        write(&root.join("a/s.md"), "two");
        write(&t.path().join("secret.md"), "one");
        let env = Environment::isolated();
        let catalog =
            || Catalog::from_roots(&env, std::slice::from_ref(&root), ToolPolicy::default());
        let mut first = Snapshot::build(catalog(), &Known::default(), &env.workers);
        assert_eq!(first.read, 3);
        // Files written a moment ago are never kept (their fingerprint
        // could hide a change in the same clock tick); these are taken as
        // settled, as they would be a few seconds later.
        for f in &mut first.skills[0].files {
            f.fingerprint = Some(Fingerprint::of(&std::fs::metadata(&f.path).unwrap()));
        }
        let known = Known::of(&first);
        let second = Snapshot::build(catalog(), &known, &env.workers);
        assert_eq!(second.read, 0, "nothing read: {:?}", second.notes);
        assert_eq!(second.digests(), first.digests());
        let file = |snap: &Snapshot, rel: &str| match snap.find(&format!("skill://a/{rel}")) {
            Some(Found::File(f)) => f.clone(),
            _ => panic!("{rel} not served"),
        };
        assert_eq!(&*file(&second, "r.md").bytes().unwrap(), b"one");
        std::fs::write(root.join("a/r.md"), "ONE").unwrap();
        assert!(file(&second, "r.md").bytes().is_err(), "rewritten");
        #[cfg(unix)]
        {
            std::fs::remove_file(root.join("a/s.md")).unwrap();
            std::os::unix::fs::symlink(t.path().join("secret.md"), root.join("a/s.md")).unwrap();
            assert!(file(&second, "s.md").bytes().is_err(), "a link out");
        }
        let third = Snapshot::build(catalog(), &known, &env.workers);
        assert_eq!(&*file(&third, "r.md").bytes().unwrap(), b"ONE");
        assert_eq!(
            file(&third, "r.md").digest,
            Checksum::of_bytes(b"ONE"),
            "the rewrite was read again"
        );
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
