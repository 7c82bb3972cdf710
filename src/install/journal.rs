//! The install journal: what a command that changes a project's install
//! roots and its lock is about to do, written before the first tree
//! moves, so a run killed at any moment (SIGKILL, a power loss) is
//! finished or rolled back by the next one, as dpkg and pacman replay
//! their own records of an interrupted transaction.
//!
//! One file, `.skillpm-journal` beside skills.toml (the user manifest's
//! directory for `--global`), written and synced with the new lock and
//! manifest, which wait beside their targets under temporary names. It
//! names, for each root the run changes, a parked directory
//! (`.skillpm-parked-*` inside that root) and, for each entry of the root
//! that changes, what it becomes: the tree of a checksum, a link to the
//! first root's tree, or nothing. Every entry moves the same way: its new
//! form is put at `parked/NAME`, then swapped with (or renamed to) the
//! entry, so the old form is left at `parked/NAME`. Whether an entry has
//! moved is read from the entry itself (its marker's checksum, its link,
//! its absence), so the journal is written once and never updated.
//!
//! Once every entry moved, the lock and the manifest are renamed into
//! place and the journal deleted. The next command that finds a journal
//! (every command looks, under the project lock) finishes the run when
//! every entry moved (renames the lock and the manifest in), and rolls
//! it back otherwise (moves each moved entry's old form back); then it
//! deletes the parked directories and the journal. Either way the agent
//! sees the state before the command or the whole new one, each recorded
//! by the skills.toml and skills.lock beside it.
//!
//! The journal lies in the project, where anyone who can write the
//! project can write it too: it is read as untrusted input. It may only
//! name this project's install roots (as skills.toml names them, or the
//! default), parked directories directly inside them, skill names, and
//! temporary lock and manifest files beside skills.toml; anything else is
//! refused before anything moves.

use super::plan::{is_link_to, is_symlink, link_target};
use super::{Marker, STAGING_PREFIX};
use crate::fs::{exchange, fs_err, FsError, Synced, PENDING};
use crate::project::manifest::Manifest;
use crate::project::{Project, ProjectError};
use serde::{Deserialize, Serialize};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The journal's file name, beside skills.toml.
pub const JOURNAL: &str = ".skillpm-journal";
/// Prefix of the directory in each changed root that holds the entries'
/// other forms while a run is under way. A staging name, so agents never
/// see it and a run sweeps it once no journal names it.
pub const PARKED_PREFIX: &str = ".skillpm-parked-";
/// The commands that write a journal: the only ones a journal may name.
const COMMANDS: [&str; 5] = ["add", "remove", "install", "update", "import"];
/// The largest journal read: a line per changed entry, far below this.
const MAX_JOURNAL_BYTES: u64 = 64 * 1024 * 1024;
const VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Project(#[from] Box<ProjectError>),
    #[error("{path} cannot be read as skillpm's install journal: {why}; check the install roots, move the journal away, then retry")]
    Malformed { path: PathBuf, why: String },
    #[error("{path} names {named}, which is not {expected}; skillpm follows a journal only inside this project's install roots (check them, move the journal away, then retry)")]
    Outside {
        path: PathBuf,
        named: String,
        expected: &'static str,
    },
    #[error("cannot record install root {0} in the install journal (it is not below the project)")]
    Unrecordable(PathBuf),
}

/// What an entry becomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum To {
    /// A tree whose marker names this checksum.
    Tree(String),
    /// A link to the first root's tree of the same name.
    Link,
    /// Nothing.
    Absent,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    version: u32,
    command: String,
    /// Temporary files beside skills.toml, each with the file it becomes
    /// (`skills.lock` or `skills.toml`), renamed in that order.
    pending: Vec<(String, String)>,
    /// Every root of the run, in plan order (the first holds the trees),
    /// relative to the project (the home for `--global`), with its parked
    /// directory's name when the run changes it.
    roots: Vec<(String, Option<String>)>,
    /// Root index, skill name, what it becomes.
    changes: Vec<(usize, String, To)>,
}

/// A run's journal, kept in memory from the first change recorded; on
/// disk from [`Journal::write`] until [`Journal::end`].
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    base: PathBuf,
    record: Record,
    /// The record's roots and parked directories as paths.
    roots: Vec<(PathBuf, Option<PathBuf>)>,
    on_disk: bool,
}

