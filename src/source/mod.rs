//! Sources turn a dependency into a verified, cacheable tarball.
//!
//! Whatever the origin (registry, git, local path), the result is the same:
//! the deterministic `.tar.gz` of the skill tree and its sha256, stored in
//! the content-addressed cache. Installing never needs to know the origin.

pub mod git;
pub mod path;
pub mod registry;

use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::skill;
use std::path::Path;

/// A skill tree packed for the cache.
#[derive(Debug, Clone)]
pub struct Packed {
    pub name: SkillName,
    pub version: semver::Version,
    pub checksum: Checksum,
    pub bytes: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0}")]
    Git(String),
    #[error("{dir}: {message}")]
    BadSkill { dir: String, message: String },
    #[error(transparent)]
    Pack(#[from] skillpm_core::archive::PackError),
    #[error(transparent)]
    Unpack(#[from] skillpm_core::archive::UnpackError),
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Registry(String),
    #[error("{0} needs network access, but --frozen forbids it")]
    Offline(String),
    #[error("checksum mismatch for {package}: the lock says {expected}, the download is {actual}; refusing to install")]
    ChecksumMismatch {
        package: String,
        expected: Checksum,
        actual: Checksum,
    },
}

/// Reads name and version from the `SKILL.md` of a tree that came from git
/// or a local path, where nothing else says what the package is.
pub fn identify(dir: &Path, shown: &str) -> Result<(SkillName, semver::Version), SourceError> {
    let bad = |message: String| SourceError::BadSkill {
        dir: shown.to_string(),
        message,
    };
    let file = skillpm_core::skill::SKILL_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| bad("no SKILL.md at the top of the skill directory".to_string()))?;
    let doc = skill::read(&file).map_err(|e| bad(format!("SKILL.md: {}", e.detail())))?;
    let raw_name = doc
        .name()
        .map(str::to_string)
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let name = SkillName::new(&raw_name).map_err(|e| {
        bad(format!(
            "skill name `{raw_name}` is not a valid package name: {e}"
        ))
    })?;
    let version = match doc.version() {
        Some(v) => semver::Version::parse(&v)
            .map_err(|e| bad(format!("`version` {v:?} is not semver: {e}")))?,
        None => semver::Version::new(0, 0, 0),
    };
    Ok((name, version))
}
