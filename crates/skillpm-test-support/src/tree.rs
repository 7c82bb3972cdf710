//! Directory snapshots, for asserting that a command changed nothing on
//! disk or left nothing behind.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Every path under a root (relative) with its content; see [`snapshot`].
pub type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

/// Every path under `root` (relative, sorted) with its kind and content,
/// skipping paths for which `skip` is true. Symlinks are recorded, not
/// followed.
pub fn snapshot(root: &Path, skip: &dyn Fn(&Path) -> bool) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).expect("under root").to_path_buf();
            if skip(&rel) {
                continue;
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap_or_default();
                out.insert(rel, format!("symlink -> {}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(rel, b"dir".to_vec());
                stack.push(p);
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            } else {
                out.insert(rel, b"special".to_vec());
            }
        }
    }
    out
}

/// A [`snapshot`] filter: true for each of the relative paths `prefixes`
/// and everything under them.
pub fn under<'a>(prefixes: &'a [&'a str]) -> impl Fn(&Path) -> bool + 'a {
    move |rel| prefixes.iter().any(|p| rel.starts_with(p))
}

/// What differs between two snapshots, as `added [..] removed [..]
/// changed [..]`; `None` when they are equal.
pub fn changes(before: &Snapshot, after: &Snapshot) -> Option<String> {
    if before == after {
        return None;
    }
    let added: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    Some(format!(
        "added {added:?} removed {removed:?} changed {changed:?}"
    ))
}

/// The names of the entries in `dir`, sorted.
pub fn entries(dir: &Path) -> std::io::Result<Vec<OsString>> {
    let mut names: Vec<OsString> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    Ok(names)
}
