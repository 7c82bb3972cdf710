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
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    // ----- helpers ---------------------------------------------------------

    fn gz(tar: Vec<u8>) -> Vec<u8> {
        let mut enc = GzBuilder::new().write(Vec::new(), Compression::fast());
        enc.write_all(&tar).unwrap();
        enc.finish().unwrap()
    }

    /// Appends an entry whose name bytes are written raw into the header,
    /// bypassing the tar crate's own path checks.
    fn raw_entry(b: &mut Builder<Vec<u8>>, name: &[u8], ty: EntryType, data: &[u8]) {
        raw_entry_link(b, name, ty, data, b"");
    }

    fn raw_entry_link(
        b: &mut Builder<Vec<u8>>,
        name: &[u8],
        ty: EntryType,
        data: &[u8],
        link: &[u8],
    ) {
        let mut h = Header::new_gnu();
        {
            let old = h.as_old_mut();
            old.name[..name.len()].copy_from_slice(name);
            old.linkname[..link.len()].copy_from_slice(link);
        }
        h.set_entry_type(ty);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }

    fn archive(entries: &[(&[u8], EntryType, &[u8])]) -> Vec<u8> {
        let mut b = Builder::new(Vec::new());
        for (name, ty, data) in entries {
            raw_entry(&mut b, name, *ty, data);
        }
        gz(b.into_inner().unwrap())
    }

    fn file(name: &str) -> (&[u8], EntryType, &'static [u8]) {
        (name.as_bytes(), EntryType::Regular, b"hello\n")
    }

    /// Unpacks into `<root>/dest` and checks nothing appeared beside it.
    fn run(bytes: &[u8], limits: &Limits) -> (Result<UnpackStats, UnpackError>, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("dest");
        let r = unpack(bytes, None, &dest, limits);
        assert_only_dest(root.path());
        (r, root)
    }

    fn assert_only_dest(root: &Path) {
        let names: Vec<_> = fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names.is_empty() || names == ["dest"],
            "unexpected files beside dest: {names:?}"
        );
    }

    fn run_err(bytes: &[u8], limits: &Limits) -> UnpackError {
        match run(bytes, limits).0 {
            Ok(stats) => panic!("expected an error, unpacked {stats:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "multi-line message: {msg}");
                e
            }
        }
    }

    /// Snapshot of a tree: path → (is_dir, contents, mode bits).
    fn snapshot(dir: &Path) -> BTreeMap<String, (bool, Vec<u8>, u32)> {
        fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, (bool, Vec<u8>, u32)>) {
            for e in fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let name = e.file_name().into_string().unwrap();
                if name == ".git" {
                    continue;
                }
                let rel = format!("{prefix}{name}");
                let meta = fs::symlink_metadata(e.path()).unwrap();
                #[cfg(unix)]
                let mode = {
                    use std::os::unix::fs::PermissionsExt;
                    meta.permissions().mode() & 0o777
                };
                #[cfg(not(unix))]
                let mode = 0;
                if meta.is_dir() {
                    out.insert(rel.clone(), (true, Vec::new(), 0));
                    walk(&e.path(), &format!("{rel}/"), out);
                } else {
                    out.insert(rel, (false, fs::read(e.path()).unwrap(), mode));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(dir, "", &mut out);
        out
    }

    fn sample_tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let p = t.path();
        fs::write(p.join("SKILL.md"), "---\nname: demo\n---\nbody\n").unwrap();
        fs::create_dir_all(p.join("scripts")).unwrap();
        fs::write(p.join("scripts/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        fs::create_dir_all(p.join("docs/nested/deep")).unwrap();
        fs::write(p.join("docs/nested/deep/a.txt"), "deep\n").unwrap();
        fs::write(p.join("docs/b-c.txt"), "dash\n").unwrap();
        fs::create_dir_all(p.join("empty")).unwrap();
        fs::create_dir_all(p.join(".git/objects")).unwrap();
        fs::write(p.join(".git/config"), "[core]\n").unwrap();
        let long = "x".repeat(150);
        fs::write(p.join(format!("docs/{long}.md")), "long name\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(p.join("scripts/run.sh"), fs::Permissions::from_mode(0o700))
                .unwrap();
            fs::set_permissions(p.join("SKILL.md"), fs::Permissions::from_mode(0o600)).unwrap();
        }
        t
    }

    // ----- packing ---------------------------------------------------------

    #[test]
    fn pack_is_deterministic_and_round_trips() {
        let tree = sample_tree();
        let a = pack_dir(tree.path()).unwrap();
        // Touch mtimes: output must not change.
        let f = fs::File::options()
            .write(true)
            .open(tree.path().join("SKILL.md"))
            .unwrap();
        f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(12345))
            .unwrap();
        drop(f);
        let b = pack_dir(tree.path()).unwrap();
        assert_eq!(a, b, "same tree must give byte-identical archives");
        assert_eq!(tree_checksum(tree.path()).unwrap(), Checksum::of_bytes(&a));

        // Archive layout: sorted, relative, dirs with `/`, fixed metadata.
        let mut ar = tar::Archive::new(GzDecoder::new(a.as_slice()));
        let mut names = Vec::new();
        for e in ar.entries().unwrap() {
            let e = e.unwrap();
            let h = e.header();
            assert_eq!(h.mtime().unwrap(), 0);
            assert_eq!(h.uid().unwrap(), 0);
            assert_eq!(h.gid().unwrap(), 0);
            assert_eq!(h.username_bytes().unwrap_or(b""), b"");
            assert_eq!(h.groupname_bytes().unwrap_or(b""), b"");
            let name = String::from_utf8(e.path_bytes().into_owned()).unwrap();
            let mode = h.mode().unwrap();
            if name.ends_with('/') || name == "scripts/run.sh" {
                assert_eq!(mode, 0o755, "{name}");
            } else {
                assert_eq!(mode, 0o644, "{name}");
            }
            names.push(name);
        }
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(names
            .iter()
            .all(|n| !n.starts_with("./") && !n.starts_with(".git")));
        assert!(names.contains(&"empty/".to_string()));
        assert!(names.contains(&"docs/nested/deep/".to_string()));
        assert!(names.contains(&format!("docs/{}.md", "x".repeat(150))));

        // Unpack and compare contents and modes.
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("dest");
        let sum = Checksum::of_bytes(&a);
        let stats = unpack(&a, Some(&sum), &dest, &Limits::default()).unwrap();
        assert_only_dest(root.path());
        let got = snapshot(&dest);
        let mut want = snapshot(tree.path());
        for (name, v) in want.iter_mut() {
            if !v.0 {
                v.2 = if name == "scripts/run.sh" {
                    0o755
                } else {
                    0o644
                };
            }
        }
        #[cfg(not(unix))]
        for v in want.values_mut() {
            v.2 = 0;
        }
        assert_eq!(got, want);
        assert_eq!(stats.files, 5);
        assert_eq!(stats.dirs, 5);
        // Repacking the unpacked tree gives the same bytes.
        assert_eq!(pack_dir(&dest).unwrap(), a);
    }

    #[test]
    fn pack_to_file_writes_atomically() {
        let tree = sample_tree();
        let out_dir = tempfile::tempdir().unwrap();
        let out = out_dir.path().join("demo.tar.gz");
        let sum = pack_to_file(tree.path(), &out).unwrap();
        let bytes = fs::read(&out).unwrap();
        assert_eq!(sum, Checksum::of_bytes(&bytes));
        assert_eq!(bytes, pack_dir(tree.path()).unwrap());
        let names: Vec<_> = fs::read_dir(out_dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temp file left behind");
    }

    #[cfg(unix)]
    #[test]
    fn pack_rejects_symlinks() {
        let tree = sample_tree();
        std::os::unix::fs::symlink("/etc/passwd", tree.path().join("docs/link")).unwrap();
        match pack_dir(tree.path()) {
            Err(PackError::Symlink { path }) => assert!(path.ends_with("docs/link")),
            other => panic!("expected Symlink error, got {other:?}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn pack_rejects_bad_names() {
        let tree = tempfile::tempdir().unwrap();
        fs::write(tree.path().join("a\\b"), "x").unwrap();
        assert!(matches!(
            pack_dir(tree.path()),
            Err(PackError::BadPath { .. })
        ));
        let tree = tempfile::tempdir().unwrap();
        fs::write(tree.path().join("Readme.md"), "x").unwrap();
        fs::write(tree.path().join("README.md"), "x").unwrap();
        assert!(matches!(
            pack_dir(tree.path()),
            Err(PackError::CaseConflict { .. })
        ));
        let tree = tempfile::tempdir().unwrap();
        let deep = vec!["d"; MAX_DEPTH + 5].join("/");
        fs::create_dir_all(tree.path().join(&deep)).unwrap();
        match pack_dir(tree.path()) {
            Err(PackError::BadPath { reason, .. }) => assert!(reason.contains("deep"), "{reason}"),
            other => panic!("expected BadPath, got {other:?}"),
        }
    }

    // ----- hostile archives ------------------------------------------------

    #[test]
    fn rejects_parent_dir_escape() {
        let bytes = archive(&[file("ok.txt"), (b"../evil", EntryType::Regular, b"x")]);
        let e = run_err(&bytes, &Limits::default());
        assert!(
            matches!(&e, UnpackError::EscapesPackage { path } if path == "../evil"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "archive entry `../evil` escapes the package directory"
        );
        let bytes = archive(&[(b"a/../../evil", EntryType::Regular, b"x")]);
        assert!(matches!(
            run_err(&bytes, &Limits::default()),
            UnpackError::EscapesPackage { .. }
        ));
    }

    #[test]
    fn rejects_absolute_paths() {
        for name in [&b"/abs"[..], b"/etc/passwd", b"C:/windows/x", b"c:evil"] {
            let bytes = archive(&[(name, EntryType::Regular, b"x")]);
            let e = run_err(&bytes, &Limits::default());
            assert!(matches!(e, UnpackError::AbsolutePath { .. }), "{e:?}");
        }
    }

    #[test]
    fn rejects_escape_via_pax_and_gnu_long_names() {
        // PAX `path` record.
        let mut b = Builder::new(Vec::new());
        let rec = b"16 path=../evil\n";
        raw_entry(&mut b, b"PaxHeader/x", EntryType::XHeader, rec);
        raw_entry(&mut b, b"harmless", EntryType::Regular, b"x");
        let bytes = gz(b.into_inner().unwrap());
        let e = run_err(&bytes, &Limits::default());
        assert!(
            matches!(&e, UnpackError::EscapesPackage { path } if path == "../evil"),
            "{e:?}"
        );
        // GNU long name.
        let mut b = Builder::new(Vec::new());
        raw_entry(
            &mut b,
            b"././@LongLink",
            EntryType::GNULongName,
            b"../../evil\0",
        );
        raw_entry(&mut b, b"harmless", EntryType::Regular, b"x");
        let bytes = gz(b.into_inner().unwrap());
        let e = run_err(&bytes, &Limits::default());
        assert!(matches!(e, UnpackError::EscapesPackage { .. }), "{e:?}");
    }

    #[test]
    fn rejects_links_and_special_files() {
        let cases: [(&[u8], EntryType, EntryKind); 5] = [
            (b"a/link", EntryType::Symlink, EntryKind::Symlink),
            (b"hard", EntryType::Link, EntryKind::Hardlink),
            (b"pipe", EntryType::Fifo, EntryKind::Fifo),
            (b"tty", EntryType::Char, EntryKind::CharDevice),
            (b"disk", EntryType::Block, EntryKind::BlockDevice),
        ];
        for (name, ty, kind) in cases {
            let mut b = Builder::new(Vec::new());
            raw_entry(&mut b, b"a/", EntryType::Directory, b"");
            raw_entry_link(&mut b, name, ty, b"", b"../../../../etc/passwd");
            let bytes = gz(b.into_inner().unwrap());
            let (r, root) = run(&bytes, &Limits::default());
            match r {
                Err(UnpackError::ForbiddenEntryType { path, kind: k }) => {
                    assert_eq!(path.as_bytes(), name);
                    assert_eq!(k, kind);
                }
                other => panic!("expected ForbiddenEntryType for {ty:?}, got {other:?}"),
            }
            // Only the directory entry got created; no link was made.
            let snap = snapshot(&root.path().join("dest"));
            assert_eq!(snap.keys().collect::<Vec<_>>(), ["a"]);
        }
        let e = run_err(
            &archive(&[(b"a/link", EntryType::Symlink, b"")]),
            &Limits::default(),
        );
        assert_eq!(
            e.to_string(),
            "archive entry `a/link` is a symlink; only regular files and directories are allowed"
        );
    }

    #[test]
    fn rejects_sparse_entries() {
        let bytes = archive(&[(b"sparse", EntryType::GNUSparse, b"")]);
        let e = run_err(&bytes, &Limits::default());
        assert!(
            matches!(
                e,
                UnpackError::ForbiddenEntryType {
                    kind: EntryKind::Sparse,
                    ..
                } | UnpackError::Corrupt(_)
            ),
            "{e:?}"
        );
    }

    #[test]
    fn rejects_duplicates_and_case_conflicts() {
        let e = run_err(
            &archive(&[file("a.txt"), file("a.txt")]),
            &Limits::default(),
        );
        assert!(
            matches!(&e, UnpackError::DuplicateEntry { path } if path == "a.txt"),
            "{e:?}"
        );
        let e = run_err(
            &archive(&[file("README.md"), file("readme.md")]),
            &Limits::default(),
        );
        assert!(
            matches!(&e, UnpackError::CaseConflict { path, other } if path == "readme.md" && other == "README.md"),
            "{e:?}"
        );
        let e = run_err(&archive(&[file("A/x"), file("a/y")]), &Limits::default());
        assert!(matches!(e, UnpackError::CaseConflict { .. }), "{e:?}");
        let e = run_err(
            &archive(&[
                (b"d/", EntryType::Directory, b""),
                (b"d/", EntryType::Directory, b""),
            ]),
            &Limits::default(),
        );
        assert!(matches!(e, UnpackError::DuplicateEntry { .. }), "{e:?}");
        // `./a` and `a` are the same path.
        let e = run_err(&archive(&[file("a"), file("./a")]), &Limits::default());
        assert!(matches!(e, UnpackError::DuplicateEntry { .. }), "{e:?}");
    }

    #[test]
    fn rejects_file_dir_conflicts() {
        let e = run_err(&archive(&[file("a"), file("a/b")]), &Limits::default());
        assert!(
            matches!(&e, UnpackError::ParentNotDirectory { path, parent } if path == "a/b" && parent == "a"),
            "{e:?}"
        );
        let e = run_err(
            &archive(&[file("a"), (b"a/", EntryType::Directory, b"")]),
            &Limits::default(),
        );
        assert!(
            matches!(
                e,
                UnpackError::TypeConflict {
                    new: "a directory",
                    existing: "a file",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = run_err(&archive(&[file("a/b"), file("a")]), &Limits::default());
        assert!(matches!(e, UnpackError::TypeConflict { .. }), "{e:?}");
    }

    #[test]
    fn rejects_bad_characters() {
        for (name, needle) in [
            (&b"a\\b"[..], "backslash"),
            (b"a\nb", "control"),
            (b"a\rb", "control"),
            (b"dir/x:y", "colon"),
            (b"bad\xff", "UTF-8"),
        ] {
            let e = run_err(
                &archive(&[(name, EntryType::Regular, b"x")]),
                &Limits::default(),
            );
            match &e {
                UnpackError::InvalidPath { reason, .. } => assert!(reason.contains(needle), "{e}"),
                other => panic!("expected InvalidPath for {name:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn rejects_long_and_deep_paths() {
        let limits = Limits {
            max_path_len: 20,
            ..Limits::default()
        };
        let e = run_err(&archive(&[file("abcdefghijklmnopqrstuvwxyz")]), &limits);
        assert!(
            matches!(
                e,
                UnpackError::PathTooLong {
                    len: 26,
                    limit: 20,
                    ..
                }
            ),
            "{e:?}"
        );
        let deep = vec!["d"; MAX_DEPTH + 1].join("/");
        let e = run_err(&archive(&[file(&deep)]), &Limits::default());
        assert!(matches!(e, UnpackError::PathTooDeep { .. }), "{e:?}");
    }

    #[test]
    fn rejects_too_many_entries() {
        let limits = Limits {
            max_entries: 3,
            ..Limits::default()
        };
        let bytes = archive(&[file("a"), file("b"), file("c"), file("d"), file("e")]);
        let e = run_err(&bytes, &limits);
        assert!(
            matches!(e, UnpackError::TooManyEntries { limit: 3 }),
            "{e:?}"
        );
    }

    #[test]
    fn stops_gzip_bomb_at_the_cap() {
        let zeros = vec![0u8; 20 * 1024 * 1024];
        let limits = Limits {
            max_unpacked: 1024 * 1024,
            ..Limits::default()
        };
        let bytes = archive(&[(b"bomb", EntryType::Regular, &zeros)]);
        assert!(bytes.len() < 200 * 1024);
        let start = std::time::Instant::now();
        let (r, root) = run(&bytes, &limits);
        assert!(
            matches!(r, Err(UnpackError::UnpackedTooLarge { limit: 1048576 })),
            "{r:?}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert!(!root.path().join("dest/bomb").exists());

        // Many files each under the cap but together over it.
        let chunk = vec![0u8; 400 * 1024];
        let bytes = archive(&[
            (b"a", EntryType::Regular, &chunk),
            (b"b", EntryType::Regular, &chunk),
            (b"c", EntryType::Regular, &chunk),
        ]);
        let (r, _root) = run(&bytes, &limits);
        assert!(
            matches!(r, Err(UnpackError::UnpackedTooLarge { .. })),
            "{r:?}"
        );

        // Payload hidden in an entry the unpacker skips (pax global header)
        // is still capped by the decompressed-stream budget.
        let limits = Limits {
            max_unpacked: 1024 * 1024,
            max_entries: 10,
            ..Limits::default()
        };
        let bytes = archive(&[(b"pax_global_header", EntryType::XGlobalHeader, &zeros)]);
        let (r, _root) = run(&bytes, &limits);
        assert!(
            matches!(r, Err(UnpackError::UnpackedTooLarge { .. })),
            "{r:?}"
        );
    }

    #[test]
    fn rejects_oversized_compressed_input() {
        let bytes = archive(&[file("a")]);
        let limits = Limits {
            max_compressed: 10,
            ..Limits::default()
        };
        let e = run_err(&bytes, &limits);
        assert!(
            matches!(e, UnpackError::CompressedTooLarge { limit: 10, .. }),
            "{e:?}"
        );
    }

    #[test]
    fn checksum_is_verified_first() {
        let bytes = archive(&[file("a")]);
        let wrong = Checksum::of_bytes(b"something else");
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("dest");
        let e = unpack(&bytes, Some(&wrong), &dest, &Limits::default()).unwrap_err();
        match &e {
            UnpackError::ChecksumMismatch { expected, actual } => {
                assert_eq!(*expected, wrong);
                assert_eq!(*actual, Checksum::of_bytes(&bytes));
            }
            other => panic!("expected ChecksumMismatch, got {other:?}"),
        }
        assert!(e
            .to_string()
            .starts_with("checksum mismatch: expected sha256:"));
        assert!(
            !dest.exists(),
            "dest must not be touched before verification"
        );
        // Garbage with a wrong checksum also fails on the checksum, not parsing.
        let e = unpack(b"not gzip", Some(&wrong), &dest, &Limits::default()).unwrap_err();
        assert!(matches!(e, UnpackError::ChecksumMismatch { .. }));
    }

    #[test]
    fn rejects_garbage_and_truncation() {
        let e = run_err(b"definitely not gzip", &Limits::default());
        assert!(matches!(e, UnpackError::Corrupt(_)), "{e:?}");
        let full = archive(&[(b"a", EntryType::Regular, &[7u8; 5000][..])]);
        let tar_bytes = {
            let mut d = GzDecoder::new(full.as_slice());
            let mut v = Vec::new();
            d.read_to_end(&mut v).unwrap();
            v
        };
        let truncated = gz(tar_bytes[..1500].to_vec());
        let e = run_err(&truncated, &Limits::default());
        assert!(matches!(e, UnpackError::Corrupt(_)), "{e:?}");
    }

    #[test]
    fn refuses_non_empty_destination() {
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("dest");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("existing"), "keep").unwrap();
        let e = unpack(&archive(&[file("a")]), None, &dest, &Limits::default()).unwrap_err();
        assert!(matches!(e, UnpackError::BadDestination { .. }), "{e:?}");
        assert_eq!(fs::read(dest.join("existing")).unwrap(), b"keep");
        assert!(!dest.join("a").exists());
    }

    #[test]
    fn accepts_dot_prefixed_and_implied_dirs() {
        let bytes = archive(&[
            (b"./", EntryType::Directory, b""),
            (b"./x/y/z.txt", EntryType::Regular, b"z"),
            (b"x/", EntryType::Directory, b""),
        ]);
        let (r, root) = run(&bytes, &Limits::default());
        let stats = r.unwrap();
        assert_eq!(
            stats,
            UnpackStats {
                files: 1,
                dirs: 2,
                bytes: 1
            }
        );
        assert_eq!(fs::read(root.path().join("dest/x/y/z.txt")).unwrap(), b"z");
    }

    #[test]
    fn unpack_to_new_dir_cleans_up_on_error() {
        let parent = tempfile::tempdir().unwrap();
        let bad = archive(&[file("ok"), (b"../evil", EntryType::Regular, b"x")]);
        let e = unpack_to_new_dir(&bad, None, parent.path(), &Limits::default()).unwrap_err();
        assert!(matches!(e, UnpackError::EscapesPackage { .. }));
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);

        let tree = sample_tree();
        let good = pack_dir(tree.path()).unwrap();
        let sum = Checksum::of_bytes(&good);
        let dir = unpack_to_new_dir(&good, Some(&sum), parent.path(), &Limits::default()).unwrap();
        assert_eq!(dir.path().parent(), Some(parent.path()));
        assert!(dir.path().join("scripts/run.sh").is_file());
        // The caller renames it into place.
        let installed = parent.path().join("demo");
        fs::rename(dir.keep(), &installed).unwrap();
        assert_eq!(pack_dir(&installed).unwrap(), good);
    }
}
