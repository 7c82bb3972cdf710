//! `skillpm import`: take over a project managed by vercel's `skills` CLI.
//!
//! Its `skills-lock.json` (`{"version": 1, "skills": {NAME: {source,
//! sourceType, sourceUrl?, ref?, skillPath?, computedHash, ...}}}`, format
//! read from `skills` 1.7.4) records where each skill came from but no
//! commit. Each entry becomes the equivalent skills.toml dependency (same
//! URL, same ref, the skill's directory as `path`); resolving it pins the
//! ref to a full commit in skills.lock. The skills it installed are taken
//! over only when they are exactly what it installed (their folder hash is
//! the lock's `computedHash`), so nothing the user edited is replaced; the
//! rest, and every field skillpm has no place for, is reported.

use super::sync::Run;
use super::{Options, Summary};
use crate::engine::agents::{self, SHARED};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::fs::write_dir::WriteDir;
use crate::install::{Marker, STAGING_PREFIX};
use crate::project::manifest::{Dependency, Manifest, ManifestEditor};
use crate::project::spec::{self, GitRef, GitUrl, WellKnownUrl};
use crate::project::{Project, ProjectError};
use crate::report::Reporter;
use crate::resolve::Refresh;
use serde_json::Value;
use sha2::{Digest, Sha256};
use skillpm_core::name::SkillName;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// vercel's lock file name.
pub const VERCEL_LOCK: &str = "skills-lock.json";
/// Largest lock read; real ones are a few KiB.
const MAX_LOCK_BYTES: u64 = 8 * 1024 * 1024;

/// What `import` did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Skills now in skills.toml and skills.lock.
    pub imported: Vec<String>,
    /// One line per thing not carried over (`name: why`), sorted.
    pub not_carried: Vec<String>,
    pub summary: Summary,
}

/// One lock entry, as skillpm will hold it.
struct Entry {
    name: SkillName,
    dep: Dependency,
    /// vercel's folder hash of the skill as it installed it.
    hash: Option<String>,
}

pub fn import(
    env: &Environment,
    lock_file: Option<&Path>,
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Imported> {
    let project = Project::locate(env, false)?;
    let path = lock_file
        .map(|p| env.cwd.join(p))
        .unwrap_or_else(|| project.dir.join(VERCEL_LOCK));
    let text =
        skillpm_core::bounded::read_to_string(&path, MAX_LOCK_BYTES).map_err(Error::io(&path))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| Error::BadImport {
        path: path.clone(),
        detail: format!("not JSON: {e}"),
    })?;
    let run = Run::new(env, &project, opts, "import", reporter)?;
    let existing = match project.manifest_text() {
        Err(ProjectError::NoManifest(_)) => None,
        r => Some(r?),
    };
    let base = match &existing {
        Some(t) => Manifest::parse(t, &project.manifest_path)?
            .github_base
            .unwrap_or_else(|| spec::DEFAULT_GITHUB_BASE.to_string()),
        None => spec::DEFAULT_GITHUB_BASE.to_string(),
    };
    let mut out = Imported::default();
    let entries = entries(&doc, &path, &base, &mut out.not_carried)?;

    // Take over what vercel installed, only where it is untouched.
    let mut aside: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut wanted: Vec<&Entry> = Vec::new();
    for e in &entries {
        match take_over(&project.dir, e, &mut aside) {
            Ok(()) => wanted.push(e),
            Err(why) => {
                out.not_carried.push(format!("{}: {why}", e.name));
            }
        }
    }
    let result = write_and_sync(&project, &run, existing.as_deref(), &wanted, reporter);
    match result {
        Ok(summary) => {
            for (_, moved) in &aside {
                let _ = std::fs::remove_dir_all(moved);
            }
            out.summary = summary;
        }
        Err(e) => {
            // Put vercel's trees back: the project is as it was.
            for (orig, moved) in aside.iter().rev() {
                let _ = std::fs::rename(moved, orig);
            }
            return Err(e);
        }
    }
    // Say where what skillpm installed differs from what vercel installed
    // (the ref moved since): the lock now pins what was fetched.
    let roots = project.targets(&project.read_manifest()?)?;
    for e in &wanted {
        out.imported.push(e.name.to_string());
        if let (Some(h), Some(root)) = (&e.hash, roots.first()) {
            let now = folder_hash(&root.join(e.name.as_str()));
            if now.as_deref() != Some(h.as_str()) {
                out.not_carried.push(format!(
                    "{}: the source now differs from what `skills` installed (computedHash {h}); skills.lock pins what was fetched",
                    e.name
                ));
            }
        }
    }
    out.not_carried.sort();
    Ok(out)
}

