//! The content-addressed cache: verified tarballs and their unpacked trees,
//! keyed by sha256, plus registry index copies and bare git clones.
//!
//! Entries are immutable once written: everything is built in `tmp/` and
//! renamed into place, so a reader never sees half an entry and a crash
//! leaves at worst an orphan in `tmp/`. Trees are never handed to users
//! directly; installs copy out of them, so editing an installed skill can
//! never corrupt the cache.
//!
//! Every bucket's name carries a layout version (as uv's `wheels-v6`), so
//! a future change of format starts a fresh bucket instead of misreading
//! an old one.

use crate::fs::fingerprint;
use sha2::{Digest, Sha256};
use skillpm_core::archive::{self, Limits};
use skillpm_core::bounded;
use skillpm_core::checksum::{Checksum, Verified};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cache {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Unpack(#[from] archive::UnpackError),
    /// The unpacked tree failed the caller's check (see
    /// [`Cache::ensure_tree_checked`]); it was discarded, never cached.
    #[error("{0}")]
    Rejected(String),
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The versioned bucket names.
const TARBALLS: &str = "tarballs-v1";
const TREES: &str = "trees-v1";
const INDEX: &str = "index-v1";
const GIT: &str = "git-v1";
/// Stamps of installed trees (see [`Cache::installed_stamp`]).
const INSTALLED: &str = "installed-v1";
/// Stamps of path dependencies' directories (see [`Cache::path_dep_stamp`]).
const PATHS: &str = "paths-v1";
const TMP: &str = "tmp";
/// A stamp is a checksum and a fingerprint; anything longer is not ours.
const STAMP_BYTES: u64 = 256;

#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// Holds the cache's cross-process lock until dropped.
pub struct CacheGuard {
    _file: File,
}

impl Cache {
    /// `$XDG_CACHE_HOME/skillpm`, else `~/.cache/skillpm`.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("XDG_CACHE_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .map(|b| b.join("skillpm"))
    }

    pub fn new(root: PathBuf) -> Self {
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Takes the exclusive cross-process lock. Writers hold it while they
    /// add entries; concurrent skillpm runs wait here instead of racing.
    pub fn lock(&self) -> Result<CacheGuard, CacheError> {
        std::fs::create_dir_all(&self.root).map_err(io_at(&self.root))?;
        let p = self.root.join(".lock");
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(io_at(&p))?;
        f.lock().map_err(io_at(&p))?;
        Ok(CacheGuard { _file: f })
    }

    fn tmp(&self) -> Result<PathBuf, CacheError> {
        let t = self.root.join(TMP);
        std::fs::create_dir_all(&t).map_err(io_at(&t))?;
        Ok(t)
    }

    pub fn tarball_path(&self, c: &Checksum) -> PathBuf {
        self.root.join(TARBALLS).join(format!("{}.tar.gz", c.hex()))
    }

    pub fn tree_path(&self, c: &Checksum) -> PathBuf {
        self.root.join(TREES).join(c.hex())
    }

    /// The cached tree for `c` if it is present and still exactly what `c`
    /// names: its fingerprint is the one stamped when it was unpacked, or,
    /// failing that, re-packing it gives `c` again. A tree that fails is
    /// removed, so it is unpacked afresh from a verified tarball instead of
    /// being installed: the cache sits where other processes can write.
    pub fn verified_tree(&self, c: &Checksum) -> Option<PathBuf> {
        let tree = self.tree_path(c);
        if !tree.is_dir() {
            return None;
        }
        let stamp = self.stamp_path(c);
        let now = fingerprint::of_tree(&tree, &[]);
        let stamped = bounded::read_to_string(&stamp, STAMP_BYTES).ok();
        if now.is_some() && now == stamped {
            return Some(tree);
        }
        if archive::tree_checksum(&tree).is_ok_and(|t| t == *c) || self.matches_tarball(c, &tree) {
            if let Some(f) = now {
                let _ = crate::fs::replace_file(&stamp, f.as_bytes());
            }
            return Some(tree);
        }
        let _ = std::fs::remove_file(&stamp);
        let aside = self.root.join(TMP).join(format!("tampered-{}", c.hex()));
        let _ = std::fs::create_dir_all(self.root.join(TMP));
        if std::fs::rename(&tree, &aside).is_ok() {
            let _ = std::fs::remove_dir_all(&aside);
        }
        None
    }

    /// Whether `tree` holds exactly what the cached tarball for `c` unpacks
    /// to (for tarballs another tool packed, which re-packing cannot
    /// reproduce byte for byte).
    fn matches_tarball(&self, c: &Checksum, tree: &Path) -> bool {
        let Some(tarball) = self
            .read_tarball(c)
            .and_then(|b| Verified::check(b, c).ok())
        else {
            return false;
        };
        let Ok(tmp) = self.tmp() else {
            return false;
        };
        archive::unpack_to_new_dir(tarball.bytes(), None, &tmp, &Limits::default())
            .is_ok_and(|fresh| crate::fs::compare::diff_trees(fresh.path(), tree, &[]).is_empty())
    }

    /// This machine's stamp of the installed tree at `dir`: its fingerprint
    /// when it was last known to hold the package `c`. Kept here rather than
    /// in the tree, so an installed tree is the same bytes on every machine
    /// and a committed one never churns.
    pub fn installed_stamp(&self, dir: &Path, c: &Checksum) -> Option<String> {
        self.read_stamp(INSTALLED, dir, c)
    }

    /// Records `fingerprint` as the known-good state of `dir` holding `c`.
    /// Best effort: without a stamp the next run re-hashes.
    pub fn stamp_installed(&self, dir: &Path, c: &Checksum, fingerprint: &str) {
        self.write_stamp(INSTALLED, dir, c, fingerprint)
    }

    /// The fingerprint the path dependency at `dir` had when it was last
    /// packed to `c`, so a run that finds it unchanged need not pack it
    /// again to learn its checksum.
    pub fn path_dep_stamp(&self, dir: &Path, c: &Checksum) -> Option<String> {
        self.read_stamp(PATHS, dir, c)
    }

    /// Records that `dir`, with `fingerprint`, packs to `c`. Best effort.
    pub fn stamp_path_dep(&self, dir: &Path, c: &Checksum, fingerprint: &str) {
        self.write_stamp(PATHS, dir, c, fingerprint)
    }

    fn read_stamp(&self, bucket: &str, dir: &Path, c: &Checksum) -> Option<String> {
        let text = bounded::read_to_string(&self.stamp_file(bucket, dir), STAMP_BYTES).ok()?;
        let (checksum, fingerprint) = text.split_once(' ')?;
        (checksum == c.to_string()).then(|| fingerprint.trim().to_string())
    }

    fn write_stamp(&self, bucket: &str, dir: &Path, c: &Checksum, fingerprint: &str) {
        let p = self.stamp_file(bucket, dir);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = crate::fs::replace_file(&p, format!("{c} {fingerprint}\n").as_bytes());
    }

    fn stamp_file(&self, bucket: &str, dir: &Path) -> PathBuf {
        let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        self.root
            .join(bucket)
            .join(short_hash(&key.to_string_lossy()))
    }

    fn stamp_path(&self, c: &Checksum) -> PathBuf {
        self.root.join(TREES).join(format!("{}.stamp", c.hex()))
    }

    /// Reads a cached tarball. The bytes are not trusted: the cache is on
    /// disk where anything may have changed it, so callers verify them
    /// (see `source::verify`).
    pub fn read_tarball(&self, c: &Checksum) -> Option<Vec<u8>> {
        // No bigger than any tarball a source may hand over.
        bounded::read(&self.tarball_path(c), Limits::default().max_compressed).ok()
    }

    /// Stores a verified tarball under its checksum.
    pub fn store_tarball(&self, tarball: &Verified) -> Result<(), CacheError> {
        let (c, bytes) = (tarball.checksum(), tarball.bytes());
        let dest = self.tarball_path(c);
        if dest.is_file() {
            return Ok(());
        }
        let dir = self.root.join(TARBALLS);
        std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        let mut tmp = tempfile::NamedTempFile::new_in(self.tmp()?).map_err(io_at(&dir))?;
        io::Write::write_all(&mut tmp, bytes).map_err(io_at(&dest))?;
        tmp.persist(&dest).map_err(|e| CacheError::Io {
            path: dest.clone(),
            source: e.error,
        })?;
        Ok(())
    }

    /// Unpacks a verified tarball into the trees bucket unless present,
    /// running `check` on the freshly unpacked tree while it is still in
    /// staging: a tree that fails is deleted and never becomes a cache entry
    /// (a later run would otherwise trust it).
    pub fn ensure_tree(
        &self,
        tarball: &Verified,
        limits: &Limits,
        check: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<PathBuf, CacheError> {
        let dest = self.tree_path(tarball.checksum());
        if dest.is_dir() {
            return Ok(dest);
        }
        let trees = self.root.join(TREES);
        std::fs::create_dir_all(&trees).map_err(io_at(&trees))?;
        let staged = archive::unpack_to_new_dir(tarball.bytes(), None, &self.tmp()?, limits)?;
        check(staged.path()).map_err(CacheError::Rejected)?;
        match std::fs::rename(staged.path(), &dest) {
            Ok(()) => {
                // The directory now lives at `dest`; stop TempDir deleting it.
                let _ = staged.keep();
                // Best effort: without a stamp the next use re-hashes.
                if let Some(f) = fingerprint::of_tree(&dest, &[]) {
                    let _ =
                        crate::fs::replace_file(&self.stamp_path(tarball.checksum()), f.as_bytes());
                }
                Ok(dest)
            }
            // Another process won the race with identical content.
            Err(_) if dest.is_dir() => Ok(dest),
            Err(e) => Err(CacheError::Io {
                path: dest,
                source: e,
            }),
        }
    }

    /// Directory for per-registry index copies.
    pub fn index_dir(&self, registry_url: &str) -> PathBuf {
        self.root.join(INDEX).join(short_hash(registry_url))
    }

    /// Directory for the bare clone of `url`.
    pub fn git_dir(&self, url: &str) -> PathBuf {
        self.root.join(GIT).join(short_hash(url))
    }

    /// Removes everything but the lock file.
    pub fn clean(&self) -> Result<(), CacheError> {
        for sub in [TARBALLS, TREES, INDEX, GIT, INSTALLED, PATHS, TMP] {
            let p = self.root.join(sub);
            match std::fs::remove_dir_all(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_at(&p)(e)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A filesystem-safe key for a URL (which may hold characters a path cannot).
pub fn short_hash(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..12])
}
