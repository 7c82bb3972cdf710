//! Filesystem primitives with crash-safety guarantees: whole-file
//! replacement that readers never see torn, an atomic directory swap, and
//! tree copies that never link back into the cache, and tree fingerprints.

pub mod compare;
pub mod fingerprint;
pub mod write_dir;

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// A filesystem step that failed, with the path it failed on.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub struct FsError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Attaches `action` and `path` to an `io::Error`.
pub fn fs_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FsError + 'a {
    move |source| FsError {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Replaces `path` with `contents` so that readers see either the old or
/// the new file, never a torn one: write a temporary file in the same
/// directory, fsync it, then rename over the target ([`write_atomic_all`]).
/// An existing file's permissions are kept (the temporary file would
/// otherwise be 0600).
pub fn write_atomic(path: &Path, contents: &str) -> Result<(), FsError> {
    write_atomic_all(&[(path, contents)])
}

/// [`write_atomic`] for several files behind one barrier: every new file
/// is written and synced before the first rename, so a rename that
/// survives a power loss names a whole file. The renames are not synced
/// after: the kernel commits them within seconds, and a power loss before
/// that leaves the old files, which the lock being the truth already
/// handles (the next `install` converges to the lock that survived). That
/// sync was a second journal commit in every command that writes a lock.
/// With their writeback started
/// together, a lock and a manifest cost one commit ([`write_synced`]).
/// The renames happen in the order given, so a crash between them
/// leaves the earlier files new and the later ones old, as writing them
/// one by one would.
pub fn write_atomic_all(files: &[(&Path, &str)]) -> Result<(), FsError> {
    write_synced(files)?.persist()
}

/// Files written and synced beside their targets, not yet renamed over
/// them: the first half of [`write_atomic_all`], which a command runs
/// while it installs (the sync is a journal commit, mostly waiting on the
/// disk) and ends with [`Synced::persist`] once everything is in place.
/// Dropped instead (a failed install), the files are deleted; a run
/// killed in between leaves them to [`sweep_pending`].
#[derive(Debug)]
pub struct Synced(Vec<(PathBuf, tempfile::NamedTempFile)>);

impl Synced {
    /// Renames the files over their targets, in the order given.
    pub fn persist(self) -> Result<(), FsError> {
        for (path, tmp) in self.0 {
            tmp.persist(&path)
                .map_err(|e| fs_err("replace", &path)(e.error))?;
        }
        Ok(())
    }

    /// Renames the file meant for `target` over it now, ahead of the
    /// others (the install journal, which must be in place before the
    /// trees it describes change).
    pub fn persist_one(&mut self, target: &Path) -> Result<(), FsError> {
        if let Some(i) = self.0.iter().position(|(p, _)| p == target) {
            let (path, tmp) = self.0.remove(i);
            tmp.persist(&path)
                .map_err(|e| fs_err("replace", &path)(e.error))?;
        }
        Ok(())
    }
}

/// Files written beside their targets and not yet synced: the first
/// step of [`write_synced`], for a caller that must learn the temporary
/// files' names (the install journal names them) before the one sync.
#[derive(Debug)]
pub struct Written(Vec<(PathBuf, tempfile::NamedTempFile)>);

impl Written {
    /// Each file's target and the temporary file beside it.
    pub fn temp_paths(&self) -> impl Iterator<Item = (&Path, &Path)> {
        self.0.iter().map(|(p, t)| (p.as_path(), t.path()))
    }

    /// Writes one more file, synced with the others.
    pub fn add(&mut self, path: &Path, contents: &str) -> Result<(), FsError> {
        let tmp = stage(path, contents.as_bytes(), PENDING).map_err(fs_err("write", path))?;
        self.0.push((path.to_path_buf(), tmp));
        Ok(())
    }

    /// Syncs every file (see [`write_synced`]).
    pub fn sync(self) -> Result<Synced, FsError> {
        // Every file's writeback starts before the first sync, so on ext4
        // their blocks join one journal transaction: the first sync's
        // commit takes them all, and the later syncs find their files
        // committed. Without it a lock and a manifest cost two commits;
        // with it, syncing in turn on this thread is as fast as side by
        // side on two threads, and starts no thread. Only a hint: the
        // syncs are what make each file durable, on any file system.
        for (_, tmp) in &self.0 {
            start_writeback(tmp.as_file());
        }
        for (path, tmp) in &self.0 {
            tmp.as_file().sync_all().map_err(fs_err("sync", path))?;
        }
        Ok(Synced(self.0))
    }
}

/// Writes `files` beside their targets, unsynced ([`Written`]).
pub fn write_unsynced(files: &[(&Path, &str)]) -> Result<Written, FsError> {
    let mut written = Written(Vec::with_capacity(files.len()));
    for (path, contents) in files {
        written.add(path, contents)?;
    }
    Ok(written)
}

/// Writes `files` beside their targets and syncs them all (see
/// [`write_atomic_all`]).
pub fn write_synced(files: &[(&Path, &str)]) -> Result<Synced, FsError> {
    write_unsynced(files)?.sync()
}

/// Makes the entries of `dir` durable (a rename into it, say), where a
/// directory can be synced; elsewhere the file system's own ordering of
/// metadata is all there is.
pub fn sync_dir(dir: &Path) -> Result<(), FsError> {
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(fs_err("sync", dir))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The prefix of the files [`write_atomic_all`] stages beside a project's
/// lock and manifest. A run killed (Ctrl-C included) between staging and
/// renaming leaves them behind: the install journal names those it will
/// still rename (`crate::install::journal`); the next run that holds the
/// project lock removes the rest ([`sweep_pending`]).
pub const PENDING: &str = ".skillpm-pending-";

/// Removes the [`PENDING`] files in `dir`, which only a run that was
/// killed before renaming them leaves. The caller holds the project lock,
/// so no run of its own is writing them.
pub fn sweep_pending(dir: &Path) {
    sweep_staged(dir, PENDING)
}

/// Removes the files in `dir` whose name starts with `prefix`: what a
/// writer that stages under that prefix left when it was killed between
/// staging and renaming. The caller knows no writer of its own is at it.
pub fn sweep_staged(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let ours = e.file_name().to_string_lossy().starts_with(prefix);
        if ours && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Like [`write_atomic`] without the fsyncs: readers still never see a torn
/// file, but a crash may lose the write. For caches, where a lost write
/// only costs a refetch.
pub fn replace_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    replace_file_staged(path, contents, ".tmp")
}

/// [`replace_file`], staging under `prefix` (for [`sweep_staged`]).
pub fn replace_file_staged(path: &Path, contents: &[u8], prefix: &str) -> io::Result<()> {
    stage(path, contents, prefix)?
        .persist(path)
        .map(drop)
        .map_err(|e| e.error)
}

/// A temporary file named `prefix`... beside `path` holding `contents`,
/// with the permissions `path` has (or 0644 when it is new).
fn stage(path: &Path, contents: &[u8], prefix: &str) -> io::Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::Builder::new()
        .prefix(prefix)
        .tempfile_in(parent(path))?;
    tmp.write_all(contents)?;
    let perms = match std::fs::metadata(path) {
        Ok(m) => Some(m.permissions()),
        Err(_) => default_permissions(),
    };
    if let Some(p) = perms {
        tmp.as_file().set_permissions(p)?;
    }
    Ok(tmp)
}

/// Asks the kernel to start writing `file` back now, without waiting
/// (`POSIX_FADV_DONTNEED` starts the writeback of dirty pages on Linux).
#[cfg(target_os = "linux")]
fn start_writeback(file: &std::fs::File) {
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &std::fs::File) {}

/// The directory a file lives in (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Swaps the directory entries `a` and `b` by this platform's
/// [`Swap`]: whoever looks at `b` sees the old tree or the new one.
pub fn exchange(a: &Path, b: &Path) -> Result<(), FsError> {
    Swap::NATIVE.run(a, b)
}

/// How two directory entries trade places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    /// One atomic call: `renameat2(RENAME_EXCHANGE)` on Linux,
    /// `renamex_np(RENAME_SWAP)` on macOS. A crash leaves either tree in
    /// place, never neither.
    Exchange,
    /// Where no such call exists (Windows): move the old tree aside, move
    /// the new one in, move the old one to where the new one was. A crash
    /// between the first two renames leaves no tree at `b` and the old one
    /// under a staging name, which the next run sweeps and then
    /// reinstalls.
    Aside,
}

