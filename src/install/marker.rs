//! The marker file that says "skillpm installed this tree, from this
//! checksum", written inside the staged tree so tree and marker change
//! together.

use super::MARKER;
use crate::cache::Cache;
use skillpm_core::checksum::Checksum;
use std::path::Path;

/// How an installed tree compares with the package its marker names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    Intact,
    /// The differences, one line each (`modified file SKILL.md`).
    Differs(Vec<String>),
    /// Neither re-hashing nor a verified cached tree could tell.
    Unknown,
}

/// What the marker in an installed skill says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub version: String,
    pub checksum: Checksum,
    /// The tree's fingerprint right after it was installed (see
    /// [`crate::fs::fingerprint`]); absent in markers of older versions.
    pub fingerprint: Option<String>,
}

impl Marker {
    pub(super) fn render(&self) -> String {
        let mut s = format!("{}\n{}\n{}\n", self.name, self.version, self.checksum);
        if let Some(f) = &self.fingerprint {
            s.push_str(&format!("fingerprint {f}\n"));
        }
        s
    }

    /// Whether the installed tree in `dir` is still exactly the package
    /// this marker names. The checksum is the truth, not the marker: when
    /// the fingerprint does not vouch for the tree (it was edited, copied,
    /// or checked out elsewhere; or `trust_fingerprint` is off, as for
    /// `verify`), the tree is re-packed and hashed, and if that cannot
    /// reproduce the checksum (a tarball packed by another tool), compared
    /// file by file with the verified cached tree.
    pub fn integrity(&self, dir: &Path, cache: &Cache, trust_fingerprint: bool) -> Integrity {
        if trust_fingerprint {
            let now = crate::fs::fingerprint::of_tree(dir, &[MARKER]);
            if now.is_some() && now == self.fingerprint {
                return Integrity::Intact;
            }
        }
        if skillpm_core::archive::tree_checksum_skipping(dir, &[MARKER])
            .is_ok_and(|c| c == self.checksum)
        {
            return Integrity::Intact;
        }
        match cache.verified_tree(&self.checksum) {
            Some(tree) => {
                let diff = crate::fs::compare::diff_trees(&tree, dir, &[MARKER]);
                if diff.is_empty() {
                    Integrity::Intact
                } else {
                    Integrity::Differs(diff)
                }
            }
            None => Integrity::Unknown,
        }
    }

    /// Reads the marker of `dir`; `None` if absent or unreadable, which
    /// means "not ours".
    pub fn read(dir: &Path) -> Option<Marker> {
        // A marker is three short lines; a committed one may be anything.
        let text = skillpm_core::bounded::read_to_string(&dir.join(MARKER), 4096).ok()?;
        let mut lines = text.lines();
        let name = lines.next()?.to_string();
        let version = lines.next()?.to_string();
        let checksum = Checksum::parse(lines.next()?).ok()?;
        let fingerprint = lines
            .next()
            .and_then(|l| l.strip_prefix("fingerprint "))
            .map(str::to_string);
        Some(Marker {
            name,
            version,
            checksum,
            fingerprint,
        })
    }
}
