//! Deterministic packing: the same tree always yields a byte-identical
//! tar (the *canonical tar*), so its sha256 identifies the tree. A tree
//! made on this machine (git, path, well-known) is locked by the sha256 of
//! that tar; a package published to a registry is the tar gzipped at level
//! 9, locked by the sha256 of the `.tar.gz` as the registry serves it.

use super::entry_path::validate_path;
use super::{Limits, MemEntry, PackError, MAX_DEPTH};
use crate::checksum::{Checksum, Verified};
use crate::platform::Platform;
use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tar::{Builder, EntryType, Header};

/// Fixed modification time written into every tar header.
const FIXED_MTIME: u64 = 0;

/// The gzip level of every package published. Never changes: locks
/// written before trees were locked by their tar hold the sha256 of a
/// tree's tar gzipped at this level by miniz_oxide ([`verify_tree`]).
const LEVEL: u32 = 9;

enum PackItemKind {
    Dir,
    File {
        source: PathBuf,
        executable: bool,
    },
    /// A file already in memory ([`tar_entries`]).
    Data {
        data: Vec<u8>,
        executable: bool,
    },
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

/// Whether the file at `path` counts as executable in a package, by this
/// platform's rule ([`Platform::exec_rule`]: its x bits, or on Windows a
/// shebang): the one rule for packing, and for comparing installed trees
/// with packed ones.
pub fn is_executable(path: &Path, meta: &fs::Metadata) -> bool {
    Platform::CURRENT.exec_rule().is_executable(path, meta)
}

fn collect(
    dir: &Path,
    prefix: &str,
    skip: &[&str],
    out: &mut Vec<PackItem>,
) -> Result<(), PackError> {
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
        // A checkout's own `.git` (any case: one file on macOS and
        // Windows) is never part of the skill.
        if name.eq_ignore_ascii_case(".git") || (prefix.is_empty() && skip.contains(&name)) {
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
            collect(&path, &format!("{rel}/"), &[], out)?;
        } else if ft.is_file() {
            let meta = fs::symlink_metadata(&path).map_err(io_pack(&path))?;
            out.push(PackItem {
                name: rel,
                kind: PackItemKind::File {
                    executable: is_executable(&path, &meta),
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

/// Packs the contents of `dir` into a deterministic `.tar.gz`: the
/// canonical tar ([`tar_dir`]) gzipped at level 9, as it is published.
pub fn pack_dir(dir: &Path) -> Result<Vec<u8>, PackError> {
    let tar = tar_dir(dir)?;
    gzip(&tar).map_err(io_pack(dir))
}

/// The canonical tar of `dir`: entries relative to `dir`, sorted by path
/// bytes, directories listed with a trailing `/`, `.git` skipped, fixed
/// headers. Symlinks and special files are errors. The same tree always
/// yields byte-identical output.
pub fn tar_dir(dir: &Path) -> Result<Vec<u8>, PackError> {
    tar_dir_skipping(dir, &[])
}

/// [`tar_dir`] without the top-level entries named in `skip` (an
/// installer's marker inside an installed tree), so an installed skill can
/// be re-hashed against the checksum it was installed from.
pub fn tar_dir_skipping(dir: &Path, skip: &[&str]) -> Result<Vec<u8>, PackError> {
    let meta = fs::metadata(dir).map_err(io_pack(dir))?;
    if !meta.is_dir() {
        return Err(PackError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let mut items = Vec::new();
    collect(dir, "", skip, &mut items)?;
    tar_items(dir, items)
}

/// The canonical tar of a tree held in memory (as
/// [`super::unpack_to_memory`] returns it): exactly the bytes [`tar_dir`]
/// writes for the same tree on disk (which holds no `.git`: the unpacker
/// refuses one).
pub fn tar_entries(entries: Vec<MemEntry>) -> Result<Vec<u8>, PackError> {
    let items = entries
        .into_iter()
        .map(|e| match e {
            MemEntry::Dir(p) => PackItem {
                name: format!("{p}/"),
                kind: PackItemKind::Dir,
            },
            MemEntry::File {
                path,
                data,
                executable,
            } => PackItem {
                name: path,
                kind: PackItemKind::Data { data, executable },
            },
        })
        .collect();
    tar_items(Path::new("."), items)
}

/// A `.tar.gz` of a tree held in memory: [`tar_entries`] gzipped exactly
/// as [`pack_dir`] gzips, so the same tree always yields the same bytes
/// (the registry derives other packagings of a package with it).
pub fn pack_entries(entries: Vec<MemEntry>) -> Result<Vec<u8>, PackError> {
    let tar = tar_entries(entries)?;
    gzip(&tar).map_err(io_pack(Path::new(".")))
}

/// Sorts, checks and writes `items` as a tar; `dir` names where they came
/// from in errors.
fn tar_items(dir: &Path, mut items: Vec<PackItem>) -> Result<Vec<u8>, PackError> {
    items.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));

    // Refuse trees that `unpack` would refuse, so a published package can
    // always be installed.
    let limits = Limits::default();
    let mut folded: HashMap<String, &str> = HashMap::new();
    for item in &items {
        if let Err(problem) = validate_path(item.name.as_bytes(), limits.max_path_len, limits.names)
        {
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

    let size = items.iter().map(|i| match &i.kind {
        PackItemKind::Data { data, .. } => 1024 + data.len(),
        _ => 1024,
    });
    let mut builder = Builder::new(Vec::with_capacity(size.sum::<usize>() + 1024));
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
                append_file(&mut builder, &item.name, &data, *executable)
                    .map_err(io_pack(source))?;
            }
            PackItemKind::Data { data, executable } => {
                append_file(&mut builder, &item.name, data, *executable).map_err(io_pack(dir))?;
            }
        }
    }
    builder.into_inner().map_err(io_pack(dir))
}

/// `tar` gzipped at [`LEVEL`] with mtime 0 and OS 255: the bytes
/// `GzBuilder::new().mtime(0).operating_system(255)` writes, made in one
/// call on this thread's compressor. Setting up a compressor (some 300 KB
/// of tables to zero) cost as much as compressing a skill, so each thread
/// does it once rather than once per package.
fn gzip(tar: &[u8]) -> io::Result<Vec<u8>> {
    thread_local! {
        // Per thread, not per run: scratch tables, reset before every use.
        static DEFLATE: RefCell<Compress> =
            RefCell::new(Compress::new(Compression::new(LEVEL), false));
    }
    // ID1 ID2 CM FLG MTIME(4) XFL (2: the slowest level) OS (255: unknown).
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    let mut out = Vec::with_capacity(tar.len() / 4 + 64);
    out.extend_from_slice(&HEADER);
    DEFLATE.with_borrow_mut(|deflate| -> io::Result<()> {
        deflate.reset();
        loop {
            let done = deflate.total_in() as usize;
            let status = deflate
                .compress_vec(&tar[done..], &mut out, FlushCompress::Finish)
                .map_err(io::Error::other)?;
            if status == Status::StreamEnd {
                return Ok(());
            }
            out.reserve(out.capacity().max(4096));
        }
    })?;
    let mut crc = Crc::new();
    crc.update(tar);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    // ISIZE is the length modulo 2^32.
    out.extend_from_slice(&(tar.len() as u32).to_le_bytes());
    Ok(out)
}

fn append_file<W: Write>(
    builder: &mut Builder<W>,
    name: &str,
    data: &[u8],
    executable: bool,
) -> io::Result<()> {
    let mode = if executable { 0o755 } else { 0o644 };
    let mut h = base_header(EntryType::Regular, mode, data.len() as u64);
    builder.append_data(&mut h, name, data)
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

/// The checksum of `dir`'s canonical tar: what identifies a tree from a
/// git or path source in the lock.
pub fn tree_checksum(dir: &Path) -> Result<Checksum, PackError> {
    Ok(Checksum::of_bytes(&tar_dir(dir)?))
}

/// Checks a canonical tar made on this machine against the checksum a
/// lock gives its tree, and returns the bytes that checksum names: the
/// tar itself, or, for a lock entry written before trees were locked by
/// their tar, the tar gzipped at level 9 (what was hashed then; costs a
/// compression only when the tar's own checksum does not match).
/// `Err` carries the tar's own checksum.
pub fn verify_tree(tar: Verified, expected: &Checksum) -> Result<Verified, Checksum> {
    let own = *tar.checksum();
    if own == *expected {
        return Ok(tar);
    }
    match gzip(tar.bytes()) {
        Ok(gz) => Verified::check(gz, expected).map_err(|_| own),
        Err(_) => Err(own),
    }
}
