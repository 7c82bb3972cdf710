//! File-by-file comparison of two trees, naming each difference: how
//! `verify` reports what changed, and how an installed tree is checked
//! against the verified cached one when re-packing cannot reproduce the
//! lock's checksum (a tarball packed by another tool).

use skillpm_core::checksum::Checksum;
use std::collections::BTreeMap;
use std::path::Path;

/// Files that differ between the pristine tree and the installed one:
/// content, the executable bit, or kind (a symlink is never followed).
/// Extra top-level entries named in `skip` (the installer's marker) are
/// not differences.
pub fn diff_trees(pristine: &Path, installed: &Path, skip: &[&str]) -> Vec<String> {
    let a = entries(pristine);
    let b = entries(installed);
    let mut out = Vec::new();
    for (rel, e) in &a {
        match b.get(rel) {
            None => out.push(format!("missing file {rel}")),
            Some(Entry::File { hash, exec }) if matches!(e, Entry::File { hash: h, .. } if h == hash) => {
                if matches!(e, Entry::File { exec: x, .. } if x != exec) {
                    out.push(format!("changed executable bit of {rel}"));
                }
            }
            Some(Entry::Other) => out.push(format!("{rel} is no longer a regular file")),
            Some(_) => out.push(format!("modified file {rel}")),
        }
    }
    for rel in b.keys() {
        if !a.contains_key(rel) && !skip.contains(&rel.as_str()) {
            out.push(format!("added file {rel}"));
        }
    }
    out
}

/// What `verify` compares per path.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File {
        hash: Checksum,
        exec: bool,
    },
    /// A symlink, device, FIFO, ...: never opened, so a link to `/dev/zero`
    /// costs nothing.
    Other,
}

fn entries(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push((e.path(), child));
            } else if meta.is_file() {
                let hash = std::fs::File::open(e.path())
                    .and_then(Checksum::of_reader)
                    .unwrap_or_else(|_| Checksum::of_bytes(b""));
                out.insert(
                    child,
                    Entry::File {
                        hash,
                        exec: skillpm_core::archive::is_executable(&e.path(), &meta),
                    },
                );
            } else {
                out.insert(child, Entry::Other);
            }
        }
    }
    out
}
