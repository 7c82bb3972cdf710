//! One fetch at a time into a cache repository, and what an interrupted
//! one left taken away.
//!
//! A fetch writes temporary files (the pack coming in, its index, a ref's
//! `.lock`) and renames them into place. A process killed in between
//! (`kill -9`, a power cut, or Ctrl-C landing between gitoxide creating a
//! temporary file and registering it for removal) leaves them behind: a
//! `.tmp` pack costs only disk, but a ref's stale `.lock` made every later
//! fetch into that clone fail until someone deleted it by hand.
//!
//! Every fetch into a cache repository, in process or through `git`,
//! holds an `flock` on a file beside it (so the lock dies with its
//! process, and two runs wait for each other instead of racing for the
//! same ref locks). The file's one byte says whether the last fetch there
//! ended: one that did not is swept before the next starts. A fetch that
//! ended leaves the byte clean, so the usual cost is one read and two
//! one-byte writes of a file that exists.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// What the lock file holds while a fetch runs, and after it ended.
const RUNNING: u8 = b'1';
const ENDED: u8 = b'0';

/// How deep the sweep looks below `refs/` (a branch named `a/b/c` is
/// three levels down): far beyond any ref a host serves, and a bound on
/// a walk of a directory that is, after all, on disk for anyone to fill.
const MAX_REF_DEPTH: usize = 32;

/// Files at the top of a repository that only a write in progress holds.
const TOP_LOCKS: [&str; 5] = [
    "HEAD.lock",
    "config.lock",
    "packed-refs.lock",
    "shallow.lock",
    "FETCH_HEAD.lock",
];

/// Held for one fetch into a repository; dropped, it marks the fetch
/// ended and releases the lock.
#[derive(Debug)]
pub(super) struct Fetching {
    file: File,
}

impl Fetching {
    /// Waits until no other process fetches into `repo`, sweeps what an
    /// interrupted fetch left there, and marks a fetch as running.
    pub(super) fn start(repo: &Path) -> io::Result<Fetching> {
        let path = lock_path(repo);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        file.lock()?;
        let mut state = [0u8; 1];
        let read = file.read(&mut state)?;
        // No byte yet: the first fetch since this lock file came to be;
        // a clone made before it may still hold a killed fetch's files.
        let interrupted = match read {
            0 => super::is_repo(repo),
            _ => state[0] != ENDED,
        };
        if interrupted {
            sweep(repo);
        }
        mark(&mut file, RUNNING)?;
        Ok(Fetching { file })
    }
}

impl Drop for Fetching {
    /// Ended, whether it succeeded or failed: a fetch that returns (even
    /// with an error) has removed its own temporary files. Only one that
    /// never got here leaves the byte at [`RUNNING`].
    fn drop(&mut self) {
        let _ = mark(&mut self.file, ENDED);
    }
}

fn mark(file: &mut File, state: u8) -> io::Result<()> {
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&[state])
}

/// `<repo>.skillpm-fetch`, beside the repository rather than in it: it
/// exists before a new clone does, and `git` never sees it.
pub(super) fn lock_path(repo: &Path) -> PathBuf {
    let mut path = repo.as_os_str().to_owned();
    path.push(".skillpm-fetch");
    PathBuf::from(path)
}

/// Removes what only a fetch in progress holds: temporary packs and
/// indexes (gitoxide's `.tmp*`, git's `tmp_*`) in `objects/pack`, the
/// `shallow` file's replacement (`.tmp*`) at the top, and every `.lock`
/// file of a ref or of the repository's own files. Nothing else runs in
/// the repository meanwhile: the caller holds its lock. Best effort: what
/// cannot be removed is left for the next sweep, and the fetch reports
/// its own error if it matters.
fn sweep(repo: &Path) {
    remove_temporary(&repo.join("objects").join("pack"));
    remove_temporary(repo);
    for name in TOP_LOCKS {
        let _ = std::fs::remove_file(repo.join(name));
    }
    sweep_ref_locks(&repo.join("refs"), MAX_REF_DEPTH);
}

