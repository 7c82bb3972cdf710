//! A tree of a commit, read from the raw objects into memory.
//!
//! Not `git archive`: it applies the tree's own `.gitattributes` on the
//! way out (`export-subst` rewrites `$Format:...$` in files,
//! `export-ignore` drops them, `filter`, `text`/`eol` and `ident` run
//! conversions, some through drivers from the user's git config), so what
//! is installed would not be what was committed, and it writes its whole
//! output before any cap can apply. Here the tree is listed with sizes
//! from the object headers first, so the entry count and unpacked size are
//! refused before a byte of content is read; then each blob is read (no
//! attribute is ever consulted) and handed to the archive module's
//! [`MemoryTree`], which judges every entry's path and type exactly as it
//! judges an archive's: it stays the one place that does.

use super::objects;
use super::SourceError;
use crate::parallel::Workers;
use crate::project::spec::GitUrl;
use crate::source::marketplace::{MarketplaceError, PathKind, Tree};
use gix::ObjectId;
use skillpm_core::archive::{EntryKind, Limits, MemEntry, MemoryTree, UnpackError};
use std::collections::HashMap;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How many idle handles a run keeps, over all its commits: as many as
/// threads read at once, at most.
const IDLE_HANDLES: usize = 8;

/// The run's handles on its clones that are not in use right now, each
/// with the id of the [`Shared`] (one commit) it was made for. A handle
/// carries a zlib state and object buffers, zeroed when made: making one
/// per skill cost page faults, and keeping one per commit cost memory in
/// proportion to the commits of a lock (figures in the commit that made
/// this pool). So handles are kept for reuse, at most [`IDLE_HANDLES`],
/// the oldest dropped first.
#[derive(Default)]
pub(super) struct Handles {
    idle: Mutex<Vec<(u64, gix::Repository)>>,
    ids: AtomicU64,
}

impl Handles {
    fn take(&self, id: u64) -> Option<gix::Repository> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let at = idle.iter().rposition(|(of, _)| *of == id)?;
        Some(idle.remove(at).1)
    }

    fn put(&self, id: u64, handle: gix::Repository) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() == IDLE_HANDLES {
            idle.remove(0);
        }
        idle.push((id, handle));
    }
}

/// One entry of the listed tree.
#[derive(Clone)]
struct Entry {
    mode: u32,
    kind: Kind,
    oid: ObjectId,
    size: u64,
    path: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blob,
    /// A directory, or a submodule (which `git archive` also writes as an
    /// empty directory).
    Dir,
}

/// What every skill of one commit shares during a run: the clone opened
/// once, and the commit's whole tree listed once. Without it each skill of
/// a 100-skill repository would list and open everything again.
pub(super) struct Shared {
    repo: gix::ThreadSafeRepository,
    /// Where idle handles on `repo` wait, under `id`.
    handles: Arc<Handles>,
    id: u64,
    /// How many handles on `repo` were made (see [`Shared::with_handle`]).
    handles_made: AtomicUsize,
    commit: String,
    /// The commit's root tree; `None` for a reader of the trees a lock
    /// names, exported by id ([`tree_by_id`]) without listing the commit.
    root: Option<ObjectId>,
    /// The whole commit; `None` when it passes the listing limits, so each
    /// skill lists its own tree (and reports why that fails, if it does).
    listing: Option<Listing>,
}

/// A tree listed in pre-order (each directory before its contents), with
/// where each directory's contents lie, so a skill's part of a large
/// listing is found without scanning the whole of it.
struct Listing {
    entries: Vec<Entry>,
    /// Directory path → the range of `entries` below it.
    dirs: HashMap<Vec<u8>, Range<usize>>,
}

impl Shared {
    pub(super) fn new(
        dir: &Path,
        url: &GitUrl,
        commit: &str,
        limits: &Limits,
        handles: &Arc<Handles>,
    ) -> Result<Self, SourceError> {
        let repo = objects::open(dir, url)?;
        let r = repo.to_thread_local();
        let root = objects::tree_of(&r, commit).ok_or_else(|| {
            objects::error(
                "reading",
                url,
                format!("commit {commit} is not in the clone"),
            )
        })?;
        let listing = list(&r, root, url, limits).ok();
        let id = handles.ids.fetch_add(1, Ordering::Relaxed);
        // The handle that listed the commit serves the skills next.
        handles.put(id, r);
        Ok(Shared {
            repo,
            handles: handles.clone(),
            id,
            handles_made: AtomicUsize::new(1),
            commit: commit.to_string(),
            root: Some(root),
            listing,
        })
    }