/// What a journal left by an interrupted run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub command: String,
    /// Finished (every entry had moved), else rolled back.
    pub finished: bool,
    pub journal: PathBuf,
}

impl fmt::Display for Recovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let done = match self.finished {
            true => "finished",
            false => "rolled back",
        };
        write!(
            f,
            "{done} an interrupted `skillpm {}` from {}",
            self.command,
            self.journal.display()
        )
    }
}

impl Journal {
    /// An empty journal for `command` in `project`.
    pub fn new(project: &Project, command: &'static str) -> Result<Journal, JournalError> {
        Ok(Journal {
            path: project.dir.join(JOURNAL),
            base: project.install_base().map_err(Box::new)?.to_path_buf(),
            record: Record {
                version: VERSION,
                command: command.to_string(),
                pending: Vec::new(),
                roots: Vec::new(),
                changes: Vec::new(),
            },
            roots: Vec::new(),
            on_disk: false,
        })
    }

    /// Records the next root of the run and its parked directory, if the
    /// run changes it; returns its index.
    pub fn root(&mut self, root: &Path, parked: Option<&Path>) -> Result<usize, JournalError> {
        let rel = root
            .strip_prefix(&self.base)
            .ok()
            .and_then(Path::to_str)
            .ok_or_else(|| JournalError::Unrecordable(root.to_path_buf()))?;
        let name = match parked {
            Some(p) => Some(
                p.file_name()
                    .and_then(|n| n.to_str())
                    .filter(|_| p.parent() == Some(root))
                    .ok_or_else(|| JournalError::Unrecordable(p.to_path_buf()))?
                    .to_string(),
            ),
            None => None,
        };
        self.record.roots.push((rel.to_string(), name));
        self.roots
            .push((root.to_path_buf(), parked.map(Path::to_path_buf)));
        Ok(self.roots.len() - 1)
    }

    /// Records that `name` in root `root` becomes `to`.
    pub fn change(&mut self, root: usize, name: &SkillName, to: To) {
        self.record.changes.push((root, name.to_string(), to));
    }

    pub fn is_empty(&self) -> bool {
        self.record.changes.is_empty()
    }

    /// Syncs the `written` lock and manifest and, when any entry
    /// changes, this journal naming them, put in place (and its directory
    /// synced) before the first entry moves.
    pub fn write(&mut self, mut written: crate::fs::Written) -> Result<Synced, JournalError> {
        if self.is_empty() {
            return Ok(written.sync()?);
        }
        for (target, tmp) in written.temp_paths() {
            let (Some(file), Some(target)) = (
                tmp.file_name().and_then(|n| n.to_str()),
                target.file_name().and_then(|n| n.to_str()),
            ) else {
                return Err(JournalError::Unrecordable(tmp.to_path_buf()));
            };
            self.record
                .pending
                .push((file.to_string(), target.to_string()));
        }
        let text = serde_json::to_string(&self.record).map_err(|e| JournalError::Malformed {
            path: self.path.clone(),
            why: e.to_string(),
        })?;
        written.add(&self.path, &text)?;
        let mut synced = written.sync()?;
        synced.persist_one(&self.path)?;
        self.on_disk = true;
        crate::fs::sync_dir(parent(&self.path))?;
        Ok(synced)
    }

    /// The run is complete (lock and manifest in place): the journal goes.
    /// The parked directories are the caller's to delete.
    pub fn end(self) -> Result<(), JournalError> {
        if self.on_disk {
            remove_file(&self.path)?;
        }
        Ok(())
    }

    /// Undoes every change that was made, in this process (a step failed):
    /// the roots are as they were before the run, and the journal goes.
    /// The lock and the manifest waiting beside their targets are the
    /// caller's to drop.
    pub fn roll_back(self) -> Result<(), JournalError> {
        let changes = self.changes()?;
        undo(&changes)?;
        remove_parked(&self.roots)?;
        self.end()
    }

    fn changes(&self) -> Result<Vec<Change>, JournalError> {
        changes(&self.record, &self.roots, &self.path)
    }
}

/// One entry the journal names, resolved to paths.
struct Change {
    dest: PathBuf,
    parked: PathBuf,
    to: Want,
}

enum Want {
    Tree(Checksum),
    Link(PathBuf),
    Absent,
}

