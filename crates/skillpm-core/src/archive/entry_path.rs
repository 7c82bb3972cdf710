//! Validating archive entry paths, shared by packing (refuse what unpack
//! would refuse) and unpacking (refuse anything unsafe or unportable).

use super::{UnpackError, MAX_DEPTH};
use crate::platform::Platform;

/// Why an entry path is not acceptable.
#[derive(Debug)]
pub(super) enum PathProblem {
    Absolute,
    Escapes,
    Invalid(&'static str),
    TooLong { len: usize, limit: usize },
    TooDeep { depth: usize, limit: usize },
}

impl PathProblem {
    pub(super) fn into_unpack_error(self, path: String) -> UnpackError {
        match self {
            PathProblem::Absolute => UnpackError::AbsolutePath { path },
            PathProblem::Escapes => UnpackError::EscapesPackage { path },
            PathProblem::Invalid(reason) => UnpackError::InvalidPath { path, reason },
            PathProblem::TooLong { len, limit } => UnpackError::PathTooLong { path, len, limit },
            PathProblem::TooDeep { depth, limit } => {
                UnpackError::PathTooDeep { path, depth, limit }
            }
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            PathProblem::Absolute => "it is an absolute path".to_string(),
            PathProblem::Escapes => "it contains `..`".to_string(),
            PathProblem::Invalid(reason) => format!("its path {reason}"),
            PathProblem::TooLong { len, limit } => {
                format!("its path is {len} bytes long, more than the limit of {limit}")
            }
            PathProblem::TooDeep { depth, limit } => {
                format!("it is nested {depth} levels deep, more than the limit of {limit}")
            }
        }
    }
}

/// Shows untrusted path bytes on one line.
pub(super) fn show(raw: &[u8]) -> String {
    let mut out = String::new();
    for ch in String::from_utf8_lossy(raw).chars() {
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Checks one path component: its characters, `.git`, and what `names`
/// (a platform's rules) refuses.
fn check_component(c: &str, names: Platform) -> Result<(), PathProblem> {
    if c.contains('\\') {
        return Err(PathProblem::Invalid("contains a backslash"));
    }
    if c.chars().any(|ch| ch.is_control()) {
        return Err(PathProblem::Invalid(
            "contains a control character (NUL, newline, carriage return, ...)",
        ));
    }
    if c.contains(':') {
        // `C:` is a drive prefix on Windows and `name:stream` an alternate
        // data stream; neither may appear in a portable package.
        return Err(PathProblem::Invalid("contains a colon"));
    }
    if c.eq_ignore_ascii_case(".git") {
        // A repository's own directory, in any case: on a case-insensitive
        // file system `.GIT/config` is live (`core.fsmonitor` runs a
        // command on the next `git status`). Every source strips a
        // checkout's `.git` before packing, so only a hostile package
        // holds one.
        return Err(PathProblem::Invalid("names a `.git` directory"));
    }
    if let Some(why) = names.refuses_name(c) {
        return Err(PathProblem::Invalid(why));
    }
    Ok(())
}

/// A validated entry path: its normal components and whether the raw path
/// ended with `/`. `None` means the path names the package root itself
/// (`.` or `./`), which is skipped.
pub(super) struct EntryPath {
    pub(super) components: Vec<String>,
    pub(super) trailing_slash: bool,
}

pub(super) fn validate_path(
    raw: &[u8],
    max_len: usize,
    names: Platform,
) -> Result<Option<EntryPath>, PathProblem> {
    if raw.len() > max_len {
        return Err(PathProblem::TooLong {
            len: raw.len(),
            limit: max_len,
        });
    }
    if raw.is_empty() {
        return Err(PathProblem::Invalid("has an empty path"));
    }
    if raw[0] == b'/' {
        return Err(PathProblem::Absolute);
    }
    let s = std::str::from_utf8(raw).map_err(|_| PathProblem::Invalid("is not valid UTF-8"))?;
    let trailing_slash = s.ends_with('/');
    let first = s.split('/').next().unwrap_or("");
    let fb = first.as_bytes();
    if fb.len() >= 2 && fb[0].is_ascii_alphabetic() && fb[1] == b':' {
        return Err(PathProblem::Absolute);
    }
    let mut components = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => continue,
            ".." => return Err(PathProblem::Escapes),
            _ => {
                check_component(c, names)?;
                components.push(c.to_string());
            }
        }
    }
    if components.len() > MAX_DEPTH {
        return Err(PathProblem::TooDeep {
            depth: components.len(),
            limit: MAX_DEPTH,
        });
    }
    if components.is_empty() {
        return Ok(None);
    }
    Ok(Some(EntryPath {
        components,
        trailing_slash,
    }))
}
