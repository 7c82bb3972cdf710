//! The hardened unpacker: checksum and size caps first, then every entry
//! checked and written by hand into a fresh, empty destination.

use super::entry_path::{show, validate_path};
use super::{EntryKind, Format, Limits, UnpackError, UnpackStats};
use crate::checksum::Checksum;
use flate2::read::GzDecoder;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;
use tar::EntryType;

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

pub(super) struct Unpacker<'a> {
    dest: &'a Path,
    sink: Sink,
    limits: &'a Limits,
    /// Lower-cased path → (path as written, what it is).
    seen: HashMap<String, (String, Seen)>,
    stats: UnpackStats,
    /// The copy buffer, reused across files.
    buf: Vec<u8>,
}

/// Where an unpacked tree goes.
enum Sink {
    /// Onto disk under `dest`.
    Disk,
    /// Into memory only ([`unpack_to_memory`], [`MemoryTree`]): what would
    /// have been created, instead of creating it.
    Memory(Vec<MemEntry>),
    /// Onto disk, and kept in memory too
    /// ([`unpack_to_new_dir_kept`]): the installer scans what it staged
    /// from these bytes rather than walking and reading the tree again.
    DiskAndMemory(Vec<MemEntry>),
}

impl Sink {
    fn kept(self) -> Vec<MemEntry> {
        match self {
            Sink::Disk => Vec::new(),
            Sink::Memory(m) | Sink::DiskAndMemory(m) => m,
        }
    }
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

impl<'a> Unpacker<'a> {
    pub(super) fn new(dest: &'a Path, limits: &'a Limits) -> Self {
        Unpacker {
            dest,
            sink: Sink::Disk,
            limits,
            seen: HashMap::new(),
            stats: UnpackStats::default(),
            buf: Vec::new(),
        }
    }

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
                    self.create_dir(&prefix)?;
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
        let etype = entry.header().entry_type();
        if etype.is_pax_global_extensions() {
            // Metadata only (e.g. `git archive` writes the commit id here).
            return Ok(());
        }
        let kind = if etype.is_file() {
            Kind::File {
                size: entry.size(),
                executable: entry.header().mode().is_ok_and(|m| m & 0o111 != 0),
            }
        } else if etype.is_dir() {
            Kind::Dir
        } else {
            Kind::Forbidden(forbidden_kind(etype))
        };
        self.add(&raw, kind, entry)
    }

