//! The marker file that says "skillpm installed this tree, from this
//! checksum", written inside the staged tree so tree and marker change
//! together.

use super::MARKER;
use skillpm_core::checksum::Checksum;
use std::path::Path;

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

    /// Reads the marker of `dir`; `None` if absent or unreadable, which
    /// means "not ours".
    pub fn read(dir: &Path) -> Option<Marker> {
        let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
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
