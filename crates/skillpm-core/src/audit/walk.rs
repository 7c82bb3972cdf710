//! Walking a skill directory: every entry, without following symlinks, and
//! bounded, since the tree is untrusted (a registry scans what anyone
//! uploads; a client scans what a git repository holds).

use super::source::scan_bytes;
use super::{rules, Context, Finding, ScanError};
use crate::archive::MemEntry;
use std::path::{Component, Path, PathBuf};

/// Files larger than this are not read; they get a note instead.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The walk stops after this many entries (files, directories and links
/// together, so a tree of empty directories is bounded too).
pub const MAX_FILES: usize = 10_000;

pub(super) fn scan(root: &Path, cx: &Context) -> Result<Vec<Finding>, ScanError> {
    // The root is what the caller chose, so it may be reached through a
    // symlink; nothing below it is followed.
    let meta = std::fs::metadata(root).map_err(|source| ScanError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(ScanError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    let top = read_dir_sorted(root).map_err(|source| ScanError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let mut findings = Vec::new();
    let mut seen = 0usize;
    // Depth-first with an explicit stack: a deep tree cannot overflow the
    // call stack. Each level is pushed reversed so files come out in name
    // order (the result is sorted anyway; this keeps which files fall
    // under the limit deterministic too).
    let mut stack: Vec<(PathBuf, String)> = Vec::new();
    push_level(&mut stack, top, "");
    while let Some((path, rel)) = stack.pop() {
        seen += 1;
        if seen > MAX_FILES {
            findings.push(stopped_at(&rel));
            break;
        }
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                findings.push(not_scanned(&rel, &e.to_string()));
                continue;
            }
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            symlink(&path, &rel, &mut findings);
        } else if ft.is_dir() {
            if is_git_dir(&rel) {
                continue;
            }
            match read_dir_sorted(&path) {
                Ok(entries) => push_level(&mut stack, entries, &rel),
                Err(e) => findings.push(not_scanned(&rel, &e.to_string())),
            }
        } else if ft.is_file() {
            if meta.len() > MAX_FILE_BYTES {
                findings.push(too_large(&rel, meta.len()));
                continue;
            }
            match read_capped(&path) {
                Ok(Some(bytes)) => findings.extend(scan_bytes(&rel, &bytes, cx)),
                // It grew past the limit between the stat and the read.
                Ok(None) => findings.push(too_large(&rel, MAX_FILE_BYTES + 1)),
                Err(e) => findings.push(not_scanned(&rel, &e.to_string())),
            }
        } else {
            findings.push(not_scanned(
                &rel,
                "not a regular file (a device, FIFO or socket)",
            ));
        }
    }
    Ok(findings)
}

/// The same scan over a tree held in memory, as the unpacker kept what it
/// staged: the files' bytes are scanned where they are, with nothing read
/// again. Such a tree holds only directories and regular files (the
/// unpacker refuses anything else), in the archive's order, which is the
/// order the entry limit counts in.
pub(super) fn scan_memory(entries: &[MemEntry], cx: &Context) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if i >= MAX_FILES {
            findings.push(stopped_at(entry.path()));
            break;
        }
        let MemEntry::File { path, data, .. } = entry else {
            continue;
        };
        // Under a `.git` directory, which the walk does not enter.
        if path.split('/').rev().skip(1).any(|dir| dir == ".git") {
            continue;
        }
        if data.len() as u64 > MAX_FILE_BYTES {
            findings.push(too_large(path, data.len() as u64));
            continue;
        }
        findings.extend(scan_bytes(path, data, cx));
    }
    findings
}

/// Git's own data is not part of the skill and no agent reads it.
fn is_git_dir(rel: &str) -> bool {
    rel == ".git" || rel.ends_with("/.git")
}

fn stopped_at(rel: &str) -> Finding {
    Finding::whole_file(
        &rules::SCAN_LIMIT,
        rel,
        format!(
            "more than {MAX_FILES} entries; the scan stopped here and the rest was not checked"
        ),
    )
}

fn push_level(stack: &mut Vec<(PathBuf, String)>, entries: Vec<(PathBuf, String)>, parent: &str) {
    for (path, name) in entries.into_iter().rev() {
        let rel = if parent.is_empty() {
            name
        } else {
            format!("{parent}/{name}")
        };
        stack.push((path, rel));
    }
}

/// The entries of `dir` as (path, name), sorted by name. A name that is
/// not UTF-8 is shown lossily; it is still read through its real path.
fn read_dir_sorted(dir: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((entry.path(), name));
    }
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(entries)
}

/// The file's bytes, or `None` past [`MAX_FILE_BYTES`]; the cap holds
/// while reading, and a path swapped for a FIFO or device is refused
/// rather than blocked on ([`crate::bounded::open_regular`]).
fn read_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::bounded::open_regular(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_FILE_BYTES).then_some(bytes))
}

fn too_large(rel: &str, size: u64) -> Finding {
    Finding::whole_file(
        &rules::FILE_TOO_LARGE,
        rel,
        format!("{size} bytes, over the {MAX_FILE_BYTES}-byte scan limit; not scanned"),
    )
}

fn not_scanned(rel: &str, why: &str) -> Finding {
    Finding::whole_file(
        &rules::FILE_NOT_SCANNED,
        rel,
        format!("could not be scanned: {why}"),
    )
}

/// Reports a symlink whose target leaves the skill directory: absolute, or
/// climbing above the root with `..`. Worked out from the link's text
/// alone, never by following it (the target may not exist here, and may
/// on the machine that installs it).
fn symlink(path: &Path, rel: &str, findings: &mut Vec<Finding>) {
    let target = match std::fs::read_link(path) {
        Ok(t) => t,
        Err(e) => {
            findings.push(not_scanned(rel, &e.to_string()));
            return;
        }
    };
    if escapes(rel, &target) {
        let shown = crate::text::sanitize(&target.to_string_lossy()).into_owned();
        findings.push(Finding {
            rule: rules::SYMLINK_ESCAPE.id,
            severity: rules::SYMLINK_ESCAPE.severity,
            file: rel.to_string(),
            line: 1,
            excerpt: super::source::cut_chars(&format!("{rel} -> {shown}"), 160),
            message: format!(
                "symlink to {:?}, outside the skill directory",
                super::source::cut_chars(&shown, 120)
            ),
        });
    }
}

/// Whether a link at `rel` (relative to the root) pointing at `target`
/// resolves, lexically, outside the root.
pub(super) fn escapes(rel: &str, target: &Path) -> bool {
    // The directories above the link, as a stack of names.
    let mut depth: usize = rel.split('/').count().saturating_sub(1);
    for c in target.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return true,
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return true;
                }
                depth -= 1;
            }
            Component::Normal(_) => depth += 1,
        }
    }
    false
}
