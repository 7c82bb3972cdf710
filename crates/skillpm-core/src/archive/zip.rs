//! `.zip` archives, read through the same [`Unpacker`] as `.tar.gz`: each
//! zip entry becomes the same (path, kind, contents) triple, so paths,
//! types, sizes, collisions and caps are checked by one piece of code.
//!
//! Zip-specific refusals: encrypted entries, two entries of one name (the
//! reader would merge them before the unpacker could see both), and any
//! entry whose Unix mode says it is not a regular file or directory
//! (symlinks in particular, which zip stores as a file whose contents are
//! the target).

use super::unpack::{Kind, Unpacker};
use super::{EntryKind, Limits, UnpackError};
use std::io::{Cursor, Read};

/// Unix file-type bits of a zip entry's external attributes.
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

fn corrupt(e: impl std::fmt::Display) -> UnpackError {
    UnpackError::CorruptZip(e.to_string())
}

/// Feeds every entry of a zip through `unpacker`.
pub(super) fn zip_into(
    bytes: &[u8],
    unpacker: &mut Unpacker<'_>,
    limits: &Limits,
) -> Result<(), UnpackError> {
    let mut archive = ::zip::ZipArchive::new(Cursor::new(bytes)).map_err(corrupt)?;
    // The reader keeps one entry per name, the last: two `SKILL.md` in
    // the central directory would install whichever comes last, where a
    // tar with the same two is refused by the unpacker's duplicate check.
    if archive.has_duplicate_names() {
        return Err(UnpackError::CorruptZip(
            "two entries have the same name".to_string(),
        ));
    }
    if archive.len() as u64 > limits.max_entries {
        return Err(UnpackError::TooManyEntries {
            limit: limits.max_entries,
        });
    }
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(corrupt)?;
        let raw = entry.name_raw().to_vec();
        if entry.encrypted() {
            return Err(UnpackError::CorruptZip(format!(
                "entry `{}` is encrypted",
                String::from_utf8_lossy(&raw).escape_debug()
            )));
        }
        let kind = kind_of(entry.unix_mode(), entry.is_dir(), entry.size());
        unpacker.add(&raw, kind, &mut entry as &mut dyn Read)?;
    }
    Ok(())
}

/// The kind of an entry from its Unix mode (when the archive has one)
/// and its name (a trailing `/` marks a directory in every zip).
fn kind_of(mode: Option<u32>, is_dir: bool, size: u64) -> Kind {
    match mode.map(|m| (m & S_IFMT, m)) {
        Some((S_IFLNK, _)) => Kind::Forbidden(EntryKind::Symlink),
        Some((S_IFDIR, _)) => Kind::Dir,
        // A file entry named like a directory is refused by the unpacker.
        Some((S_IFREG, m)) => Kind::File {
            size,
            executable: m & 0o111 != 0,
        },
        // No type bits (archives made on other systems): the name decides.
        Some((0, _)) | None if is_dir => Kind::Dir,
        Some((0, _)) | None => Kind::File {
            size,
            executable: false,
        },
        Some((0o010_000, _)) => Kind::Forbidden(EntryKind::Fifo),
        Some((0o020_000, _)) => Kind::Forbidden(EntryKind::CharDevice),
        Some((0o060_000, _)) => Kind::Forbidden(EntryKind::BlockDevice),
        Some(_) => Kind::Forbidden(EntryKind::Other(b'?')),
    }
}
