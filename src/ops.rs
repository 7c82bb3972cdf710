//! The install-side commands: `init`, `add`, `remove`, `install`,
//! `update`, `outdated`, `list`, `verify`.
//!
//! Every command that changes disk goes through [`sync`]: resolve (lock
//! first), plan (lock vs disk), prepare (fetch and verify into the cache,
//! in parallel), install (stage beside the destination, swap in), and
//! finally write the lock (temp file + rename). The lock is written last,
//! so an interrupted run leaves each skill either old or new and a lock
//! that the next run repairs against.

use crate::cache::Cache;
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::install::{self, Action, Marker};
use crate::lockfile::{write_atomic, LockedSkill, LockedSource, Lockfile};
use crate::manifest::{init_template, Dependency, Manifest, ManifestEditor};
use crate::project::Project;
use crate::report::{Event, Reporter};
use crate::resolve::{Refresh, Resolver};
use crate::source::registry::Registries;
use crate::source::{git, path, SourceError};
use crate::spec::Spec;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many downloads run at once.
pub const DOWNLOAD_CONCURRENCY: usize = 16;

/// Flags shared by the commands that install.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Fail instead of changing the lock.
    pub locked: bool,
    /// `locked`, and no network access.
    pub frozen: bool,
    /// Use the user manifest and `~/.agents/skills`.
    pub global: bool,
    /// Cache directory; `None` means the default.
    pub cache_dir: Option<PathBuf>,
}

impl Options {
    fn cache(&self) -> Result<Cache> {
        self.cache_dir
            .clone()
            .or_else(Cache::default_dir)
            .map(Cache::new)
            .ok_or_else(|| Error::Other("no cache directory: set XDG_CACHE_HOME or HOME".into()))
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub installed: usize,
    pub from_cache: usize,
    pub removed: usize,
    pub unchanged: usize,
    pub lock_written: bool,
    pub elapsed: Duration,
}

impl Summary {
    pub fn line(&self) -> String {
        let mut s = format!(
            "Installed {} skill{} ({} from cache)",
            self.installed,
            if self.installed == 1 { "" } else { "s" },
            self.from_cache
        );
        if self.removed > 0 {
            s.push_str(&format!(", removed {}", self.removed));
        }
        if self.unchanged > 0 {
            s.push_str(&format!(", {} unchanged", self.unchanged));
        }
        s.push_str(&format!(" in {:.2}s", self.elapsed.as_secs_f64()));
        s
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Other(format!("cannot start the async runtime: {e}")))
}

/// `skillpm init`: a commented `skills.toml`, never overwriting one.
pub fn init(env: &Environment) -> Result<PathBuf> {
    let dir = env
        .project_override
        .as_ref()
        .map(|p| env.cwd.join(p))
        .unwrap_or_else(|| env.cwd.clone());
    let path = dir.join(crate::engine::config::MANIFEST_FILE);
    if path.exists() {
        return Err(Error::Other(format!("{} already exists", path.display())));
    }
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    write_atomic(&path, init_template()).map_err(Error::io(&path))?;
    Ok(path)
}

/// `skillpm install`: make disk match the lock (resolving only what the
/// lock lacks).
pub fn install(env: &Environment, opts: &Options, reporter: &dyn Reporter) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let _guard = project.lock()?;
    let manifest = project.read_manifest()?;
    sync(&project, &manifest, &Refresh::Nothing, opts, reporter)
}

/// `skillpm update [NAME...]`: re-resolve within the requirements.
pub fn update(
    env: &Environment,
    names: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let _guard = project.lock()?;
    let manifest = project.read_manifest()?;
    let refresh = if names.is_empty() {
        Refresh::All
    } else {
        let mut set = BTreeSet::new();
        for n in names {
            let name = SkillName::new(n).map_err(|e| Error::Other(format!("`{n}`: {e}")))?;
            if !manifest.skills.contains_key(&name) {
                return Err(Error::NotInManifest(n.clone()));
            }
            set.insert(name);
        }
        Refresh::Only(set)
    };
    sync(&project, &manifest, &refresh, opts, reporter)
}

