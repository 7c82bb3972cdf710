//! Package archives: deterministic packing and hardened unpacking.
//!
//! A skill package is a gzip-compressed tar archive holding only regular
//! files and directories. [`pack_dir`] produces the same bytes for the same
//! tree every time (sorted entries, fixed mtime, uid/gid 0, modes 0644/0755,
//! fixed gzip header), so the archive's sha256 identifies the tree.
//!
//! [`unpack`] trusts nothing in the archive: it verifies the checksum before
//! reading anything, caps compressed size, unpacked size and entry count,
//! allows only regular files and directories, validates every path (no
//! absolute paths, `..`, backslashes, control characters, drive prefixes,
//! over-long or over-deep paths), rejects duplicates and case-only
//! duplicates, and writes every file itself with `create_new`, so nothing is
//! ever written through an existing path or outside the destination.

use crate::checksum::Checksum;
use flate2::read::GzDecoder;
use flate2::{Compression, GzBuilder};
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use tar::{Builder, EntryType, Header};

/// Maximum number of path components an archive entry may have.
pub const MAX_DEPTH: usize = 32;

/// Fixed modification time written into every tar header.
const FIXED_MTIME: u64 = 0;

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_compressed: 10 * 1024 * 1024,
            max_unpacked: 50 * 1024 * 1024,
            max_entries: 10_000,
            max_path_len: 1024,
        }
    }
}

/// What [`unpack`] wrote.
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

/// Errors from [`unpack`] and [`unpack_to_new_dir`]. Entry paths are shown
/// with control characters escaped, so every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("checksum mismatch: expected {expected}, got {actual}")]
    ChecksumMismatch {
        expected: Checksum,
        actual: Checksum,
    },
    #[error("archive is {size} bytes compressed, more than the limit of {limit} bytes")]
    CompressedTooLarge { size: u64, limit: u64 },
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
    #[error("archive is not a valid .tar.gz: {0}")]
    Corrupt(io::Error),
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

// ---------------------------------------------------------------------------
// Path validation (shared by packing and unpacking)
// ---------------------------------------------------------------------------

