//! `install` and `update`, and the pipeline every command that changes
//! disk goes through: resolve (lock first) → plan (lock vs disk) → prepare
//! (cache, or fetch + verify + unpack, in parallel) → apply (stage, swap)
//! → write the lock (a temporary file, written and synced with the
//! install journal before any tree moves, renamed in once every tree is
//! in place). The next command finishes or rolls back, from the journal,
//! a run interrupted between ([`journal`]), so the agent sees the old
//! state or the whole new one, recorded either way.

use super::{parse_name, runtime, Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::install::journal::{self, Journal, To};
use crate::install::{self, Action, Plan, Prepared, Staged};
use crate::parallel::Workers;
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile, PluginPin};
use crate::project::manifest::Manifest;
use crate::project::{Project, ProjectError, ProjectGuard};
use crate::report::{Event, Reporter};
use crate::resolve::{self, Refresh};
use crate::source::Sources;
use skillpm_core::name::SkillName;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `skillpm install`: make disk match the lock (resolving only what the
/// lock lacks).
pub fn install(env: &Environment, opts: &Options, reporter: &dyn Reporter) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let run = Run::new(env, &project, opts, "install", reporter)?;
    let manifest = project.read_manifest()?;
    let outcome = run.sync(&manifest, &Refresh::Nothing, reporter);
    run.finish(outcome)
}

/// `skillpm update [NAME...]`: re-resolve within the requirements.
pub fn update(
    env: &Environment,
    names: &[String],
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let project = Project::locate(env, opts.global)?;
    let run = Run::new(env, &project, opts, "update", reporter)?;
    let manifest = project.read_manifest()?;
    let refresh = if names.is_empty() {
        Refresh::All
    } else {
        let mut set = BTreeSet::new();
        for n in names {
            let name = parse_name(n)?;
            if !manifest.skills.contains_key(&name) {
                return Err(Error::NotInManifest(n.clone()));
            }
            set.insert(name);
        }
        Refresh::Only(set)
    };
    let outcome = run.sync(&manifest, &refresh, reporter);
    run.finish(outcome)
}

/// Finishes or rolls back what an interrupted run left in the project
/// `env` names, and in the user manifest's directory, before a command
/// that does not install reads either (`journal::recover`); what each
/// came to, one line each. Only a journal found takes the project lock.
pub fn recover(env: &Environment, opts: &Options) -> Result<Vec<journal::Recovered>> {
    let mut done = Vec::new();
    let project_dir = Some(env.project_dir().unwrap_or_else(|| env.cwd.clone()));
    for (global, dir) in [(false, project_dir), (true, env.config_dir.clone())] {
        let Some(dir) = dir else { continue };
        if std::fs::symlink_metadata(dir.join(journal::JOURNAL)).is_err() {
            continue;
        }
        let project = Project::locate(env, global)?;
        let _guard = project.lock(&opts.cache()?)?;
        done.extend(journal::recover(&project)?);
    }
    Ok(done)
}

/// One command's run: the project (locked against concurrent runs), its
/// options, the sources, which remember what they fetched and resolved
/// so nothing is done twice, and the threads and runtime its work runs
/// on.
pub(super) struct Run<'a> {
    _guard: ProjectGuard,
    /// The command, as a journal it leaves names it.
    command: &'static str,
    pub project: &'a Project,
    pub opts: &'a Options,
    pub cache: crate::cache::Cache,
    pub sources: Sources,
    /// The command's worker threads (its environment's).
    pub workers: Workers,
    pub rt: tokio::runtime::Runtime,
}

