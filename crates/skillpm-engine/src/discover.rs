//! Discovery roots, their precedence, and the recursive scan.
//!
//! Roots are listed lowest precedence first: the user roots, extra roots
//! from the user config, the project roots, then extra roots from the
//! project's `skills.toml`. Extra roots sit right above the scope that named
//! them, so a project always beats the user, as it does for the built-in
//! roots.

use crate::config::{read_engine_table, resolve_path, ConfigError, Environment, MANIFEST_FILE};
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where a root came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    User,
    Project,
    Extra,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Extra => "extra",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Root {
    pub path: PathBuf,
    pub scope: Scope,
    pub exists: bool,
}

/// The built-in user roots, relative to the home directory.
pub const USER_ROOTS: &[&str] = &[".agents/skills", ".claude/skills"];
/// The built-in project roots, relative to the project directory.
pub const PROJECT_ROOTS: &[&str] = &[".agents/skills", ".claude/skills"];

/// The roots and the `disabled` list, both read from config.
#[derive(Debug, Clone)]
pub struct Layout {
    pub project: Option<PathBuf>,
    pub roots: Vec<Root>,
    pub disabled: Vec<String>,
}

/// Computes the ordered roots for `env`.
pub fn layout(env: &Environment) -> Result<Layout, ConfigError> {
    let project = env.project_dir();
    let base = env.project_base();
    let home = env.home.as_deref();
    let mut roots = Vec::new();
    let mut disabled = Vec::new();
    let mut push = |path: PathBuf, scope: Scope| {
        if !roots.iter().any(|r: &Root| r.path == path) {
            let exists = path.is_dir();
            roots.push(Root {
                path,
                scope,
                exists,
            });
        }
    };
    if let Some(h) = home {
        for r in USER_ROOTS {
            push(h.join(r), Scope::User);
        }
    }
    let mut trust = false;
    if let (Some(cfg), Some(dir)) = (env.user_config_file(), env.config_dir.as_deref()) {
        let table = read_engine_table(&cfg)?;
        for r in &table.roots {
            push(resolve_path(r, dir, home), Scope::Extra);
        }
        disabled.extend(table.disabled);
        trust = table.trust_project_roots;
    }
    // Run in the home directory itself, the project roots are the user's
    // own (`~/.agents/skills` may well be a link into a dotfiles checkout).
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    if project.is_none() && home.is_some_and(|h| same(h, &base)) {
        trust = true;
    }
    let outside = |file: &Path, root: &Path, why: String| {
        ConfigError {
        file: file.to_path_buf(),
        line: 1,
        message: format!(
            "the project root {} {why}, outside the project; skillpm reads roots outside a project only from your own config ({}: `[engine] roots`, or `trust_project_roots = true`)",
            root.display(),
            env.user_config_file()
                .map_or_else(|| "config.toml".into(), |p| p.display().to_string()),
        ),
    }
    };
    for r in PROJECT_ROOTS {
        let path = base.join(r);
        if let (false, Some(why)) = (trust, leaves(&base, &path)) {
            return Err(outside(&base.join(MANIFEST_FILE), &path, why));
        }
        push(path, Scope::Project);
    }
    if let Some(p) = &project {
        let file = p.join(MANIFEST_FILE);
        let table = read_engine_table(&file)?;
        for r in &table.roots {
            let path = resolve_path(r, p, home);
            if let (false, Some(why)) = (trust, leaves(p, &path)) {
                return Err(outside(&file, &path, why));
            }
            push(path, Scope::Extra);
        }
        disabled.extend(table.disabled);
    }
    Ok(Layout {
        project,
        roots,
        disabled,
    })
}

/// Why `root` (a project root) leads outside `project`, if it does: a
/// path that is not below it (`../..`, `/`, `~/`), or an existing one
/// whose real path is not (a committed `.claude/skills -> ~`). A root
/// that does not exist yet reads nothing.
pub fn leaves(project: &Path, root: &Path) -> Option<String> {
    let lexical_inside = root.starts_with(project)
        && root.strip_prefix(project).is_ok_and(|rel| {
            !rel.components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        });
    if !lexical_inside {
        return Some("is not below the project".to_string());
    }
    let real = std::fs::canonicalize(root).ok()?;
    let home = std::fs::canonicalize(project).ok()?;
    (!real.starts_with(&home)).then(|| format!("leads to {}", real.display()))
}

/// A directory holding a `SKILL.md`.
#[derive(Debug, Clone)]
pub struct Found {
    /// Path relative to the root, `/`-separated.
    pub command: String,
    pub dir: PathBuf,
    pub skill_md: PathBuf,
    /// Index into [`Layout::roots`].
    pub root: usize,
}

pub use skillpm_core::skill::SKILL_FILES;

/// The most directory entries one root's scan looks at: far above any
/// real collection (the largest public one holds about 18 000), so that a
/// root that holds a home directory costs a bounded walk, not every file
/// in it. The rest of such a root is not read.
pub const MAX_WALK_ENTRIES: usize = 200_000;

/// Scans one root. Entries are visited in byte order of their names so the
/// result is the same on every run and filesystem. Hidden directories
/// (`.git`, installers' staging dirs) are skipped. Symlinked directories are
/// followed; a directory already visited (a loop, or two links to one
/// place) is not entered again.
pub fn scan_root(root: &Path, root_index: usize, out: &mut Vec<Found>) {
    scan_root_with(root, root_index, false, out)
}

