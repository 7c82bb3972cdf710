//! The content-addressed cache: verified packages keyed by sha256 (a
//! registry's `.tar.gz`, or the canonical `.tar` of a tree made on this
//! machine), plus registry index copies, bare git clones and stamps.
//!
//! Entries are immutable once written: everything is built in `tmp/` and
//! renamed into place, so a reader never sees half an entry and a crash
//! leaves at worst an orphan in `tmp/`. Nothing in the cache is handed to
//! users: installs unpack a verified tarball into the project, so editing
//! an installed skill can never corrupt the cache. (Unpacking a small
//! tarball costs less than copying an unpacked tree would: the files are
//! written once either way, and no second tree is created per package.)
//!
//! Every bucket's name carries a layout version (as uv's `wheels-v6`), so
//! a future change of format starts a fresh bucket instead of misreading
//! an old one.

use sha2::{Digest, Sha256};
use skillpm_core::archive::{self, Format, Limits};
use skillpm_core::bounded;
use skillpm_core::checksum::{Checksum, Verified};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cache {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The versioned bucket names.
const TARBALLS: &str = "tarballs-v1";
/// Buckets earlier versions wrote (unpacked trees, one stamp file per
/// installed skill, index copies as two files); `clean` still removes them. Installs now unpack
/// straight from the verified tarball into the project.
const LEGACY: [&str; 3] = ["trees-v1", "installed-v1", "index-v1"];
const INDEX: &str = "index-v2";
const GIT: &str = "git-v1";
/// Stamps of installed trees, one file per install root (see [`Stamps`]).
const INSTALLED: &str = "installed-v2";
/// Stamps of path dependencies' directories (see [`Cache::path_dep_stamp`]).
const PATHS: &str = "paths-v1";
/// What `skillpm mcp` keeps between starts, one file per project.
const MCP: &str = "mcp-v1";
const TMP: &str = "tmp";
/// The forms a package is stored in (the way `Format::of_package` tells
/// them apart), `likely` first: a caller that knows the package's source
/// (a registry's `.tar.gz`, or the `.tar` of a tree made here) finds it
/// with one look instead of a miss and a look, which was two system calls
/// more for every skill of a restore from the cache.
fn forms(likely: Format) -> [Format; 2] {
    match likely {
        Format::Tar => [Format::Tar, Format::TarGz],
        Format::TarGz | Format::Zip => [Format::TarGz, Format::Tar],
    }
}

/// A stamp is a checksum and a fingerprint; anything longer is not ours.
const STAMP_BYTES: u64 = 256;
/// A root's stamps: one short line per installed skill.
const MAX_STAMPS_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// Holds the cache's cross-process lock until dropped.
pub struct CacheGuard {
    _file: File,
}

impl Cache {
    /// `$XDG_CACHE_HOME/skillpm`, else `~/.cache/skillpm`; on Windows
    /// `%LOCALAPPDATA%\skillpm\cache` ([`UserDirs`](skillpm_core::platform::UserDirs)).
    pub fn default_dir() -> Option<PathBuf> {
        skillpm_core::platform::UserDirs::of_process().cache
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
        let f = crate::fs::lock_file(&p).map_err(io_at(&p))?;
        Ok(CacheGuard { _file: f })
    }

    fn tmp(&self) -> Result<PathBuf, CacheError> {
        let t = self.root.join(TMP);
        std::fs::create_dir_all(&t).map_err(io_at(&t))?;
        Ok(t)
    }

    /// Where the package `c` is stored in `format` (the bytes decide it
    /// when it is stored).
    fn tarball_path(&self, c: &Checksum, format: Format) -> PathBuf {
        let ext = match format {
            Format::Tar => "tar",
            Format::TarGz | Format::Zip => "tar.gz",
        };
        self.root.join(TARBALLS).join(format!("{}.{ext}", c.hex()))
    }

    /// Whether a package is stored under `c`, looked for in the form
    /// `likely` first (see `forms`).
    pub fn has_tarball(&self, c: &Checksum, likely: Format) -> bool {
        forms(likely)
            .iter()
            .any(|&f| self.tarball_path(c, f).is_file())
    }

    /// The cached tarball for `c`, if present and still exactly what `c`
    /// names (the cache sits where other processes can write).
    pub fn verified_tarball(&self, c: &Checksum) -> Option<Verified> {
        self.read_tarball(c, Format::TarGz)
            .and_then(|b| Verified::check(b, c).ok())
    }

    /// The verified cached tarball for `c`, unpacked into a fresh
    /// directory under the cache's `tmp/` (deleted on drop): what an
    /// installed tree is compared with, file by file, when re-packing it
    /// cannot reproduce `c` (a tarball another tool packed).
    pub fn unpack_cached(&self, c: &Checksum) -> Option<tempfile::TempDir> {
        self.unpack(&self.verified_tarball(c)?)
    }

    /// `tarball` unpacked into a temporary directory of the cache, to
    /// compare with an installed tree.
    pub fn unpack(&self, tarball: &Verified) -> Option<tempfile::TempDir> {
        let tmp = self.tmp().ok()?;
        let bytes = tarball.bytes();
        let format = Format::of_package(bytes);
        archive::unpack_to_new_dir_as(format, bytes, None, &tmp, &Limits::default()).ok()
    }

    /// This machine's stamps of the installed trees in `root` (see
    /// `Stamps`).
    pub fn installed_stamps(&self, root: &Path) -> Stamps {
        let file = self.stamp_file(INSTALLED, root);
        let rows = bounded::read_to_string(&file, MAX_STAMPS_BYTES)
            .map(|text| {
                text.lines()
                    .filter_map(|l| {
                        let (name, rest) = l.split_once(' ')?;
                        Some((name.to_string(), rest.to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Stamps {
            file,
            rows,
            dirty: false,
        }
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

    /// Where `skillpm mcp` keeps what spares it reading an unchanged tree
    /// at start-up, for the project at `dir`.
    pub fn mcp_state(&self, dir: &Path) -> PathBuf {
        self.stamp_file(MCP, dir)
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

    /// Reads a cached tarball. The bytes are not trusted: the cache is on
    /// disk where anything may have changed it, so callers verify them
    /// (see `source::verify`).
    pub fn read_tarball(&self, c: &Checksum, likely: Format) -> Option<Vec<u8>> {
        // No bigger than any package a source may hand over in that form.
        let limits = Limits::default();
        forms(likely)
            .iter()
            .find_map(|&f| bounded::read(&self.tarball_path(c, f), limits.max_input(f)).ok())
    }

    /// Stores a verified tarball under its checksum.
    pub fn store_tarball(&self, tarball: &Verified) -> Result<(), CacheError> {
        let (c, bytes) = (tarball.checksum(), tarball.bytes());
        let dest = self.tarball_path(c, Format::of_package(bytes));
        if dest.is_file() {
            return Ok(());
        }
        // Both directories exist after the first store of a cache's life:
        // they are created when missing, not checked on every store.
        let tmp_dir = self.root.join(TMP);
        let mut tmp = match tempfile::NamedTempFile::new_in(&tmp_dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tempfile::NamedTempFile::new_in(self.tmp()?)
            }
            made => made,
        }
        .map_err(io_at(&tmp_dir))?;
        io::Write::write_all(&mut tmp, bytes).map_err(io_at(&dest))?;
        let dest_err = |e: io::Error| CacheError::Io {
            path: dest.clone(),
            source: e,
        };
        match tmp.persist(&dest) {
            Err(e) if e.error.kind() == io::ErrorKind::NotFound => {
                let dir = self.root.join(TARBALLS);
                std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
                e.file.persist(&dest).map_err(|e| dest_err(e.error))?;
            }
            done => {
                done.map_err(|e| dest_err(e.error))?;
            }
        }
        Ok(())
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
        for sub in [TARBALLS, INDEX, GIT, INSTALLED, PATHS, MCP, TMP]
            .into_iter()
            .chain(LEGACY)
        {
            let p = self.root.join(sub);
            match std::fs::remove_dir_all(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_at(&p)(e)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// This machine's stamps of the installed trees in one root: for each
/// skill, the checksum it was installed from and the tree's fingerprint
/// when it was last known to hold exactly that package. Kept in the cache
/// rather than in the trees, so an installed tree is the same bytes on
/// every machine and a committed one never churns; one file per root, so
/// a no-op run reads one file, not one per skill. Best effort throughout:
/// a missing or unreadable stamp only means a re-hash.
#[derive(Debug, Clone)]
pub struct Stamps {
    file: PathBuf,
    /// Skill name → `checksum fingerprint`.
    rows: std::collections::BTreeMap<String, String>,
    dirty: bool,
}

impl Stamps {
    /// The fingerprint stamped for `name` holding `c`.
    pub fn get(&self, name: &str, c: &Checksum) -> Option<&str> {
        let (checksum, fingerprint) = self.rows.get(name)?.split_once(' ')?;
        (checksum == c.to_string()).then_some(fingerprint)
    }

    /// Records `fingerprint` as the known-good state of `name` holding `c`.
    pub fn set(&mut self, name: &str, c: &Checksum, fingerprint: &str) {
        let row = format!("{c} {fingerprint}");
        if self.rows.get(name) != Some(&row) {
            self.rows.insert(name.to_string(), row);
            self.dirty = true;
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.dirty |= self.rows.remove(name).is_some();
    }

    /// Writes the stamps back if they changed (temp file + rename).
    pub fn save(&self) {
        if !self.dirty {
            return;
        }
        let mut text = String::new();
        for (name, row) in &self.rows {
            text.push_str(name);
            text.push(' ');
            text.push_str(row);
            text.push('\n');
        }
        if let Some(parent) = self.file.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = crate::fs::replace_file(&self.file, text.as_bytes());
    }
}

/// A filesystem-safe key for a URL (which may hold characters a path cannot).
pub fn short_hash(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..12])
}
