//! `skillpm audit signatures`: checks every registry skill skills.lock
//! records against its registry's signed index, as `npm audit
//! signatures` does for a lockfile: the locked version's entry must be
//! listed with the locked checksum, its signature must verify with a key
//! the registry's `config.json` lists and has not revoked, and it must be
//! signed if the lock says it was or the registry signs at all. Nothing
//! is written; whether the installed trees match the lock is `skillpm
//! verify`'s part.

use super::{runtime, Options};
use crate::engine::config::Environment;
use crate::error::Result;
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::project::spec::mask_userinfo;
use crate::project::Project;
use crate::source::registry::{check_pin, RegistrySource};
use futures_util::stream::{self, StreamExt};

/// How many registry skills are checked at once.
const CONCURRENCY: usize = 16;

/// What the audit found for one locked registry skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signed {
    /// Signed by `keyid`, which verifies; `pinned` is the key skills.lock
    /// records when it is another (the registry rotated its keys).
    Verified {
        keyid: String,
        pinned: Option<String>,
    },
    /// Unsigned, from a registry that lists no signing key, for a skill
    /// the lock does not record as signed.
    Unsigned,
    /// Anything else, in one line.
    Failed(String),
}

/// One locked registry skill and what its signature check found.
#[derive(Debug, Clone)]
pub struct SignatureCheck {
    pub name: String,
    pub version: String,
    pub registry: String,
    pub signed: Signed,
}

/// Every locked registry skill's check, in lock order, and how many
/// locked skills come from elsewhere (git, a directory, a site: nothing a
/// registry signs).
pub struct SignatureAudit {
    pub checks: Vec<SignatureCheck>,
    pub other: usize,
}

impl SignatureAudit {
    pub fn failed(&self) -> usize {
        self.count(|s| matches!(s, Signed::Failed(_)))
    }

    pub fn count(&self, f: impl Fn(&Signed) -> bool) -> usize {
        self.checks.iter().filter(|c| f(&c.signed)).count()
    }
}

/// `skillpm audit signatures`.
pub fn audit_signatures(env: &Environment, opts: &Options) -> Result<SignatureAudit> {
    let project = Project::locate(env, opts.global)?;
    let lock = project.read_lock()?;
    let registries = RegistrySource::new(opts.cache()?, opts.frozen);
    let locked: Vec<(&LockedSkill, &str)> = lock
        .skills
        .iter()
        .filter_map(|s| match &s.source {
            LockedSource::Registry { url } => Some((s, url.as_str())),
            _ => None,
        })
        .collect();
    let other = lock.skills.len() - locked.len();
    let rt = runtime()?;
    let mut checks: Vec<(usize, SignatureCheck)> = rt.block_on(
        stream::iter(locked.into_iter().enumerate())
            .map(|(i, (s, url))| {
                let registries = &registries;
                async move {
                    let signed = check(registries, s, url).await;
                    let c = SignatureCheck {
                        name: s.name.to_string(),
                        version: s.version.to_string(),
                        registry: mask_userinfo(url),
                        signed,
                    };
                    (i, c)
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect(),
    );
    rt.shutdown_background();
    checks.sort_by_key(|(i, _)| *i);
    Ok(SignatureAudit {
        checks: checks.into_iter().map(|(_, c)| c).collect(),
        other,
    })
}

async fn check(registries: &RegistrySource, s: &LockedSkill, url: &str) -> Signed {
    // Reading the index verifies every entry's signature.
    let versions = match registries.versions(url, &s.name).await {
        Ok(v) => v,
        Err(e) => return Signed::Failed(e.to_string()),
    };
    let Some(entry) = versions.iter().find(|v| v.vers == s.version) else {
        return Signed::Failed("the registry's index does not list this version".into());
    };
    if entry.cksum != s.checksum {
        return Signed::Failed(format!(
            "skills.lock says {}, but the registry's index lists {}",
            s.checksum, entry.cksum
        ));
    }
    if let Err(e) = check_pin(s, url, entry) {
        return Signed::Failed(e.to_string());
    }
    match &entry.sig {
        Some(sig) => Signed::Verified {
            keyid: sig.keyid.clone(),
            pinned: s.signed_by.clone().filter(|p| *p != sig.keyid),
        },
        None => match registries.signs(url).await {
            Ok(false) => Signed::Unsigned,
            Ok(true) => Signed::Failed(
                "unsigned, but the registry lists signing keys; its operator may need to run `skillpm-registry key resign`".into(),
            ),
            Err(e) => Signed::Failed(e.to_string()),
        },
    }
}