/// Why an entry path is not acceptable.
#[derive(Debug)]
enum PathProblem {
    Absolute,
    Escapes,
    Invalid(&'static str),
    TooLong { len: usize, limit: usize },
    TooDeep { depth: usize, limit: usize },
}

impl PathProblem {
    fn into_unpack_error(self, path: String) -> UnpackError {
        match self {
            PathProblem::Absolute => UnpackError::AbsolutePath { path },
            PathProblem::Escapes => UnpackError::EscapesPackage { path },
            PathProblem::Invalid(reason) => UnpackError::InvalidPath { path, reason },
            PathProblem::TooLong { len, limit } => UnpackError::PathTooLong { path, len, limit },
            PathProblem::TooDeep { depth, limit } => {
                UnpackError::PathTooDeep { path, depth, limit }
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            PathProblem::Absolute => "it is an absolute path".to_string(),
            PathProblem::Escapes => "it contains `..`".to_string(),
            PathProblem::Invalid(reason) => format!("its path {reason}"),
            PathProblem::TooLong { len, limit } => {
                format!("its path is {len} bytes long, more than the limit of {limit}")
            }
            PathProblem::TooDeep { depth, limit } => {
                format!("it is nested {depth} levels deep, more than the limit of {limit}")
            }
        }
    }
}

/// Shows untrusted path bytes on one line.
fn show(raw: &[u8]) -> String {
    let mut out = String::new();
    for ch in String::from_utf8_lossy(raw).chars() {
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Checks the characters of one path component.
fn check_component(c: &str) -> Result<(), PathProblem> {
    if c.contains('\\') {
        return Err(PathProblem::Invalid("contains a backslash"));
    }
    if c.chars().any(|ch| ch.is_control()) {
        return Err(PathProblem::Invalid(
            "contains a control character (NUL, newline, carriage return, ...)",
        ));
    }
    if c.contains(':') {
        // `C:` is a drive prefix on Windows and `name:stream` an alternate
        // data stream; neither may appear in a portable package.
        return Err(PathProblem::Invalid("contains a colon"));
    }
    Ok(())
}

/// A validated entry path: its normal components and whether the raw path
/// ended with `/`. `None` means the path names the package root itself
/// (`.` or `./`), which is skipped.
struct EntryPath {
    components: Vec<String>,
    trailing_slash: bool,
}

fn validate_path(raw: &[u8], max_len: usize) -> Result<Option<EntryPath>, PathProblem> {
    if raw.len() > max_len {
        return Err(PathProblem::TooLong {
            len: raw.len(),
            limit: max_len,
        });
    }
    if raw.is_empty() {
        return Err(PathProblem::Invalid("has an empty path"));
    }
    if raw[0] == b'/' {
        return Err(PathProblem::Absolute);
    }
    let s = std::str::from_utf8(raw).map_err(|_| PathProblem::Invalid("is not valid UTF-8"))?;
    let trailing_slash = s.ends_with('/');
    let first = s.split('/').next().unwrap_or("");
    let fb = first.as_bytes();
    if fb.len() >= 2 && fb[0].is_ascii_alphabetic() && fb[1] == b':' {
        return Err(PathProblem::Absolute);
    }
    let mut components = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => continue,
            ".." => return Err(PathProblem::Escapes),
            _ => {
                check_component(c)?;
                components.push(c.to_string());
            }
        }
    }
    if components.len() > MAX_DEPTH {
        return Err(PathProblem::TooDeep {
            depth: components.len(),
            limit: MAX_DEPTH,
        });
    }
    if components.is_empty() {
        return Ok(None);
    }
    Ok(Some(EntryPath {
        components,
        trailing_slash,
    }))
}

// ---------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------

enum PackItemKind {
    Dir,
    File { source: PathBuf, executable: bool },
}

struct PackItem {
    /// Archive name: `/`-separated, relative, directories end with `/`.
    name: String,
    kind: PackItemKind,
}

fn io_pack(path: &Path) -> impl FnOnce(io::Error) -> PackError + '_ {
    move |source| PackError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

fn collect(dir: &Path, prefix: &str, out: &mut Vec<PackItem>) -> Result<(), PackError> {
    // Stop descending early; `pack_dir` reports the over-deep path.
    if prefix.matches('/').count() > MAX_DEPTH {
        return Ok(());
    }
    let rd = fs::read_dir(dir).map_err(io_pack(dir))?;
    for entry in rd {
        let entry = entry.map_err(io_pack(dir))?;
        let path = entry.path();
        let name_os = entry.file_name();
        let Some(name) = name_os.to_str() else {
            return Err(PackError::NonUtf8Name { path });
        };
        if name == ".git" {
            continue;
        }
        let rel = format!("{prefix}{name}");
        let ft = entry.file_type().map_err(io_pack(&path))?;
        if ft.is_symlink() {
            return Err(PackError::Symlink { path });
        } else if ft.is_dir() {
            out.push(PackItem {
                name: format!("{rel}/"),
                kind: PackItemKind::Dir,
            });
            collect(&path, &format!("{rel}/"), out)?;
        } else if ft.is_file() {
            let meta = fs::symlink_metadata(&path).map_err(io_pack(&path))?;
            out.push(PackItem {
                name: rel,
                kind: PackItemKind::File {
                    executable: is_executable(&meta),
                    source: path,
                },
            });
        } else {
            return Err(PackError::UnsupportedFileType { path });
        }
    }
    Ok(())
}

fn base_header(entry_type: EntryType, mode: u32, size: u64) -> Header {
    let mut h = Header::new_gnu();
    h.set_entry_type(entry_type);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(FIXED_MTIME);
    h.set_uid(0);
    h.set_gid(0);
    // A fresh GNU header already has empty user and group names.
    h
}

/// Packs the contents of `dir` into a deterministic `.tar.gz`.
///
/// Entries are relative to `dir`, sorted by path bytes, directories listed
/// with a trailing `/`; `.git` is skipped. Symlinks and special files are
/// errors. The same tree always yields byte-identical output.
pub fn pack_dir(dir: &Path) -> Result<Vec<u8>, PackError> {
    let meta = fs::metadata(dir).map_err(io_pack(dir))?;
    if !meta.is_dir() {
        return Err(PackError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let mut items = Vec::new();
    collect(dir, "", &mut items)?;
    items.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));

    // Refuse trees that `unpack` would refuse, so a published package can
    // always be installed.
    let limits = Limits::default();
    let mut folded: HashMap<String, &str> = HashMap::new();
    for item in &items {
        if let Err(problem) = validate_path(item.name.as_bytes(), limits.max_path_len) {
            return Err(PackError::BadPath {
                path: item.name.clone(),
                reason: problem.describe(),
            });
        }
        let key = item.name.trim_end_matches('/').to_lowercase();
        if let Some(other) = folded.insert(key, &item.name) {
            return Err(PackError::CaseConflict {
                path: item.name.clone(),
                other: other.to_string(),
            });
        }
    }

    let encoder = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::new(9));
    let mut builder = Builder::new(encoder);
    for item in &items {
        match &item.kind {
            PackItemKind::Dir => {
                let mut h = base_header(EntryType::Directory, 0o755, 0);
                builder
                    .append_data(&mut h, &item.name, io::empty())
                    .map_err(io_pack(dir))?;
            }
            PackItemKind::File { source, executable } => {
                let data = fs::read(source).map_err(io_pack(source))?;
                let mode = if *executable { 0o755 } else { 0o644 };
                let mut h = base_header(EntryType::Regular, mode, data.len() as u64);
                builder
                    .append_data(&mut h, &item.name, data.as_slice())
                    .map_err(io_pack(source))?;
            }
        }
    }
    let encoder = builder.into_inner().map_err(io_pack(dir))?;
    encoder.finish().map_err(io_pack(dir))
}

/// Packs `dir` and writes the archive to `out` atomically (temp file in the
/// same directory, then rename). Returns the archive's checksum.
pub fn pack_to_file(dir: &Path, out: &Path) -> Result<Checksum, PackError> {
    let bytes = pack_dir(dir)?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".skillpm-pack-")
        .tempfile_in(parent)
        .map_err(io_pack(parent))?;
    tmp.write_all(&bytes).map_err(io_pack(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io_pack(out))?;
    tmp.persist(out).map_err(|e| PackError::Io {
        path: out.to_path_buf(),
        source: e.error,
    })?;
    Ok(Checksum::of_bytes(&bytes))
}

/// The checksum of `dir`'s deterministic archive; identifies a tree from a
/// git or path source exactly as a registry tarball's checksum does.
pub fn tree_checksum(dir: &Path) -> Result<Checksum, PackError> {
    Ok(Checksum::of_bytes(&pack_dir(dir)?))
}

// ---------------------------------------------------------------------------
// Unpacking
// ---------------------------------------------------------------------------

/// Counts decompressed bytes and fails once `limit` is passed, so data the
/// tar reader skips (headers of ignored entries, padding, ...) cannot be
/// used as a decompression bomb either.
struct CappedReader<R> {
    inner: R,
    count: u64,
    limit: u64,
    tripped: bool,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.tripped {
            return Err(io::Error::other("decompressed size limit exceeded"));
        }
        let n = self.inner.read(buf)?;
        self.count = self.count.saturating_add(n as u64);
        if self.count > self.limit {
            self.tripped = true;
            return Err(io::Error::other("decompressed size limit exceeded"));
        }
        Ok(n)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    File,
    /// `explicit` is false for a directory only implied by a deeper entry.
    Dir {
        explicit: bool,
    },
}

impl Seen {
    fn noun(self) -> &'static str {
        match self {
            Seen::File => "a file",
            Seen::Dir { .. } => "a directory",
        }
    }
}

