//! The read-only commands: `list` and `outdated` (the project against its
//! lock and registries), `info` and `search` (the registry), and the
//! installed versions `status` shows.

use super::registry::RegistryArgs;
use super::{runtime, Options};
use crate::engine::config::Environment;
use crate::error::Result;
use crate::install::Marker;
use crate::project::manifest::Dependency;
use crate::project::Project;
use crate::source::registry::client::{IndexResponse, RegistryError};
use crate::source::registry::RegistrySource;
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
}

/// `skillpm outdated`: current / wanted (within the requirement) / latest
/// for registry dependencies.
pub fn outdated(env: &Environment, opts: &Options) -> Result<Vec<OutdatedRow>> {
    let project = Project::locate(env, opts.global)?;
    let manifest = project.read_manifest()?;
    let lock = project.read_lock()?;
    let registries = RegistrySource::new(opts.cache()?, opts.frozen);
    let rt = runtime()?;
    let mut rows = Vec::new();
    let wellknown = crate::source::wellknown::WellKnownSource::new(opts.cache()?, opts.frozen);
    for (name, dep) in &manifest.skills {
        if let Dependency::WellKnown { index } = dep {
            let listed = rt.block_on(wellknown.listed_digest(index, name))?;
            rows.push(wellknown_row(name, lock.get(name), listed));
            continue;
        }
        let Dependency::Registry { req, registry } = dep else {
            continue;
        };
        let url = project.registry_url_or_locked(&manifest, registry.as_deref(), lock.get(name))?;
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
        let current = lock.get(name).map(|l| &l.version);
        // The lock pins a yanked version: say so, `update` moves off it.
        let yanked = current.is_some_and(|c| versions.iter().any(|v| v.vers == *c && v.yanked));
        rows.push(OutdatedRow {
            name: name.to_string(),
            current: if yanked {
                format!("{} (yanked)", show(current))
            } else {
                show(current)
            },
            wanted: show(wanted),
            latest: show(latest),
        });
    }
    Ok(rows)
}

/// A well-known skill has no versions to compare, only digests: the row
/// shows the locked version and digest, and what the index lists now
/// (`update` takes it).
fn wellknown_row(
    name: &skillpm_core::name::SkillName,
    locked: Option<&crate::project::lockfile::LockedSkill>,
    listed: Option<skillpm_core::checksum::Checksum>,
) -> OutdatedRow {
    let short = |c: &skillpm_core::checksum::Checksum| format!("sha256:{}", &c.hex()[..12]);
    let (current, locked_digest) = match locked.map(|l| (&l.version, &l.source)) {
        Some((v, crate::project::lockfile::LockedSource::WellKnown { digest, .. })) => {
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