impl<'a> Run<'a> {
    /// Takes the project lock for `command`, first finishing or rolling
    /// back whatever an interrupted run left ([`journal::recover`]).
    pub fn new(
        env: &Environment,
        project: &'a Project,
        opts: &'a Options,
        command: &'static str,
        reporter: &dyn Reporter,
    ) -> Result<Self> {
        let cache = opts.cache()?;
        let _guard = project.lock(&cache)?;
        if let Some(done) = journal::recover(project)? {
            reporter.report(Event::Recovered {
                message: done.to_string(),
            });
        }
        let workers = env.workers.clone();
        let mut sources = Sources::new(cache.clone(), project.dir.clone(), opts.frozen, &workers);
        // skills.toml's [trust], for every source this run resolves or
        // fetches with (a command without skills.toml yet has none).
        let trust = match project.manifest_text() {
            Err(ProjectError::NoManifest(_)) => None,
            r => Some(Manifest::parse(&r?, &project.manifest_path)?.trust),
        };
        if let Some(trust) = trust {
            sources.trust(&trust, &project.dir)?;
        }
        Ok(Run {
            _guard,
            command,
            project,
            opts,
            cache,
            sources,
            workers,
            rt: runtime()?,
        })
    }

    /// Ends the run with its outcome. After a success nothing is left on
    /// the runtime, so its idle blocking threads are not waited for. After
    /// a failure the runtime is dropped as usual: a blocking task may
    /// still be removing a staging directory.
    pub fn finish<T>(self, outcome: Result<T>) -> Result<T> {
        if outcome.is_ok() {
            self.rt.shutdown_background();
        }
        outcome
    }

    /// Resolve, plan, prepare, install, write the lock. The caller holds
    /// the project lock.
    pub fn sync(
        &self,
        manifest: &Manifest,
        refresh: &Refresh,
        reporter: &dyn Reporter,
    ) -> Result<Summary> {
        self.sync_writing(manifest, refresh, reporter, |_| None)
    }

    /// [`Run::sync`] for a command that also rewrites the manifest:
    /// `manifest_text` gets the new lock and returns the text to write, if
    /// any. Lock and manifest are written together, behind one fsync
    /// barrier with the journal, and renamed in only once everything
    /// installed.
    pub fn sync_writing(
        &self,
        manifest: &Manifest,
        refresh: &Refresh,
        reporter: &dyn Reporter,
        manifest_text: impl FnOnce(&Lockfile) -> Option<String>,
    ) -> Result<Summary> {
        let start = Instant::now();
        let project = self.project;
        let locked = self.opts.locked || self.opts.frozen;
        let old_text = project.lock_text()?;
        let old = match &old_text {
            Some(t) => Lockfile::parse(t, &project.lock_path).map_err(ProjectError::from)?,
            None => Lockfile::default(),
        };
        let resolved = self.rt.block_on(resolve::resolve(
            project,
            manifest,
            &self.sources,
            reporter,
            &old,
            refresh,
            locked.then(|| self.opts.flag()),
        ))?;
        let new = resolved.lock;
        if locked {
            if let Some(diff) = describe_difference(&old, &new) {
                return Err(Error::LockedMismatch {
                    detail: diff,
                    flag: self.opts.flag(),
                });
            }
        }
        // [trust]: every locked git commit signed by an allowed key,
        // checked before anything is staged.
        self.rt.block_on(self.sources.check_signed_commits(&new))?;
        let roots = project.targets(manifest)?;
        // Only a run with linked roots needs to know whether links can be
        // made (a probe, on Windows alone).
        let symlinks = match roots.as_slice() {
            [_, _, ..] if !manifest.install_copy => install::probe_symlinks(&project.dir),
            _ => install::Symlinks::Allowed,
        };
        let mode = install::LinkMode::choose(manifest.install_copy, symlinks);
        // Leftovers of a killed run sit where this run stages its lock and
        // manifest.
        crate::fs::sweep_pending(&project.dir);
        let plans: Vec<Plan> =
            install::plan_all(&self.workers, &roots, &new.skills, &self.cache, mode);
        // The cache is held from here while this run fetches into it
        // or reads from it.
        let needed = needed(&plans);
        let cache_guard = match needed.as_slice() {
            [] => None,
            _ => Some(self.cache.lock()?),
        };
        // Before anything is staged: leftovers of an interrupted run
        // sit where this run's staging directories and files will.
        for p in &plans {
            install::sweep_leftovers(&p.root);
        }
        let mut prepared = Prepared::default();
        if let (Some(first), false) = (plans.first(), needed.is_empty()) {
            let root = &first.root;
            std::fs::create_dir_all(root).map_err(Error::io(root))?;
            prepared = self.rt.block_on(install::prepare(
                &self.workers,
                &self.cache,
                &self.sources,
                root,
                &needed,
                &resolved.packed,
                reporter,
            ))?;
        }
        let Prepared { trees, not_cached } = prepared;
        // The audit gate: after staging, before anything moves in.
        let accept = super::audit::Acceptance {
            policy: manifest.audit.clone(),
            allow: self.opts.allow.clone(),
        };
        super::audit::gate(&trees, &accept, reporter)?;
        // The keys that signed what was downloaded: a first signature is
        // pinned, a rotated key recorded.
        let mut new = self.signed(new);
        // Tools `doctor` downloaded for a skill stay pinned while it is.
        new.keep_downloads(&old);
        // Synced before any tree moves, renamed in once every tree is in
        // place: a run that fails before leaves the lock and the manifest
        // as they were.
        let writes = self.writes(&old_text, &new, manifest_text);
        let ready = Ready {
            plans,
            staged: trees,
            mode,
            old: &old,
            new: &new,
        };
        let done = self.commit(ready, reporter, &writes);
        drop(cache_guard);
        let cache_failures = not_cached;
        let mut warnings: Vec<String> = cache_failures.iter().map(|e| e.to_string()).collect();
        warnings.sort();
        for e in warnings {
            reporter.report(Event::Warning {
                message: format!("not cached: {e}"),
            });
        }
        let mut summary = done?;
        summary.elapsed = start.elapsed();
        Ok(summary)
    }