    /// What the skills of `commit` share when the lock names their trees:
    /// the repository, opened once, and nothing listed.
    pub(super) fn trees_only(
        dir: &Path,
        url: &GitUrl,
        commit: &str,
        handles: &Arc<Handles>,
    ) -> Result<Self, SourceError> {
        Ok(Shared {
            repo: objects::open(dir, url)?,
            handles: handles.clone(),
            id: handles.ids.fetch_add(1, Ordering::Relaxed),
            handles_made: AtomicUsize::new(0),
            commit: commit.to_string(),
            root: None,
            listing: None,
        })
    }

    /// The id of the tree at `sub` (the root when `None`): what the lock
    /// records, so that a restore reads that tree without listing the
    /// commit.
    pub(super) fn tree_id(&self, url: &GitUrl, sub: Option<&str>) -> Result<ObjectId, SourceError> {
        let sub = normalized(sub);
        let listed = || {
            let listing = self.listing.as_ref()?;
            let below = listing.dirs.get(sub?.as_bytes())?;
            Some(listing.entries.get(below.start.checked_sub(1)?)?.oid)
        };
        match listed() {
            Some(id) => Ok(id),
            None => self.with_handle(|repo| self.sub_tree(repo, url, sub)),
        }
    }

    /// The tree at `sub` of the commit, looked up without the listing.
    fn sub_tree(
        &self,
        repo: &gix::Repository,
        url: &GitUrl,
        sub: Option<&str>,
    ) -> Result<ObjectId, SourceError> {
        let short = &self.commit[..12.min(self.commit.len())];
        let Some(root) = self.root else {
            let detail = format!("commit {short} is not in the clone");
            return Err(objects::error("listing of", url, detail));
        };
        let Some(dir) = sub else {
            return Ok(root);
        };
        repo.find_tree(root)
            .ok()
            .and_then(|t| t.lookup_entry_by_path(dir).ok().flatten())
            .filter(|e| e.mode().is_tree())
            .map(|e| e.object_id())
            .ok_or_else(|| {
                let detail = format!("there is no directory `{dir}` at commit {short}");
                objects::error("listing of", url, detail)
            })
    }

    /// Runs `f` on a handle on the repository: an idle one of this
    /// commit's ([`Handles`]), or a new one.
    fn with_handle<T>(&self, f: impl FnOnce(&gix::Repository) -> T) -> T {
        let handle = self.handles.take(self.id).unwrap_or_else(|| {
            self.handles_made.fetch_add(1, Ordering::Relaxed);
            self.repo.to_thread_local()
        });
        let out = f(&handle);
        self.handles.put(self.id, handle);
        out
    }

    /// The entries below `sub` (paths made relative to it), if the shared
    /// listing holds `sub` as a directory and the subtree is within
    /// `limits`; otherwise `None`, and the caller lists the subtree itself
    /// so any refusal reads exactly as it always has.
    fn subtree(&self, sub: Option<&str>, limits: &Limits) -> Option<Vec<Entry>> {
        let all = self.listing.as_ref()?;
        let picked: Vec<Entry> = match sub {
            None => all.entries.clone(),
            Some(dir) => {
                let below = all.dirs.get(dir.as_bytes())?;
                let cut = dir.len() + 1;
                all.entries[below.clone()]
                    .iter()
                    .map(|e| Entry {
                        path: e.path[cut..].to_vec(),
                        ..e.clone()
                    })
                    .collect()
            }
        };
        let within = picked.len() as u64 <= limits.max_entries
            && picked.iter().all(|e| e.path.len() <= limits.max_path_len);
        within.then_some(picked)
    }

    /// Lists `sub` (the root when `None`) on its own, within `limits`.
    fn list_sub(
        &self,
        repo: &gix::Repository,
        url: &GitUrl,
        sub: Option<&str>,
        limits: &Limits,
    ) -> Result<Vec<Entry>, SourceError> {
        let tree = self.sub_tree(repo, url, sub)?;
        Ok(list(repo, tree, url, limits)?.entries)
    }
}

/// The path below the commit root `sub` names; `None` for the root.
fn normalized(sub: Option<&str>) -> Option<&str> {
    sub.map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty() && *p != ".")
}

