//! What one MCP session has loaded, for the lifecycle `list_skills`
//! reports: a served skill is `eligible`, and `loaded` once this session
//! fetched its instructions (the `load_skill` tool, or a read of its
//! `SKILL.md` resource). Each load remembers the digest of the `SKILL.md`
//! it got, so a skill whose file changed since — re-evaluated by the
//! reload — counts as eligible again until it is loaded again. `active`
//! is not reported: nothing in MCP says when a session uses a skill.

use super::resources::ServedSkill;
use crate::engine::lifecycle::Lifecycle;
use std::collections::BTreeMap;

/// Command → digest of the `SKILL.md` this session was given.
#[derive(Debug, Default)]
pub struct Loaded(BTreeMap<String, String>);

impl Loaded {
    pub fn record(&mut self, s: &ServedSkill) {
        if let Some(d) = skill_md_digest(s) {
            self.0.insert(s.command.clone(), d.to_string());
        }
    }

    pub fn lifecycle(&self, s: &ServedSkill) -> Lifecycle {
        match (self.0.get(&s.command), skill_md_digest(s)) {
            (Some(got), Some(now)) if got == now => Lifecycle::Loaded,
            _ => Lifecycle::Eligible,
        }
    }
}

fn skill_md_digest(s: &ServedSkill) -> Option<&str> {
    s.files
        .iter()
        .find(|f| f.uri == s.uri)
        .map(|f| f.digest.as_str())
}