    /// `new` with each registry entry downloaded this run recording the
    /// key its index entry was signed by (verified, and held to the old
    /// lock's pin, before the download), and each git entry who signed
    /// its commit under skills.toml's `[trust]`.
    fn signed(&self, mut new: Lockfile) -> Lockfile {
        for s in &mut new.skills {
            if let Some(signer) = self.sources.commit_signer(s) {
                s.signed_by = signer;
                continue;
            }
            let LockedSource::Registry { url } = &s.source else {
                continue;
            };
            if let Some(signer) = self.sources.registry.signer(url, &s.name, &s.version) {
                s.signed_by = signer;
            }
        }
        new
    }

    /// The lock and the manifest this run writes, decided by the new lock
    /// alone: nothing under `--locked` or `--frozen`, no lock that would
    /// be unchanged (or empty where none was).
    fn writes(
        &self,
        old_text: &Option<String>,
        new: &Lockfile,
        manifest_text: impl FnOnce(&Lockfile) -> Option<String>,
    ) -> Writes {
        let project = self.project;
        let new_text = new.to_toml_string();
        let empty_and_absent = old_text.is_none() && new.skills.is_empty();
        let mut files = Vec::new();
        let lock = old_text.as_deref() != Some(new_text.as_str())
            && !self.opts.locked
            && !self.opts.frozen
            && !empty_and_absent;
        if lock {
            files.push((project.lock_path.clone(), new_text));
        }
        if let Some(text) = manifest_text(new) {
            files.push((project.manifest_path.clone(), text));
        }
        Writes { files, lock }
    }

    /// Records what changes in a journal written with the new lock and
    /// manifest, swaps the staged trees into every root, then puts the
    /// lock and the manifest in place and deletes the journal
    /// ([`journal`]). A step that fails rolls every root back.
    /// Why a registry skill moves to a lower version, which `update`
    /// never does by choice: the locked one was yanked, else what
    /// skills.toml asks no longer allows it or the registry dropped it.
    fn why_lower(&self, old: &LockedSkill, new: &LockedSkill) -> Option<String> {
        let (LockedSource::Registry { url }, LockedSource::Registry { .. }) =
            (&old.source, &new.source)
        else {
            return None;
        };
        if new.version >= old.version {
            return None;
        }
        Some(
            match self
                .sources
                .registry
                .seen_yanked(url, &old.name, &old.version)
            {
                true => format!("{} is yanked", old.version),
                false => format!(
                    "lower: skills.toml no longer allows {}, or the registry no longer lists it",
                    old.version
                ),
            },
        )
    }