/// Removes the files (never a directory) in `dir` named like a
/// temporary file of gitoxide, `git` or skillpm's own replacements.
fn remove_temporary(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_file = entry.file_type().is_ok_and(|t| !t.is_dir());
        if is_file && is_temporary(&name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `name` is that of a temporary file gitoxide (`.tmp*`) or
/// `git` (`tmp_*`) writes while fetching: the pack coming in, its index.
pub(super) fn is_temporary(name: &str) -> bool {
    name.starts_with(".tmp") || name.starts_with("tmp_")
}

/// Removes the `.lock` files below `dir`, down to `depth` levels; a
/// symbolic link is never followed (a link named `x.lock` is itself
/// removed, not what it points to).
fn sweep_ref_locks(dir: &Path, depth: usize) {
    let Some(depth) = depth.checked_sub(1) else {
        return;
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            sweep_ref_locks(&entry.path(), depth);
        } else if entry.file_name().to_string_lossy().ends_with(".lock") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    /// What a killed fetch left is removed before the next one, and only
    /// that: packs, their indexes and `.keep` files, refs and the
    /// repository's own files stay.
    #[test]
    fn an_unfinished_fetch_is_swept_before_the_next() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("clone");
        let kept = [
            "HEAD",
            "config",
            "shallow",
            "refs/heads/main",
            "refs/tags/v1",
            "objects/pack/pack-1.pack",
            "objects/pack/pack-1.idx",
            "objects/pack/pack-1.keep",
        ];
        let left = [
            "refs/heads/main.lock",
            "refs/heads/topic/deep/branch.lock",
            "packed-refs.lock",
            "shallow.lock",
            "objects/pack/.tmpAbC123",
            "objects/pack/tmp_pack_XYZ",
            ".tmpShAlLo",
        ];
        for p in kept.iter().chain(&left) {
            touch(&repo.join(p));
        }
        // After a fetch that ended nothing is swept (so these files,
        // which no fetch left, stay).
        std::fs::write(lock_path(&repo), [ENDED]).unwrap();
        drop(Fetching::start(&repo).unwrap());
        assert!(left.iter().all(|p| repo.join(p).exists()));
        // One killed mid-fetch: the byte says it was running.
        std::fs::write(lock_path(&repo), [RUNNING]).unwrap();
        let fetching = Fetching::start(&repo).unwrap();
        for p in left {
            assert!(!repo.join(p).exists(), "{p} was left");
        }
        for p in kept {
            assert!(repo.join(p).exists(), "{p} was removed");
        }
        assert_eq!(std::fs::read(lock_path(&repo)).unwrap(), [RUNNING]);
        drop(fetching);
        assert_eq!(std::fs::read(lock_path(&repo)).unwrap(), [ENDED]);
    }

    /// The first fetch with a new lock file sweeps a clone that exists
    /// (made before there was one), and not a repository still to make.
    #[test]
    fn a_clone_older_than_its_lock_file_is_swept_once() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("clone");
        touch(&repo.join("HEAD"));
        touch(&repo.join("refs/heads/main.lock"));
        drop(Fetching::start(&repo).unwrap());
        assert!(!repo.join("refs/heads/main.lock").exists());
        // Once: that fetch ended, so the next one sweeps nothing.
        touch(&repo.join("refs/heads/main.lock"));
        drop(Fetching::start(&repo).unwrap());
        assert!(repo.join("refs/heads/main.lock").exists());
        let new = tmp.path().join("new");
        drop(Fetching::start(&new).unwrap());
        assert!(!new.exists(), "the lock file goes beside the repository");
    }

    /// A link in `refs/` is not followed: the sweep stays inside.
    #[cfg(unix)]
    #[test]
    fn the_sweep_does_not_follow_links_out_of_the_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("clone");
        let outside = tmp.path().join("outside");
        touch(&outside.join("victim.lock"));
        touch(&repo.join("HEAD"));
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::os::unix::fs::symlink(&outside, repo.join("refs/elsewhere")).unwrap();
        std::fs::write(lock_path(&repo), [RUNNING]).unwrap();
        drop(Fetching::start(&repo).unwrap());
        assert!(outside.join("victim.lock").exists());
    }
}