impl Swap {
    pub const NATIVE: Swap = if cfg!(any(target_os = "linux", target_vendor = "apple")) {
        Swap::Exchange
    } else {
        Swap::Aside
    };

    pub fn run(self, a: &Path, b: &Path) -> Result<(), FsError> {
        match self {
            Swap::Exchange => exchange_atomic(a, b),
            Swap::Aside => {
                let aside = a.with_extension("old");
                std::fs::rename(b, &aside).map_err(fs_err("move aside", b))?;
                std::fs::rename(a, b).map_err(fs_err("rename into", b))?;
                std::fs::rename(&aside, a).map_err(fs_err("move", &aside))
            }
        }
    }
}

#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn exchange_atomic(a: &Path, b: &Path) -> Result<(), FsError> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)
        .map_err(|e| fs_err("swap into", b)(io::Error::from(e)))
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn exchange_atomic(_a: &Path, b: &Path) -> Result<(), FsError> {
    Err(fs_err("swap into", b)(io::Error::from(
        io::ErrorKind::Unsupported,
    )))
}

/// Opens (creating it) the lock file `path` and waits for its exclusive
/// lock, held until the file is dropped. `File::lock` is `flock` on Unix
/// and macOS and `LockFileEx` on Windows: both are released by the
/// operating system when the process dies, so a killed run never leaves
/// a stale lock. Windows' lock is mandatory (nobody else can read the
/// locked bytes), which is why a lock file is read, if at all, only through
/// the handle that holds its lock.
pub fn lock_file(path: &Path) -> io::Result<std::fs::File> {
    let f = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    f.lock()?;
    Ok(f)
}

