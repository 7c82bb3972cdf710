//! What the server keeps between starts, so a start over a tree that did
//! not change reads no file: the catalogue's `SKILL.md` parses
//! ([`Parses`]) and each served file's digest, size and kind ([`Known`]),
//! each by the fingerprint the file had when it was read
//! ([`skillpm_core::fingerprint`]). One file per project in skillpm's
//! cache (`mcp-v1/`), written after a start or reload once the server
//! answers, and read at the next start.
//!
//! A file whose fingerprint changed is read again; one changed within a
//! clock tick of its read is not kept. A kept file's bytes are read when a
//! client asks for them and served only if they still have the kept digest
//! (`ServedFile::bytes`), so the manifest and what a client reads agree
//! whatever the cache says. The cache is trusted like the skill roots it
//! describes: the frontmatter a kept parse gives is served as the skill's.
//! Anything wrong with it (unreadable, another layout, too large) makes a
//! start read everything, as the first one did.

use super::resources::Snapshot;
use serde::{Deserialize, Serialize};
use skillpm_core::checksum::Checksum;
use skillpm_core::fingerprint::Fingerprint;
use skillpm_engine::parallel::Workers;
use skillpm_engine::parses::Parses;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The layout of the file; another is read as nothing kept.
const LAYOUT: u32 = 1;
/// The largest file read back: far above what the largest trees need.
const MAX_KEPT_BYTES: u64 = 1 << 30;

/// Everything kept for one project.
#[derive(Debug, Serialize, Deserialize)]
pub struct Kept {
    layout: u32,
    /// The skillpm that wrote it: a parse is what that version's parser
    /// made of the file, so another version parses again.
    version: String,
    pub parses: Parses,
    pub files: Known,
}

/// Served files by real path, with what their bytes gave when read.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Known(HashMap<PathBuf, KnownFile>);

/// What a served file's bytes gave, and the file's fingerprint then.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnownFile {
    fingerprint: Fingerprint,
    /// Of the bytes served (escaped where they must be).
    pub digest: Checksum,
    pub size: u64,
    pub text: bool,
}

impl Known {
    /// What `path` gave when it had `fingerprint`.
    pub fn get(&self, path: &Path, fingerprint: Fingerprint) -> Option<&KnownFile> {
        self.0.get(path).filter(|k| k.fingerprint == fingerprint)
    }

    /// The files `snap` serves whose fingerprint may be trusted.
    pub fn of(snap: &Snapshot) -> Known {
        let files = snap.skills.iter().flat_map(|s| &s.files);
        Known(
            files
                .filter_map(|f| {
                    let known = KnownFile {
                        fingerprint: f.fingerprint?,
                        digest: f.digest,
                        size: f.size,
                        text: f.text,
                    };
                    Some((f.path.clone(), known))
                })
                .collect(),
        )
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            layout: LAYOUT,
            version: env!("CARGO_PKG_VERSION").to_string(),
            parses: Parses::default(),
            files: Known::default(),
        }
    }
}

impl Kept {
    /// What was kept at `path`; nothing when there is none or it cannot
    /// be read as this layout.
    pub fn load(path: &Path) -> Kept {
        skillpm_core::bounded::read(path, MAX_KEPT_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Kept>(&bytes).ok())
            .filter(|k| k.layout == LAYOUT && k.version == env!("CARGO_PKG_VERSION"))
            .unwrap_or_default()
    }

    /// Writes it at `path` whole: staged beside it, then renamed, so a
    /// reader never sees half of it. A save cut short (the server killed
    /// mid-write) leaves its staging file, named for the project; the next
    /// save removes it.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(std::io::Error::other("no file name"));
        };
        std::fs::create_dir_all(dir)?;
        let prefix = format!(".{}.", name.to_string_lossy());
        crate::fs::sweep_staged(dir, &prefix);
        let bytes = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        crate::fs::replace_file_staged(path, &bytes, &prefix)
    }
}

