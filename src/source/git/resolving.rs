//! The memory that resolving a received pack's deltas may take, worked
//! out from the pack itself before gitoxide resolves it.
//!
//! gitoxide's index-pack resolves each delta tree from its root, and a
//! resolved object that is the base of other deltas stays in memory
//! until the last of them is resolved. A per-object cap (`allocLimit`)
//! does not bound the whole: a "delta comb" of a few kilobytes (at each
//! level, a leaf left waiting while the next level is resolved first)
//! keeps every level's object at once (SECURITY.md has the figures), and
//! there is no memory bound to set in gitoxide. So the received pack,
//! complete on disk once its entries have been read, is read once more
//! from its entry headers before the first delta is resolved, and refused
//! when its worst case is over [`MAX_RESOLVE_BYTES`].
//!
//! The worst case follows gitoxide's resolver (gix-pack 0.77,
//! `cache::delta::traverse::resolve`), whatever order its threads take:
//! every buffer it holds was last sized for one object (resolving an
//! object grows one buffer, exactly, and buffers are reused, so a small
//! base may sit in a large buffer), and it holds at most one buffer per
//! base, plus, per thread, one for the object being resolved, one it keeps
//! for reuse and one for a delta's instructions. The bound is therefore
//! the sum of the largest `bases + 2 * threads` objects and of the largest
//! `threads` deltas' instructions, where `bases` counts the entries some
//! delta names as its base. An object's size is its header's, or for a
//! delta the result size its instructions declare: what gitoxide
//! allocates.

use gix::odb::pack::data::entry::Header;
use gix::odb::pack::data::input::{BytesToEntriesIter, EntryDataMode, Mode};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most memory resolving a pack's deltas may take in the worst case:
/// far more than a skills repository's pack needs (its worst case is
/// about its inflated size), and a fraction of what the comb above takes.
pub(super) const MAX_RESOLVE_BYTES: u64 = 512 << 20;

/// The most threads gitoxide resolves deltas with (`pack.threads`): a
/// skills repository's pack resolves in moments, and each thread adds
/// its buffers to the worst case.
const MAX_THREADS: usize = 4;

/// The threads a fetch resolves deltas with.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_THREADS)
}

