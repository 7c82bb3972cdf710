//! A tree of a commit as a `.tar.gz`, made from the raw objects.
//!
//! Not `git archive`: it applies the tree's own `.gitattributes` on the
//! way out (`export-subst` rewrites `$Format:...$` in files,
//! `export-ignore` drops them, `filter`, `text`/`eol` and `ident` run
//! conversions, some through drivers from the user's git config), so what
//! is installed would not be what was committed, and it writes its whole
//! output before any cap can apply. Here the tree is listed with sizes
//! first (`ls-tree -l`), so the entry count and unpacked size are refused
//! before a byte of content is read; then the blobs are streamed from
//! `cat-file --batch`, which knows nothing of attributes, into a tarball
//! of stored blocks whose size is capped while it is written (the re-packed
//! tarball is capped at the compressed limit). The tarball goes
//! through the same hardened unpacker as a registry download, which stays
//! the one place that judges entry paths and types.

use super::process::Git;
use super::SourceError;
use crate::project::spec::GitUrl;
use flate2::write::GzEncoder;
use skillpm_core::archive::{Limits, UnpackError};
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tar::{EntryType, Header};

/// Longest `ls-tree` record beyond its path: mode, type, object id, size.
const RECORD_OVERHEAD: u64 = 160;

/// One entry of the listed tree.
#[derive(Clone)]
struct Entry {
    mode: u32,
    kind: Kind,
    oid: String,
    size: u64,
    path: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blob,
    /// A directory, or a submodule (which `git archive` also writes as an
    /// empty directory).
    Dir,
}

/// What every skill of one commit shares during a run: the commit listed
/// once (`ls-tree -r -t -l` of the whole tree), and one long-lived
/// `cat-file --batch` that answers each blob on request. Without it each
/// skill of a 100-skill repository would start its own two git processes.
pub(super) struct Shared {
    /// The whole commit; `None` when it passes the listing limits (or git
    /// failed), so each skill lists its own tree as before.
    entries: Option<Vec<Entry>>,
    /// Started on first use; dropped (which stops git) after any error,
    /// since its output may then be out of step with the requests.
    batch: Mutex<Option<Batch>>,
}

/// Most `cat-file --batch` processes kept between requests, over all
/// commits: a restore touching many repositories would otherwise keep one
/// per commit running until the run ends.
const MAX_KEPT_BATCHES: usize = 16;
static KEPT_BATCHES: AtomicUsize = AtomicUsize::new(0);