/// The tree at `sub` (the root when `None`) of the shared commit, judged
/// entry by entry by the same checks as an unpacked archive and held in
/// memory, ready to be packed.
pub(super) fn tree(
    shared: &Shared,
    url: &GitUrl,
    sub: Option<&str>,
    limits: &Limits,
) -> Result<Vec<MemEntry>, SourceError> {
    let sub = normalized(sub);
    shared.with_handle(|repo| {
        let entries = match shared.subtree(sub, limits) {
            Some(entries) => entries,
            None => shared.list_sub(repo, url, sub, limits)?,
        };
        read_entries(repo, url, &entries, limits)
    })
}

/// The tree object `id` (a skill's directory the lock names), judged and
/// held exactly as [`tree`] does; `Ok(None)` when the repository does not
/// hold it.
pub(super) fn tree_by_id(
    shared: &Shared,
    url: &GitUrl,
    id: ObjectId,
    limits: &Limits,
) -> Result<Option<Vec<MemEntry>>, SourceError> {
    shared.with_handle(|repo| {
        if !repo.has_object(id) {
            return Ok(None);
        }
        let entries = list(repo, id, url, limits)?.entries;
        read_entries(repo, url, &entries, limits).map(Some)
    })
}

/// Reads the blobs `entries` list into a [`MemoryTree`], within `limits`.
fn read_entries(
    repo: &gix::Repository,
    url: &GitUrl,
    entries: &[Entry],
    limits: &Limits,
) -> Result<Vec<MemEntry>, SourceError> {
    let total: u64 = entries
        .iter()
        .filter(|e| e.kind == Kind::Blob && !is_symlink(e.mode))
        .map(|e| e.size)
        .sum();
    if total > limits.max_unpacked {
        return Err(UnpackError::UnpackedTooLarge {
            limit: limits.max_unpacked,
        }
        .into());
    }
    let mut tree = MemoryTree::new(limits);
    for e in entries {
        match e.kind {
            Kind::Dir => tree.dir(&e.path)?,
            // Refused like a symlink in any archive.
            Kind::Blob if is_symlink(e.mode) => tree.forbidden(&e.path, EntryKind::Symlink)?,
            Kind::Blob => {
                // Read in place: the object's buffer goes back to the
                // handle for the next blob.
                let body =
                    blob(repo, e).map_err(|err| objects::error("reading objects of", url, err))?;
                tree.file(&e.path, &body.data, e.mode & 0o111 != 0)?;
            }
        }
    }
    Ok(tree.finish())
}

/// The `SKILL.md` (or `skill.md`) files anywhere in the shared commit, as
/// (path of the directory holding it, contents), sorted by path. Files
/// over `max_file` bytes and symlinks are left out; a commit too large to
/// list within the listing limits is refused with the listing's error.
pub(super) fn skill_files(
    workers: &Workers,
    shared: &Shared,
    url: &GitUrl,
    limits: &Limits,
    max_file: u64,
) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
    let wanted = skill_entries(shared, url, limits, max_file)?;
    // Decoding a thousand blobs is worth the second core.
    workers
        .chunked(&wanted, 64, |part| {
            shared.with_handle(|repo| {
                part.iter()
                    .map(|(dir, e)| {
                        let body = blob(repo, e)
                            .map_err(|err| objects::error("reading objects of", url, err))?;
                        Ok((dir.clone(), body.detach().data))
                    })
                    .collect()
            })
        })
        .into_iter()
        .collect()
}

/// The directories [`skill_files`] reads the `SKILL.md` of, without
/// reading it: for a caller that reads the whole of each tree anyway.
pub(super) fn skill_dirs(
    shared: &Shared,
    url: &GitUrl,
    limits: &Limits,
    max_file: u64,
) -> Result<Vec<String>, SourceError> {
    let wanted = skill_entries(shared, url, limits, max_file)?;
    Ok(wanted.into_iter().map(|(dir, _)| dir).collect())
}

/// The `SKILL.md` (or `skill.md`) entries of the shared commit, by the
/// directory holding each, sorted; see [`skill_files`].
fn skill_entries<'s>(
    shared: &'s Shared,
    url: &GitUrl,
    limits: &Limits,
    max_file: u64,
) -> Result<Vec<(String, &'s Entry)>, SourceError> {
    let Some(Listing { entries, .. }) = shared.listing.as_ref() else {
        // Listed again only to report why it failed.
        shared.with_handle(|repo| shared.list_sub(repo, url, None, limits))?;
        return Err(objects::error("listing of", url, "the listing failed"));
    };
    let mut wanted: Vec<(String, &Entry)> = entries
        .iter()
        .filter(|e| e.kind == Kind::Blob && !is_symlink(e.mode) && e.size <= max_file)
        .filter_map(|e| {
            let path = std::str::from_utf8(&e.path).ok()?;
            let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
            skillpm_core::skill::SKILL_FILES
                .contains(&file)
                .then(|| (dir.to_string(), e))
        })
        .collect();
    wanted.sort_by(|a, b| a.0.cmp(&b.0));
    // `SKILL.md` wins over `skill.md` in the same directory.
    wanted.dedup_by(|b, a| a.0 == b.0);
    Ok(wanted)
}

