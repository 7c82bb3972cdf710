//! Refusing an `add` that would point a skill skills.toml already has at
//! another origin, unless `--replace` says to.

use crate::error::{Error, Result};
use crate::project::manifest::Dependency;
use skillpm_core::name::SkillName;
use std::collections::BTreeMap;

/// Refuses an `add` that would point a skill skills.toml already has at
/// another origin (another repository, directory, registry or site), as
/// `--all` of a second collection would silently do for every name the two
/// share; names them all, the first with both origins. A new version or
/// ref of the same origin is an update, and passes.
pub(super) fn refuse_replacing(
    before: &BTreeMap<SkillName, Dependency>,
    names: &[SkillName],
    deps: &[(Option<SkillName>, Dependency)],
) -> Result<()> {
    let replaced: Vec<(&SkillName, &Dependency, &Dependency)> = names
        .iter()
        .zip(deps)
        .filter_map(|(name, (_, new))| {
            let old = before.get(name)?;
            (!old.same_origin(new)).then_some((name, old, new))
        })
        .collect();
    let Some((name, old, new)) = replaced.first() else {
        return Ok(());
    };
    let first = format!("`{name}` from {}, not {}", old.origin(), new.origin());
    let listing = match replaced.len() {
        1 => format!("skills.toml has {first}"),
        n => {
            let all: Vec<String> = replaced.iter().map(|(n, ..)| format!("`{n}`")).collect();
            format!(
                "skills.toml has {n} of these skills from other sources ({}): {first}",
                all.join(", ")
            )
        }
    };
    Err(Error::WouldReplace {
        count: replaced.len(),
        listing,
    })
}
