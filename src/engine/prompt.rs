//! The `<available_skills>` block an agent puts in its system prompt.
//!
//! Skills are packed in command order until the character budget would be
//! exceeded; `always: true` skills bypass the budget and
//! `user_invocable_only: true` skills never appear. Two dialects are
//! supported: skillpm's own (`command`/`name`/`description`) and the Agent
//! Skills reference format (`name`/`description`/`location`).

use super::catalog::{Catalog, SkillEntry};

/// Default character budget for the block's skill entries.
pub const DEFAULT_BUDGET: usize = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `<skill><command/><name/><description/></skill>`
    #[default]
    Seed,
    /// `<skill><name/><description/><location/></skill>`
    AgentSkills,
}

/// Escapes the five XML special characters.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn render_entry(s: &SkillEntry, format: Format) -> String {
    let name = xml_escape(&s.name);
    let description = xml_escape(&s.description);
    match format {
        Format::Seed => format!(
            "<skill>\n<command>{}</command>\n<name>{name}</name>\n<description>{description}</description>\n</skill>\n",
            xml_escape(&s.command)
        ),
        Format::AgentSkills => format!(
            "<skill>\n<name>{name}</name>\n<description>{description}</description>\n<location>{}</location>\n</skill>\n",
            xml_escape(&s.skill_md.display().to_string())
        ),
    }
}

/// Renders the block. The result is byte-identical for the same catalog.
pub fn render(cat: &Catalog, budget: usize, format: Format) -> String {
    let candidates: Vec<&SkillEntry> = cat
        .eligible()
        .filter(|s| !s.requirements.user_invocable_only)
        .collect();
    let entries: Vec<String> = candidates.iter().map(|s| render_entry(s, format)).collect();
    let mut used: usize = candidates
        .iter()
        .zip(&entries)
        .filter(|(s, _)| s.requirements.always)
        .map(|(_, e)| e.chars().count())
        .sum();
    let mut keep = vec![false; entries.len()];
    let mut omitted = 0usize;
    let mut full = false;
    for (i, (s, e)) in candidates.iter().zip(&entries).enumerate() {
        if s.requirements.always {
            keep[i] = true;
            continue;
        }
        let len = e.chars().count();
        if !full && used + len <= budget {
            used += len;
            keep[i] = true;
        } else {
            // Once one skill does not fit, later ones are left out too, so
            // the cut is predictable: discovery order decides.
            full = true;
            omitted += 1;
        }
    }
    let mut out = String::from("<available_skills>\n");
    for (e, k) in entries.iter().zip(&keep) {
        if *k {
            out.push_str(e);
        }
    }
    if omitted > 0 {
        out.push_str(&format!(
            "<!-- {omitted} more skill(s) omitted: the {budget}-character budget is exhausted -->\n"
        ));
    }
    out.push_str("</available_skills>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_all_specials() {
        assert_eq!(
            xml_escape("<a & 'b' \"c\">"),
            "&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;"
        );
    }
}