    fn commit(
        &self,
        ready: Ready<'_>,
        reporter: &dyn Reporter,
        writes: &Writes,
    ) -> Result<Summary> {
        let Ready {
            mut plans,
            mut staged,
            mode,
            old,
            new,
        } = ready;
        let mut journal = Journal::new(self.project, self.command)?;
        let mut parked = Vec::with_capacity(plans.len());
        for p in &plans {
            let dir = match p.changes() {
                true => Some(parked_dir(&p.root)?),
                false => None,
            };
            let i = journal.root(&p.root, dir.as_ref().map(|d| d.path()))?;
            for (name, to) in p.actions.iter().filter_map(|a| becomes(a, mode)) {
                journal.change(i, name, to);
            }
            parked.push(dir);
        }
        // Only a run that records something needs its trees and its
        // records to change together; one that writes nothing leaves
        // every tree consistent with the lock however far it got.
        if writes.files.is_empty() {
            journal = Journal::new(self.project, self.command)?;
        }
        let pending = journal.write(writes.stage()?)?;
        let mut summary = Summary::default();
        let mut applied = Ok(());
        for (p, dir) in plans.iter_mut().zip(&parked) {
            match dir {
                Some(dir) => {
                    applied = apply(p, dir.path(), &mut staged, mode, reporter, &mut summary)
                }
                // Every action is `Unchanged` (see `Plan::changes`).
                None => summary.unchanged += p.actions.len(),
            }
            // Whatever was swapped in before an error is stamped too.
            p.stamps.save();
            if applied.is_err() {
                break;
            }
        }
        if let Err(e) = applied {
            journal.roll_back()?;
            return Err(e);
        }
        for n in &new.skills {
            if let Some(o) = old.get(&n.name).filter(|o| o.pins_other_than(n)) {
                let mut to = describe(n);
                if let Some(why) = self.why_lower(o, n) {
                    to.push_str(&format!(" ({why})"));
                }
                summary.changed.push((n.name.to_string(), describe(o), to));
            }
        }
        let (pulled_in, dropped) = graph_changes(old, new);
        summary.pulled_in = pulled_in;
        summary.dropped = dropped;
        pending.persist()?;
        journal.end()?;
        summary.lock_written = writes.lock;
        // Dropping `parked` deletes the old trees.
        Ok(summary)
    }
}

/// What the graph brought in (entries the old lock lacked that another
/// entry needs, with who needs them) and what it let go (old entries that
/// another needed and the new lock no longer holds).
fn graph_changes(old: &Lockfile, new: &Lockfile) -> (Vec<super::PulledIn>, Vec<String>) {
    let needers = |lock: &Lockfile, name: &SkillName| -> Vec<String> {
        lock.skills
            .iter()
            .filter(|s| s.dependencies.contains(name))
            .map(|s| s.name.to_string())
            .collect()
    };
    let pulled_in = new
        .skills
        .iter()
        .filter(|n| old.get(&n.name).is_none())
        .filter_map(|n| {
            let by = needers(new, &n.name);
            (!by.is_empty()).then(|| (n.name.to_string(), n.version.to_string(), by))
        })
        .collect();
    let dropped = old
        .skills
        .iter()
        .filter(|o| new.get(&o.name).is_none() && !needers(old, &o.name).is_empty())
        .map(|o| o.name.to_string())
        .collect();
    (pulled_in, dropped)
}

/// What an action makes of its entry, for the journal.
fn becomes(a: &Action, mode: install::LinkMode) -> Option<(&SkillName, To)> {
    match a {
        Action::Install(s) | Action::Replace(s) => {
            Some((&s.name, To::Tree(s.checksum.to_string())))
        }
        Action::Link(s) => Some(match mode {
            install::LinkMode::Symlink => (&s.name, To::Link),
            install::LinkMode::Copy => (&s.name, To::Tree(s.checksum.to_string())),
        }),
        Action::Remove(name) | Action::Unlink(name) => Some((name, To::Absent)),
        Action::Unchanged(_) => None,
    }
}