    /// Checks and writes one entry of any archive format: every format
    /// goes through the same path, type, size and collision checks.
    pub(super) fn add(
        &mut self,
        raw: &[u8],
        kind: Kind,
        contents: &mut dyn Read,
    ) -> Result<(), UnpackError> {
        let display = show(raw);
        let (is_file, is_dir) = match kind {
            Kind::Forbidden(kind) => {
                return Err(UnpackError::ForbiddenEntryType {
                    path: display,
                    kind,
                })
            }
            Kind::File { .. } => (true, false),
            Kind::Dir => (false, true),
        };
        let Some(path) = validate_path(raw, self.limits.max_path_len, self.limits.names)
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
                self.create_dir(&rel)?;
                self.stats.dirs += 1;
            }
            return Ok(());
        }
        self.claim(&display, &rel, Seen::File)?;
        let Kind::File { size, executable } = kind else {
            return Ok(());
        };
        self.write_file(contents, size, executable, &rel)
    }

    fn create_dir(&mut self, rel: &str) -> Result<(), UnpackError> {
        if !matches!(self.sink, Sink::Memory(_)) {
            fs::create_dir(self.dest.join(rel)).map_err(self.io_err(rel))?;
        }
        if let Sink::Memory(m) | Sink::DiskAndMemory(m) = &mut self.sink {
            m.push(MemEntry::Dir(rel.to_string()));
        }
        Ok(())
    }

    fn write_file(
        &mut self,
        contents: &mut dyn Read,
        size: u64,
        executable: bool,
        rel: &str,
    ) -> Result<(), UnpackError> {
        let limit = self.limits.max_unpacked;
        let remaining = limit.saturating_sub(self.stats.bytes);
        if size > remaining {
            return Err(UnpackError::UnpackedTooLarge { limit });
        }
        if matches!(self.sink, Sink::Disk) {
            return self.copy_file(contents, size, executable, rel, remaining);
        }
        // The same cap as on disk: at most one byte past the budget.
        // Sized from the header up front (no regrowth by doubling);
        // `size` is within the budget, checked above.
        let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        contents
            .take(remaining.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(UnpackError::Corrupt)?;
        if data.len() as u64 > remaining {
            return Err(UnpackError::UnpackedTooLarge { limit });
        }
        if matches!(self.sink, Sink::DiskAndMemory(_)) {
            let mut file = self.create_file(rel, executable)?;
            file.write_all(&data).map_err(self.io_err(rel))?;
        }
        self.stats.bytes += data.len() as u64;
        self.stats.files += 1;
        if let Sink::Memory(m) | Sink::DiskAndMemory(m) = &mut self.sink {
            m.push(MemEntry::File {
                path: rel.to_string(),
                data,
                executable,
            });
        }
        Ok(())
    }

    /// A new file at `rel` with the mode the unpacker gives; the mode is
    /// set again where the umask would clear some of it.
    fn create_file(&self, rel: &str, executable: bool) -> Result<fs::File, UnpackError> {
        let mode = if executable { 0o755 } else { 0o644 };
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let file = options
            .open(self.dest.join(rel))
            .map_err(self.io_err(rel))?;
        if !modes_survive_umask() {
            set_file_mode(&file, mode).map_err(self.io_err(rel))?;
        }
        Ok(file)
    }

    /// Copies `contents` into a new file through the shared buffer, never
    /// holding the whole file.
    fn copy_file(
        &mut self,
        contents: &mut dyn Read,
        size: u64,
        executable: bool,
        rel: &str,
        remaining: u64,
    ) -> Result<(), UnpackError> {
        let limit = self.limits.max_unpacked;
        let mut file = self.create_file(rel, executable)?;
        // Never trust the header size alone: read at most one byte past the
        // remaining budget.
        let mut limited = contents.take(remaining.saturating_add(1));
        // One buffer per unpack, not one per file, grown to the largest
        // file (up to 64 KiB): zeroing 64 KiB for every small file, or
        // for every small tree, was measurable.
        let mut buf = std::mem::take(&mut self.buf);
        let want = usize::try_from(size.saturating_add(1)).map_or(64 * 1024, |n| n.min(64 * 1024));
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let mut written: u64 = 0;
        let result = loop {
            let n = match limited.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(UnpackError::Corrupt(e)),
            };
            written = written.saturating_add(n as u64);
            if written > remaining {
                break Err(UnpackError::UnpackedTooLarge { limit });
            }
            if let Err(e) = file.write_all(&buf[..n]) {
                break Err(self.io_err(rel)(e));
            }
        };
        self.buf = buf;
        result?;
        self.stats.bytes += written;
        self.stats.files += 1;
        Ok(())
    }
}

/// A directory or file of a tree unpacked into memory; paths are
/// `/`-separated and relative, as the unpacker would have created them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemEntry {
    Dir(String),
    File {
        path: String,
        data: Vec<u8>,
        executable: bool,
    },
}

impl MemEntry {
    /// The entry's path, `/`-separated and relative.
    pub fn path(&self) -> &str {
        match self {
            MemEntry::Dir(path) | MemEntry::File { path, .. } => path,
        }
    }
}

/// What an archive entry is, in any format.
pub(super) enum Kind {
    File { size: u64, executable: bool },
    Dir,
    Forbidden(EntryKind),
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

/// A tree from a source that is not an archive (a git tree read from its
/// objects), judged entry by entry exactly as an archive's entries are
/// (paths, types, collisions, entry count, unpacked size) and kept in
/// memory, as [`unpack_to_memory`] keeps a tarball's: no tar stream is
/// written only to be parsed again.
pub struct MemoryTree<'a> {
    unpacker: Unpacker<'a>,
    count: u64,
}

impl<'a> MemoryTree<'a> {
    pub fn new(limits: &'a Limits) -> Self {
        let mut unpacker = Unpacker::new(Path::new(""), limits);
        unpacker.sink = Sink::Memory(Vec::new());
        MemoryTree { unpacker, count: 0 }
    }

    /// Adds a directory entry.
    pub fn dir(&mut self, path: &[u8]) -> Result<(), UnpackError> {
        self.add(path, Kind::Dir, &mut io::empty())
    }

    /// Adds a regular file whose contents are `data`.
    pub fn file(&mut self, path: &[u8], data: &[u8], executable: bool) -> Result<(), UnpackError> {
        let kind = Kind::File {
            size: data.len() as u64,
            executable,
        };
        self.add(path, kind, &mut &data[..])
    }

    /// Adds an entry of a kind no package may hold (it is refused).
    pub fn forbidden(&mut self, path: &[u8], kind: EntryKind) -> Result<(), UnpackError> {
        self.add(path, Kind::Forbidden(kind), &mut io::empty())
    }

