//! `SKILL.md` parses kept between runs, each with the fingerprint of the
//! file it was made from ([`skillpm_core::fingerprint`]), so a long-lived
//! caller that starts often over a large tree (`skillpm mcp`) parses only
//! the files that changed. The YAML parse is most of a catalogue's time.
//!
//! A kept parse is used only while the file's fingerprint is the one taken
//! before it was read; a file changed within [`SETTLE`] of the read is
//! parsed but not kept. The caller stores and loads [`Parses`] (it is
//! serializable); nothing here writes to disk.
//!
//! [`SETTLE`]: skillpm_core::fingerprint::SETTLE

use serde::{Deserialize, Serialize};
use skillpm_core::checksum::Checksum;
use skillpm_core::fingerprint::Fingerprint;
use skillpm_core::skill::{self, SkillDoc, SkillError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// A `SKILL.md` parsed, with the digest of the bytes it was parsed from.
pub type Parsed = Result<(SkillDoc, Checksum), SkillError>;

/// Parses by `SKILL.md` path. Shared with the next build's map rather
/// than copied: a parse is a few kilobytes of small allocations.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Parses {
    kept: HashMap<PathBuf, Arc<Kept>>,
    /// How many files the last build parsed (successfully) rather than
    /// took from here: none means there is nothing new to store. A file
    /// that does not parse is parsed at every build.
    #[serde(skip)]
    pub parsed: usize,
}

/// One kept parse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    fingerprint: Fingerprint,
    digest: Checksum,
    doc: SkillDoc,
}

impl Parses {
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The parse of `path`: the kept one while its fingerprint holds, else
    /// read and parsed (then `Fresh`); and what to keep of it, if anything.
    pub(crate) fn parse(&self, path: &Path, now: SystemTime) -> (Parsed, Option<Arc<Kept>>, Fresh) {
        // The fingerprint is taken before the read: a change after it
        // moves the fingerprint, and the next run parses again.
        let Some(fingerprint) = std::fs::metadata(path).ok().map(|m| Fingerprint::of(&m)) else {
            return (read_and_parse(path), None, Fresh(true));
        };
        if let Some(k) = self.kept.get(path).filter(|k| k.fingerprint == fingerprint) {
            return (Ok((k.doc.clone(), k.digest)), Some(k.clone()), Fresh(false));
        }
        let parsed = read_and_parse(path);
        let kept = match &parsed {
            Ok((doc, digest)) if fingerprint.settled(now) => Some(Arc::new(Kept {
                fingerprint,
                digest: *digest,
                doc: doc.clone(),
            })),
            _ => None,
        };
        (parsed, kept, Fresh(true))
    }

    /// The parses of the files read this time, and only those: a file no
    /// longer found is dropped.
    pub(crate) fn replace(&mut self, kept: HashMap<PathBuf, Arc<Kept>>, parsed: usize) {
        self.kept = kept;
        self.parsed = parsed;
    }
}

/// Whether a parse was made now rather than kept.
pub(crate) struct Fresh(pub bool);

/// Reads and parses one `SKILL.md`.
pub fn read_and_parse(path: &Path) -> Parsed {
    let bytes = skill::read_bytes(path)?;
    Ok((skill::parse(&bytes)?, Checksum::of_bytes(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillpm_core::fingerprint::SETTLE;
    use std::time::Duration;

    #[test]
    fn a_kept_parse_serves_until_the_file_changes() {
        let t = tempfile::tempdir().unwrap();
        let md = t.path().join("SKILL.md");
        std::fs::write(&md, "---\nname: a\ndescription: First\n---\n").unwrap();
        // As if the file had been written a while ago.
        let later = SystemTime::now() + SETTLE + Duration::from_secs(1);
        let mut parses = Parses::default();
        let (parsed, kept, Fresh(fresh)) = parses.parse(&md, later);
        assert!(fresh);
        assert_eq!(parsed.unwrap().0.description(), "First");
        parses.replace([(md.clone(), kept.unwrap())].into(), 1);
        let (parsed, _, Fresh(fresh)) = parses.parse(&md, later);
        assert!(!fresh, "taken as kept");
        assert_eq!(parsed.unwrap().0.description(), "First");
        // Kept across a save and a load.
        let parses: Parses = serde_json::from_slice(&serde_json::to_vec(&parses).unwrap()).unwrap();
        assert!(!parses.parse(&md, later).2 .0);
        std::fs::write(&md, "---\nname: a\ndescription: Other\n---\n").unwrap();
        let (parsed, kept, Fresh(fresh)) = parses.parse(&md, SystemTime::now());
        assert!(fresh, "a changed file is parsed again");
        assert_eq!(parsed.unwrap().0.description(), "Other");
        assert!(kept.is_none(), "just written: not kept");
    }
}