struct Unpacker<'a> {
    dest: &'a Path,
    limits: &'a Limits,
    /// Lower-cased path → (path as written, what it is).
    seen: HashMap<String, (String, Seen)>,
    stats: UnpackStats,
}

fn forbidden_kind(t: EntryType) -> EntryKind {
    match t {
        EntryType::Symlink => EntryKind::Symlink,
        EntryType::Link => EntryKind::Hardlink,
        EntryType::Char => EntryKind::CharDevice,
        EntryType::Block => EntryKind::BlockDevice,
        EntryType::Fifo => EntryKind::Fifo,
        EntryType::GNUSparse => EntryKind::Sparse,
        EntryType::Continuous => EntryKind::Contiguous,
        other => EntryKind::Other(other.as_byte()),
    }
}

impl Unpacker<'_> {
    fn io_err(&self, rel: &str) -> impl FnOnce(io::Error) -> UnpackError {
        let path = self.dest.join(rel);
        move |source| UnpackError::Io { path, source }
    }

    /// Ensures every parent of `comps` is a directory, creating the missing
    /// ones.
    fn ensure_parents(&mut self, display: &str, comps: &[String]) -> Result<(), UnpackError> {
        for i in 1..comps.len() {
            let prefix = comps[..i].join("/");
            let key = prefix.to_lowercase();
            match self.seen.get(&key) {
                Some((orig, _)) if *orig != prefix => {
                    return Err(UnpackError::CaseConflict {
                        path: display.to_string(),
                        other: show(orig.as_bytes()),
                    });
                }
                Some((orig, Seen::File)) => {
                    return Err(UnpackError::ParentNotDirectory {
                        path: display.to_string(),
                        parent: show(orig.as_bytes()),
                    });
                }
                Some((_, Seen::Dir { .. })) => {}
                None => {
                    fs::create_dir(self.dest.join(&prefix)).map_err(self.io_err(&prefix))?;
                    self.stats.dirs += 1;
                    self.seen
                        .insert(key, (prefix, Seen::Dir { explicit: false }));
                }
            }
        }
        Ok(())
    }

    /// Records `rel` as `kind`; returns whether it still has to be created.
    fn claim(&mut self, display: &str, rel: &str, kind: Seen) -> Result<bool, UnpackError> {
        let key = rel.to_lowercase();
        match self.seen.get_mut(&key) {
            None => {
                self.seen.insert(key, (rel.to_string(), kind));
                Ok(true)
            }
            Some((orig, _)) if orig != rel => Err(UnpackError::CaseConflict {
                path: display.to_string(),
                other: show(orig.as_bytes()),
            }),
            Some((_, existing)) => match (*existing, kind) {
                (Seen::Dir { explicit: false }, Seen::Dir { .. }) => {
                    *existing = Seen::Dir { explicit: true };
                    Ok(false)
                }
                (Seen::Dir { .. }, Seen::Dir { .. }) | (Seen::File, Seen::File) => {
                    Err(UnpackError::DuplicateEntry {
                        path: display.to_string(),
                    })
                }
                (existing, new) => Err(UnpackError::TypeConflict {
                    path: display.to_string(),
                    new: new.noun(),
                    existing: existing.noun(),
                }),
            },
        }
    }

    fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<(), UnpackError> {
        let raw = entry.path_bytes().into_owned();
        let display = show(&raw);
        let etype = entry.header().entry_type();
        if etype.is_pax_global_extensions() {
            // Metadata only (e.g. `git archive` writes the commit id here).
            return Ok(());
        }
        let is_file = etype.is_file();
        let is_dir = etype.is_dir();
        if !is_file && !is_dir {
            return Err(UnpackError::ForbiddenEntryType {
                path: display,
                kind: forbidden_kind(etype),
            });
        }
        let Some(path) = validate_path(&raw, self.limits.max_path_len)
            .map_err(|p| p.into_unpack_error(display.clone()))?
        else {
            // `.` or `./`: the package root itself.
            if is_dir {
                return Ok(());
            }
            return Err(UnpackError::InvalidPath {
                path: display,
                reason: "is a file entry naming the package root",
            });
        };
        if is_file && path.trailing_slash {
            return Err(UnpackError::InvalidPath {
                path: display,
                reason: "is a file entry whose path ends with `/`",
            });
        }
        let rel = path.components.join("/");
        self.ensure_parents(&display, &path.components)?;
        if is_dir {
            if self.claim(&display, &rel, Seen::Dir { explicit: true })? {
                fs::create_dir(self.dest.join(&rel)).map_err(self.io_err(&rel))?;
                self.stats.dirs += 1;
            }
            return Ok(());
        }
        self.claim(&display, &rel, Seen::File)?;
        self.write_file(entry, &rel)
    }

    fn write_file<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        rel: &str,
    ) -> Result<(), UnpackError> {
        let limit = self.limits.max_unpacked;
        let remaining = limit.saturating_sub(self.stats.bytes);
        if entry.size() > remaining {
            return Err(UnpackError::UnpackedTooLarge { limit });
        }
        let mode = match entry.header().mode() {
            Ok(m) if m & 0o111 != 0 => 0o755,
            _ => 0o644,
        };
        let target = self.dest.join(rel);
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(self.io_err(rel))?;
        // Never trust the header size alone: read at most one byte past the
        // remaining budget.
        let mut limited = entry.take(remaining.saturating_add(1));
        let mut buf = vec![0u8; 64 * 1024];
        let mut written: u64 = 0;
        loop {
            let n = match limited.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(UnpackError::Corrupt(e)),
            };
            written = written.saturating_add(n as u64);
            if written > remaining {
                return Err(UnpackError::UnpackedTooLarge { limit });
            }
            file.write_all(&buf[..n]).map_err(self.io_err(rel))?;
        }
        set_file_mode(&file, mode).map_err(self.io_err(rel))?;
        self.stats.bytes += written;
        self.stats.files += 1;
        Ok(())
    }
}

