//! Local directories: packed like any other source, so a path dependency
//! gets a checksum in the lock and is installed as a copy, never a link.

use super::{identify, Request, Resolution, Source, SourceError};
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::manifest::Dependency;
use skillpm_core::archive;
use skillpm_core::checksum::Checksum;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Path dependencies, relative to the project directory. Each directory is
/// packed at most once per run.
pub struct PathSource {
    project_dir: PathBuf,
    packed: Mutex<HashMap<String, Resolution>>,
}

impl PathSource {
    pub fn new(project_dir: PathBuf) -> Self {
        PathSource {
            project_dir,
            packed: Mutex::new(HashMap::new()),
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
        let (name, version) = identify(&dir, rel)?;
        let bytes = archive::pack_dir(&dir)?;
        let r = Resolution {
            locked: LockedSkill {
                name,
                version,
                source: LockedSource::Path {
                    path: rel.to_string(),
                },
                checksum: Checksum::of_bytes(&bytes),
                path: None,
            },
            packed: Some(bytes),
        };
        self.memo().insert(rel.to_string(), r.clone());
        Ok(r)
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
    async fn fetch(&self, locked: &LockedSkill) -> Result<Vec<u8>, SourceError> {
        let LockedSource::Path { path } = &locked.source else {
            unreachable!("PathSource is only handed path packages")
        };
        let r = self.pack(path)?;
        if r.locked.checksum != locked.checksum {
            return Err(SourceError::PathChanged {
                name: locked.name.to_string(),
                path: path.clone(),
            });
        }
        Ok(r.packed.unwrap_or_default())
    }
}