impl Change {
    /// Whether the entry has its new form (which for a tree replaced by
    /// another of the same checksum, a repair, is also its old one: the
    /// two are the same package, either is right).
    fn moved(&self) -> bool {
        match &self.to {
            Want::Tree(c) => {
                !is_symlink(&self.dest)
                    && Marker::read(&self.dest).is_some_and(|m| m.checksum == *c)
            }
            Want::Link(target) => is_link_to(&self.dest, target),
            Want::Absent => !exists(&self.dest),
        }
    }

    /// Puts the old form back (it is at `parked`, if there was one); the
    /// new form ends at `parked`, to be deleted with it.
    fn undo(&self) -> Result<(), FsError> {
        match (exists(&self.parked), exists(&self.dest)) {
            (true, true) => exchange(&self.parked, &self.dest),
            (true, false) => {
                std::fs::rename(&self.parked, &self.dest).map_err(fs_err("move back", &self.dest))
            }
            (false, true) => {
                if let Some(dir) = self.parked.parent() {
                    std::fs::create_dir_all(dir).map_err(fs_err("create", dir))?;
                }
                std::fs::rename(&self.dest, &self.parked).map_err(fs_err("move aside", &self.dest))
            }
            (false, false) => Ok(()),
        }
    }
}

/// Moves back every entry that moved, last first.
fn undo(changes: &[Change]) -> Result<(), JournalError> {
    for c in changes.iter().rev().filter(|c| c.moved()) {
        c.undo()?;
    }
    Ok(())
}

fn changes(
    record: &Record,
    roots: &[(PathBuf, Option<PathBuf>)],
    path: &Path,
) -> Result<Vec<Change>, JournalError> {
    let outside = |named: String, expected| JournalError::Outside {
        path: path.to_path_buf(),
        named,
        expected,
    };
    let primary = roots.first().map(|(r, _)| r.as_path());
    let mut out = Vec::with_capacity(record.changes.len());
    for (i, name, to) in &record.changes {
        let (root, parked) = roots
            .get(*i)
            .ok_or_else(|| outside(format!("root #{i}"), "one of the roots it lists"))?;
        let Some(parked) = parked else {
            return Err(outside(
                format!("a change in {} without a parked directory", root.display()),
                "a change in a root it parks entries of",
            ));
        };
        let name =
            SkillName::new(name).map_err(|_| outside(format!("`{name}`"), "a skill name"))?;
        let to = match to {
            To::Tree(c) => {
                Want::Tree(Checksum::parse(c).map_err(|_| outside(format!("`{c}`"), "a checksum"))?)
            }
            // A link only ever leads to the first root's tree.
            To::Link => match primary.filter(|_| *i > 0) {
                Some(p) => Want::Link(link_target(root, p, name.as_str())),
                None => {
                    return Err(outside(
                        format!("a link in {}", root.display()),
                        "a link from a root after the first",
                    ))
                }
            },
            To::Absent => Want::Absent,
        };
        out.push(Change {
            dest: root.join(name.as_str()),
            parked: parked.join(name.as_str()),
            to,
        });
    }
    Ok(out)
}

/// Finishes or rolls back the run that left a journal in `project`, if
/// one did. The caller holds the project lock.
pub fn recover(project: &Project) -> Result<Option<Recovered>, JournalError> {
    let path = project.dir.join(JOURNAL);
    let text = match skillpm_core::bounded::read_to_string(&path, MAX_JOURNAL_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fs_err("read", &path)(e).into()),
    };
    let manifest = match project.read_manifest() {
        Err(ProjectError::NoManifest(_)) => Manifest::default(),
        r => r.map_err(Box::new)?,
    };
    let roots: Vec<PathBuf> = project
        .targets(&manifest)
        .map_err(Box::new)?
        .iter()
        .map(|r| r.to_path_buf())
        .collect();
    let base = project.install_base().map_err(Box::new)?;
    let checked = check(&text, &path, project, base, &roots)?;
    let changes = changes(&checked.record, &checked.roots, &path)?;
    let finished = changes.iter().all(Change::moved);
    if finished {
        for (tmp, target) in &checked.pending {
            match std::fs::rename(tmp, target) {
                // Renamed by an earlier attempt that was interrupted too.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                r => r.map_err(fs_err("replace", target))?,
            }
        }
    } else {
        undo(&changes)?;
        for (tmp, _) in &checked.pending {
            remove_file(tmp)?;
        }
    }
    remove_parked(&checked.roots)?;
    remove_file(&path)?;
    Ok(Some(Recovered {
        command: checked.record.command,
        finished,
        journal: path,
    }))
}

