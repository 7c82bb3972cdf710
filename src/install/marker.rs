//! The marker file that says "skillpm installed this tree, from this
//! checksum", written inside the staged tree so tree and marker change
//! together.

use super::MARKER;
use crate::cache::{Cache, Stamps};
use skillpm_core::archive;
use skillpm_core::checksum::{Checksum, Verified};
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

/// How the installed tree `dir` compares with `pristine`, the locked
/// package unpacked.
pub fn compare(pristine: &Path, dir: &Path) -> Integrity {
    let diff = crate::fs::compare::diff_trees(pristine, dir, &[MARKER]);
    if diff.is_empty() {
        Integrity::Intact
    } else {
        Integrity::Differs(diff)
    }
}

/// What the marker in an installed skill says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub version: String,
    pub checksum: Checksum,
}

impl Marker {
    pub(super) fn render(&self) -> String {
        format!("{}\n{}\n{}\n", self.name, self.version, self.checksum)
    }

    /// Whether the installed tree in `dir` is still exactly the package
    /// this marker names. The checksum is the truth, not the marker: unless
    /// this machine's stamp of the tree (its fingerprint when it was last
    /// known good, kept in the cache so the tree itself stays the same on
    /// every machine) vouches for it, or `trust_stamp` is off (as for
    /// `verify`), the tree is re-packed and hashed; if that cannot
    /// reproduce the checksum (a tarball packed by another tool), it is
    /// compared file by file with the verified cached tarball's contents.
    /// A tree found intact is stamped, so the next run is a few `stat`
    /// calls again. `dir` is `name` in the root whose `stamps` are given.
    pub fn integrity(
        &self,
        dir: &Path,
        name: &str,
        cache: &Cache,
        stamps: &mut Stamps,
        trust_stamp: bool,
    ) -> Integrity {
        let (state, stamp) = self.check(dir, name, cache, stamps, trust_stamp);
        if let Some(f) = stamp {
            stamps.set(name, &self.checksum, &f);
        }
        state
    }

    /// [`Marker::integrity`] without recording anything, so many trees
    /// can be checked at once: also returns the fingerprint to stamp when
    /// a re-hash found the tree intact.
    pub fn check(
        &self,
        dir: &Path,
        name: &str,
        cache: &Cache,
        stamps: &Stamps,
        trust_stamp: bool,
    ) -> (Integrity, Option<String>) {
        let now = crate::fs::fingerprint::of_tree(dir, &[MARKER]);
        if trust_stamp && now.is_some() && stamps.get(name, &self.checksum) == now.as_deref() {
            return (Integrity::Intact, None);
        }
        let state = self.rehash(dir, cache);
        let stamp = now.filter(|_| state == Integrity::Intact);
        (state, stamp)
    }

    fn rehash(&self, dir: &Path, cache: &Cache) -> Integrity {
        if archive::tar_dir_skipping(dir, &[MARKER])
            .is_ok_and(|tar| archive::verify_tree(Verified::of(tar), &self.checksum).is_ok())
        {
            return Integrity::Intact;
        }
        match cache.unpack_cached(&self.checksum) {
            Some(tree) => compare(tree.path(), dir),
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
        Some(Marker {
            name,
            version,
            checksum,
        })
    }
}
