//! The one place a package is checked: its bytes against the lock's
//! checksum, a well-known artifact against the digest its index (or the
//! lock) gives before anything is unpacked, and its `SKILL.md` against the
//! name and version it claims.
//!
//! The checksum only proves that the origin sent the bytes that were
//! locked; for registry packages the tree must also say it is the package
//! the index named, or a registry could serve one package's bytes under
//! another's name.

use super::SourceError;
use crate::project::lockfile::{LockedSkill, LockedSource};
use skillpm_core::archive;
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use skillpm_core::skill;
use std::path::Path;

/// Checks `bytes` against `locked.checksum`. A mismatch is always fatal and
/// names the package and both checksums.
pub fn verify(locked: &LockedSkill, bytes: Vec<u8>) -> Result<Verified, SourceError> {
    Verified::check(bytes, &locked.checksum).map_err(|actual| mismatch(locked, actual))
}

/// [`verify`] for the canonical tar of a tree made here, which may also
/// match in the form locks held before trees were locked by their tar
/// (`archive::verify_tree`).
pub fn verify_made(locked: &LockedSkill, tree: Verified) -> Result<Verified, SourceError> {
    archive::verify_tree(tree, &locked.checksum).map_err(|actual| mismatch(locked, actual))
}

fn mismatch(locked: &LockedSkill, actual: Checksum) -> SourceError {
    SourceError::ChecksumMismatch {
        package: format!("{}@{}", locked.name, locked.version),
        expected: locked.checksum,
        actual,
    }
}

/// Checks a downloaded well-known artifact against the digest its index
/// or the lock names, before anything is unpacked. `artifact` is shown
/// in the error.
pub fn verify_artifact(
    name: &SkillName,
    artifact: &str,
    expected: &Checksum,
    bytes: &[u8],
) -> Result<(), SourceError> {
    let actual = Checksum::of_bytes(bytes);
    if actual == *expected {
        return Ok(());
    }
    Err(SourceError::DigestMismatch {
        package: name.to_string(),
        artifact: skillpm_core::text::sanitize(artifact).into_owned(),
        expected: *expected,
        actual,
    })
}

/// The skill-level digest of a file list (Agent Skills discovery RFC,
/// "Integrity and Verification"): sha256 over `path NUL hex LF` lines
/// sorted by path. Used for legacy `files` indexes, whose skills have no
/// single artifact: it is what the lock records and a later fetch must
/// reproduce.
pub fn files_digest(files: &[(String, Checksum)]) -> Checksum {
    let mut sorted: Vec<&(String, Checksum)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut manifest = Vec::new();
    for (path, sum) in sorted {
        manifest.extend_from_slice(path.as_bytes());
        manifest.push(0);
        manifest.extend_from_slice(sum.hex().as_bytes());
        manifest.push(b'\n');
    }
    Checksum::of_bytes(&manifest)
}

/// A registry's tarball that is not the package the lock names.
#[derive(Debug, thiserror::Error)]
#[error("refusing to install {package}: the registry's tarball {why}")]
pub struct NotTheLocked {
    /// `name@version`, as locked.
    package: String,
    why: Mismatch,
}

/// What about a tarball's `SKILL.md` differs from the lock (text from the
/// tarball escaped).
#[derive(Debug, thiserror::Error)]
enum Mismatch {
    #[error("has no SKILL.md at its top level")]
    NoSkillMd,
    #[error("has an unusable SKILL.md: {}", .0.detail())]
    Unusable(skill::SkillError),
    #[error("holds a skill named `{found}`, not `{locked}`")]
    Name { found: String, locked: String },
    #[error("has a SKILL.md without `name`")]
    NoName,
    #[error("says version {found}, not {locked}")]
    Version { found: String, locked: String },
}