impl Drop for Shared {
    fn drop(&mut self) {
        let guard = self.batch.get_mut().unwrap_or_else(|p| p.into_inner());
        if guard.take().is_some() {
            KEPT_BATCHES.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Shared {
    pub(super) fn new(
        git: &impl Fn() -> Command,
        repo: &Path,
        url: &GitUrl,
        commit: &str,
        limits: &Limits,
    ) -> Self {
        Shared {
            entries: list(git, repo, url, commit, limits).ok(),
            batch: Mutex::new(None),
        }
    }

    /// Runs `f` on the commit's `cat-file --batch`, one caller at a time.
    fn with_batch<T>(
        &self,
        git: &impl Fn() -> Command,
        repo: &Path,
        url: &GitUrl,
        f: impl FnOnce(&mut Batch) -> Result<T, SourceError>,
    ) -> Result<T, SourceError> {
        let mut guard = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch = match guard.take() {
            Some(b) => {
                KEPT_BATCHES.fetch_sub(1, Ordering::SeqCst);
                b
            }
            None => Batch::start(git, repo, url)?,
        };
        let r = f(&mut batch);
        if r.is_ok() {
            if KEPT_BATCHES.fetch_add(1, Ordering::SeqCst) < MAX_KEPT_BATCHES {
                *guard = Some(batch);
            } else {
                // Too many kept already: this one stops, and the commit's
                // next skill starts its own.
                KEPT_BATCHES.fetch_sub(1, Ordering::SeqCst);
            }
        }
        r
    }

    /// The entries below `sub` (paths made relative to it), if the shared
    /// listing holds `sub` as a directory and the subtree is within
    /// `limits`; otherwise `None`, and the caller lists the subtree itself
    /// so any refusal reads exactly as it always has.
    fn subtree(&self, sub: Option<&str>, limits: &Limits) -> Option<Vec<Entry>> {
        let all = self.entries.as_ref()?;
        let sub = sub
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| !p.is_empty() && *p != ".");
        let picked: Vec<Entry> = match sub {
            None => all.clone(),
            Some(dir) => {
                if !all
                    .iter()
                    .any(|e| e.kind == Kind::Dir && e.path == dir.as_bytes())
                {
                    return None;
                }
                let prefix = format!("{dir}/");
                all.iter()
                    .filter_map(|e| {
                        let rest = e.path.strip_prefix(prefix.as_bytes())?;
                        Some(Entry {
                            path: rest.to_vec(),
                            ..e.clone()
                        })
                    })
                    .collect()
            }
        };
        let within = picked.len() as u64 <= limits.max_entries
            && picked.iter().all(|e| e.path.len() <= limits.max_path_len);
        within.then_some(picked)
    }
}

/// How large the stored (uncompressed) tar stream of a tree of `entries`
/// may grow: the unpacked cap plus room for headers, padding and long
/// names. The tarball that leaves this module is re-packed and capped at
/// `max_compressed` where it is unpacked.
pub(super) fn stream_cap(limits: &Limits, entries: usize) -> u64 {
    let per_entry = 2048u64.saturating_add(limits.max_path_len as u64);
    limits
        .max_unpacked
        .saturating_add((entries as u64).saturating_add(4).saturating_mul(per_entry))
}

/// The tree at `sub` (the root when `None`) of `commit` in the bare clone
/// at `repo`, as a `.tar.gz` of stored (uncompressed) blocks within
/// [`stream_cap`]: it only lives until it is checked and re-packed, so
/// compressing it would be wasted work.
pub(super) fn tar_gz(
    shared: &Shared,
    git: impl Fn() -> Command,
    repo: &Path,
    url: &GitUrl,
    commit: &str,
    sub: Option<&str>,
    limits: &Limits,
) -> Result<Vec<u8>, SourceError> {
    let entries = match shared.subtree(sub, limits) {
        Some(entries) => entries,
        None => {
            let treeish = match sub {
                Some(p) if !p.is_empty() && p != "." => {
                    format!("{commit}:{}", p.trim_end_matches('/'))
                }
                _ => commit.to_string(),
            };
            list(&git, repo, url, &treeish, limits)?
        }
    };
    let total: u64 = entries
        .iter()
        .filter(|e| e.kind == Kind::Blob && !is_symlink(e.mode))
        .map(|e| e.size)
        .sum();
    if total > limits.max_unpacked {
        return Err(UnpackError::UnpackedTooLarge {
            limit: limits.max_unpacked,
        }
        .into());
    }

    let cap = stream_cap(limits, entries.len());
    shared.with_batch(&git, repo, url, |batch| {
        let mut out = TarGz::new(cap);
        let written = (|| {
            for e in &entries {
                match e.kind {
                    Kind::Dir => {
                        let mut p = e.path.clone();
                        p.push(b'/');
                        out.entry(&p, EntryType::Directory, 0o755, 0, &mut io::empty())?;
                    }
                    // Listed so the unpacker refuses it like any symlink.
                    Kind::Blob if is_symlink(e.mode) => {
                        out.entry(&e.path, EntryType::Symlink, 0o777, 0, &mut io::empty())?
                    }
                    Kind::Blob => {
                        let mode = if e.mode & 0o111 != 0 { 0o755 } else { 0o644 };
                        batch.blob(e, |body| {
                            out.entry(&e.path, EntryType::Regular, mode, e.size, body)
                        })?;
                    }
                }
            }
            out.finish()
        })();
        match written {
            Ok(bytes) => Ok(bytes),
            // The caller drops the batch on any error, which stops git.
            Err(_) if out.tripped() => Err(batch.proc.error(format!(
                "the tree is larger than {} bytes as a tar stream (limit)",
                cap
            ))),
            Err(e) => Err(batch.proc.error(e.to_string())),
        }
    })
}

/// The `SKILL.md` (or `skill.md`) files anywhere in the shared commit, as
/// (path of the directory holding it, contents), sorted by path. Files
/// over `max_file` bytes and symlinks are left out; a commit too large to
/// list within the listing limits is refused with the listing's error.
pub(super) fn skill_files(
    shared: &Shared,
    git: impl Fn() -> Command,
    repo: &Path,
    url: &GitUrl,
    commit: &str,
    limits: &Limits,
    max_file: u64,
) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
    let Some(entries) = shared.entries.as_ref() else {
        // Listed again only to report why it failed.
        list(&git, repo, url, commit, limits)?;
        return Err(SourceError::Git {
            what: "listing of",
            url: url.redacted(),
            detail: "the listing failed".into(),
        });
    };
    let mut wanted: Vec<(String, &Entry)> = entries
        .iter()
        .filter(|e| e.kind == Kind::Blob && !is_symlink(e.mode) && e.size <= max_file)
        .filter_map(|e| {
            let path = std::str::from_utf8(&e.path).ok()?;
            let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
            skillpm_core::skill::SKILL_FILES
                .contains(&file)
                .then(|| (dir.to_string(), e))
        })
        .collect();
    wanted.sort_by(|a, b| a.0.cmp(&b.0));
    // `SKILL.md` wins over `skill.md` in the same directory.
    wanted.dedup_by(|b, a| a.0 == b.0);
    shared.with_batch(&git, repo, url, |batch| {
        let mut out = Vec::with_capacity(wanted.len());
        for (dir, e) in &wanted {
            let body = batch
                .blob(e, |body| {
                    let mut buf = Vec::with_capacity(e.size as usize);
                    body.read_to_end(&mut buf)?;
                    Ok(buf)
                })
                .map_err(|err| batch.proc.error(err.to_string()))?;
            out.push((dir.clone(), body));
        }
        Ok(out)
    })
}

/// A `cat-file --batch` kept running for a run: one request, one answer
/// at a time, each answer read no further than the size the tree lists
/// for it (so what git may print stays capped by the listing).
struct Batch {
    proc: Git<'static>,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Batch {
    fn start(git: &impl Fn() -> Command, repo: &Path, url: &GitUrl) -> Result<Self, SourceError> {
        let mut c = git();
        c.arg("--git-dir").arg(repo).args(["cat-file", "--batch"]);
        let mut proc = Git::spawn(c, true, "reading objects of", Cow::Owned(url.clone()))?;
        let stdin = proc.stdin().ok_or_else(|| proc.error("no input"))?;
        let out = proc.stdout().ok_or_else(|| proc.error("no output"))?;
        Ok(Batch {
            proc,
            stdin,
            out: BufReader::new(out),
        })
    }

