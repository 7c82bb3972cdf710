//! Local directories: packed like any other source, so a path dependency
//! gets a checksum in the lock and is installed as a copy, never a link.
//!
//! Packing reads and hashes every file, so a run first compares the
//! directory's fingerprint (paths, sizes, modes, mtimes, ctimes, inodes;
//! `fs::fingerprint`) with the one recorded in the cache when it was last
//! packed to the locked checksum: only a directory whose fingerprint
//! changed is packed again.

use super::{identify, Package, Request, Resolution, Source, SourceError};
use crate::cache::Cache;
use crate::fs::fingerprint;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use skillpm_core::archive;
use skillpm_core::checksum::{Checksum, Verified};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Path dependencies, relative to the project directory. Each directory is
/// packed at most once per run.
pub struct PathSource {
    project_dir: PathBuf,
    cache: Cache,
    packed: Mutex<HashMap<String, Resolution>>,
}

impl PathSource {
    pub fn new(project_dir: PathBuf, cache: Cache) -> Self {
        PathSource {
            project_dir,
            cache,
            packed: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the directory at `rel` still packs to `checksum`, judged by
    /// its fingerprint alone (no file is read): true only when it is the
    /// one recorded when the directory was last packed to `checksum`.
    pub fn unchanged(&self, rel: &str, checksum: &Checksum) -> bool {
        let dir = self.project_dir.join(rel);
        match fingerprint::of_tree(&dir, &[]) {
            Some(now) => self
                .cache
                .path_dep_stamp(&dir, checksum)
                .is_some_and(|f| f == now),
            None => false,
        }
    }

    /// Packs the skill at `rel` (relative to the project directory).
    fn pack(&self, rel: &str) -> Result<Resolution, SourceError> {
        if let Some(r) = self.memo().get(rel) {
            return Ok(r.clone());
        }
        let dir = self.project_dir.join(rel);
        if !dir.is_dir() {
            return Err(SourceError::BadSkill {
                dir: rel.to_string(),
                message: "directory does not exist".to_string(),
            });
        }
        // Taken before packing: a change made while packing makes the
        // next run pack again rather than trust this checksum.
        let before = fingerprint::of_tree(&dir, &[]);
        let (name, version) = identify(&dir, rel)?;
        let tree = Verified::of(archive::tar_dir(&dir)?);
        let checksum = *tree.checksum();
        if let Some(f) = before {
            self.cache.stamp_path_dep(&dir, &checksum, &f);
        }
        let r = Resolution {
            locked: LockedSkill {
                name,
                version,
                source: LockedSource::Path {
                    path: rel.to_string(),
                },
                checksum,
                path: None,
                tree: None,
                dependencies: Vec::new(),
                signed_by: None,
                plugin: None,
            },
            packed: Some(tree),
        };
        self.memo().insert(rel.to_string(), r.clone());
        Ok(r)
    }

    /// `old`'s lock entry and the bytes it names, when `r` (this run's
    /// packing of `old`'s directory) is the same tree in the form locks
    /// held before trees were locked by their tar: the entry is kept, so
    /// the lock stays byte-identical while the tree does not change, and
    /// the directory is stamped for it as for a checksum it packed to.
    pub fn as_locked(&self, old: &LockedSkill, r: &Resolution) -> Option<Resolution> {
        let (LockedSource::Path { path }, LockedSource::Path { path: now }) =
            (&old.source, &r.locked.source)
        else {
            return None;
        };
        let same_package = path == now
            && old.name == r.locked.name
            && old.version == r.locked.version
            && old.checksum != r.locked.checksum;
        if !same_package {
            return None;
        }
        let v = archive::verify_tree(r.packed.clone()?, &old.checksum).ok()?;
        debug_assert_eq!(*v.checksum(), old.checksum);
        let dir = self.project_dir.join(path);
        // The fingerprint `pack` took before it read the directory.
        if let Some(f) = self.cache.path_dep_stamp(&dir, &r.locked.checksum) {
            self.cache.stamp_path_dep(&dir, &old.checksum, &f);
        }
        Some(Resolution {
            locked: old.clone(),
            packed: Some(v),
        })
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, HashMap<String, Resolution>> {
        self.packed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Source for PathSource {
    async fn resolve(&self, req: Request<'_>) -> Result<Resolution, SourceError> {
        let Dependency::Path { path } = req.dep else {
            unreachable!("PathSource is only handed path dependencies")
        };
        self.pack(path)
    }

    /// The directory packed now; [`super::verify`] then refuses it if it no
    /// longer matches the lock.
    async fn fetch(&self, locked: &LockedSkill) -> Result<Package, SourceError> {
        let LockedSource::Path { path } = &locked.source else {
            unreachable!("PathSource is only handed path packages")
        };
        let changed = || SourceError::PathChanged {
            name: locked.name.to_string(),
            path: path.clone(),
        };
        let tree = self.pack(path)?.packed.ok_or_else(changed)?;
        match archive::verify_tree(tree, &locked.checksum) {
            Ok(v) => Ok(Package::Made(v)),
            Err(_) => Err(changed()),
        }
    }
}
