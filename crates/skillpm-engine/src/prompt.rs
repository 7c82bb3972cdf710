//! The `<available_skills>` block an agent puts in its system prompt.
//!
//! Skills are packed in command order until the character budget would be
//! exceeded; `always: true` skills bypass the budget and
//! `user_invocable_only: true` skills never appear. Three dialects are
//! supported: skillpm's own (`command`/`name`/`description`), the Agent
//! Skills reference format (`name`/`description`/`location`), and the
//! skill-system format, which carries each skill's instructions inline
//! (`<skills><skill id name><triggers/><instructions/></skill></skills>`)
//! for runtimes that put every skill in the prompt up front. In all three,
//! a skill that declares triggers carries them in a `<triggers>` element,
//! in the author's order, so an agent can see what should bring it
//! forward.

use crate::catalog::{Catalog, SkillEntry};
use crate::triggers::Triggers;
use skillpm_core::text;

/// Default character budget for the block's skill entries.
pub const DEFAULT_BUDGET: usize = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `<skill><command/><name/><description/></skill>`
    #[default]
    Seed,
    /// `<skill><name/><description/><location/></skill>`
    AgentSkills,
    /// `<skills><skill id="…" name="…"><triggers/><instructions/></skill></skills>`:
    /// the id is the command; the instructions are the SKILL.md body as
    /// `load` gives it, in one CDATA section.
    SkillSystem,
}

impl Format {
    /// The element that wraps the entries.
    fn root(self) -> &'static str {
        match self {
            Format::Seed | Format::AgentSkills => "available_skills",
            Format::SkillSystem => "skills",
        }
    }
}

/// Escapes `s` for XML text or an attribute value: the five special
/// characters become entities, and every character XML 1.0 forbids or a
/// terminal must not see ([`push_xml_char`]) becomes a visible escape, so
/// the block stays well-formed whatever a SKILL.md says.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = None;
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => push_xml_char(&mut out, prev, c),
        }
        prev = Some(c);
    }
    out
}

/// `s` as one CDATA section: verbatim for the agent (Markdown keeps its
/// `<`, `&` and code), with `]]>` split across two sections so it cannot
/// end the section early, and forbidden characters escaped as in
/// [`xml_escape`].
pub fn xml_cdata(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 12);
    out.push_str("<![CDATA[");
    let mut prev = None;
    for c in s.replace("]]>", "]]]]><![CDATA[>").chars() {
        push_xml_char(&mut out, prev, c);
        prev = Some(c);
    }
    out.push_str("]]>");
    out
}

/// Pushes `c` (following `prev`), or its visible escape when XML 1.0
/// forbids it (C0 controls but tab, newline and carriage return; U+FFFE,
/// U+FFFF) or when it must not reach a terminal or a prompt as is
/// ([`text::must_escape`]: ESC, C1, bidi overrides, invisible text).
/// Character references cannot help: `&#x1b;` is no more legal XML 1.0
/// than the raw byte, and `&#xe0041;` is as invisible as the character.
fn push_xml_char(out: &mut String, prev: Option<char>, c: char) {
    if text::must_escape(prev, c) || matches!(c, '\u{fffe}' | '\u{ffff}') {
        text::push_escaped(out, c);
    } else {
        out.push(c);
    }
}

/// Which description an entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The whole `description`.
    Full,
    /// The brief description ([`crate::triggers::brief_description`]).
    Brief,
}

fn render_entry(s: &SkillEntry, format: Format, detail: Detail) -> String {
    let name = xml_escape(&s.name);
    let description = xml_escape(match detail {
        Detail::Full => &s.description,
        Detail::Brief => &s.brief,
    });
    let triggers = triggers_element(&s.triggers, format);
    match format {
        Format::Seed => format!(
            "<skill>\n<command>{}</command>\n<name>{name}</name>\n<description>{description}</description>\n{triggers}</skill>\n",
            xml_escape(&s.command)
        ),
        Format::AgentSkills => format!(
            "<skill>\n<name>{name}</name>\n<description>{description}</description>\n<location>{}</location>\n{triggers}</skill>\n",
            xml_escape(&s.skill_md.display().to_string())
        ),
        // No description here: the instructions say more, and `Detail`
        // has nothing to shorten. A visible skill always has its parsed
        // file; the body comes from it, so no file is read again.
        Format::SkillSystem => format!(
            "<skill id=\"{}\" name=\"{name}\">\n{triggers}<instructions>{}</instructions>\n</skill>\n",
            xml_escape(&s.command),
            xml_cdata(&body_lines(s.doc.as_ref().map_or("", |d| d.body.as_str())))
        ),
    }
}

/// A SKILL.md body as `load` puts it in its CDATA section: starting and
/// ending on a line of its own, so the Markdown reads as written.
pub(crate) fn body_lines(body: &str) -> String {
    let mut out = format!("\n{body}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `<triggers>` with one child per trigger, or nothing when there are none.
/// The skill-system format names each `<trigger kind="…">`; the others use
/// the kind as the element.
fn triggers_element(t: &Triggers, format: Format) -> String {
    if t.is_empty() {
        return String::new();
    }
    let mut out = String::from("<triggers>\n");
    let patterns = t.patterns.iter().map(|p| &p.source);
    for (tag, list) in [
        ("phrase", t.phrases.iter().collect::<Vec<_>>()),
        ("keyword", t.keywords.iter().collect()),
        ("verb", t.verbs.iter().collect()),
        ("pattern", patterns.collect()),
    ] {
        for item in list {
            let item = xml_escape(item);
            out.push_str(&match format {
                Format::SkillSystem => format!("<trigger kind=\"{tag}\">{item}</trigger>\n"),
                _ => format!("<{tag}>{item}</{tag}>\n"),
            });
        }
    }
    out.push_str("</triggers>\n");
    out
}

/// Renders the block. The result is byte-identical for the same catalog.
pub fn render(cat: &Catalog, budget: usize, format: Format) -> String {
    render_entries(cat.visible(), budget, format, Detail::Full)
}

/// Renders the block over `candidates` (in the order given).
pub fn render_entries<'a>(
    candidates: impl IntoIterator<Item = &'a SkillEntry>,
    budget: usize,
    format: Format,
    detail: Detail,
) -> String {
    let candidates: Vec<&SkillEntry> = candidates.into_iter().collect();
    let entries: Vec<String> = candidates
        .iter()
        .map(|s| render_entry(s, format, detail))
        .collect();
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
    let mut out = format!("<{}>\n", format.root());
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
    out.push_str(&format!("</{}>\n", format.root()));
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
        assert_eq!(
            xml_escape("a\x1b[2J\u{202e}\r\u{ffff}\tb"),
            "a\\x1b[2J\\u{202e}\\x0d\\u{ffff}\tb"
        );
    }

    #[test]
    fn cdata_cannot_be_closed_early() {
        assert_eq!(xml_cdata("a]]>b<&"), "<![CDATA[a]]]]><![CDATA[>b<&]]>");
        assert_eq!(xml_cdata("\x00\x1b"), "<![CDATA[\\x00\\x1b]]>");
    }
}