/// Why a received pack may not be resolved.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    #[error(
        "the server sent a pack whose deltas may take {need} bytes of memory to resolve, \
         more than the {MAX_RESOLVE_BYTES} bytes a fetch may use"
    )]
    TooMuch { need: u64 },
    #[error("the received pack was not found in {} to check its deltas", .0.display())]
    NotFound(PathBuf),
    #[error("reading the received pack in {}", .0.display())]
    Io(PathBuf, #[source] std::io::Error),
    #[error("reading the received pack")]
    Pack(#[source] gix::Error),
    #[error("a delta at offset {0} of the received pack does not declare its sizes")]
    Delta(u64),
}

/// Checks the pack gitoxide has received into `pack_dir` (a temporary
/// file there) before it resolves its deltas with `threads` threads.
pub(super) fn check(pack_dir: &Path, threads: usize) -> Result<(), Refused> {
    let received = received(pack_dir).map_err(|e| Refused::Io(pack_dir.to_path_buf(), e))?;
    if received.is_empty() {
        return Err(Refused::NotFound(pack_dir.to_path_buf()));
    }
    // Only the fetch holding the clone writes there, so there is one;
    // should there be more, the largest worst case stands for them all.
    for pack in received {
        let need = worst_case(&pack, threads)?;
        if need > MAX_RESOLVE_BYTES {
            return Err(Refused::TooMuch { need });
        }
    }
    Ok(())
}

/// The temporary files in `pack_dir` that hold a pack.
fn received(pack_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(pack_dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if !super::fetching::is_temporary(&name.to_string_lossy()) || !entry.file_type()?.is_file()
        {
            continue;
        }
        let mut magic = [0u8; 4];
        let mut file = std::fs::File::open(entry.path())?;
        if file.read_exact(&mut magic).is_ok() && &magic == b"PACK" {
            found.push(entry.path());
        }
    }
    Ok(found)
}

/// The most bytes resolving the deltas of the pack at `path` may hold.
/// The pack is read through to its trailer, which must match.
fn worst_case(path: &Path, threads: usize) -> Result<u64, Refused> {
    let file = std::fs::File::open(path).map_err(|e| Refused::Io(path.to_path_buf(), e))?;
    let entries = BytesToEntriesIter::new_from_header(
        std::io::BufReader::new(file),
        Mode::Verify,
        EntryDataMode::Keep,
        gix::hash::Kind::Sha1,
    )
    .map_err(Refused::Pack)?;
    let mut sizes = Vec::new();
    let mut instructions = Vec::new();
    let mut bases_at = HashSet::new();
    let mut bases_by_id = HashSet::new();
    for entry in entries {
        let entry = entry.map_err(Refused::Pack)?;
        match entry.header {
            Header::OfsDelta { base_distance } => {
                bases_at.insert(
                    Header::verified_base_pack_offset(entry.pack_offset, base_distance)
                        .unwrap_or_default(),
                );
            }
            Header::RefDelta { base_id } => {
                bases_by_id.insert(base_id);
            }
            _ => {
                sizes.push(entry.decompressed_size);
                continue;
            }
        }
        let compressed = entry.compressed.as_deref().unwrap_or_default();
        let size = delta_result_size(compressed).ok_or(Refused::Delta(entry.pack_offset))?;
        sizes.push(size);
        instructions.push(entry.decompressed_size);
    }
    Ok(bound(
        sizes,
        instructions,
        bases_at.len() + bases_by_id.len(),
        threads,
    ))
}

/// The sum of the largest `bases + 2 * threads` of `sizes` and of the
/// largest `threads` of `instructions` (see the module's comment).
fn bound(mut sizes: Vec<u64>, mut instructions: Vec<u64>, bases: usize, threads: usize) -> u64 {
    let largest = |v: &mut Vec<u64>, n: usize| -> u64 {
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.iter().take(n).fold(0u64, |sum, &s| sum.saturating_add(s))
    };
    largest(&mut sizes, bases.saturating_add(2 * threads))
        .saturating_add(largest(&mut instructions, threads))
}

/// The result size a delta's instructions declare: the second of the two
/// sizes they start with (git's `delta.h`), read from the first bytes of
/// its zlib stream. `None` when they do not hold one.
fn delta_result_size(compressed: &[u8]) -> Option<u64> {
    // Two sizes of at most ten bytes each.
    let mut head = Vec::with_capacity(20);
    flate2::read::ZlibDecoder::new(compressed)
        .take(20)
        .read_to_end(&mut head)
        .ok()?;
    let (_, used) = size_at(&head)?;
    size_at(&head[used..]).map(|(size, _)| size)
}

/// A delta header's size at the start of `d`, and the bytes it took:
/// seven bits a byte, least significant first.
fn size_at(d: &[u8]) -> Option<(u64, usize)> {
    let mut size = 0u64;
    for (i, byte) in d.iter().enumerate().take(10) {
        size |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((size, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comb's bases all count; a chain's leaf-only tail does not add
    /// more than the threads' buffers.
    #[test]
    fn the_bound_counts_the_largest_buffers_a_resolver_may_hold() {
        // Five objects of 10 bytes and one of 100; two of them bases.
        let sizes = vec![10, 10, 100, 10, 10, 10];
        // One thread: the two bases and two buffers of the largest four
        // objects, plus the largest delta's instructions.
        assert_eq!(bound(sizes.clone(), vec![3, 7], 2, 1), 100 + 30 + 7);
        // Every object counts once at most, whatever the count.
        assert_eq!(bound(sizes, vec![3, 7], 100, 4), 150 + 10);
        assert_eq!(bound(vec![u64::MAX, 1], vec![], 0, 1), u64::MAX);
        assert_eq!(bound(Vec::new(), Vec::new(), 0, 4), 0);
    }

    #[test]
    fn delta_sizes_are_read_from_the_instructions() {
        let mut delta = vec![0x80 | 0x05, 0x01]; // base 133
        delta.extend([0x80, 0x80, 0x04]); // result 1 << 16
        delta.extend([0x90, 0x10]);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &delta).unwrap();
        assert_eq!(delta_result_size(&z.finish().unwrap()), Some(1 << 16));
        assert_eq!(delta_result_size(b"not zlib"), None);
        assert_eq!(size_at(&[0xff; 11]), None);
    }
}