/// `skillpm add SPEC...`: edit the manifest, resolve the new entries,
/// install. The manifest is only written once everything installed.
pub fn add(
    env: &Environment,
    specs: &[String],
    subpath: Option<&str>,
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let parsed: Vec<Spec> = specs
        .iter()
        .map(|s| Spec::parse(s))
        .collect::<Result<_, _>>()?;
    if let Some(p) = subpath {
        crate::spec::check_subpath(p)?;
    }
    let project = Project::locate(env, opts.global)?;
    let _guard = project.lock()?;
    let text = project.manifest_text()?;
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    let cache = opts.cache()?;
    let mut names = BTreeSet::new();
    for spec in parsed {
        let (name, dep) = match spec {
            Spec::Registry {
                name,
                req,
                registry,
            } => (name, Dependency::Registry { req, registry }),
            Spec::Git { url, reference } => {
                // The name comes from the skill itself, so fetch it first.
                let repo = git::fetch(&cache, &url)?;
                let commit = git::resolve_ref(&repo, &url, reference.as_ref())?;
                let p = git::pack_commit(&cache, &url, &commit, subpath, &Limits::default())?;
                let dep = Dependency::Git {
                    url,
                    reference,
                    path: subpath.map(str::to_string),
                };
                (p.name, dep)
            }
            Spec::Path { path: rel } => {
                let rel_to_project = relative_to_project(env, &project, &rel);
                let p = path::pack(&project.dir, &rel_to_project)?;
                (
                    p.name,
                    Dependency::Path {
                        path: rel_to_project,
                    },
                )
            }
        };
        editor.set_dependency(&name, &dep);
        names.insert(name);
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    let summary = sync(&project, &manifest, &Refresh::Only(names), opts, reporter)?;
    if new_text != text {
        write_atomic(&project.manifest_path, &new_text)
            .map_err(Error::io(&project.manifest_path))?;
    }
    Ok(summary)
}

/// A path typed relative to the working directory, made relative to the
/// project so the manifest stays valid wherever skillpm runs.
fn relative_to_project(env: &Environment, project: &Project, rel: &str) -> String {
    let abs = normalize(&env.cwd.join(rel));
    match abs.strip_prefix(&project.dir) {
        Ok(p) => format!("./{}", p.display()),
        Err(_) => abs.display().to_string(),
    }
}

/// Removes `.` and `..` components lexically (the directory may not exist).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `skillpm remove NAME...`: from manifest, lock and disk.
pub fn remove(
    env: &Environment,
    names: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let _guard = project.lock()?;
    let text = project.manifest_text()?;
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    for n in names {
        let name = SkillName::new(n).map_err(|e| Error::Other(format!("`{n}`: {e}")))?;
        if !editor.remove_dependency(&name) {
            return Err(Error::NotInManifest(n.clone()));
        }
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    let summary = sync(&project, &manifest, &Refresh::Nothing, opts, reporter)?;
    write_atomic(&project.manifest_path, &new_text).map_err(Error::io(&project.manifest_path))?;
    Ok(summary)
}

/// Resolve, plan, prepare, install, write the lock. The caller holds the
/// project lock.
fn sync(
    project: &Project,
    manifest: &Manifest,
    refresh: &Refresh,
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let start = Instant::now();
    let old_text = std::fs::read_to_string(&project.lock_path).ok();
    let old = project.read_lock()?;
    let cache = opts.cache()?;
    let offline = opts.frozen;
    let registries = Registries::new(cache.clone(), offline);
    let rt = runtime()?;
    let resolver = Resolver {
        project,
        manifest,
        cache: &cache,
        registries: &registries,
        reporter,
        offline,
        limits: Limits::default(),
    };
    let resolved = rt.block_on(resolver.resolve(&old, refresh))?;
    let new = resolved.lock;
    if opts.locked || opts.frozen {
        if let Some(diff) = describe_difference(&old, &new) {
            return Err(Error::LockedMismatch(diff));
        }
    }
    let targets = project.targets(manifest)?;
    let previous: Vec<SkillName> = old.skills.iter().map(|s| s.name.clone()).collect();
    let plans: Vec<install::Plan> = targets
        .iter()
        .map(|root| install::plan(root, &new.skills, &previous))
        .collect();

    let mut summary = Summary::default();
    let mut needed: Vec<&LockedSkill> = Vec::new();
    for p in &plans {
        for s in p.needed() {
            if !needed.iter().any(|n| n.checksum == s.checksum) {
                needed.push(s);
            }
        }
    }
    let mut trees: HashMap<Checksum, (PathBuf, bool)> = HashMap::new();
    if !needed.is_empty() {
        let _cache_guard = cache.lock()?;
        trees = rt.block_on(prepare(
            &cache,
            &registries,
            &needed,
            &resolved.packed,
            offline,
            reporter,
        ))?;
    }
    for p in &plans {
        install::sweep_leftovers(&p.root);
        let mut jobs: Vec<(&LockedSkill, &Path)> = Vec::new();
        for s in p.needed() {
            let Some((tree, _)) = trees.get(&s.checksum) else {
                return Err(Error::Other(format!(
                    "internal: {} was not prepared",
                    s.name
                )));
            };
            jobs.push((s, tree.as_path()));
        }
        install::install_all(&p.root, &jobs)?;
        // Reported in plan order, after the parallel installs, so the
        // output is the same on every run.
        for a in &p.actions {
            match a {
                Action::Install(s) | Action::Replace(s) => {
                    let from_cache = trees.get(&s.checksum).is_some_and(|(_, c)| *c);
                    summary.installed += 1;
                    summary.from_cache += usize::from(from_cache);
                    reporter.report(Event::Installed {
                        name: s.name.to_string(),
                        version: s.version.to_string(),
                        from_cache,
                    });
                }
                Action::Remove(name) => {
                    if install::remove_one(&p.root, name)? {
                        summary.removed += 1;
                        reporter.report(Event::Removed {
                            name: name.to_string(),
                        });
                    }
                }
                Action::Unchanged(_) => summary.unchanged += 1,
            }
        }
    }
    let new_text = new.to_toml_string();
    let empty_and_absent = old_text.is_none() && new.skills.is_empty();
    if old_text.as_deref() != Some(new_text.as_str())
        && !opts.locked
        && !opts.frozen
        && !empty_and_absent
    {
        write_atomic(&project.lock_path, &new_text).map_err(Error::io(&project.lock_path))?;
        summary.lock_written = true;
    }
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// The first difference between two locks, naming the package.
fn describe_difference(old: &Lockfile, new: &Lockfile) -> Option<String> {
    for n in &new.skills {
        match old.get(&n.name) {
            None => {
                return Some(format!(
                    "{} is in skills.toml but not in skills.lock",
                    n.name
                ))
            }
            Some(o) if o != n => {
                return Some(format!(
                    "{} is locked at {} ({}) but skills.toml now resolves to {} ({})",
                    n.name, o.version, o.source, n.version, n.source
                ))
            }
            _ => {}
        }
    }
    old.skills
        .iter()
        .find(|o| new.get(&o.name).is_none())
        .map(|o| format!("{} is in skills.lock but not in skills.toml", o.name))
}

/// Makes sure the cache holds an unpacked tree for every needed skill.
/// Returns each checksum's tree and whether it was already cached.
async fn prepare(
    cache: &Cache,
    registries: &Registries,
    needed: &[&LockedSkill],
    packed: &HashMap<Checksum, Vec<u8>>,
    offline: bool,
    reporter: &dyn Reporter,
) -> Result<HashMap<Checksum, (PathBuf, bool)>> {
    let limits = Limits::default();
    let mut out = HashMap::new();
    let mut downloads = Vec::new();
    for s in needed {
        if cache.has_tree(&s.checksum) {
            out.insert(s.checksum, (cache.tree_path(&s.checksum), true));
            continue;
        }
        let local = packed
            .get(&s.checksum)
            .cloned()
            .or_else(|| cache.read_tarball(&s.checksum));
        if let Some(bytes) = local {
            let tree = registry_tree(cache, s, &bytes, &limits)?;
            out.insert(s.checksum, (tree, true));
            continue;
        }
        match &s.source {
            LockedSource::Registry { url } => downloads.push((*s, url.clone())),
            LockedSource::Git { url, commit } => {
                if offline && !git::has_commit(cache, url, commit) {
                    return Err(SourceError::Offline(format!(
                        "fetching {} from {}",
                        s.name,
                        url.redacted()
                    ))
                    .into());
                }
                if !git::has_commit(cache, url, commit) {
                    git::fetch(cache, url)?;
                }
                let p = git::pack_commit(cache, url, commit, s.path.as_deref(), &limits)?;
                let bytes = verified(s, p.bytes)?;
                cache.store_tarball(&s.checksum, &bytes)?;
                out.insert(
                    s.checksum,
                    (cache.ensure_tree(&s.checksum, &bytes, &limits)?, false),
                );
            }
            LockedSource::Path { path: rel } => {
                return Err(Error::Other(format!(
                    "{}: the local directory {rel} no longer matches the lock; run `skillpm install` to update it",
                    s.name
                )));
            }
        }
    }
    if downloads.is_empty() {
        return Ok(out);
    }
    reporter.downloads_starting(downloads.len());
    let fetched: Vec<(Checksum, Vec<u8>)> = stream::iter(downloads)
        .map(|(s, url)| async move {
            reporter.report(Event::Downloading {
                name: s.name.to_string(),
                version: s.version.to_string(),
            });
            let (bytes, versions) = futures_util::join!(
                registries.download(&url, &s.name, &s.version, &s.checksum),
                registries.versions(&url, &s.name)
            );
            let bytes = bytes?;
            if let Ok(vs) = versions {
                if vs.iter().any(|v| v.vers == s.version && v.yanked) {
                    reporter.report(Event::Warning {
                        message: format!(
                            "{}@{} is yanked; installing it because the lock pins it",
                            s.name, s.version
                        ),
                    });
                }
            }
            reporter.report(Event::Downloaded {
                name: s.name.to_string(),
                bytes: bytes.len() as u64,
            });
            Ok::<_, Error>((s.checksum, bytes))
        })
        .buffer_unordered(DOWNLOAD_CONCURRENCY)
        .try_collect()
        .await?;
    reporter.downloads_finished();
    for (c, bytes) in fetched {
        let Some(s) = needed.iter().find(|s| s.checksum == c) else {
            continue;
        };
        // Unpack and check before caching the tarball, so a refused
        // package leaves nothing behind that a later run could trust.
        let tree = registry_tree(cache, s, &bytes, &limits)?;
        cache.store_tarball(&c, &bytes)?;
        out.insert(c, (tree, false));
    }
    Ok(out)
}

/// Unpacks a tarball into the cache; for registry packages the tree must
/// also be what the index claimed (see [`check_identity`]).
fn registry_tree(cache: &Cache, s: &LockedSkill, bytes: &[u8], limits: &Limits) -> Result<PathBuf> {
    let tree = match s.source {
        LockedSource::Registry { .. } => {
            cache.ensure_tree_checked(&s.checksum, bytes, limits, |dir| check_identity(s, dir))
        }
        _ => cache.ensure_tree(&s.checksum, bytes, limits),
    };
    tree.map_err(|e| match e {
        crate::cache::CacheError::Unpack(u) => {
            Error::Other(format!("refusing to install {}@{}: {u}", s.name, s.version))
        }
        e => e.into(),
    })
}

/// A registry tarball is only trusted to be what the index says it is if
/// its own `SKILL.md` agrees: present at the top, parseable, and naming the
/// same package and version. (The checksum only proves the server sent the
/// bytes it indexed, not that they are the package it named.)
fn check_identity(s: &LockedSkill, dir: &Path) -> std::result::Result<(), String> {
    let refuse = |why: String| {
        format!(
            "refusing to install {}@{}: the registry's tarball {why}",
            s.name, s.version
        )
    };
    let file = skillpm_core::skill::SKILL_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| refuse("has no SKILL.md at its top level".into()))?;
    let doc = skillpm_core::skill::read(&file)
        .map_err(|e| refuse(format!("has an unusable SKILL.md: {}", e.detail())))?;
    match doc.name() {
        Some(n) if n == s.name.as_str() => {}
        Some(n) => {
            return Err(refuse(format!(
                "holds a skill named `{}`, not `{}`",
                n.escape_debug(),
                s.name
            )))
        }
        None => return Err(refuse("has a SKILL.md without `name`".into())),
    }
    let version = doc.version();
    match version.as_deref().map(|v| semver::Version::parse(v.trim())) {
        Some(Ok(v)) if v == s.version => Ok(()),
        Some(_) => Err(refuse(format!(
            "says version {}, not {}",
            version.unwrap_or_default().escape_debug(),
            s.version
        ))),
        None => Err(refuse("has a SKILL.md without `version`".into())),
    }
}

fn verified(s: &LockedSkill, bytes: Vec<u8>) -> Result<Vec<u8>> {
    let actual = Checksum::of_bytes(&bytes);
    if actual != s.checksum {
        return Err(SourceError::ChecksumMismatch {
            package: format!("{}@{}", s.name, s.version),
            expected: s.checksum,
            actual,
        }
        .into());
    }
    Ok(bytes)
}

/// One row of `skillpm list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListRow {
    pub name: String,
    pub version: String,
    pub source: String,
    /// Per install root: `installed`, `missing` or `other-version`.
    pub state: String,
}

/// `skillpm list`: what the lock says, and whether disk agrees.
pub fn list(env: &Environment, opts: &Options) -> Result<Vec<ListRow>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let targets = project.targets(&manifest)?;
    Ok(lock
        .skills
        .iter()
        .map(|s| {
            let states: BTreeSet<&str> = targets
                .iter()
                .map(|t| match Marker::read(&t.join(s.name.as_str())) {
                    Some(m) if m.checksum == s.checksum => "installed",
                    Some(_) => "other-version",
                    None => "missing",
                })
                .collect();
            ListRow {
                name: s.name.to_string(),
                version: s.version.to_string(),
                source: s.source.to_string(),
                state: states.into_iter().collect::<Vec<_>>().join("+"),
            }
        })
        .collect())
}

