//! Content-addressed tarball storage: `blobs/<sha256 hex>`.
//!
//! A blob is written to `tmp/`, fsynced and renamed into place before the
//! database row that points at it commits, so after a crash every indexed
//! version has its bytes (at worst an unreferenced blob is left behind).

use skillpm::checksum::Checksum;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
    tmp: PathBuf,
}

impl Blobs {
    pub fn open(data: &Path) -> std::io::Result<Self> {
        let dir = data.join("blobs");
        let tmp = data.join("tmp");
        std::fs::create_dir_all(&dir)?;
        std::fs::create_dir_all(&tmp)?;
        Ok(Blobs { dir, tmp })
    }

    /// Scratch space on the same file system as the blobs, so renames
    /// into place are atomic.
    pub fn tmp_dir(&self) -> &Path {
        &self.tmp
    }

    /// Removes leftovers of uploads that a crash interrupted.
    pub fn clean_tmp(&self) -> std::io::Result<()> {
        for entry in std::fs::read_dir(&self.tmp)? {
            let path = entry?.path();
            let res = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            if let Err(e) = res {
                eprintln!("skillpm-registry: cannot remove {}: {e}", path.display());
            }
        }
        Ok(())
    }

    pub fn path(&self, sum: &Checksum) -> PathBuf {
        self.dir.join(sum.hex())
    }

    /// Stores `bytes` under `sum` durably. Blocking.
    pub fn store(&self, sum: &Checksum, bytes: &[u8]) -> std::io::Result<()> {
        let dest = self.path(sum);
        if dest.is_file() {
            // Same name, same content: only ever renamed into place whole.
            return Ok(());
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".blob-")
            .tempfile_in(&self.tmp)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&dest).map_err(|e| e.error)?;
        std::fs::File::open(&self.dir)?.sync_all()
    }
}
