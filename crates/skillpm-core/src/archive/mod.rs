//! Package archives: deterministic packing and hardened unpacking.
//!
//! A skill package is a tar archive holding only regular files and
//! directories: gzip-compressed as a registry serves it, plain when the
//! tree was made on this machine (git, path, well-known). [`tar_dir`]
//! produces the same bytes for the same tree every time (sorted entries,
//! fixed mtime, uid/gid 0, modes 0644/0755), so the tar's sha256
//! identifies the tree; [`pack_dir`] gzips it with a fixed header to
//! publish.
//!
//! [`unpack`](fn@unpack) trusts nothing in the archive: it verifies the
//! checksum before reading anything, caps compressed size, unpacked size and
//! entry count, allows only regular files and directories, validates every
//! path (no absolute paths, `..`, backslashes, control characters, drive
//! prefixes, over-long or over-deep paths), rejects duplicates and case-only
//! duplicates, and writes every file itself with `create_new`, so nothing is
//! ever written through an existing path or outside the destination.

mod entry_path;
mod pack;
mod unpack;
mod zip;

pub use pack::{
    is_executable, pack_dir, pack_entries, pack_to_file, tar_dir, tar_dir_skipping, tar_entries,
    tree_checksum, verify_tree,
};
pub use unpack::{
    read_top_file, unpack, unpack_as, unpack_to_memory, unpack_to_new_dir, unpack_to_new_dir_as,
    unpack_to_new_dir_kept, MemEntry, MemoryTree,
};

use crate::checksum::Checksum;
use crate::platform::Platform;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Archive formats the hardened unpacker reads. Publishing writes
/// [`Format::TarGz`]; a tree made on this machine is held as a
/// [`Format::Tar`]; `.zip` is read because publishers of Agent Skills
/// discovery indexes may serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    TarGz,
    Tar,
    Zip,
}

impl Format {
    /// The format `bytes` are in, by their magic number (gzip `1f 8b`,
    /// zip `PK\x03\x04` or an empty zip's `PK\x05\x06`); `None` for
    /// anything else. Servers name archives freely (a registry's
    /// `/download`), so the bytes decide, not the URL.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        match bytes {
            [0x1f, 0x8b, ..] => Some(Format::TarGz),
            [b'P', b'K', 3, 4, ..] | [b'P', b'K', 5, 6, ..] => Some(Format::Zip),
            _ => None,
        }
    }

    /// The format of a package as the installer holds it: a `.tar.gz`
    /// when it starts like one (a registry's, or a tree locked before
    /// trees were locked by their tar), else the plain tar of a tree made
    /// on this machine. Anything else fails as a corrupt tar.
    pub fn of_package(bytes: &[u8]) -> Format {
        match Format::sniff(bytes) {
            Some(Format::TarGz) => Format::TarGz,
            _ => Format::Tar,
        }
    }

    /// The format a URL or file name ends in (`.tar.gz`, `.tgz`, `.zip`),
    /// ignoring case, query and fragment.
    pub fn from_name(name: &str) -> Option<Format> {
        let base = name
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if base.ends_with(".tar.gz") || base.ends_with(".tgz") {
            Some(Format::TarGz)
        } else if base.ends_with(".zip") {
            Some(Format::Zip)
        } else {
            None
        }
    }
}

/// Maximum number of path components an archive entry may have.
pub const MAX_DEPTH: usize = 32;

/// Resource caps applied while unpacking an untrusted archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Maximum size of the compressed archive, in bytes.
    pub max_compressed: u64,
    /// Maximum total size of all unpacked file contents, in bytes.
    pub max_unpacked: u64,
    /// Maximum number of archive entries (files, directories and anything
    /// else the archive lists).
    pub max_entries: u64,
    /// Maximum length of an entry path, in bytes.
    pub max_path_len: usize,
    /// Whose entry-name rules apply ([`Platform::refuses_name`]): the
    /// platform this runs on, which must hold the tree; the registry
    /// applies Windows' (the strictest), so that what it accepts installs
    /// everywhere, as crates.io refuses a crate holding `aux.rs`.
    pub names: Platform,
}

impl Limits {
    /// The most bytes a tar within these limits can take: file contents
    /// plus generous room for headers, padding and long-name records. The
    /// budget for a decompressed stream, and the size cap of a plain tar.
    pub fn max_tar_bytes(&self) -> u64 {
        let per_entry = 2048u64.saturating_add(self.max_path_len as u64);
        self.max_unpacked
            .saturating_add(self.max_entries.saturating_add(4).saturating_mul(per_entry))
            .saturating_add(1024 * 1024)
    }