/// One row of `skillpm outdated`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OutdatedRow {
    pub name: String,
    pub current: String,
    pub wanted: String,
    pub latest: String,
}

/// `skillpm outdated`: current / wanted (within the requirement) / latest
/// for registry dependencies.
pub fn outdated(env: &Environment, opts: &Options) -> Result<Vec<OutdatedRow>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let registries = Registries::new(opts.cache()?, opts.frozen);
    let rt = runtime()?;
    let mut rows = Vec::new();
    for (name, dep) in &manifest.skills {
        let Dependency::Registry { req, registry } = dep else {
            continue;
        };
        let url = project.registry_url(&manifest, registry.as_deref())?;
        let versions = rt.block_on(registries.versions(&url, name))?;
        let live = versions.iter().filter(|v| !v.yanked);
        let wanted = live
            .clone()
            .filter(|v| req.matches(&v.vers))
            .map(|v| &v.vers)
            .max();
        let latest = live.map(|v| &v.vers).max();
        let show =
            |v: Option<&semver::Version>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        rows.push(OutdatedRow {
            name: name.to_string(),
            current: show(lock.get(name).map(|l| &l.version)),
            wanted: show(wanted),
            latest: show(latest),
        });
    }
    Ok(rows)
}

/// A difference `verify` found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifyIssue {
    pub skill: String,
    pub root: String,
    pub problem: String,
}