/// The shared commit's files by path, for reading its plugin
/// marketplaces ([`crate::source::marketplace`]): looked up in its one
/// listing, indexed once (a marketplace may look up thousands of paths).
pub(super) struct Files<'s> {
    shared: &'s Shared,
    url: &'s GitUrl,
    by_path: HashMap<&'s [u8], &'s Entry>,
}

impl<'s> Files<'s> {
    /// `None` when the commit was too large to list.
    pub(super) fn new(shared: &'s Shared, url: &'s GitUrl) -> Option<Self> {
        let listing = shared.listing.as_ref()?;
        let by_path = listing.entries.iter().map(|e| (&e.path[..], e)).collect();
        Some(Files {
            shared,
            url,
            by_path,
        })
    }
}

impl Tree for Files<'_> {
    fn kind(&self, path: &str) -> Option<PathKind> {
        if path.is_empty() {
            return Some(PathKind::Dir);
        }
        let e = self.by_path.get(path.as_bytes())?;
        Some(match e.kind {
            Kind::Dir => PathKind::Dir,
            Kind::Blob if is_symlink(e.mode) => PathKind::Symlink,
            Kind::Blob => PathKind::File,
        })
    }

    fn read(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, MarketplaceError> {
        let Some(e) = self.by_path.get(path.as_bytes()) else {
            return Ok(None);
        };
        match self.kind(path) {
            Some(PathKind::File) => {}
            Some(PathKind::Symlink) => return Err(MarketplaceError::Symlink { file: path.into() }),
            _ => return Ok(None),
        }
        // Refused by the size the tree lists, before a byte is read.
        if e.size > max {
            return Err(MarketplaceError::TooLarge {
                file: path.into(),
                max,
            });
        }
        self.shared.with_handle(|repo| {
            let body = blob(repo, e).map_err(|err| {
                MarketplaceError::Read(
                    objects::error("reading objects of", self.url, err).to_string(),
                )
            })?;
            Ok(Some(body.detach().data))
        })
    }
}

/// The body of the blob `e`, which must be the size the tree listed for
/// it (sizes are summed against the caps before any body is read).
fn blob<'r>(repo: &'r gix::Repository, e: &Entry) -> io::Result<gix::Object<'r>> {
    let obj = repo
        .find_object(e.oid)
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err.to_string()))?;
    if obj.kind != gix::object::Kind::Blob || obj.data.len() as u64 != e.size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "object {} is not the {}-byte blob the tree lists",
                e.oid, e.size
            ),
        ));
    }
    Ok(obj)
}

fn is_symlink(mode: u32) -> bool {
    mode & 0o170000 == 0o120000
}

