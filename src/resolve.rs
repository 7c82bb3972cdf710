//! Version selection: from the manifest and the old lock to the new lock.
//!
//! The old lock wins wherever it still satisfies the manifest, so
//! `install` changes nothing that does not need changing and needs no
//! network for what is locked. Only dependencies the lock lacks, that no
//! longer match, or that the caller asked to refresh (`update`, `add`) are
//! resolved again: registry ones to the highest non-yanked matching
//! version, git ones to the commit their ref points at now.

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::lockfile::{LockedSkill, LockedSource, Lockfile};
use crate::manifest::{Dependency, Manifest};
use crate::project::Project;
use crate::report::{Event, Reporter};
use crate::source::registry::Registries;
use crate::source::{git, path, Packed};
use crate::spec::GitRef;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::collections::{BTreeSet, HashMap};

/// Which locked entries may be replaced.
#[derive(Debug, Clone, Default)]
pub enum Refresh {
    /// Keep every lock entry that still matches (`install`).
    #[default]
    Nothing,
    /// Re-resolve these names (`add`, `update NAME`).
    Only(BTreeSet<SkillName>),
    /// Re-resolve everything (`update`).
    All,
}

impl Refresh {
    fn wants(&self, name: &SkillName) -> bool {
        match self {
            Refresh::Nothing => false,
            Refresh::Only(set) => set.contains(name),
            Refresh::All => true,
        }
    }
}

/// The new lock, and the tarballs produced while resolving git and path
/// dependencies (so installing them needs no second export).
pub struct Resolved {
    pub lock: Lockfile,
    pub packed: HashMap<Checksum, Vec<u8>>,
}

pub struct Resolver<'a> {
    pub project: &'a Project,
    pub manifest: &'a Manifest,
    pub cache: &'a Cache,
    pub registries: &'a Registries,
    pub reporter: &'a dyn Reporter,
    pub offline: bool,
    pub limits: Limits,
}

/// How many index requests run at once.
const INDEX_CONCURRENCY: usize = 16;

impl Resolver<'_> {
    pub async fn resolve(&self, old: &Lockfile, refresh: &Refresh) -> Result<Resolved> {
        let mut lock = Lockfile::default();
        let mut packed = HashMap::new();
        let mut registry_jobs = Vec::new();
        for (name, dep) in &self.manifest.skills {
            let locked = old.get(name).filter(|_| !refresh.wants(name));
            match dep {
                Dependency::Registry { req, registry } => {
                    let url = self
                        .project
                        .registry_url(self.manifest, registry.as_deref())?;
                    match locked {
                        Some(l)
                            if matches!(&l.source, LockedSource::Registry { url: u } if *u == url)
                                && req.matches(&l.version) =>
                        {
                            lock.upsert(l.clone());
                        }
                        _ => registry_jobs.push((name.clone(), req.clone(), url)),
                    }
                }
                Dependency::Git {
                    url,
                    reference,
                    path: sub,
                } => {
                    let keep = locked.filter(|l| {
                        let same_url = matches!(&l.source, LockedSource::Git { url: u, commit }
                        if u.redacted() == url.redacted()
                        && match reference {
                            Some(GitRef::Rev(r)) => commit.starts_with(r.as_str()),
                            _ => true,
                        });
                        same_url && l.path.as_deref() == sub.as_deref()
                    });
                    if let Some(l) = keep {
                        lock.upsert(l.clone());
                        continue;
                    }
                    if self.offline {
                        return Err(crate::source::SourceError::Offline(format!(
                            "resolving {name} from {}",
                            url.redacted()
                        ))
                        .into());
                    }
                    self.reporter.report(Event::Resolving {
                        name: name.to_string(),
                    });
                    let repo = git::fetch(self.cache, url)?;
                    let commit = git::resolve_ref(&repo, url, reference.as_ref())?;
                    let p =
                        git::pack_commit(self.cache, url, &commit, sub.as_deref(), &self.limits)?;
                    let origin = format!("{}@{}", url.redacted(), &commit[..12]);
                    let entry = self.entry(
                        name,
                        &p,
                        &origin,
                        LockedSource::Git {
                            url: url.clone(),
                            commit,
                        },
                        sub.clone(),
                    )?;
                    packed.insert(p.checksum, p.bytes);
                    lock.upsert(entry);
                }
                Dependency::Path { path: rel } => {
                    let p = path::pack(&self.project.dir, rel)?;
                    let entry = self.entry(
                        name,
                        &p,
                        rel,
                        LockedSource::Path { path: rel.clone() },
                        None,
                    )?;
                    packed.insert(p.checksum, p.bytes);
                    lock.upsert(entry);
                }
            }
        }
        let chosen: Vec<LockedSkill> = stream::iter(registry_jobs)
            .map(|(name, req, url)| async move { self.pick(&name, &req, &url).await })
            .buffer_unordered(INDEX_CONCURRENCY)
            .try_collect()
            .await?;
        for c in chosen {
            lock.upsert(c);
        }
        Ok(Resolved { lock, packed })
    }

    fn entry(
        &self,
        key: &SkillName,
        p: &Packed,
        origin: &str,
        source: LockedSource,
        path: Option<String>,
    ) -> Result<LockedSkill> {
        if p.name != *key {
            return Err(Error::NameMismatch {
                key: key.to_string(),
                found: p.name.to_string(),
                origin: origin.to_string(),
            });
        }
        Ok(LockedSkill {
            name: key.clone(),
            version: p.version.clone(),
            source,
            checksum: p.checksum,
            path,
        })
    }

    /// The highest non-yanked version matching `req`.
    async fn pick(
        &self,
        name: &SkillName,
        req: &semver::VersionReq,
        url: &str,
    ) -> Result<LockedSkill> {
        self.reporter.report(Event::Resolving {
            name: name.to_string(),
        });
        let versions = self.registries.versions(url, name).await?;
        let best = versions
            .iter()
            .filter(|v| !v.yanked && req.matches(&v.vers))
            .max_by(|a, b| a.vers.cmp(&b.vers));
        let Some(best) = best else {
            let mut available: Vec<String> = versions
                .iter()
                .map(|v| {
                    if v.yanked {
                        format!("{} (yanked)", v.vers)
                    } else {
                        v.vers.to_string()
                    }
                })
                .collect();
            if available.is_empty() {
                available.push("none".into());
            }
            return Err(Error::NoMatch {
                name: name.to_string(),
                req: req.to_string(),
                available: available.join(", "),
            });
        };
        Ok(LockedSkill {
            name: name.clone(),
            version: best.vers.clone(),
            source: LockedSource::Registry {
                url: url.to_string(),
            },
            checksum: best.cksum,
            path: None,
        })
    }
}
