//! Local directories: packed like any other source, so a path dependency
//! gets a checksum in the lock and is installed as a copy, never a link.

use super::{identify, Packed, SourceError};
use skillpm_core::archive;
use skillpm_core::checksum::Checksum;
use std::path::Path;

/// Packs the skill at `rel` (relative to the project directory).
pub fn pack(project: &Path, rel: &str) -> Result<Packed, SourceError> {
    let dir = project.join(rel);
    if !dir.is_dir() {
        return Err(SourceError::BadSkill {
            dir: rel.to_string(),
            message: "directory does not exist".to_string(),
        });
    }
    let (name, version) = identify(&dir, rel)?;
    let bytes = archive::pack_dir(&dir)?;
    Ok(Packed {
        name,
        version,
        checksum: Checksum::of_bytes(&bytes),
        bytes,
    })
}
