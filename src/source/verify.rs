//! The one place a package is checked: its bytes against the lock's
//! checksum, and its `SKILL.md` against the name and version it claims.
//!
//! The checksum only proves that the origin sent the bytes that were
//! locked; for registry packages the tree must also say it is the package
//! the index named, or a registry could serve one package's bytes under
//! another's name.

use super::SourceError;
use crate::project::lockfile::{LockedSkill, LockedSource};
use skillpm_core::checksum::Verified;
use skillpm_core::name::SkillName;
use skillpm_core::skill;
use std::path::Path;

/// Checks `bytes` against `locked.checksum`. A mismatch is always fatal and
/// names the package and both checksums.
pub fn verify(locked: &LockedSkill, bytes: Vec<u8>) -> Result<Verified, SourceError> {
    Verified::check(bytes, &locked.checksum).map_err(|actual| SourceError::ChecksumMismatch {
        package: format!("{}@{}", locked.name, locked.version),
        expected: locked.checksum,
        actual,
    })
}

/// Checks an unpacked tree (still in staging) against what the lock says
/// it is. Only registry packages need it: git and path packages were named
/// by their own `SKILL.md` when they were locked.
pub fn check_identity(locked: &LockedSkill, dir: &Path) -> Result<(), String> {
    if !matches!(locked.source, LockedSource::Registry { .. }) {
        return Ok(());
    }
    let refuse = |why: String| {
        format!(
            "refusing to install {}@{}: the registry's tarball {why}",
            locked.name, locked.version
        )
    };
    let file = skill::find_skill_file(dir)
        .ok_or_else(|| refuse("has no SKILL.md at its top level".into()))?;
    let doc = skill::read(&file)
        .map_err(|e| refuse(format!("has an unusable SKILL.md: {}", e.detail())))?;
    match doc.name() {
        Some(n) if n == locked.name.as_str() => {}
        Some(n) => {
            return Err(refuse(format!(
                "holds a skill named `{}`, not `{}`",
                n.escape_debug(),
                locked.name
            )))
        }
        None => return Err(refuse("has a SKILL.md without `name`".into())),
    }
    let version = doc.version();
    match version.as_deref().map(|v| semver::Version::parse(v.trim())) {
        Some(Ok(v)) if v == locked.version => Ok(()),
        Some(_) => Err(refuse(format!(
            "says version {}, not {}",
            version.unwrap_or_default().escape_debug(),
            locked.version
        ))),
        None => Err(refuse("has a SKILL.md without `version`".into())),
    }
}

/// Reads name and version from the `SKILL.md` of a tree that came from git
/// or a local path, where nothing else says what the package is.
pub fn identify(dir: &Path, shown: &str) -> Result<(SkillName, semver::Version), SourceError> {
    let bad = |message: String| SourceError::BadSkill {
        dir: shown.to_string(),
        message,
    };
    let file = skill::find_skill_file(dir)
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
