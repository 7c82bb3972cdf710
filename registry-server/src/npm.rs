//! A published package as an npm package holding a Claude Code plugin, so
//! that Claude Code's `npm` plugin source (`npm install` from a custom
//! registry) can install it: `package/package.json`,
//! `package/.claude-plugin/plugin.json` and the skill's files under
//! `package/skills/<name>/`.
//!
//! Derived, never stored: the stored tarball must still have the sha256 it
//! was published with (a blob store is not trusted to hand back what it
//! was given) and is read again through the same hardened reader as an
//! upload, then re-packed with the canonical packer, so one stored
//! tarball always yields byte-identical npm bytes, whose digests
//! (`integrity`, `shasum`) are therefore stable.

use base64::Engine as _;
use sha1::Sha1;
use sha2::{Digest, Sha512};
use skillpm_core::archive::{
    pack_entries, unpack_to_memory, Limits, MemEntry, PackError, UnpackError,
};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;

/// The npm package of one version, with the digests npm checks it by.
pub struct NpmTarball {
    pub bytes: Vec<u8>,
    pub dist: Dist,
}

/// What a packument says of a tarball: `integrity` (`sha512-` and the
/// base64 digest, which npm verifies) and `shasum` (sha1 hex, for old
/// clients).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dist {
    pub integrity: String,
    pub shasum: String,
}

impl Dist {
    fn of(bytes: &[u8]) -> Dist {
        let sha512 = base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes));
        Dist {
            integrity: format!("sha512-{sha512}"),
            shasum: hex::encode(Sha1::digest(bytes)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NpmError {
    #[error("the stored package's sha256 is {actual}, not the {expected} it was published with")]
    Checksum {
        expected: Checksum,
        actual: Checksum,
    },
    #[error("the stored package does not read back")]
    Unpack(#[source] UnpackError),
    #[error("cannot pack the npm package")]
    Pack(#[source] PackError),
    #[error("cannot encode a manifest")]
    Json(#[source] serde_json::Error),
}

/// What both `package.json` (npm) and `.claude-plugin/plugin.json`
/// (Claude Code) need of the package: the same three fields.
#[derive(serde::Serialize)]
struct Manifest<'a> {
    name: &'a str,
    version: String,
    description: &'a str,
}

/// Builds the npm package of `name@vers` from its stored tarball, which
/// must still be the bytes published (`cksum`).
pub fn build(
    name: &SkillName,
    vers: &semver::Version,
    description: &str,
    stored: (&[u8], &Checksum),
    limits: &Limits,
) -> Result<NpmTarball, NpmError> {
    let (stored, expected) = stored;
    let actual = Checksum::of_bytes(stored);
    if actual != *expected {
        return Err(NpmError::Checksum {
            expected: *expected,
            actual,
        });
    }
    let tree = unpack_to_memory(stored, limits).map_err(NpmError::Unpack)?;
    let manifest = serde_json::to_vec_pretty(&Manifest {
        name: name.as_str(),
        version: vers.to_string(),
        description,
    })
    .map_err(NpmError::Json)?;
    let skill = format!("package/skills/{name}");
    let mut entries = vec![
        MemEntry::Dir("package".into()),
        MemEntry::Dir("package/.claude-plugin".into()),
        MemEntry::Dir("package/skills".into()),
        MemEntry::Dir(skill.clone()),
        file("package/package.json", manifest.clone()),
        file("package/.claude-plugin/plugin.json", manifest),
    ];
    entries.extend(tree.into_iter().map(|e| match e {
        MemEntry::Dir(p) => MemEntry::Dir(format!("{skill}/{p}")),
        MemEntry::File {
            path,
            data,
            executable,
        } => MemEntry::File {
            path: format!("{skill}/{path}"),
            data,
            executable,
        },
    }));
    let bytes = pack_entries(entries).map_err(NpmError::Pack)?;
    Ok(NpmTarball {
        dist: Dist::of(&bytes),
        bytes,
    })
}

fn file(path: &str, data: Vec<u8>) -> MemEntry {
    MemEntry::File {
        path: path.into(),
        data,
        executable: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_package() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: hi\n---\nbody\n").unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/run.sh"), "echo hi\n").unwrap();
        skillpm_core::archive::pack_dir(dir.path()).unwrap()
    }

    #[test]
    fn same_package_same_bytes_with_the_plugin_layout() {
        let name = SkillName::new("hi").unwrap();
        let vers = semver::Version::new(1, 2, 3);
        let limits = Limits::default();
        let stored = a_package();
        let sum = Checksum::of_bytes(&stored);
        let a = build(&name, &vers, "Says hi", (&stored, &sum), &limits).unwrap();
        let b = build(&name, &vers, "Says hi", (&a_package(), &sum), &limits).unwrap();
        assert_eq!(a.bytes, b.bytes);
        assert_eq!(a.dist, Dist::of(&b.bytes));
        assert!(a.dist.integrity.starts_with("sha512-"));
        assert_eq!(a.dist.shasum.len(), 40);
        let tree = unpack_to_memory(&a.bytes, &limits).unwrap();
        let files: Vec<&str> = tree
            .iter()
            .filter_map(|e| match e {
                MemEntry::File { path, .. } => Some(path.as_str()),
                MemEntry::Dir(_) => None,
            })
            .collect();
        assert_eq!(
            files,
            [
                "package/.claude-plugin/plugin.json",
                "package/package.json",
                "package/skills/hi/SKILL.md",
                "package/skills/hi/scripts/run.sh",
            ]
        );
    }

    #[test]
    fn a_stored_tarball_that_changed_or_does_not_read_is_an_error() {
        let name = SkillName::new("hi").unwrap();
        let vers = semver::Version::new(1, 0, 0);
        let limits = Limits::default();
        let garbage: &[u8] = b"not a tarball";
        let published = Checksum::of_bytes(&a_package());
        let err = build(&name, &vers, "", (garbage, &published), &limits);
        assert!(matches!(err, Err(NpmError::Checksum { .. })));
        let err = build(
            &name,
            &vers,
            "",
            (garbage, &Checksum::of_bytes(garbage)),
            &limits,
        );
        assert!(matches!(err, Err(NpmError::Unpack(_))));
    }
}