/// Checks an unpacked tree (still in staging, as the unpacker kept it in
/// memory) against what the lock says it is. Only registry packages need
/// it: git and path packages were named by their own `SKILL.md` when they
/// were locked.
pub fn check_identity(
    locked: &LockedSkill,
    entries: &[skillpm_core::archive::MemEntry],
) -> Result<(), NotTheLocked> {
    if !matches!(locked.source, LockedSource::Registry { .. }) {
        return Ok(());
    }
    let refuse = |why: Mismatch| NotTheLocked {
        package: format!("{}@{}", locked.name, locked.version),
        why,
    };
    let doc = entries_doc(entries)
        .ok_or_else(|| refuse(Mismatch::NoSkillMd))?
        .map_err(|e| refuse(Mismatch::Unusable(e)))?;
    match doc.name() {
        Some(n) if n == locked.name.as_str() => {}
        Some(n) => {
            return Err(refuse(Mismatch::Name {
                found: n.escape_debug().to_string(),
                locked: locked.name.to_string(),
            }))
        }
        None => return Err(refuse(Mismatch::NoName)),
    }
    // A package that declares no version was published with one
    // (`publish --version`): the index names it, and the lock's checksum
    // pins these bytes.
    let version = doc.version();
    match version.as_deref().map(|v| semver::Version::parse(v.trim())) {
        Some(Ok(v)) if v == locked.version => Ok(()),
        None => Ok(()),
        Some(_) => Err(refuse(Mismatch::Version {
            found: version.unwrap_or_default().escape_debug().to_string(),
            locked: locked.version.to_string(),
        })),
    }
}

/// Reads name and version from the `SKILL.md` of a tree that came from git
/// or a local path, where nothing else says what the package is.
pub fn identify(dir: &Path, shown: &str) -> Result<(SkillName, semver::Version), SourceError> {
    identify_named(dir, shown, None)
}

/// [`identify`] for a tree whose name is given from outside (a
/// well-known index entry): a `SKILL.md` without `name` takes it, one
/// with a different `name` is refused.
pub fn identify_named(
    dir: &Path,
    shown: &str,
    listed: Option<&SkillName>,
) -> Result<(SkillName, semver::Version), SourceError> {
    let doc = skill::find_skill_file(dir)
        .ok_or(NO_SKILL_FILE)
        .map(|file| skill::read(&file));
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    name_and_version(doc, dir_name, shown, listed)
}

const NO_SKILL_FILE: &str = "no SKILL.md at the top of the skill directory";

/// The `SKILL.md` (else `skill.md`) at the top of a tree held in
/// memory, parsed; `None` when there is none.
pub fn entries_doc(
    entries: &[skillpm_core::archive::MemEntry],
) -> Option<Result<skill::SkillDoc, skill::SkillError>> {
    use skillpm_core::archive::MemEntry;
    skill::SKILL_FILES.iter().find_map(|f| {
        entries.iter().find_map(|e| match e {
            MemEntry::File { path, data, .. } if path == f => Some(skill::parse(data)),
            _ => None,
        })
    })
}

/// [`identify`] for a tree held in memory (a git skill re-packed without
/// touching the disk), from its `SKILL.md` as [`entries_doc`] parses it.
/// A `SKILL.md` without `name` is refused, as it was when such a tree
/// was identified in its randomly named temp directory.
pub fn identify_doc(
    doc: Option<Result<skill::SkillDoc, skill::SkillError>>,
    shown: &str,
) -> Result<(SkillName, semver::Version), SourceError> {
    name_and_version(doc.ok_or(NO_SKILL_FILE), None, shown, None)
}

/// Name and version from a tree's `SKILL.md`: its own `name`, else the
/// one `listed` for it, else `dir_name`.
fn name_and_version(
    doc: Result<Result<skill::SkillDoc, skill::SkillError>, &str>,
    dir_name: Option<String>,
    shown: &str,
    listed: Option<&SkillName>,
) -> Result<(SkillName, semver::Version), SourceError> {
    let bad = |message: String| SourceError::BadSkill {
        dir: shown.to_string(),
        message,
    };
    let doc = doc
        .map_err(|missing| bad(missing.to_string()))?
        .map_err(|e| bad(format!("SKILL.md: {}", e.detail())))?;
    if let (Some(listed), Some(own)) = (listed, doc.name()) {
        if own != listed.as_str() {
            return Err(bad(format!(
                "the index lists `{listed}`, but its SKILL.md is named `{}`",
                own.escape_debug()
            )));
        }
    }
    let raw_name = doc
        .name()
        .map(str::to_string)
        .or_else(|| listed.map(|n| n.to_string()))
        .or(dir_name)
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