fn write_and_sync(
    project: &Project,
    run: &Run,
    existing: Option<&str>,
    wanted: &[&Entry],
    reporter: &dyn Reporter,
) -> Result<Summary> {
    // A skills.toml without `[install]` gets the targets vercel's layout
    // implies; one that has its own keeps them.
    let start = match existing {
        Some(t) if t.contains("[install]") => t.to_string(),
        Some(t) => format!(
            "{}\n{}",
            t.trim_end(),
            install_section(&project.dir, wanted)
        ),
        None => format!(
            "# Imported from {VERCEL_LOCK} by `skillpm import`.\n[skills]\n\n{}",
            install_section(&project.dir, wanted)
        ),
    };
    let mut editor = ManifestEditor::parse(&start, &project.manifest_path)?;
    for e in wanted {
        editor.set_dependency(&e.name, &e.dep);
    }
    let text = editor.to_string();
    let manifest = Manifest::parse(&text, &project.manifest_path)?;
    let names: BTreeSet<SkillName> = wanted.iter().map(|e| e.name.clone()).collect();
    run.sync_writing(&manifest, &Refresh::Only(names), reporter, |_| Some(text))
}

/// `[install] targets` where vercel's tool put the skills: the shared
/// `.agents/skills`, plus every agent with its own directory (Claude
/// Code's `.claude/skills`) that holds one of them.
fn install_section(dir: &Path, wanted: &[&Entry]) -> String {
    let mut targets = vec![format!("{SHARED:?}")];
    for a in agents::AGENTS.iter().filter(|a| a.install != SHARED) {
        let used = wanted
            .iter()
            .any(|e| std::fs::symlink_metadata(dir.join(a.install).join(e.name.as_str())).is_ok());
        if used && !targets.contains(&format!("{:?}", a.id)) {
            targets.push(format!("{:?}", a.id));
        }
    }
    format!("[install]\ntargets = [{}]\n", targets.join(", "))
}

/// Moves vercel's copies of `e` aside (remembered in `aside`) so skillpm
/// can install its own, if each is exactly what vercel installed. Links
/// are left: skillpm keeps a link that already points where it would.
/// Every root is taken as a [`WriteDir`]: a root that a committed symlink
/// leads to (`.claude -> ../../.claude`) is somebody else's directory, so
/// the skill is not imported and nothing there is moved.
fn take_over(
    dir: &Path,
    e: &Entry,
    aside: &mut Vec<(PathBuf, PathBuf)>,
) -> std::result::Result<(), String> {
    let mut found = Vec::new();
    let mut roots: Vec<&str> = vec![SHARED];
    roots.extend(agents::AGENTS.iter().map(|a| a.install));
    roots.sort();
    roots.dedup();
    for r in roots {
        let shown = Path::new(r).join(e.name.as_str());
        let p = dir.join(&shown);
        let real_dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
        if !real_dir || Marker::read(&p).is_some() {
            continue;
        }
        let root = WriteDir::below(dir, Path::new(r))
            .map_err(|why| format!("{} is not taken over: {why}", shown.display()))?;
        match (&e.hash, folder_hash(&p)) {
            (Some(want), Some(got)) if *want == got => found.push(root),
            _ => {
                return Err(format!(
                    "{} differs from what `skills` installed; left as it is, not imported",
                    shown.display()
                ))
            }
        }
    }
    for root in found {
        let p = root.join(e.name.as_str());
        let moved = root.join(format!("{STAGING_PREFIX}import-{}", e.name));
        let _ = std::fs::remove_dir_all(&moved);
        std::fs::rename(&p, &moved).map_err(|err| format!("cannot move {}: {err}", p.display()))?;
        aside.push((p, moved));
    }
    Ok(())
}

