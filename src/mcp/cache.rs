//! The start-up cache: each served `SKILL.md`'s frontmatter, keyed by the
//! digest of the bytes served, so a start over unchanged skills parses no
//! YAML for the snapshot (see BENCHMARKS.md, `mcp_startup.py`).
//!
//! The key is the content's digest rather than the file's fingerprint
//! (size, mtime, inode): the snapshot reads and hashes every file it
//! serves anyway (hashing is a small part of a start), and a digest cannot
//! go stale, so a file rewritten with the same size and a restored mtime
//! is parsed afresh all the same.
//!
//! One file per project, `mcp-v1/<hash of the project directory>.json` in
//! skillpm's cache directory, holding exactly the entries of the last
//! snapshot built (so it never grows past what is served). Best effort
//! throughout: a missing, unreadable, oversized or corrupt file is a cold
//! start, and a failed write costs the next start its parse.

use serde_json::{Map, Value};
use skillpm_core::skill::{self, SkillError};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Ample for tens of thousands of skills' frontmatter, and a bound on what
/// a corrupt file costs to read.
const MAX_CACHE_BYTES: u64 = 256 * 1024 * 1024;

/// Frontmatter by digest: the last build's, and this build's.
#[derive(Debug, Default)]
pub struct Frontmatters {
    file: Option<PathBuf>,
    old: HashMap<String, Map<String, Value>>,
    new: BTreeMap<String, Map<String, Value>>,
    /// Whether this build parsed anything the file did not hold.
    missed: bool,
}

impl Frontmatters {
    /// The entries stored in `file`, if it can be read; `None` caches
    /// nothing (tests and embedders building a snapshot directly).
    pub fn open(file: Option<PathBuf>) -> Frontmatters {
        let old = file
            .as_deref()
            .and_then(|f| skillpm_core::bounded::read(f, MAX_CACHE_BYTES).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Frontmatters {
            file,
            old,
            ..Frontmatters::default()
        }
    }

    /// The frontmatter of the `SKILL.md` served as `bytes`, whose digest
    /// is `digest`: from the cache when it holds that digest with the
    /// frontmatter the catalog read (`expected`), else parsed (and kept if
    /// it parses). So what the cache holds only ever confirms the catalog's
    /// own parse of the file: a wrong entry costs a parse, and the
    /// frontmatter served is always one parsed from that file.
    pub fn parse(
        &mut self,
        digest: &str,
        bytes: &[u8],
        expected: Option<&Map<String, Value>>,
    ) -> Result<Map<String, Value>, SkillError> {
        let fm = match self.old.get(digest) {
            Some(fm) if Some(fm) == expected => fm.clone(),
            _ => {
                self.missed = true;
                skill::parse(bytes)?.frontmatter
            }
        };
        self.new.insert(digest.to_string(), fm.clone());
        Ok(fm)
    }

    /// Writes this build's entries back, when they differ from the file's.
    pub fn save(&self) {
        let Some(file) = &self.file else { return };
        if !self.missed && self.new.len() == self.old.len() {
            return;
        }
        let Ok(bytes) = serde_json::to_vec(&self.new) else {
            return;
        };
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::fs::replace_file(file, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = b"---\nname: a\ndescription: d\n---\nbody\n";

    #[test]
    fn a_saved_entry_is_used_and_a_corrupt_file_is_a_cold_start() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("mcp-v1/p.json");
        let mut cold = Frontmatters::open(Some(file.clone()));
        let fm = cold.parse("sha256:1", DOC, None).unwrap();
        assert_eq!(fm["name"], "a");
        cold.save();
        let mut warm = Frontmatters::open(Some(file.clone()));
        // Not what the catalog read: parsed.
        assert!(warm.parse("sha256:1", b"not a skill", None).is_err());
        // The entry is found by digest: these bytes are not parsed.
        assert_eq!(
            warm.parse("sha256:1", b"not a skill", Some(&fm)).unwrap(),
            fm
        );
        std::fs::write(&file, b"{\"sha256:1\": [").unwrap();
        let mut broken = Frontmatters::open(Some(file.clone()));
        assert!(broken.parse("sha256:1", b"not a skill", Some(&fm)).is_err());
        assert_eq!(broken.parse("sha256:2", DOC, None).unwrap(), fm);
        broken.save();
        assert!(Frontmatters::open(Some(file)).old.contains_key("sha256:2"));
    }
}