    /// The size cap of an archive in `format` before it is read.
    pub fn max_input(&self, format: Format) -> u64 {
        match format {
            Format::Tar => self.max_tar_bytes(),
            Format::TarGz | Format::Zip => self.max_compressed,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_compressed: 10 * 1024 * 1024,
            max_unpacked: 50 * 1024 * 1024,
            max_entries: 10_000,
            max_path_len: 1024,
            names: Platform::CURRENT,
        }
    }
}

/// What [`unpack`](fn@unpack) wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnpackStats {
    /// Regular files created.
    pub files: u64,
    /// Directories created (explicit entries and implied parents).
    pub dirs: u64,
    /// Bytes of file content written.
    pub bytes: u64,
}

/// A tar entry type that packages may not contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Symlink,
    Hardlink,
    CharDevice,
    BlockDevice,
    Fifo,
    Sparse,
    Contiguous,
    /// Any other type byte.
    Other(u8),
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryKind::Symlink => f.write_str("a symlink"),
            EntryKind::Hardlink => f.write_str("a hardlink"),
            EntryKind::CharDevice => f.write_str("a character device"),
            EntryKind::BlockDevice => f.write_str("a block device"),
            EntryKind::Fifo => f.write_str("a fifo"),
            EntryKind::Sparse => f.write_str("a GNU sparse file"),
            EntryKind::Contiguous => f.write_str("a contiguous file"),
            EntryKind::Other(b) => write!(f, "of unsupported type {:?}", char::from(*b)),
        }
    }
}

/// Errors from [`unpack`](fn@unpack) and [`unpack_to_new_dir`]. Entry paths
/// are shown with control characters escaped, so every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("checksum mismatch: expected {expected}, got {actual}")]
    ChecksumMismatch {
        expected: Checksum,
        actual: Checksum,
    },
    #[error("archive is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge { size: u64, limit: u64 },
    #[error("archive unpacks to more than {limit} bytes (limit)")]
    UnpackedTooLarge { limit: u64 },
    #[error("archive has more than {limit} entries (limit)")]
    TooManyEntries { limit: u64 },
    #[error("archive entry `{path}` is {kind}; only regular files and directories are allowed")]
    ForbiddenEntryType { path: String, kind: EntryKind },
    #[error("archive entry `{path}` is an absolute path")]
    AbsolutePath { path: String },
    #[error("archive entry `{path}` escapes the package directory")]
    EscapesPackage { path: String },
    #[error("archive entry `{path}` {reason}")]
    InvalidPath { path: String, reason: &'static str },
    #[error("archive entry `{path}` is {len} bytes long, more than the limit of {limit}")]
    PathTooLong {
        path: String,
        len: usize,
        limit: usize,
    },
    #[error(
        "archive entry `{path}` is nested {depth} levels deep, more than the limit of {limit}"
    )]
    PathTooDeep {
        path: String,
        depth: usize,
        limit: usize,
    },
    #[error("archive entry `{path}` appears more than once")]
    DuplicateEntry { path: String },
    #[error(
        "archive entry `{path}` differs from entry `{other}` only by letter case; \
         they would collide on case-insensitive file systems"
    )]
    CaseConflict { path: String, other: String },
    #[error("archive entry `{path}` needs `{parent}` to be a directory, but it is a file")]
    ParentNotDirectory { path: String, parent: String },
    #[error("archive entry `{path}` is {new} but an earlier entry made it {existing}")]
    TypeConflict {
        path: String,
        new: &'static str,
        existing: &'static str,
    },
    #[error("cannot unpack into `{}`: {reason}", path.display())]
    BadDestination { path: PathBuf, reason: &'static str },
    #[error("archive is not a valid tar: {0}")]
    Corrupt(io::Error),
    #[error("archive is not a valid .zip: {0}")]
    CorruptZip(String),
    #[error("cannot write `{}`: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Errors from [`pack_dir`], [`pack_to_file`] and [`tree_checksum`].
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("`{}` is a symlink; a skill package must not contain symlinks", path.display())]
    Symlink { path: PathBuf },
    #[error("`{}` is not a regular file or directory; a skill package may contain only those", path.display())]
    UnsupportedFileType { path: PathBuf },
    #[error("`{}` has a name that is not valid UTF-8", path.display())]
    NonUtf8Name { path: PathBuf },
    #[error("`{path}` cannot be packed: {reason}")]
    BadPath { path: String, reason: String },
    #[error(
        "`{path}` and `{other}` differ only by letter case; \
         they would collide on case-insensitive file systems"
    )]
    CaseConflict { path: String, other: String },
    #[error("`{}` is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("cannot pack `{}`: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

#[cfg(test)]
mod tests;