/// Copies a tree file by file. `std::fs::copy` uses `copy_file_range` on
/// Linux, which reflinks on filesystems that support it; hard links are
/// never used, because an edit to an installed file would then change the
/// cache.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), FsError> {
    let rd = std::fs::read_dir(from).map_err(fs_err("read", from))?;
    for e in rd {
        let e = e.map_err(fs_err("read", from))?;
        let ft = e.file_type().map_err(fs_err("stat", &e.path()))?;
        let src = e.path();
        let dst = to.join(e.file_name());
        if ft.is_dir() {
            std::fs::create_dir(&dst).map_err(fs_err("create", &dst))?;
            copy_tree(&src, &dst)?;
        } else if ft.is_file() {
            std::fs::copy(&src, &dst).map_err(fs_err("copy to", &dst))?;
        }
        // Cached trees hold only files and directories (the unpacker
        // refuses anything else), so nothing else can appear here.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("skills.lock");
        write_atomic(&p, "one\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&p), 0o644);
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o664)).unwrap();
            write_atomic(&p, "two\n").unwrap();
            assert_eq!(mode(&p), 0o664);
        }
        write_atomic(&p, "three\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "three\n");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1);
    }

    #[test]
    fn write_atomic_all_replaces_every_file_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let (lock, manifest) = (
            dir.path().join("skills.lock"),
            dir.path().join("skills.toml"),
        );
        std::fs::write(&manifest, "old\n").unwrap();
        write_atomic_all(&[(&lock, "lock\n"), (&manifest, "manifest\n")]).unwrap();
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "lock\n");
        assert_eq!(std::fs::read_to_string(&manifest).unwrap(), "manifest\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // A file that cannot be staged (its directory is missing) fails
        // the call before anything is renamed.
        let missing = dir.path().join("gone").join("skills.toml");
        let err = write_atomic_all(&[(&lock, "new lock\n"), (&missing, "x")]).unwrap_err();
        assert_eq!(err.path, missing);
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "lock\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// A second holder waits: another handle on the same file cannot take
    /// the lock until the first is dropped (which the OS does for a killed
    /// process too).
    #[test]
    fn a_lock_file_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".lock");
        let held = lock_file(&p).unwrap();
        let other = std::fs::File::options().write(true).open(&p).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }

    /// Both ways of swapping trade the two trees and leave nothing else,
    /// whichever this platform uses.
    #[test]
    fn both_swaps_trade_two_trees() {
        let mut swaps = vec![Swap::Aside];
        // The atomic call exists only where NATIVE picks it.
        if cfg!(any(target_os = "linux", target_vendor = "apple")) {
            swaps.push(Swap::Exchange);
        }
        for &swap in &swaps {
            let dir = tempfile::tempdir().unwrap();
            let (new, dest) = (dir.path().join(".skillpm-new"), dir.path().join("pdf"));
            std::fs::create_dir(&new).unwrap();
            std::fs::write(new.join("SKILL.md"), "new").unwrap();
            std::fs::create_dir(&dest).unwrap();
            std::fs::write(dest.join("SKILL.md"), "old").unwrap();
            swap.run(&new, &dest).unwrap();
            assert_eq!(
                std::fs::read_to_string(dest.join("SKILL.md")).unwrap(),
                "new"
            );
            assert_eq!(
                std::fs::read_to_string(new.join("SKILL.md")).unwrap(),
                "old"
            );
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                2,
                "{swap:?}"
            );
        }
        assert_eq!(Swap::NATIVE == Swap::Exchange, swaps.len() == 2);
    }

    /// What a killed write leaves (a staged file under [`PENDING`]) is
    /// swept; nothing else is, not even a directory with that prefix.
    #[test]
    fn only_pending_files_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("skills.lock");
        write_atomic(&lock, "lock\n").unwrap();
        let left = stage(&lock, b"killed\n", PENDING).unwrap();
        let (_, left) = left.keep().unwrap();
        assert!(left
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(PENDING));
        std::fs::create_dir(dir.path().join(format!("{PENDING}dir"))).unwrap();
        std::fs::write(dir.path().join(".tmp-mine"), "user").unwrap();
        sweep_pending(dir.path());
        let mut kept: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        kept.sort();
        assert_eq!(kept, [".skillpm-pending-dir", ".tmp-mine", "skills.lock"]);
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "lock\n");
    }
}
