//! The read-only commands: `list` and `outdated` (the project against its
//! lock and registries), `info` and `search` (the registry), and the
//! installed versions `status` shows.

use super::registry::RegistryArgs;
use super::{runtime, Options};
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::Marker;
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile};
use crate::project::manifest::Dependency;
use crate::project::Project;
use crate::source::registry::client::{IndexResponse, RegistryError};
use crate::source::registry::RegistrySource;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{IndexFile, SearchResults};
use std::collections::BTreeSet;

/// One row of `skillpm list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListRow {
    pub name: String,
    pub version: String,
    pub source: String,
    /// Per install root: `installed`, `missing` or `other-version`.
    pub state: String,
    /// Named in skills.toml; false for a skill another one pulled in.
    pub direct: bool,
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
                direct: manifest.skills.contains_key(&s.name),
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
    /// Named in skills.toml; false for a skill another one pulls in.
    pub direct: bool,
}

/// `skillpm outdated`: per skill, what the lock holds (current), what
/// `update` would choose (wanted) and the newest version its registry
/// lists (latest). Wanted comes from resolving the whole graph again,
/// as `update` does, without installing or writing anything: so it
/// respects every requirement on the skill, skills that others pull in
/// have rows too, and a skill `update` would add or drop shows `-` on
/// the side it is missing. Registry and well-known skills always have a
/// row; git and path skills only when `update` would move them.
pub fn outdated(
    env: &Environment,
    opts: &Options,
    reporter: &dyn crate::report::Reporter,
) -> Result<Vec<OutdatedRow>> {
    let project = Project::locate(env, opts.global)?;
    let run = super::sync::Run::new(env, &project, opts, "outdated", reporter)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let outcome = outdated_rows(&run, &manifest, &lock, reporter);
    run.finish(outcome)
}

fn outdated_rows(
    run: &super::sync::Run<'_>,
    manifest: &crate::project::manifest::Manifest,
    lock: &Lockfile,
    reporter: &dyn crate::report::Reporter,
) -> Result<Vec<OutdatedRow>> {
    let resolved = run.rt.block_on(crate::resolve::resolve(
        run.project,
        manifest,
        &run.sources,
        reporter,
        lock,
        &crate::resolve::Refresh::All,
        None,
    ));
    // A graph `update` cannot solve still has rows: what is locked and
    // what the registry lists, with nothing wanted, and the reason.
    let wanted = match resolved {
        Ok(r) => Some(r.lock),
        Err(e) => {
            reporter.report(crate::report::Event::Warning {
                message: format!("`update` would fail, so nothing is wanted: {e}"),
            });
            None
        }
    };
    let registries = RegistrySource::new(run.cache.clone(), run.opts.frozen);
    let wellknown =
        crate::source::wellknown::WellKnownSource::new(run.cache.clone(), run.opts.frozen);
    let names: BTreeSet<&SkillName> = lock
        .skills
        .iter()
        .chain(wanted.iter().flat_map(|w| &w.skills))
        .map(|s| &s.name)
        .collect();
    let show = |s: Option<&LockedSkill>| s.map(super::sync::describe).unwrap_or_else(|| "-".into());
    let mut rows = Vec::new();
    for name in names {
        let (current, want) = (lock.get(name), wanted.as_ref().and_then(|w| w.get(name)));
        let direct = manifest.skills.contains_key(name);
        if let Some(Dependency::WellKnown { index }) = manifest.skills.get(name) {
            let listed = run.rt.block_on(wellknown.listed_digest(index, name))?;
            rows.push(wellknown_row(name, current, listed));
            continue;
        }
        let registry = want.or(current).and_then(|s| match &s.source {
            LockedSource::Registry { url } => Some(url),
            _ => None,
        });
        let Some(url) = registry else {
            if wanted.is_some() && current != want {
                rows.push(OutdatedRow {
                    name: name.to_string(),
                    current: show(current),
                    wanted: show(want),
                    latest: show(want),
                    direct,
                });
            }
            continue;
        };
        let versions = run.rt.block_on(registries.versions(url, name))?;
        let latest = versions
            .iter()
            .filter(|v| !v.yanked)
            .map(|v| &v.vers)
            .max()
            .map_or_else(|| "-".into(), ToString::to_string);
        // The lock pins a yanked version: say so, `update` moves off it.
        let yanked =
            current.is_some_and(|c| versions.iter().any(|v| v.vers == c.version && v.yanked));
        rows.push(OutdatedRow {
            name: name.to_string(),
            current: if yanked {
                format!("{} (yanked)", show(current))
            } else {
                show(current)
            },
            wanted: show(want),
            latest,
            direct,
        });
    }
    Ok(rows)
}

/// A well-known skill has no versions to compare, only digests: the row
/// shows the locked version and digest, and what the index lists now
/// (`update` takes it).
fn wellknown_row(
    name: &SkillName,
    locked: Option<&LockedSkill>,
    listed: Option<skillpm_core::checksum::Checksum>,
) -> OutdatedRow {
    let short = |c: &skillpm_core::checksum::Checksum| format!("sha256:{}", &c.hex()[..12]);
    let (current, locked_digest) = match locked.map(|l| (&l.version, &l.source)) {
        Some((v, LockedSource::WellKnown { digest, .. })) => {
            (format!("{v} ({})", short(digest)), Some(*digest))
        }
        Some((v, _)) => (v.to_string(), None),
        None => ("-".into(), None),
    };
    let latest = match listed {
        Some(d) if Some(d) == locked_digest => current.clone(),
        Some(d) => format!("changed ({})", short(&d)),
        None => "-".into(),
    };
    OutdatedRow {
        name: name.to_string(),
        current,
        wanted: latest.clone(),
        latest,
        direct: true,
    }
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

/// `skillpm info NAME`: every version the registry lists.
pub fn info(env: &Environment, reg: RegistryArgs, name: &str) -> Result<IndexFile> {
    let client = reg.client(env, false)?;
    match runtime()?.block_on(client.index(name, None))? {
        IndexResponse::Fresh { index, .. } => Ok(index),
        IndexResponse::NotModified => Err(RegistryError::UnaskedNotModified {
            host: client.base().to_string(),
        }
        .into()),
    }
}

/// `skillpm search QUERY`: the registry's ranked search.
pub fn search(
    env: &Environment,
    reg: RegistryArgs,
    query: &str,
    limit: u32,
) -> Result<SearchResults> {
    let client = reg.client(env, false)?;
    Ok(runtime()?.block_on(client.search(query, limit))?)
}
