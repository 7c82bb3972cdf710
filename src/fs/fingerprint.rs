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
            rows.push(format!("{child}\0{}", stat_line(&meta)));
            if meta.is_dir() {
                stack.push((e.path(), child));
            }
        }
    }
    rows.sort_unstable();
    let mut h = Sha256::new();
    for r in &rows {
        h.update(r.as_bytes());
        h.update(b"\n");
    }
    Some(hex::encode(h.finalize()))
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
}