/// [`scan_root`], entering dot-directories too when `hidden` is set:
/// `validate` must see collections that keep every skill under one
/// (`openai/skills` uses `.curated/`, `.system/`, `.experimental/`).
pub fn scan_root_with(root: &Path, root_index: usize, hidden: bool, out: &mut Vec<Found>) {
    let mut seen_entries = 0usize;
    let mut visited = HashSet::new();
    if let Some(id) = dir_id(root) {
        visited.insert(id);
    }
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        let mut skill_file: Option<&str> = None;
        for entry in rd.flatten() {
            seen_entries += 1;
            if seen_entries > MAX_WALK_ENTRIES {
                return;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Ok(ft) = entry.file_type() else { continue };
            let is_dir = if ft.is_symlink() {
                std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
            } else {
                ft.is_dir()
            };
            if is_dir {
                if hidden || !name.starts_with('.') {
                    subdirs.push(name.to_string());
                }
            } else if !rel.is_empty() {
                for (i, f) in SKILL_FILES.iter().enumerate() {
                    if name == *f {
                        let better = skill_file
                            .is_none_or(|cur| SKILL_FILES.iter().position(|x| *x == cur) > Some(i));
                        if better {
                            skill_file = Some(f);
                        }
                    }
                }
            }
        }
        if let Some(f) = skill_file {
            out.push(Found {
                command: rel.clone(),
                dir: dir.clone(),
                skill_md: dir.join(f),
                root: root_index,
            });
        }
        subdirs.sort_unstable();
        // Reverse so the stack pops them in ascending order.
        for name in subdirs.into_iter().rev() {
            let path = dir.join(&name);
            if let Some(id) = dir_id(&path) {
                if !visited.insert(id) {
                    continue;
                }
            }
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            stack.push((path, child_rel));
        }
    }
}

#[cfg(unix)]
fn dir_id(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// Scans every existing root, lowest precedence first.
pub fn scan(layout: &Layout) -> Vec<Found> {
    let mut out = Vec::new();
    for (i, root) in layout.roots.iter().enumerate() {
        if root.exists {
            scan_root(&root.path, i, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\ndescription: d\n---\n").unwrap();
    }

    #[test]
    fn finds_nested_skills_sorted_and_skips_root() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("SKILL.md"), "---\ndescription: root\n---\n").unwrap();
        skill(&t.path().join("b"));
        skill(&t.path().join("a/inner"));
        skill(&t.path().join("a"));
        std::fs::create_dir_all(t.path().join("a/scripts")).unwrap();
        skill(&t.path().join(".hidden"));
        let mut out = Vec::new();
        scan_root(t.path(), 0, &mut out);
        let cmds: Vec<_> = out.iter().map(|f| f.command.as_str()).collect();
        assert_eq!(cmds, ["a", "a/inner", "b"]);
    }

    /// A project's files may not point discovery outside the project:
    /// `[engine] roots` that leave it, or a committed `.claude/skills ->
    /// ~`, are refused unless the user's own config trusts project roots.
    #[cfg(unix)]
    #[test]
    fn project_roots_stay_inside_the_project() {
        let t = tempfile::tempdir().unwrap();
        let (home, project) = (t.path().join("home"), t.path().join("home/work/p"));
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let mut env = Environment::isolated();
        env.home = Some(home.clone());
        env.config_dir = Some(home.join(".config/skillpm"));
        env.project_override = Some(project.clone());
        let manifest = |roots: &str| {
            std::fs::write(
                project.join(MANIFEST_FILE),
                format!("[skills]\n[engine]\nroots = [{roots}]\n"),
            )
            .unwrap()
        };
        for roots in [r#""../..""#, r#""/""#, r#""~/.ssh""#, r#""a/../../x""#] {
            manifest(roots);
            let err = layout(&env).unwrap_err();
            assert!(
                err.message.contains("outside the project"),
                "{roots}: {err}"
            );
        }
        manifest(r#""vendor/skills", "./more""#);
        assert!(layout(&env).is_ok());
        // A committed link out of the project.
        manifest("");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::os::unix::fs::symlink(&home, project.join(".claude/skills")).unwrap();
        let err = layout(&env).unwrap_err();
        assert!(err.message.contains("leads to"), "{err}");
        // Run in the home directory with no project, they are the user's.
        let mut at_home = Environment::isolated();
        at_home.home = Some(project.clone());
        at_home.cwd = project.clone();
        std::fs::remove_file(project.join(MANIFEST_FILE)).unwrap();
        assert!(layout(&at_home).is_ok());
        manifest("");
        // The user's own config may trust them.
        std::fs::create_dir_all(home.join(".config/skillpm")).unwrap();
        std::fs::write(
            home.join(".config/skillpm/config.toml"),
            "[engine]\ntrust_project_roots = true\n",
        )
        .unwrap();
        assert!(layout(&env).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn follows_symlinks_without_looping() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        skill(&elsewhere.path().join("linked"));
        std::os::unix::fs::symlink(elsewhere.path().join("linked"), t.path().join("linked"))
            .unwrap();
        std::fs::create_dir_all(t.path().join("loop")).unwrap();
        std::os::unix::fs::symlink(t.path(), t.path().join("loop/back")).unwrap();
        let mut out = Vec::new();
        scan_root(t.path(), 0, &mut out);
        let cmds: Vec<_> = out.iter().map(|f| f.command.as_str()).collect();
        assert_eq!(cmds, ["linked"]);
    }
}
