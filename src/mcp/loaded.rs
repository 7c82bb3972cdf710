//! What one MCP session has done with each skill, for the lifecycle
//! `list_skills` and the `skill://lifecycle.json` resource report: a served
//! skill is `eligible`; `loaded` once this session fetched its instructions
//! (the `load_skill` tool, or a read of its `SKILL.md` resource); `active`
//! once the session invoked one of its commands (`prompts/get`: a person
//! or the host chose to use it). Each remembers the digest of the
//! `SKILL.md` it was given, so a skill whose file changed since —
//! re-evaluated by the reload — counts as eligible again until it is
//! loaded or invoked again.

use super::resources::ServedSkill;
use crate::engine::lifecycle::Lifecycle;
use serde_json::{json, Value};
use skillpm_core::checksum::Checksum;
use std::collections::BTreeMap;

/// Command → digest of the `SKILL.md` this session was given, and the
/// stage it reached with it.
#[derive(Debug, Default)]
pub struct Loaded(BTreeMap<String, (Checksum, Lifecycle)>);

impl Loaded {
    /// The session fetched `s`'s instructions.
    pub fn record(&mut self, s: &ServedSkill) {
        self.reach(s, Lifecycle::Loaded);
    }

    /// The session invoked one of `s`'s commands.
    pub fn activate(&mut self, s: &ServedSkill) {
        self.reach(s, Lifecycle::Active);
    }

    /// Moves `s` to `stage`, never back from active for the same file.
    fn reach(&mut self, s: &ServedSkill, stage: Lifecycle) {
        let Some(d) = skill_md_digest(s) else { return };
        let kept = self.lifecycle(s).max(stage);
        self.0.insert(s.command.clone(), (d, kept));
    }

    pub fn lifecycle(&self, s: &ServedSkill) -> Lifecycle {
        match (self.0.get(&s.command), skill_md_digest(s)) {
            (Some((got, stage)), Some(now)) if *got == now => *stage,
            _ => Lifecycle::Eligible,
        }
    }

    /// The `skill://lifecycle.json` document: every served skill's
    /// command, `SKILL.md` URI and stage in this session, by command.
    pub fn document(&self, skills: &[ServedSkill]) -> Value {
        let entries: Vec<Value> = skills
            .iter()
            .map(|s| json!({"command": s.command, "uri": s.uri, "lifecycle": self.lifecycle(s).as_str()}))
            .collect();
        json!({ "skills": entries })
    }
}

fn skill_md_digest(s: &ServedSkill) -> Option<Checksum> {
    s.files.iter().find(|f| f.uri == s.uri).map(|f| f.digest)
}
