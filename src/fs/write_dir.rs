//! The directories skillpm creates, replaces and deletes entries in.
//!
//! A project's files are written by whoever wrote the project: a cloned
//! repository may commit `.claude -> ../../.claude`, and every path below
//! it then leads into the user's home. So the only way to name a
//! directory for writing is a [`WriteDir`], made once where the directory
//! is chosen ([`WriteDir::below`]): it refuses a path that any symlink
//! leads through, and any directory inside a `.git` (in any case: on a
//! case-insensitive file system `.GIT` is the repository). Installing,
//! linking, removing and `import`'s take-over all take a `WriteDir`, so
//! none of them can be handed an unchecked path.
//!
//! What is checked is the path as it is when the command starts. A local
//! process racing the command could still swap a directory for a link in
//! between; what this closes is what a repository's committed files can
//! do, which is the threat (SECURITY.md, "Writes stay inside").

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// A directory no symlink leads into below its base, and not inside a
/// `.git`. Derefs to its path for reading and joining.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteDir(PathBuf);

/// Why a directory may not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{} is a symlink; skillpm never writes through a symlink (replace it with a directory)", .0.display())]
    Symlink(PathBuf),
    #[error("{} is inside a git repository's own directory", .0.display())]
    GitDir(PathBuf),
    #[error("`{}` is not a path below {}", .rel.display(), .base.display())]
    NotBelow { base: PathBuf, rel: PathBuf },
}

impl WriteDir {
    /// `base/rel`, once no component of `rel` is a symlink or a `.git`
    /// directory. `base` itself is trusted (the project directory, which
    /// the user chose by working in it); `rel` must be relative and stay
    /// below it. Components that do not exist yet are fine: installing
    /// creates them as plain directories.
    pub fn below(base: &Path, rel: &Path) -> Result<WriteDir, Refused> {
        let mut at = base.to_path_buf();
        let mut exists = true;
        for c in rel.components() {
            let name = match c {
                Component::Normal(name) => name,
                Component::CurDir => continue,
                _ => {
                    return Err(Refused::NotBelow {
                        base: base.to_path_buf(),
                        rel: rel.to_path_buf(),
                    })
                }
            };
            at.push(name);
            if is_git_dir(name) {
                return Err(Refused::GitDir(at));
            }
            // Once a component is missing, so is everything below it.
            if exists {
                match std::fs::symlink_metadata(&at) {
                    Ok(m) if m.file_type().is_symlink() => return Err(Refused::Symlink(at)),
                    Ok(_) => {}
                    Err(_) => exists = false,
                }
            }
        }
        if at == base {
            return Err(Refused::NotBelow {
                base: base.to_path_buf(),
                rel: rel.to_path_buf(),
            });
        }
        Ok(WriteDir(at))
    }

    /// A directory the user named for this run (`--global`'s root in
    /// their home): their own links there are theirs to keep.
    pub fn chosen_by_user(path: PathBuf) -> WriteDir {
        WriteDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for WriteDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for WriteDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

/// `.git` in any case: macOS's and Windows' default file systems ignore
/// case, so `.GIT/hooks` there is the repository's hooks directory.
pub fn is_git_dir(name: &OsStr) -> bool {
    name.eq_ignore_ascii_case(".git")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlinked_parent_is_refused_at_any_depth() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join(".claude/skills")).unwrap();
        symlink(outside.path().join(".claude"), t.path().join(".claude")).unwrap();
        let err = WriteDir::below(t.path(), Path::new(".claude/skills")).unwrap_err();
        assert_eq!(err, Refused::Symlink(t.path().join(".claude")));
        // Deeper: a real directory, then a link.
        std::fs::create_dir_all(t.path().join("a")).unwrap();
        symlink(outside.path(), t.path().join("a/b")).unwrap();
        let err = WriteDir::below(t.path(), Path::new("a/b/c")).unwrap_err();
        assert_eq!(err, Refused::Symlink(t.path().join("a/b")));
    }

    #[test]
    fn plain_and_missing_directories_are_accepted() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".agents")).unwrap();
        let d = WriteDir::below(t.path(), Path::new("./.agents/skills")).unwrap();
        assert_eq!(d.path(), t.path().join(".agents/skills"));
        assert!(WriteDir::below(t.path(), Path::new("not/yet/there")).is_ok());
    }

    #[test]
    fn git_directories_in_any_case_and_escapes_are_refused() {
        let t = tempfile::tempdir().unwrap();
        for rel in [".git", ".git/hooks", "sub/.GIT/x", ".Git"] {
            assert!(
                matches!(
                    WriteDir::below(t.path(), Path::new(rel)),
                    Err(Refused::GitDir(_))
                ),
                "{rel}"
            );
        }
        for rel in ["../x", "/abs", ".", ""] {
            assert!(
                matches!(
                    WriteDir::below(t.path(), Path::new(rel)),
                    Err(Refused::NotBelow { .. })
                ),
                "{rel}"
            );
        }
        // `.github` is not `.git`.
        assert!(WriteDir::below(t.path(), Path::new(".github/skills")).is_ok());
    }
}