    /// Asks for the blob `e` and hands its body, capped at the listed
    /// size, to `read`, which must consume all of it.
    fn blob<T>(
        &mut self,
        e: &Entry,
        read: impl FnOnce(&mut dyn Read) -> io::Result<T>,
    ) -> io::Result<T> {
        self.stdin.write_all(format!("{}\n", e.oid).as_bytes())?;
        object_header(&mut self.out, e)?;
        let mut body = (&mut self.out).take(e.size);
        let got = read(&mut body)?;
        let mut nl = [0u8; 1];
        if body.limit() != 0 || self.out.read_exact(&mut nl).is_err() || nl != *b"\n" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("object {} was not sent as listed", e.oid),
            ));
        }
        Ok(got)
    }
}

fn is_symlink(mode: u32) -> bool {
    mode & 0o170000 == 0o120000
}

/// Lists `treeish` recursively with blob sizes, stopping as soon as the
/// entry count or a path passes its limit.
fn list(
    git: &impl Fn() -> Command,
    repo: &Path,
    url: &GitUrl,
    treeish: &str,
    limits: &Limits,
) -> Result<Vec<Entry>, SourceError> {
    let mut c = git();
    c.arg("--git-dir")
        .arg(repo)
        .args(["ls-tree", "-r", "-t", "-l", "-z", "--end-of-options"])
        .arg(treeish);
    let mut proc = Git::spawn(c, false, "listing of", Cow::Borrowed(url))?;
    let stdout = proc.stdout().ok_or_else(|| proc.error("no output"))?;
    let mut reader = BufReader::new(stdout);
    let record_cap = limits.max_path_len as u64 + RECORD_OVERHEAD;
    let mut entries = Vec::new();
    let mut rec = Vec::new();
    loop {
        rec.clear();
        (&mut reader)
            .take(record_cap)
            .read_until(0, &mut rec)
            .map_err(|e| proc.error(format!("cannot read its output: {e}")))?;
        if rec.is_empty() {
            break;
        }
        if rec.pop() != Some(0) {
            return Err(proc.error(format!(
                "an entry is longer than {} bytes (path limit {})",
                record_cap, limits.max_path_len
            )));
        }
        if entries.len() as u64 >= limits.max_entries {
            return Err(UnpackError::TooManyEntries {
                limit: limits.max_entries,
            }
            .into());
        }
        let entry = parse(&rec).ok_or_else(|| proc.error("unexpected ls-tree output"))?;
        entries.push(entry);
    }
    drop(reader);
    proc.finish()?;
    Ok(entries)
}

