//! What a file's metadata says about its content, so work done on its bytes
//! (a parse, a digest) can be kept between runs and trusted only while the
//! file is as it was: size, modification and change times, and on Unix
//! the inode and device (a file replaced by another has a new one).
//!
//! A file changed twice within one tick of its file system's clock (a
//! second on some, two on FAT) could keep its fingerprint, as git's
//! "racily clean" entries can. So a fingerprint is [`settled`] only once
//! its times are [`SETTLE`] old, and work on a file changed more recently
//! is not kept.
//!
//! [`settled`]: Fingerprint::settled

use serde::{Deserialize, Serialize};
use std::fs::Metadata;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How old a file's last change must be before its fingerprint is trusted.
pub const SETTLE: Duration = Duration::from_secs(3);

/// A file's identity and last change, from its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    len: u64,
    /// Seconds and nanoseconds since the epoch.
    modified: (i64, u32),
    /// The inode change time on Unix (also moved by a rename or `touch`
    /// that sets an old modification time); the creation time elsewhere.
    changed: (i64, u32),
    ino: u64,
    dev: u64,
}

impl Fingerprint {
    pub fn of(meta: &Metadata) -> Fingerprint {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Fingerprint {
                len: meta.len(),
                modified: (meta.mtime(), meta.mtime_nsec().clamp(0, 999_999_999) as u32),
                changed: (meta.ctime(), meta.ctime_nsec().clamp(0, 999_999_999) as u32),
                ino: meta.ino(),
                dev: meta.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            Fingerprint {
                len: meta.len(),
                modified: since_epoch(meta.modified().ok()),
                changed: since_epoch(meta.created().ok()),
                ino: 0,
                dev: 0,
            }
        }
    }

    /// Whether both times are at least [`SETTLE`] before `now`: a change
    /// after this fingerprint was taken then moves a time past it. A time
    /// in the future (a clock set back) is never settled.
    pub fn settled(&self, now: SystemTime) -> bool {
        let now = since_epoch(Some(now));
        let latest = self.modified.max(self.changed);
        let settle = SETTLE.as_secs() as i64;
        (latest.0.saturating_add(settle), latest.1) <= now
    }
}

/// `(seconds, nanoseconds)` since the epoch; before it counts as the epoch.
fn since_epoch(t: Option<SystemTime>) -> (i64, u32) {
    t.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                d.subsec_nanos(),
            )
        })
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_of_the_same_length_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "aaaa").unwrap();
        let before = Fingerprint::of(&std::fs::metadata(&path).unwrap());
        assert_eq!(before, Fingerprint::of(&std::fs::metadata(&path).unwrap()));
        // Another file of the same length put in its place.
        let other = dir.path().join("g");
        std::fs::write(&other, "bbbb").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let after = Fingerprint::of(&std::fs::metadata(&path).unwrap());
        assert_ne!(before, after);
    }

    #[test]
    fn only_old_changes_are_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let fp = Fingerprint::of(&std::fs::metadata(&path).unwrap());
        let now = SystemTime::now();
        assert!(!fp.settled(now), "just written");
        assert!(fp.settled(now + SETTLE + Duration::from_secs(1)));
        assert!(!fp.settled(UNIX_EPOCH), "a clock set back");
    }
}