/// A journal read back and checked: every path it names, resolved.
struct Checked {
    record: Record,
    roots: Vec<(PathBuf, Option<PathBuf>)>,
    /// Temporary file, its target.
    pending: Vec<(PathBuf, PathBuf)>,
}

/// Parses `text` and resolves what it names, refusing anything but this
/// project's install roots (`roots`, below `base`), parked directories
/// directly inside them, and temporary lock and manifest files beside
/// skills.toml.
fn check(
    text: &str,
    path: &Path,
    project: &Project,
    base: &Path,
    roots: &[PathBuf],
) -> Result<Checked, JournalError> {
    let malformed = |why: String| JournalError::Malformed {
        path: path.to_path_buf(),
        why,
    };
    let outside = |named: &str, expected| JournalError::Outside {
        path: path.to_path_buf(),
        named: format!("`{named}`"),
        expected,
    };
    let record: Record = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    if record.version != VERSION {
        return Err(malformed(format!("version {}", record.version)));
    }
    if !COMMANDS.contains(&record.command.as_str()) {
        return Err(outside(&record.command, "a skillpm command that installs"));
    }
    let mut resolved = Vec::with_capacity(record.roots.len());
    for (rel, parked) in &record.roots {
        let root = relative(rel)
            .map(|r| base.join(r))
            .filter(|r| roots.contains(r))
            .ok_or_else(|| outside(rel, "an install root of this project"))?;
        let parked = match parked {
            Some(p) if single(p, PARKED_PREFIX) => Some(root.join(p)),
            Some(p) => return Err(outside(p, "a parked directory inside its root")),
            None => None,
        };
        resolved.push((root, parked));
    }
    let mut pending = Vec::with_capacity(record.pending.len());
    for (tmp, target) in &record.pending {
        if !single(tmp, PENDING) {
            return Err(outside(tmp, "a temporary file beside skills.toml"));
        }
        let target = match target.as_str() {
            crate::project::LOCK_FILE => &project.lock_path,
            t if Some(std::ffi::OsStr::new(t)) == project.manifest_path.file_name() => {
                &project.manifest_path
            }
            t => return Err(outside(t, "skills.lock or skills.toml")),
        };
        pending.push((project.dir.join(tmp), target.clone()));
    }
    Ok(Checked {
        record,
        roots: resolved,
        pending,
    })
}

/// `rel` as a relative path of plain names only.
fn relative(rel: &str) -> Option<&Path> {
    let p = Path::new(rel);
    let plain = p.components().all(|c| matches!(c, Component::Normal(_)));
    (plain && p.components().next().is_some()).then_some(p)
}

/// Whether `name` is one plain file name starting with `prefix` (and
/// with more after it).
fn single(name: &str, prefix: &str) -> bool {
    debug_assert!(prefix.starts_with(STAGING_PREFIX));
    let mut c = Path::new(name).components();
    matches!((c.next(), c.next()), (Some(Component::Normal(n)), None) if n == name)
        && name.len() > prefix.len()
        && name.starts_with(prefix)
}

/// Deletes the parked directories (the entries' forms the run left
/// behind).
fn remove_parked(roots: &[(PathBuf, Option<PathBuf>)]) -> Result<(), JournalError> {
    for dir in roots.iter().filter_map(|(_, p)| p.as_ref()) {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fs_err("remove", dir)(e).into())
            }
            _ => {}
        }
    }
    Ok(())
}