/// `<mode> SP <type> SP <object> SP+ <size|-> TAB <path>`.
fn parse(rec: &[u8]) -> Option<Entry> {
    let tab = rec.iter().position(|&b| b == b'\t')?;
    let meta = std::str::from_utf8(&rec[..tab]).ok()?;
    let mut f = meta.split_ascii_whitespace();
    let (mode, kind, oid, size) = (f.next()?, f.next()?, f.next()?, f.next()?);
    let kind = match kind {
        "blob" => Kind::Blob,
        "tree" | "commit" => Kind::Dir,
        _ => return None,
    };
    Some(Entry {
        mode: u32::from_str_radix(mode, 8).ok()?,
        size: if kind == Kind::Blob {
            size.parse().ok()?
        } else {
            0
        },
        kind,
        oid: oid.to_string(),
        path: rec[tab + 1..].to_vec(),
    })
}

/// Reads `<object> blob <size>` and checks it announces what was listed.
fn object_header(r: &mut impl BufRead, e: &Entry) -> io::Result<()> {
    let mut line = Vec::new();
    r.by_ref()
        .take(RECORD_OVERHEAD)
        .read_until(b'\n', &mut line)?;
    let expected = format!("{} blob {}\n", e.oid, e.size);
    if line != expected.as_bytes() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "object {} is not the {}-byte blob the tree lists",
                e.oid, e.size
            ),
        ));
    }
    Ok(())
}

/// A tarball written entry by entry into a gzip stream whose compressed
/// size is capped while it grows. Paths are written as git holds them,
/// unchecked: judging them is the unpacker's job.
struct TarGz {
    gz: GzEncoder<CappedVec>,
}

impl TarGz {
    fn new(cap: u64) -> Self {
        TarGz {
            gz: GzEncoder::new(
                CappedVec {
                    bytes: Vec::new(),
                    cap,
                    tripped: false,
                },
                flate2::Compression::none(),
            ),
        }
    }

    fn tripped(&self) -> bool {
        self.gz.get_ref().tripped
    }

    fn entry(
        &mut self,
        path: &[u8],
        ty: EntryType,
        mode: u32,
        size: u64,
        body: &mut dyn Read,
    ) -> io::Result<()> {
        let mut h = Header::new_gnu();
        if path.len() > 100 {
            let mut long = path.to_vec();
            long.push(0);
            self.entry(
                b"././@LongLink",
                EntryType::GNULongName,
                0o644,
                long.len() as u64,
                &mut long.as_slice(),
            )?;
        }
        let name = &mut h.as_old_mut().name;
        let n = path.len().min(name.len());
        name[..n].copy_from_slice(&path[..n]);
        h.set_entry_type(ty);
        h.set_mode(mode);
        h.set_size(size);
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h.set_cksum();
        self.gz.write_all(h.as_bytes())?;
        let copied = io::copy(body, &mut self.gz)?;
        if copied != size {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("git sent {copied} of {size} bytes"),
            ));
        }
        let pad = (512 - size % 512) % 512;
        self.gz.write_all(&[0u8; 512][..pad as usize])
    }

    fn finish(&mut self) -> io::Result<Vec<u8>> {
        self.gz.write_all(&[0u8; 1024])?;
        self.gz.try_finish()?;
        Ok(std::mem::take(&mut self.gz.get_mut().bytes))
    }
}

struct CappedVec {
    bytes: Vec<u8>,
    cap: u64,
    tripped: bool,
}

impl Write for CappedVec {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if (self.bytes.len() + buf.len()) as u64 > self.cap {
            self.tripped = true;
            return Err(io::Error::other("compressed size limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ls_tree_records() {
        let e = parse(b"100755 blob 0123abcd     42\tscripts/run.sh").unwrap();
        assert_eq!((e.mode, e.size, e.oid.as_str()), (0o100755, 42, "0123abcd"));
        assert_eq!(e.path, b"scripts/run.sh");
        let d = parse(b"040000 tree 0123abcd       -\tscripts").unwrap();
        assert!(d.kind == Kind::Dir);
        let s = parse(b"160000 commit 0123abcd       -\tsub").unwrap();
        assert!(s.kind == Kind::Dir);
        assert!(parse(b"100644 blob x nosize").is_none());
        assert!(parse(b"100644 tag x 1\tp").is_none());
    }
}
