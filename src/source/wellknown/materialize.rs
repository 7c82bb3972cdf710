//! Turning a downloaded artifact into the packed tree of the skill the
//! index lists: digests checked, archives through the hardened unpacker,
//! legacy files written out one by one, the result identified and packed.

use super::index::{join, Artifact};
use super::{WellKnownError, WellKnownSource, MAX_ARTIFACT_BYTES};
use crate::project::spec::WellKnownUrl;
use crate::source::{identify_named, verify, SourceError};
use skillpm_core::archive::{self, Format};
use skillpm_core::checksum::{Checksum, Verified};
use skillpm_core::name::SkillName;
use skillpm_core::text::sanitize;
use std::path::Path;

impl WellKnownSource {
    /// Downloads a skill's artifact, checks its digest against `expected`
    /// (the index's, or the lock's) and turns it into a packed tree.
    pub(super) async fn materialize(
        &self,
        name: &SkillName,
        artifact: &Artifact,
        expected: Option<&Checksum>,
    ) -> Result<Materialized, SourceError> {
        match artifact {
            Artifact::Single { url, digest } => {
                let want = expected.unwrap_or(digest);
                let bytes = self.get_found(url, MAX_ARTIFACT_BYTES).await?;
                verify::verify_artifact(name, url.as_str(), want, &bytes)?;
                self.unpack_single(name, url, *want, bytes)
            }
            Artifact::Files { dir: base, files } => {
                let mut fetched = Vec::with_capacity(files.len());
                let mut total: u64 = 0;
                for (path, file_digest) in files {
                    let url = join(base, path).map_err(WellKnownError::Entry)?;
                    let bytes = self.get_found(&url, MAX_ARTIFACT_BYTES - total).await?;
                    total += bytes.len() as u64;
                    if let Some(d) = file_digest {
                        verify::verify_artifact(name, url.as_str(), d, &bytes)?;
                    }
                    fetched.push((path.clone(), bytes));
                }
                let sums: Vec<(String, Checksum)> = fetched
                    .iter()
                    .map(|(p, b)| (p.clone(), Checksum::of_bytes(b)))
                    .collect();
                let got = verify::files_digest(&sums);
                if let Some(want) = expected {
                    if got != *want {
                        return Err(SourceError::DigestMismatch {
                            package: name.to_string(),
                            artifact: sanitize(base.as_str()).into_owned(),
                            expected: *want,
                            actual: got,
                        });
                    }
                }
                let dir = new_tmp(&self.tmp_parent()?)?;
                for (path, bytes) in &fetched {
                    write_new(dir.path(), path, bytes)?;
                }
                made(name, &dir, base.clone(), got)
            }
        }
    }

    /// The packed tree of a single-file artifact whose digest was checked:
    /// an archive (through the hardened unpacker) or a bare `SKILL.md`.
    pub(super) fn unpack_single(
        &self,
        name: &SkillName,
        url: &WellKnownUrl,
        digest: Checksum,
        bytes: Vec<u8>,
    ) -> Result<Materialized, SourceError> {
        let tmp_parent = self.tmp_parent()?;
        let dir = match Format::sniff(&bytes) {
            Some(format) => {
                archive::unpack_to_new_dir_as(format, &bytes, None, &tmp_parent, &self.limits)
                    .map_err(|source| SourceError::Refused {
                        package: name.to_string(),
                        source,
                    })?
            }
            None if bytes.len() as u64 > skillpm_core::skill::MAX_SKILL_MD_BYTES => {
                return Err(SourceError::BadSkill {
                    dir: sanitize(url.as_str()).into_owned(),
                    message: "neither an archive nor a SKILL.md of at most 256 KiB".into(),
                })
            }
            None => {
                let dir = new_tmp(&tmp_parent)?;
                write_new(dir.path(), "SKILL.md", &bytes)?;
                dir
            }
        };
        made(name, &dir, url.clone(), digest)
    }

    fn tmp_parent(&self) -> Result<std::path::PathBuf, SourceError> {
        let tmp_parent = self.cache.root().join("tmp");
        std::fs::create_dir_all(&tmp_parent).map_err(crate::fs::fs_err("create", &tmp_parent))?;
        Ok(tmp_parent)
    }
}

/// The skill in `dir` (an artifact unpacked or written out), checked to be
/// the one the index lists as `name`, as its canonical tar.
fn made(
    name: &SkillName,
    dir: &tempfile::TempDir,
    artifact: WellKnownUrl,
    digest: Checksum,
) -> Result<Materialized, SourceError> {
    let root = skill_root(dir.path());
    let shown = sanitize(artifact.as_str()).into_owned();
    let (found, version) = identify_named(&root, &shown, Some(name))?;
    if found != *name {
        return Err(SourceError::BadSkill {
            dir: shown,
            message: format!("the index lists `{name}`, but the skill is named `{found}`"),
        });
    }
    Ok(Materialized {
        version,
        artifact,
        digest,
        tree: Verified::of(archive::tar_dir(&root)?),
    })
}

pub(super) struct Materialized {
    pub(super) version: semver::Version,
    pub(super) artifact: WellKnownUrl,
    pub(super) digest: Checksum,
    /// The canonical tar of the skill's tree.
    pub(super) tree: Verified,
}

fn new_tmp(parent: &Path) -> Result<tempfile::TempDir, SourceError> {
    tempfile::Builder::new()
        .prefix(".skillpm-wellknown-")
        .tempdir_in(parent)
        .map_err(|e| crate::fs::fs_err("create a directory in", parent)(e).into())
}

/// Writes `rel` (already checked: relative, no `..`) under `dir`,
/// refusing to reuse any existing path.
fn write_new(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), SourceError> {
    use std::io::Write as _;
    let target = dir.join(rel);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(crate::fs::fs_err("create", parent))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .map_err(crate::fs::fs_err("create", &target))?;
    f.write_all(bytes)
        .map_err(|e| crate::fs::fs_err("write", &target)(e).into())
}

/// The skill directory inside an unpacked archive: its root, or the one
/// directory it wraps everything in (`name/SKILL.md`), as many archivers
/// make.
fn skill_root(dir: &Path) -> std::path::PathBuf {
    if skillpm_core::skill::find_skill_file(dir).is_some() {
        return dir.to_path_buf();
    }
    let entries: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).take(2).collect(),
        Err(_) => return dir.to_path_buf(),
    };
    match entries.as_slice() {
        [only] if only.file_type().is_ok_and(|t| t.is_dir()) => only.path(),
        _ => dir.to_path_buf(),
    }
}