    fn add(&mut self, path: &[u8], kind: Kind, contents: &mut dyn Read) -> Result<(), UnpackError> {
        self.count += 1;
        if self.count > self.unpacker.limits.max_entries {
            return Err(UnpackError::TooManyEntries {
                limit: self.unpacker.limits.max_entries,
            });
        }
        self.unpacker.add(path, kind, contents)
    }

    /// The tree, in the order it was added.
    pub fn finish(self) -> Vec<MemEntry> {
        self.unpacker.sink.kept()
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
    unpack_as(Format::TarGz, bytes, expected, dest, limits)
}

/// [`unpack`](fn@unpack) for any [`Format`]: the checksum and the
/// compressed-size cap come first, then every entry goes through the same
/// checks whatever the format.
pub fn unpack_as(
    format: Format,
    bytes: &[u8],
    expected: Option<&Checksum>,
    dest: &Path,
    limits: &Limits,
) -> Result<UnpackStats, UnpackError> {
    check_input(format, bytes, expected, limits)?;
    prepare_dest(dest)?;
    unpack_into(format, bytes, dest, limits)
}

/// The checks before any entry is read: the checksum, then the size cap.
fn check_input(
    format: Format,
    bytes: &[u8],
    expected: Option<&Checksum>,
    limits: &Limits,
) -> Result<(), UnpackError> {
    if let Some(expected) = expected {
        let actual = Checksum::of_bytes(bytes);
        if actual != *expected {
            return Err(UnpackError::ChecksumMismatch {
                expected: *expected,
                actual,
            });
        }
    }
    let (size, limit) = (bytes.len() as u64, limits.max_input(format));
    if size > limit {
        return Err(UnpackError::TooLarge { size, limit });
    }
    Ok(())
}

/// [`unpack_as`] after the checksum and size checks, into `dest`, which
/// must be an empty directory, also returning every path created.
fn unpack_into(
    format: Format,
    bytes: &[u8],
    dest: &Path,
    limits: &Limits,
) -> Result<UnpackStats, UnpackError> {
    let mut unpacker = Unpacker::new(dest, limits);
    unpack_with(format, bytes, &mut unpacker, limits)?;
    Ok(unpacker.stats)
}

/// Every entry of `bytes` through `unpacker`.
fn unpack_with(
    format: Format,
    bytes: &[u8],
    unpacker: &mut Unpacker,
    limits: &Limits,
) -> Result<(), UnpackError> {
    match format {
        Format::TarGz => tar_gz_into(bytes, unpacker, limits),
        // Already held whole and within `max_tar_bytes`.
        Format::Tar => unpack_stream(&mut &bytes[..], unpacker, limits),
        Format::Zip => super::zip::zip_into(bytes, unpacker, limits),
    }
}

/// Checks a `.tar.gz` exactly as [`unpack`](fn@unpack) does (compressed
/// cap first, then every entry), but keeps the tree in memory: for a
/// tarball that is only unpacked to be re-packed ([`super::tar_entries`]).
pub fn unpack_to_memory(bytes: &[u8], limits: &Limits) -> Result<Vec<MemEntry>, UnpackError> {
    check_input(Format::TarGz, bytes, None, limits)?;
    let mut unpacker = Unpacker::new(Path::new(""), limits);
    unpacker.sink = Sink::Memory(Vec::new());
    tar_gz_into(bytes, &mut unpacker, limits)?;
    Ok(unpacker.sink.kept())
}

/// The regular file `name` at the top of a package (a `.tar.gz`, or the
/// plain tar of a tree made here: [`Format::of_package`]), if it holds
/// one, read only up to `max` bytes: a package's own manifest, looked up
/// without unpacking the rest. A larger file is an error, as is a package
/// over `limits`' input and unpacked caps.
pub fn read_top_file(
    bytes: &[u8],
    name: &str,
    max: u64,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, UnpackError> {
    let format = Format::of_package(bytes);
    check_input(format, bytes, None, limits)?;
    let reader: Box<dyn Read + '_> = match format {
        Format::TarGz => Box::new(CappedReader {
            inner: GzDecoder::new(bytes),
            count: 0,
            limit: limits.max_tar_bytes(),
            tripped: false,
        }),
        _ => Box::new(bytes),
    };
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(UnpackError::Corrupt)? {
        let entry = entry.map_err(UnpackError::Corrupt)?;
        let path = entry.path_bytes();
        let path = path.strip_prefix(b"./").unwrap_or(&path);
        if path != name.as_bytes() {
            continue;
        }
        if entry.header().entry_type() != EntryType::Regular {
            return Err(UnpackError::ForbiddenEntryType {
                path: name.to_string(),
                kind: EntryKind::Other(entry.header().entry_type().as_byte()),
            });
        }
        if entry.size() > max {
            return Err(UnpackError::TooLarge {
                size: entry.size(),
                limit: max,
            });
        }
        let mut data = Vec::with_capacity(entry.size() as usize);
        entry
            .take(max)
            .read_to_end(&mut data)
            .map_err(UnpackError::Corrupt)?;
        return Ok(Some(data));
    }
    Ok(None)
}

fn tar_gz_into(
    bytes: &[u8],
    unpacker: &mut Unpacker<'_>,
    limits: &Limits,
) -> Result<(), UnpackError> {
    let mut reader = CappedReader {
        inner: GzDecoder::new(bytes),
        count: 0,
        limit: limits.max_tar_bytes(),
        tripped: false,
    };
    let result = unpack_stream(&mut reader, unpacker, limits);
    match result {
        Err(UnpackError::Corrupt(_)) if reader.tripped => Err(UnpackError::UnpackedTooLarge {
            limit: limits.max_unpacked,
        }),
        other => other,
    }
}

fn unpack_stream<R: Read>(
    reader: &mut R,
    unpacker: &mut Unpacker<'_>,
    limits: &Limits,
) -> Result<(), UnpackError> {
    let mut archive = tar::Archive::new(reader);
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
    Ok(())
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
    unpack_to_new_dir_as(Format::TarGz, bytes, expected, parent, limits)
}

/// [`unpack_to_new_dir`] for any [`Format`].
pub fn unpack_to_new_dir_as(
    format: Format,
    bytes: &[u8],
    expected: Option<&Checksum>,
    parent: &Path,
    limits: &Limits,
) -> Result<tempfile::TempDir, UnpackError> {
    check_input(format, bytes, expected, limits)?;
    let dir = new_dir_in(parent)?;
    unpack_into(format, bytes, dir.path(), limits)?;
    Ok(dir)
}

/// Unpacks a package as the installer holds it ([`Format::of_package`];
/// no checksum: the caller holds verified bytes) into a fresh directory,
/// also returning what it created, in memory: every directory and every
/// file with its bytes. A fresh directory holds exactly those, so the
/// installer reads and stats nothing it just wrote: it scans these bytes
/// and takes the paths from them. The whole tree is held (at most
/// `limits.max_unpacked`) until the caller drops it.
pub fn unpack_to_new_dir_kept(
    bytes: &[u8],
    parent: &Path,
    limits: &Limits,
) -> Result<(tempfile::TempDir, Vec<MemEntry>), UnpackError> {
    let format = Format::of_package(bytes);
    check_input(format, bytes, None, limits)?;
    let dir = new_dir_in(parent)?;
    let mut unpacker = Unpacker::new(dir.path(), limits);
    unpacker.sink = Sink::DiskAndMemory(Vec::new());
    unpack_with(format, bytes, &mut unpacker, limits)?;
    let kept = unpacker.sink.kept();
    Ok((dir, kept))
}

/// A fresh (so empty) temp dir inside `parent`, created if missing,
/// readable by all like the trees installed from it. `parent` is looked
/// up only when the first try finds it missing: a run stages every tree
/// in the same one, which exists.
fn new_dir_in(parent: &Path) -> Result<tempfile::TempDir, UnpackError> {
    let io = |source| UnpackError::Io {
        path: parent.to_path_buf(),
        source,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".skillpm-unpack-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o755));
    }
    let dir = match builder.tempdir_in(parent) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(parent).map_err(io)?;
            builder.tempdir_in(parent)
        }
        made => made,
    }
    .map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if !modes_survive_umask() {
            let mode = fs::Permissions::from_mode(0o755);
            fs::set_permissions(dir.path(), mode).map_err(|source| UnpackError::Io {
                path: dir.path().to_path_buf(),
                source,
            })?;
        }
    }
    Ok(dir)
}

/// Whether a file or directory created with the modes the unpacker
/// gives (0o644, 0o755) gets exactly that mode: the process's umask
/// clears none of their bits (022 and 002, the usual ones, clear none).
/// Then no mode is set again after creation: that was one more inode
/// update per file and per tree (41 system calls of a 10-skill restore,
/// each a journal write). Read once from `/proc` (skillpm never changes
/// its umask); where that cannot be read, `false`, and every mode is set
/// explicitly.
fn modes_survive_umask() -> bool {
    // A process fact: the umask, which skillpm never changes.
    static SURVIVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SURVIVE.get_or_init(|| {
        let status = Path::new("/proc/self/status");
        let status = crate::bounded::read_to_string(status, 64 * 1024).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
            .is_some_and(|umask| umask & 0o755 == 0)
    })
}