/// The lock's entries as dependencies, sorted by name; what cannot be
/// carried is added to `skipped`.
fn entries(doc: &Value, path: &Path, base: &str, skipped: &mut Vec<String>) -> Result<Vec<Entry>> {
    let bad = |detail: &str| Error::BadImport {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    };
    match doc.get("version").and_then(Value::as_u64) {
        Some(1) => {}
        Some(v) => return Err(bad(&format!("lock version {v} is not supported (only 1)"))),
        None => return Err(bad("no `version` number; is this a skills-lock.json?")),
    }
    let skills = doc
        .get("skills")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no `skills` object"))?;
    let sorted: BTreeMap<&String, &Value> = skills.iter().collect();
    let mut out = Vec::new();
    for (key, v) in sorted {
        // Printed through the CLI's sanitizing writers, like every line.
        let Ok(name) = SkillName::new(key) else {
            skipped.push(format!("{key}: not a valid skill name for skills.toml"));
            continue;
        };
        match entry(v, base) {
            Ok((dep, dropped)) => {
                for d in dropped {
                    skipped.push(format!("{name}: `{d}` has no equivalent and was dropped"));
                }
                out.push(Entry {
                    name,
                    dep,
                    hash: v
                        .get("computedHash")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            }
            Err(why) => skipped.push(format!("{name}: {why}")),
        }
    }
    Ok(out)
}

/// Fields of an entry skillpm records elsewhere or not at all.
const KNOWN: &[&str] = &[
    "source",
    "sourceType",
    "sourceUrl",
    "ref",
    "skillPath",
    "computedHash",
    "wellKnownDigest",
];

/// Why an entry of `skills-lock.json` is not imported.
#[derive(Debug, thiserror::Error)]
enum NotImported {
    #[error("no {0}")]
    Missing(&'static str),
    #[error(transparent)]
    Spec(#[from] spec::SpecError),
    #[error("github source `{0}` is not owner/name")]
    NotOwnerName(String),
    #[error("skills-lock.json names {0} on this machine; only a source you add yourself (`skillpm add`) may, not imported")]
    Local(String),
    #[error("local source {0} is not inside the project")]
    Outside(String),
    #[error("source type `{0}` has no skillpm equivalent; not imported")]
    Kind(String),
}

fn entry(v: &Value, base: &str) -> std::result::Result<(Dependency, Vec<String>), NotImported> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|x| !x.is_empty());
    let kind = s("sourceType").ok_or(NotImported::Missing("sourceType"))?;
    let source = s("source").ok_or(NotImported::Missing("source"))?;
    // `skills/foo/SKILL.md` -> `skills/foo`; a skill at the root has none.
    let path = s("skillPath")
        .and_then(|p| p.strip_suffix("SKILL.md"))
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    if let Some(p) = &path {
        spec::check_subpath(p)?;
    }
    let reference = s("ref").map(|r| GitRef::Unspecified(r.to_string()));
    // The lock is the repository's word, not the user's: what it names
    // may not reach this machine (a `file://` repository, a service on
    // loopback, a metadata address) or a directory outside the project.
    // The user's own `[sources] github` base may be local; the lock only
    // names `owner/name` below it.
    let dep = match kind {
        "github" => {
            let repo = source.trim_end_matches(".git");
            let mut parts = repo.split('/');
            let shorthand = matches!(
                (parts.next(), parts.next(), parts.next()),
                (Some(o), Some(n), None) if ![o, n].iter().any(|p| p.is_empty() || p.starts_with('.'))
            );
            if !shorthand {
                return Err(NotImported::NotOwnerName(repo.to_string()));
            }
            let url = GitUrl::parse(&format!("{}/{repo}.git", base.trim_end_matches('/')))?;
            Dependency::Git {
                url,
                reference,
                path,
                plugin: None,
                plugin_version: None,
            }
        }
        "git" | "gitlab" => {
            let url = GitUrl::parse(s("sourceUrl").unwrap_or(source))?;
            if url.is_local() {
                return Err(NotImported::Local(format!("the git repository {url}")));
            }
            Dependency::Git {
                url,
                reference,
                path,
                plugin: None,
                plugin_version: None,
            }
        }
        "local" => {
            let dir = match &path {
                Some(p) => format!("{}/{p}", source.trim_end_matches('/')),
                None => source.to_string(),
            };
            let inside = dir.starts_with("./") && !dir.split('/').any(|c| c == "..");
            if !inside {
                return Err(NotImported::Outside(dir));
            }
            spec::Spec::parse(&dir)?;
            Dependency::Path { path: dir }
        }
        "well-known" => {
            let index = WellKnownUrl::parse(s("sourceUrl").unwrap_or(source))?;
            if index.is_local() {
                return Err(NotImported::Local(format!("the site {index}")));
            }
            Dependency::WellKnown { index }
        }
        other => return Err(NotImported::Kind(other.to_string())),
    };
    let dropped = v
        .as_object()
        .map(|o| {
            o.keys()
                .filter(|k| !KNOWN.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    Ok((dep, dropped))
}

/// vercel's `computeSkillFolderHash`: sha256 over each regular file's
/// relative path and bytes, files sorted as JavaScript's `localeCompare`
/// sorts them, skipping `.git` and `node_modules`. `None` when the
/// directory cannot be read. Capped: a skill over 64 MiB is not hashed.
pub fn folder_hash(dir: &Path) -> Option<String> {
    const MAX: u64 = 64 * 1024 * 1024;
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    collect(dir, "", &mut files, 0).ok()?;
    files.sort_by(|a, b| locale_compare(&a.0, &b.0));
    let mut h = Sha256::new();
    let mut total = 0u64;
    for (rel, p) in &files {
        let bytes = skillpm_core::bounded::read(p, MAX.saturating_sub(total)).ok()?;
        total += bytes.len() as u64;
        h.update(rel.as_bytes());
        h.update(&bytes);
    }
    Some(hex::encode(h.finalize()))
}

fn collect(
    dir: &Path,
    rel: &str,
    out: &mut Vec<(String, PathBuf)>,
    depth: usize,
) -> std::io::Result<()> {
    if depth > 64 || out.len() > 100_000 {
        return Err(std::io::Error::other("tree too deep or too large"));
    }
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ft = e.file_type()?;
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if ft.is_dir() {
            if name != ".git" && name != "node_modules" {
                collect(&e.path(), &r, out, depth + 1)?;
            }
        } else if ft.is_file() && name != crate::install::MARKER {
            out.push((r, e.path()));
        }
    }
    Ok(())
}

/// ICU root collation as `String.prototype.localeCompare` applies it, for
/// the characters file names use: case and accents are ignored at first
/// (`scripts/` sorts before `SKILL.md`), punctuation before digits before
/// letters; then lowercase before uppercase; then code points.
fn locale_compare(a: &str, b: &str) -> Ordering {
    let primary = |s: &str| -> Vec<(u8, u32)> {
        s.chars()
            .map(|c| {
                if c.is_alphabetic() {
                    (3, c.to_lowercase().next().unwrap_or(c) as u32)
                } else if c.is_ascii_digit() {
                    (2, c as u32)
                } else {
                    (1, PUNCT.find(c).map_or(c as u32 + 64, |i| i as u32))
                }
            })
            .collect()
    };
    primary(a).cmp(&primary(b)).then_with(|| {
        // Tertiary: at the first case difference, lowercase first.
        for (x, y) in a.chars().zip(b.chars()) {
            if x != y {
                return y.is_lowercase().cmp(&x.is_lowercase()).then(x.cmp(&y));
            }
        }
        a.len().cmp(&b.len())
    })
}

/// ASCII punctuation and symbols in ICU root order.
const PUNCT: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_order_matches_javascript() {
        // As `["SKILL.md","scripts/run.sh","a-b","a_b","a.b","A","a","b1","b10","b2"].sort((x,y)=>x.localeCompare(y))`.
        let mut v = vec![
            "SKILL.md",
            "scripts/run.sh",
            "a-b",
            "a_b",
            "a.b",
            "A",
            "a",
            "b1",
            "b10",
            "b2",
        ];
        v.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(
            v,
            [
                "a",
                "A",
                "a_b",
                "a-b",
                "a.b",
                "b1",
                "b10",
                "b2",
                "scripts/run.sh",
                "SKILL.md"
            ]
        );
    }
}