/// Lists the tree `root` recursively, parents before their contents, with
/// blob sizes read from the object headers; stops as soon as the entry
/// count or a path passes its limit, and never decodes a tree object
/// larger than the unpacked limit.
fn list(
    repo: &gix::Repository,
    root: ObjectId,
    url: &GitUrl,
    limits: &Limits,
) -> Result<Listing, SourceError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut dirs = HashMap::new();
    // (path, its children still to visit, its index in `entries`).
    let root_children = children(repo, root, url, limits)?.into_iter();
    let mut stack = vec![(Vec::new(), root_children, None)];
    while let Some((prefix, iter, _)) = stack.last_mut() {
        let Some((mode, name, oid)) = iter.next() else {
            if let Some((path, _, Some(at))) = stack.pop() {
                dirs.insert(path, at + 1..entries.len());
            }
            continue;
        };
        let mut path = prefix.clone();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(&name);
        // Names git itself never writes into a tree (its fsck refuses
        // them): `.` would merge a tree into its parent, where a path in
        // an archive may say `./x`, so trees are checked here, not by the
        // unpacker.
        if matches!(&name[..], b"" | b"." | b"..") || name.contains(&b'/') {
            return Err(UnpackError::InvalidPath {
                path: String::from_utf8_lossy(&path).escape_debug().to_string(),
                reason: "is a tree entry named `.`, `..`, nothing, or with a `/`",
            }
            .into());
        }
        if entries.len() as u64 >= limits.max_entries {
            return Err(UnpackError::TooManyEntries {
                limit: limits.max_entries,
            }
            .into());
        }
        if path.len() > limits.max_path_len {
            return Err(UnpackError::PathTooLong {
                path: String::from_utf8_lossy(&path[..path.len().min(64)]).into_owned() + "...",
                len: path.len(),
                limit: limits.max_path_len,
            }
            .into());
        }
        // A submodule (gitlink) is installed as an empty directory: the
        // commit records its id, not its files, and skillpm does not
        // fetch submodules.
        let (kind, size) = if mode.is_tree() || mode.is_commit() {
            (Kind::Dir, 0)
        } else {
            let size = repo
                .find_header(oid)
                .map_err(|e| objects::error("listing of", url, e))?
                .size();
            (Kind::Blob, size)
        };
        if mode.is_tree() {
            let below = children(repo, oid, url, limits)?;
            stack.push((path.clone(), below.into_iter(), Some(entries.len())));
        }
        entries.push(Entry {
            mode: u32::from(mode.value()),
            kind,
            oid,
            size,
            path,
        });
    }
    Ok(Listing { entries, dirs })
}

/// The entries of one tree object: (mode, name, id).
fn children(
    repo: &gix::Repository,
    tree: ObjectId,
    url: &GitUrl,
    limits: &Limits,
) -> Result<Vec<(gix::object::tree::EntryMode, Vec<u8>, ObjectId)>, SourceError> {
    let size = repo
        .find_header(tree)
        .map_err(|e| objects::error("listing of", url, e))?
        .size();
    if size > limits.max_unpacked {
        return Err(UnpackError::UnpackedTooLarge {
            limit: limits.max_unpacked,
        }
        .into());
    }
    let tree = repo
        .find_tree(tree)
        .map_err(|e| objects::error("listing of", url, e))?;
    let decoded = tree
        .decode()
        .map_err(|e| objects::error("listing of", url, e))?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| (e.mode, e.filename.to_vec(), e.oid.to_owned()))
        .collect())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::process::Command;

    /// Runs `git` in `dir` as a test's author; it must succeed.
    pub(in crate::source::git) fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs")
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    pub(in crate::source::git) fn head_of(dir: &Path) -> String {
        let out = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(dir)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The skills of a commit read on one thread share one handle, and
    /// each still gets exactly its own files.
    #[test]
    fn skills_of_a_commit_reuse_its_handles() {
        let work = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c"] {
            let dir = work.path().join("skills").join(n);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), format!("---\nname: {n}\n---\n")).unwrap();
        }
        git(work.path(), &["init", "-q"]);
        git(work.path(), &["add", "-A"]);
        git(work.path(), &["commit", "-qm", "skills"]);
        let commit = head_of(work.path());
        let url = GitUrl::parse(&format!("file://{}", work.path().display())).unwrap();
        let limits = Limits::default();
        let handles = Arc::default();
        let shared =
            Shared::new(&work.path().join(".git"), &url, &commit, &limits, &handles).unwrap();
        for n in ["a", "b", "c"] {
            let entries = tree(&shared, &url, Some(&format!("skills/{n}")), &limits).unwrap();
            let files: Vec<(String, Vec<u8>)> = entries
                .into_iter()
                .filter_map(|e| match e {
                    MemEntry::File { path, data, .. } => Some((path, data)),
                    MemEntry::Dir(_) => None,
                })
                .collect();
            let want = format!("---\nname: {n}\n---\n").into_bytes();
            assert_eq!(files, [("SKILL.md".to_string(), want)]);
        }
        let found = skill_files(&Workers::new(), &shared, &url, &limits, 1 << 20).unwrap();
        assert_eq!(found.len(), 3);
        assert_eq!(shared.handles_made.load(Ordering::Relaxed), 1);
        // Another commit's reads between them take nothing from its handles.
        let other =
            Shared::new(&work.path().join(".git"), &url, &commit, &limits, &handles).unwrap();
        tree(&other, &url, Some("skills/a"), &limits).unwrap();
        tree(&shared, &url, Some("skills/a"), &limits).unwrap();
        assert_eq!(other.handles_made.load(Ordering::Relaxed), 1);
        assert_eq!(shared.handles_made.load(Ordering::Relaxed), 1);
    }
}