fn remove_file(p: &Path) -> Result<(), FsError> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(fs_err("remove", p)(e)),
        _ => Ok(()),
    }
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(dir: &Path) -> Project {
        Project {
            dir: dir.to_path_buf(),
            manifest_path: dir.join("skills.toml"),
            lock_path: dir.join("skills.lock"),
            global: false,
            home: None,
            env_registry: None,
        }
    }

    fn journal(roots: &str, pending: &str, changes: &str) -> String {
        format!(
            r#"{{"version":1,"command":"add","pending":[{pending}],"roots":[{roots}],"changes":[{changes}]}}"#
        )
    }

    fn checked(text: &str) -> Result<Vec<Change>, JournalError> {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        let roots = vec![
            dir.path().join(".agents/skills"),
            dir.path().join(".claude/skills"),
        ];
        let path = dir.path().join(JOURNAL);
        let c = check(text, &path, &p, dir.path(), &roots)?;
        changes(&c.record, &c.roots, &path)
    }

    const ROOT: &str = r#"[".agents/skills",".skillpm-parked-x1"]"#;
    const TREE: &str = r#"[0,"pdf",{"tree":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]"#;

    #[test]
    fn a_journal_inside_the_roots_resolves_there() {
        let text = journal(
            &format!(r#"{ROOT},[".claude/skills",".skillpm-parked-x2"]"#),
            r#"[".skillpm-pending-a1","skills.lock"],[".skillpm-pending-a2","skills.toml"]"#,
            &format!(r#"{TREE},[1,"pdf","link"],[0,"old","absent"]"#),
        );
        let c = checked(&text).unwrap();
        assert_eq!(c.len(), 3);
        assert!(c[0].dest.ends_with(".agents/skills/pdf"));
        assert!(c[1]
            .parked
            .ends_with(".claude/skills/.skillpm-parked-x2/pdf"));
        assert!(matches!(&c[1].to, Want::Link(t) if t == Path::new("../../.agents/skills/pdf")));
    }

    /// Every way a journal could lead a recovery outside the project's
    /// install roots is refused before anything moves.
    #[test]
    fn a_journal_naming_anything_outside_the_roots_is_refused() {
        let pending = r#"[".skillpm-pending-a1","skills.lock"]"#;
        let outside_roots = [
            r#"["/etc",".skillpm-parked-x"]"#,
            r#"["../elsewhere/skills",".skillpm-parked-x"]"#,
            r#"[".agents/skills/../../..",".skillpm-parked-x"]"#,
            r#"[".agents",".skillpm-parked-x"]"#,
            r#"["",".skillpm-parked-x"]"#,
            r#"[".agents/skills","../../outside"]"#,
            r#"[".agents/skills","/tmp/x"]"#,
            r#"[".agents/skills","pdf"]"#,
            r#"[".agents/skills",".skillpm-parked-x/deeper"]"#,
            r#"[".agents/skills",".skillpm-parked-"]"#,
        ];
        for root in outside_roots {
            let err = checked(&journal(root, pending, TREE))
                .map(|_| ())
                .unwrap_err();
            assert!(matches!(err, JournalError::Outside { .. }), "{root}: {err}");
        }
        let bad_pending = [
            r#"["../skills.lock","skills.lock"]"#,
            r#"["/tmp/.skillpm-pending-x","skills.lock"]"#,
            r#"[".skillpm-pending-x","../skills.lock"]"#,
            r#"[".skillpm-pending-x","/etc/passwd"]"#,
            r#"["notes.txt","skills.toml"]"#,
        ];
        for p in bad_pending {
            let err = checked(&journal(ROOT, p, TREE)).map(|_| ()).unwrap_err();
            assert!(matches!(err, JournalError::Outside { .. }), "{p}: {err}");
        }
        let bad_changes = [
            r#"[0,"../../etc","absent"]"#,
            r#"[0,"a/b","absent"]"#,
            r#"[0,".skillpm-parked-x1","absent"]"#,
            r#"[3,"pdf","absent"]"#,
            r#"[0,"pdf","link"]"#,
            r#"[0,"pdf",{"tree":"not-a-checksum"}]"#,
        ];
        for c in bad_changes {
            let err = checked(&journal(ROOT, pending, c)).map(|_| ()).unwrap_err();
            assert!(matches!(err, JournalError::Outside { .. }), "{c}: {err}");
        }
        let unparked = journal(r#"[".agents/skills",null]"#, pending, TREE);
        assert!(matches!(
            checked(&unparked),
            Err(JournalError::Outside { .. })
        ));
        for text in [
            "not json",
            &journal(ROOT, pending, TREE).replace("\"version\":1", "\"version\":2"),
            &journal(ROOT, pending, TREE).replace("\"version\":1", "\"version\":1,\"extra\":1"),
        ] {
            let err = checked(text).map(|_| ()).unwrap_err();
            assert!(
                matches!(err, JournalError::Malformed { .. }),
                "{text}: {err}"
            );
        }
        let command = journal(ROOT, pending, TREE).replace("\"add\"", "\"rm -rf\"");
        assert!(matches!(
            checked(&command),
            Err(JournalError::Outside { .. })
        ));
    }
}