/// A new parked directory in `root` (created if missing), deleted with
/// whatever was parked in it when dropped.
fn parked_dir(root: &Path) -> Result<tempfile::TempDir> {
    std::fs::create_dir_all(root).map_err(Error::io(root))?;
    tempfile::Builder::new()
        .prefix(journal::PARKED_PREFIX)
        .tempdir_in(root)
        .map_err(Error::io(root))
}

/// The skills whose trees a run prepares: only the first root holds
/// trees; the others link to it.
fn needed(plans: &[Plan]) -> Vec<&LockedSkill> {
    plans
        .first()
        .map(|p| p.needed().collect())
        .unwrap_or_default()
}

/// The files a run writes once everything is installed, and whether the
/// lock is among them.
struct Writes {
    files: Vec<(PathBuf, String)>,
    lock: bool,
}

impl Writes {
    /// Writes the files beside their targets, unsynced.
    fn stage(&self) -> Result<crate::fs::Written> {
        let files: Vec<(&Path, &str)> = self
            .files
            .iter()
            .map(|(p, t)| (p.as_path(), t.as_str()))
            .collect();
        Ok(crate::fs::write_unsynced(&files)?)
    }
}

/// What resolve, plan and prepare leave for the commit.
struct Ready<'a> {
    plans: Vec<Plan>,
    staged: HashMap<SkillName, Staged>,
    mode: install::LinkMode,
    old: &'a Lockfile,
    new: &'a Lockfile,
}

/// Applies one root's plan and counts what it did.
fn apply(
    p: &mut Plan,
    parked: &Path,
    staged: &mut HashMap<SkillName, Staged>,
    mode: install::LinkMode,
    reporter: &dyn Reporter,
    summary: &mut Summary,
) -> Result<()> {
    let Plan {
        root,
        actions,
        links_to,
        stamps,
    } = p;
    let mut jobs = Vec::new();
    let mut from_cache = std::collections::HashSet::new();
    for a in actions.iter() {
        let (Action::Install(s) | Action::Replace(s)) = a else {
            continue;
        };
        let tree = staged
            .remove(&s.name)
            .ok_or_else(|| Error::NotPrepared(s.name.to_string()))?;
        if tree.from_cache {
            from_cache.insert(s.name.clone());
        }
        jobs.push((s, tree));
    }
    install::install_all(root, parked, jobs, stamps)?;
    // Reported in plan order, so the output is the same on every run.
    for a in actions.iter() {
        match a {
            Action::Install(s) | Action::Replace(s) => {
                let from_cache = from_cache.contains(&s.name);
                summary.installed += 1;
                summary.from_cache += usize::from(from_cache);
                reporter.report(Event::Installed {
                    name: s.name.to_string(),
                    version: s.version.to_string(),
                    from_cache,
                });
            }
            Action::Remove(name) => {
                if install::remove_one(root, parked, name)? {
                    stamps.remove(name.as_str());
                    summary.removed += 1;
                    reporter.report(Event::Removed {
                        name: name.to_string(),
                    });
                }
            }
            Action::Unchanged(_) => summary.unchanged += 1,
            // Linked roots come after the first, whose trees are in place.
            Action::Link(s) => {
                if let Some(primary) = links_to {
                    install::link_one(root, parked, primary, s, mode, stamps)?;
                }
            }
            Action::Unlink(name) => {
                if install::unlink_one(root, parked, name)? {
                    stamps.remove(name.as_str());
                }
            }
        }
    }
    Ok(())
}

/// A locked entry as `update` and `outdated` show it: the version, and
/// for git the commit, after the plugin and the version it declares when
/// the skill came from a plugin that declares one (a plugin's skills often
/// carry no version of their own).
pub(super) fn describe(s: &LockedSkill) -> String {
    match (&s.source, &s.plugin) {
        (crate::project::lockfile::LockedSource::Git { commit, .. }, plugin) => {
            let commit = &commit[..12.min(commit.len())];
            match plugin {
                Some(PluginPin {
                    name,
                    version: Some(v),
                }) => format!("{} ({name} {v}, {commit})", s.version),
                _ => format!("{} ({commit})", s.version),
            }
        }
        _ => s.version.to_string(),
    }
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
