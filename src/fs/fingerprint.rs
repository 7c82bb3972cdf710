//! A cheap fingerprint of a tree's files: their paths, sizes, modes,
//! modification and change times and inodes, hashed together. It lets a
//! no-op run trust an installed or cached tree after only `stat` calls; when
//! it differs, the tree is re-hashed against the lock's checksum, which is
//! the truth. (`ctime` cannot be set from user space, so content edited and
//! then given back its old `mtime` still changes the fingerprint.)

use sha2::{Digest, Sha256};
use std::path::Path;

/// The fingerprint of every file and directory below `dir`, except the
/// top-level entries named in `skip` (the installer's marker). `None` when
/// the tree cannot be read, which callers treat as "changed".
pub fn of_tree(dir: &Path, skip: &[&str]) -> Option<String> {
    let mut rows = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((at, rel)) = stack.pop() {
        for e in std::fs::read_dir(&at).ok()? {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            if rel.is_empty() && skip.contains(&name.as_str()) {
                continue;
            }
            let child = format!("{rel}/{name}");
            // Not following symlinks: a link is a change, never a path out.
            // (`DirEntry::metadata` stats relative to the open directory,
            // without walking the whole path again.)
            let meta = e.metadata().ok()?;
            rows.push(row(&child, &meta));
            if meta.is_dir() {
                stack.push((e.path(), child));
            }
        }
    }
    Some(digest(rows))
}

/// [`of_tree`] of a directory known to hold exactly `paths` (relative,
/// `/`-separated: what the unpacker just created in a fresh directory),
/// by a `stat` of each instead of a walk. The same rows, so the same
/// fingerprint a later [`of_tree`] computes while nothing changed.
pub fn of_paths(dir: &Path, paths: &[&str]) -> Option<String> {
    let mut rows = Vec::with_capacity(paths.len());
    for rel in paths {
        let meta = std::fs::symlink_metadata(dir.join(rel)).ok()?;
        rows.push(row(&format!("/{rel}"), &meta));
    }
    Some(digest(rows))
}

/// One entry's row: its `/`-rooted path and its `stat` line.
fn row(path: &str, meta: &std::fs::Metadata) -> String {
    format!("{path}\0{}", stat_line(meta))
}

fn digest(mut rows: Vec<String>) -> String {
    rows.sort_unstable();
    let mut h = Sha256::new();
    for r in &rows {
        h.update(r.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

#[cfg(unix)]
fn stat_line(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!(
        "{:o} {} {}.{} {}.{} {}",
        m.mode(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.ino()
    )
}

#[cfg(not(unix))]
fn stat_line(m: &std::fs::Metadata) -> String {
    format!("{:?} {} {:?}", m.file_type(), m.len(), m.modified().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_with_content_mode_and_files_but_not_skipped_ones() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), "1").unwrap();
        let before = of_tree(d.path(), &["m"]).unwrap();
        std::fs::write(d.path().join("m"), "marker").unwrap();
        assert_eq!(of_tree(d.path(), &["m"]).unwrap(), before);
        std::fs::write(d.path().join("a"), "2").unwrap();
        assert_ne!(of_tree(d.path(), &["m"]).unwrap(), before);
        let now = of_tree(d.path(), &["m"]).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = d.path().join("a");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_ne!(of_tree(d.path(), &["m"]).unwrap(), now);
        }
    }

    /// The unpacker's own entries give the walk's fingerprint, nested
    /// directories, empty ones and executables included; a list that
    /// misses a path does not.
    #[test]
    fn the_unpackers_paths_give_the_walks_fingerprint() {
        use skillpm_core::archive::{pack_dir, unpack_to_new_dir_kept, Limits};
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("scripts/lib")).unwrap();
        std::fs::create_dir_all(src.path().join("assets/empty")).unwrap();
        std::fs::write(src.path().join("SKILL.md"), "---\nname: a\n---\n").unwrap();
        std::fs::write(src.path().join("scripts/lib/x.sh"), "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = src.path().join("scripts/lib/x.sh");
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let tarball = pack_dir(src.path()).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let (dir, kept) =
            unpack_to_new_dir_kept(&tarball, parent.path(), &Limits::default()).unwrap();
        let paths: Vec<&str> = kept.iter().map(|e| e.path()).collect();
        assert_eq!(paths.len(), 6, "{paths:?}");
        let walked = of_tree(dir.path(), &[]).unwrap();
        assert_eq!(of_paths(dir.path(), &paths).unwrap(), walked);
        assert_ne!(of_paths(dir.path(), &paths[1..]).unwrap(), walked);
    }
}