/// `skillpm verify`: compares every installed skill, file by file, with
/// its verified tree in the cache.
pub fn verify(env: &Environment, opts: &Options) -> Result<Vec<VerifyIssue>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let cache = opts.cache()?;
    let mut issues = Vec::new();
    for root in project.targets(&manifest)? {
        for s in &lock.skills {
            let dir = root.join(s.name.as_str());
            let issue = |problem: String| VerifyIssue {
                skill: s.name.to_string(),
                root: root.display().to_string(),
                problem,
            };
            match Marker::read(&dir) {
                None => {
                    issues.push(issue("not installed".into()));
                    continue;
                }
                Some(m) if m.checksum != s.checksum => {
                    issues.push(issue(format!(
                        "installed {} differs from the lock's {}",
                        m.checksum, s.checksum
                    )));
                    continue;
                }
                Some(_) => {}
            }
            if !cache.has_tree(&s.checksum) {
                issues.push(issue(
                    "not in the cache; run `skillpm install` to fetch it, then verify again".into(),
                ));
                continue;
            }
            for p in diff_trees(&cache.tree_path(&s.checksum), &dir) {
                issues.push(issue(p));
            }
        }
    }
    Ok(issues)
}

/// Files that differ between the pristine tree and the installed one.
fn diff_trees(pristine: &Path, installed: &Path) -> Vec<String> {
    let a = files_with_hashes(pristine);
    let b = files_with_hashes(installed);
    let mut out = Vec::new();
    for (rel, h) in &a {
        match b.get(rel) {
            None => out.push(format!("missing file {rel}")),
            Some(h2) if h2 != h => out.push(format!("modified file {rel}")),
            _ => {}
        }
    }
    for rel in b.keys() {
        if !a.contains_key(rel) && rel != install::MARKER {
            out.push(format!("added file {rel}"));
        }
    }
    out
}

fn files_with_hashes(root: &Path) -> std::collections::BTreeMap<String, Checksum> {
    let mut out = std::collections::BTreeMap::new();
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
            match e.file_type() {
                Ok(ft) if ft.is_dir() => stack.push((e.path(), child)),
                Ok(_) => {
                    if let Ok(f) = std::fs::File::open(e.path()) {
                        if let Ok(c) = Checksum::of_reader(f) {
                            out.insert(child, c);
                        }
                    }
                }
                Err(_) => {}
            }
        }
    }
    out
}

/// Fills in `installed` for catalog entries that skillpm installed, so
/// `status` shows the installed version beside each skill.
pub fn annotate_installed(cat: &mut crate::engine::catalog::Catalog) {
    for s in &mut cat.skills {
        if let Some(m) = Marker::read(&s.path) {
            s.installed = Some(m.version);
        }
    }
}