#[cfg(unix)]
fn set_file_mode(file: &fs::File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_file_mode(_file: &fs::File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Makes sure `dest` is an empty directory, creating it if missing.
fn prepare_dest(dest: &Path) -> Result<(), UnpackError> {
    let bad = |reason| UnpackError::BadDestination {
        path: dest.to_path_buf(),
        reason,
    };
    let io = |source| UnpackError::Io {
        path: dest.to_path_buf(),
        source,
    };
    match fs::symlink_metadata(dest) {
        Ok(m) if m.is_dir() => {
            if fs::read_dir(dest).map_err(io)?.next().is_some() {
                return Err(bad("the directory is not empty"));
            }
            Ok(())
        }
        Ok(_) => Err(bad("it exists and is not a directory")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir_all(dest).map_err(io),
        Err(e) => Err(io(e)),
    }
}

/// Unpacks an untrusted `.tar.gz` into `dest`, which must be an empty or
/// missing directory (typically a fresh temp dir).
///
/// If `expected` is given, the sha256 of `bytes` is checked before anything
/// else. On error, `dest` may hold a partial tree; the caller discards it
/// (see [`unpack_to_new_dir`]). Nothing is ever written outside `dest`.
pub fn unpack(
    bytes: &[u8],
    expected: Option<&Checksum>,
    dest: &Path,
    limits: &Limits,
) -> Result<UnpackStats, UnpackError> {
    if let Some(expected) = expected {
        let actual = Checksum::of_bytes(bytes);
        if actual != *expected {
            return Err(UnpackError::ChecksumMismatch {
                expected: *expected,
                actual,
            });
        }
    }
    let size = bytes.len() as u64;
    if size > limits.max_compressed {
        return Err(UnpackError::CompressedTooLarge {
            size,
            limit: limits.max_compressed,
        });
    }
    prepare_dest(dest)?;

    // Budget for the whole decompressed tar stream: file contents plus
    // generous room for headers, padding and long-name records.
    let per_entry = 2048u64.saturating_add(limits.max_path_len as u64);
    let stream_limit = limits
        .max_unpacked
        .saturating_add(
            limits
                .max_entries
                .saturating_add(4)
                .saturating_mul(per_entry),
        )
        .saturating_add(1024 * 1024);
    let mut reader = CappedReader {
        inner: GzDecoder::new(bytes),
        count: 0,
        limit: stream_limit,
        tripped: false,
    };
    let result = unpack_stream(&mut reader, dest, limits);
    match result {
        Err(UnpackError::Corrupt(_)) if reader.tripped => Err(UnpackError::UnpackedTooLarge {
            limit: limits.max_unpacked,
        }),
        other => other,
    }
}

fn unpack_stream<R: Read>(
    reader: &mut R,
    dest: &Path,
    limits: &Limits,
) -> Result<UnpackStats, UnpackError> {
    let mut archive = tar::Archive::new(reader);
    let mut unpacker = Unpacker {
        dest,
        limits,
        seen: HashMap::new(),
        stats: UnpackStats::default(),
    };
    let mut count: u64 = 0;
    for entry in archive.entries().map_err(UnpackError::Corrupt)? {
        let mut entry = entry.map_err(UnpackError::Corrupt)?;
        count += 1;
        if count > limits.max_entries {
            return Err(UnpackError::TooManyEntries {
                limit: limits.max_entries,
            });
        }
        unpacker.entry(&mut entry)?;
    }
    Ok(unpacker.stats)
}

/// Creates a fresh temp dir inside `parent` (same file system, so the
/// caller can `rename` it into place) and unpacks `bytes` into it. On error
/// the temp dir is removed.
pub fn unpack_to_new_dir(
    bytes: &[u8],
    expected: Option<&Checksum>,
    parent: &Path,
    limits: &Limits,
) -> Result<tempfile::TempDir, UnpackError> {
    let io = |source| UnpackError::Io {
        path: parent.to_path_buf(),
        source,
    };
    fs::create_dir_all(parent).map_err(io)?;
    let dir = tempfile::Builder::new()
        .prefix(".skillpm-unpack-")
        .tempdir_in(parent)
        .map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).map_err(|source| {
            UnpackError::Io {
                path: dir.path().to_path_buf(),
                source,
            }
        })?;
    }
    unpack(bytes, expected, dir.path(), limits)?;
    Ok(dir)
}

#[cfg(test)]
mod tests;
