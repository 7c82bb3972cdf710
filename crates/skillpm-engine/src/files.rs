//! The files of one skill as an agent may read them: one rule for `load`
//! (its list of bundled files) and for what `skillpm mcp` serves, so the
//! two never disagree about what belongs to a skill; `load` names nested
//! skills apart, as sub-skills, where `mcp` also lists their files.

use skillpm_core::skill::{INSTALL_MARKER, SKILL_FILES};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How many directory entries one skill's walk looks at, at most.
pub const MAX_WALK_ENTRIES: usize = 10_000;
/// How deep below the skill the walk goes.
pub const MAX_DEPTH: usize = 16;

/// What [`skill_files`] found.
#[derive(Debug, Default)]
pub struct SkillFiles {
    /// Every file, by its `/`-separated path below the skill, sorted, with
    /// the real path to read it from.
    pub files: Vec<(String, PathBuf)>,
    /// One line per thing left out for a reason the user should hear (a
    /// link out of the skill, the entry cap).
    pub notes: Vec<String>,
    /// The walk stopped at [`MAX_WALK_ENTRIES`]: `files` is not all of it.
    pub truncated: bool,
    /// The skill's real path, which every file's is below; `None` when
    /// the skill's directory could not be resolved (then nothing is found).
    pub base: Option<PathBuf>,
}

/// The files of the skill at `dir`, leaving out dot entries, sub-skill
/// directories (skills of their own), the top-level `SKILL.md` and the
/// installer's marker, and whatever a link leads to outside the skill (a
/// skill may link within itself; `refs -> ~/.ssh` is not the skill's).
/// Each directory is visited once however it is reached; at most
/// [`MAX_WALK_ENTRIES`] entries and [`MAX_DEPTH`] levels.
pub fn skill_files(dir: &Path) -> SkillFiles {
    walk(dir, false)
}

/// [`skill_files`] with the files of nested skills too, by their path
/// below `dir`: what `skillpm mcp` serves, as the MCP Skills extension
/// (SEP-2640) wants a skill's manifest complete, nested skills included.
pub fn skill_tree_files(dir: &Path) -> SkillFiles {
    walk(dir, true)
}

fn walk(dir: &Path, nested: bool) -> SkillFiles {
    let mut out = SkillFiles::default();
    let Ok(base) = dir.canonicalize() else {
        return out;
    };
    out.base = Some(base.clone());
    let mut seen = HashSet::new();
    let mut entries = 0usize;
    let mut stack = vec![(base.clone(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        // The entry's type comes with the directory listing (no `stat` on
        // most filesystems), so only links cost a resolution: over 10 000
        // skills, resolving and `stat`ing every plain file and directory
        // was most of the walk's time.
        let mut names: Vec<_> = rd
            .flatten()
            .map(|e| (e.file_name(), e.file_type().ok()))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            entries += 1;
            if entries > MAX_WALK_ENTRIES {
                out.notes.push(format!(
                    "more than {MAX_WALK_ENTRIES} entries; the rest left out"
                ));
                out.truncated = true;
                out.files.sort();
                return out;
            }
            let Some(name) = name.to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Some(kind) = kind else {
                continue;
            };
            // `dir` is canonical, so a plain entry's path is its real path.
            // Links are resolved; what they lead to counts only inside the
            // skill. A dangling link is nothing. (A plain entry swapped for
            // a link after this look is caught by the reader, which
            // resolves what it read: `mcp`'s snapshot does.)
            let (real, kind) = if kind.is_symlink() {
                let Ok(real) = dir.join(&name).canonicalize() else {
                    continue;
                };
                if !real.starts_with(&base) {
                    out.notes
                        .push(format!("{child}: refused, a symlink out of the skill"));
                    continue;
                }
                let Ok(meta) = std::fs::metadata(&real) else {
                    continue;
                };
                (real, meta.file_type())
            } else {
                (dir.join(&name), kind)
            };
            let top = rel.is_empty();
            if kind.is_dir() {
                let sub_skill = !nested && SKILL_FILES.iter().any(|f| real.join(f).is_file());
                if !sub_skill && child.matches('/').count() < MAX_DEPTH {
                    stack.push((real, child));
                }
            } else if kind.is_file()
                && !(top && (SKILL_FILES.contains(&name.as_str()) || name == INSTALL_MARKER))
            {
                out.files.push((child, real));
            }
        }
    }
    out.files.sort();
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_count_inside_the_skill_only() {
        let t = tempfile::tempdir().unwrap();
        let (skill, secrets) = (t.path().join("skill"), t.path().join("secrets"));
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::create_dir_all(skill.join("sub")).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\n---\n").unwrap();
        std::fs::write(skill.join("references/guide.md"), "g").unwrap();
        std::fs::write(skill.join(".hidden"), "h").unwrap();
        std::fs::write(skill.join("sub/SKILL.md"), "---\n---\n").unwrap();
        std::fs::write(secrets.join("id_ed25519"), "key").unwrap();
        symlink(&secrets, skill.join("refs")).unwrap();
        symlink(skill.join("references"), skill.join("again")).unwrap();
        symlink(".", skill.join("references/self")).unwrap();
        let found = skill_files(&skill);
        let names: Vec<&str> = found.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["references/guide.md"]);
        assert_eq!(found.notes, ["refs: refused, a symlink out of the skill"]);
        let tree = skill_tree_files(&skill);
        let names: Vec<&str> = tree.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["references/guide.md", "sub/SKILL.md"]);
    }
}