/// What is kept, and the file it is kept in (none without a cache
/// directory).
#[derive(Debug)]
pub struct Store {
    kept: Kept,
    /// The kept file being read on the worker pool, while discovery
    /// walks the roots, rather than before it (BENCHMARKS.md,
    /// `mcp_startup.py`). [`Store::kept`] takes it.
    loading: Option<Receiver<Kept>>,
    path: Option<PathBuf>,
    saves: Arc<Saves>,
}

/// Whether saves may start, and whether one is owed or under way: the
/// server's end waits for it ([`Closer::close`]).
#[derive(Debug, Default)]
struct Saves {
    state: Mutex<SaveState>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct SaveState {
    closed: bool,
    owed: bool,
}

/// Ends saving: see [`Closer::close`].
pub struct Closer(Arc<Saves>);

impl Store {
    /// What was kept at `path`, read on `workers` from now on.
    pub fn open(path: Option<PathBuf>, workers: &Workers) -> Store {
        let loading = path.clone().map(|path| {
            let (tx, rx) = channel();
            workers.spawn(move || {
                let _ = tx.send(Kept::load(&path));
            });
            rx
        });
        Store {
            kept: Kept::default(),
            loading,
            path,
            saves: Arc::default(),
        }
    }

    /// What is kept, once read.
    pub fn kept(&mut self) -> &mut Kept {
        if let Some(rx) = self.loading.take() {
            self.kept = rx.recv().unwrap_or_default();
        }
        &mut self.kept
    }

    /// Whether the last build read anything (`read` files besides the
    /// parses it made), so what is kept should be saved.
    fn changed(&self, read: usize) -> bool {
        self.path.is_some() && (read > 0 || self.kept.parses.parsed > 0)
    }

    /// Notes that a save is owed for a build that `read` files: the
    /// server's end waits for it even if it has not started yet.
    pub fn owe(&self, read: usize) {
        if self.changed(read) {
            self.saves.lock().owed = true;
        }
    }

    /// Writes what is kept if the last build read anything, unless the
    /// server is ending. A failure costs the next start its speed only,
    /// so it is logged and serving goes on.
    pub fn save_after(&self, read: usize, log: fn(&str)) {
        let mut state = self.saves.lock();
        if let (Some(path), false, true) = (&self.path, state.closed, self.changed(read)) {
            if let Err(e) = self.kept.save(path) {
                log(&format!(
                    "cannot keep the start-up cache {}: {e}",
                    path.display()
                ));
            }
        }
        state.owed = false;
        self.saves.done.notify_all();
    }

    pub fn closer(&self) -> Closer {
        Closer(self.saves.clone())
    }
}

impl Saves {
    fn lock(&self) -> std::sync::MutexGuard<'_, SaveState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Closer {
    /// Waits for a save owed or under way, and lets no other start: the
    /// process ends next, and a save cut short would leave its temporary
    /// file behind (and the next start would read everything again).
    pub fn close(self) {
        let mut state = self.0.lock();
        while state.owed {
            state = self
                .0
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.closed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a save wrote loads back; a staging file a killed save left
    /// behind is removed by the next save; and a file of another version
    /// is read as nothing kept.
    #[test]
    fn saves_whole_and_clears_what_a_cut_save_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-v1").join("0123abcd");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let left = path.parent().unwrap().join(".0123abcd.Xy12");
        std::fs::write(&left, "{\"layout\": 1, \"half").unwrap();
        let other = path.parent().unwrap().join(".ffff.Zz99");
        std::fs::write(&other, "another project's").unwrap();
        let file = KnownFile {
            fingerprint: Fingerprint::of(&std::fs::metadata(&other).unwrap()),
            digest: Checksum::of_bytes(b"x"),
            size: 1,
            text: true,
        };
        let kept = Kept {
            files: Known(HashMap::from([(other.clone(), file)])),
            ..Kept::default()
        };
        kept.save(&path).unwrap();
        assert!(!left.exists(), "the cut save's file is gone");
        assert!(other.exists(), "another project's is not touched");
        assert_eq!(Kept::load(&path).files.len(), 1);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace(env!("CARGO_PKG_VERSION"), "0.0.0-other"),
        )
        .unwrap();
        assert!(Kept::load(&path).files.is_empty(), "another version's");
    }
}
