//! `load`: the `<skill_content>` block an agent receives when it invokes a
//! skill — the body, where the skill lives, what files it bundles, and which
//! sub-skills sit directly below it.

use crate::catalog::{Catalog, State};
use crate::prompt::{body_lines, xml_cdata, xml_escape};
use std::path::Path;

/// At most this many bundled files are listed; the rest are counted.
pub const MAX_BUNDLED_FILES: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no skill with command `{0}`; run `skillpm status` to list commands")]
    Unknown(String),
    #[error("skill `{command}` cannot be loaded: {detail}")]
    Invalid { command: String, detail: String },
}

/// Renders the block for `command`.
pub fn render(cat: &Catalog, command: &str) -> Result<String, LoadError> {
    let s = cat
        .find(command)
        .ok_or_else(|| LoadError::Unknown(command.to_string()))?;
    let doc = match (&s.doc, s.state) {
        (Some(doc), st) if st != State::Invalid => doc,
        _ => {
            return Err(LoadError::Invalid {
                command: command.to_string(),
                detail: s
                    .reason
                    .as_ref()
                    .map(|r| format!("{}: {}", r.code, r.detail))
                    .unwrap_or_default(),
            })
        }
    };
    let (files, more) = bundled_files(&s.path);
    let prefix = format!("{command}/");
    let children: Vec<_> = cat
        .skills
        .iter()
        .filter(|c| c.state != State::Shadowed)
        .filter(|c| {
            c.command
                .strip_prefix(&prefix)
                .is_some_and(|rest| !rest.contains('/'))
        })
        .collect();
    let mut out = format!(
        "<skill_content command=\"{}\" name=\"{}\">\n",
        xml_escape(command),
        xml_escape(&s.name)
    );
    // The body is Markdown for the agent to read as written, so it goes in
    // verbatim as CDATA rather than entity-escaped; the block stays
    // well-formed whatever the body holds.
    out.push_str(&xml_cdata(&body_lines(&doc.body)));
    out.push_str(&format!(
        "\n\nBase directory for this skill: {}\n",
        xml_escape(&s.path.display().to_string())
    ));
    if !files.is_empty() {
        out.push_str("<bundled_files>\n");
        for f in &files {
            out.push_str(&format!("<file>{}</file>\n", xml_escape(f)));
        }
        if more > 0 {
            out.push_str(&format!("<!-- {more} more file(s) not listed -->\n"));
        }
        out.push_str("</bundled_files>\n");
    }
    if !children.is_empty() {
        out.push_str("<sub_skills>\n");
        for c in children {
            out.push_str(&format!(
                "<skill command=\"{}\">{}</skill>\n",
                xml_escape(&c.command),
                xml_escape(&c.description)
            ));
        }
        out.push_str("</sub_skills>\n");
    }
    out.push_str("</skill_content>\n");
    Ok(out)
}

/// The skill's bundled files for `load`: every file [`crate::files`] finds
/// in it (one rule with what `skillpm mcp` serves: no links out of the
/// skill, no dot entries, a bounded walk; sub-skills are named apart
/// rather than listed here); returns the
/// first [`MAX_BUNDLED_FILES`] and how many more there are.
pub fn bundled_files(dir: &Path) -> (Vec<String>, usize) {
    let mut all: Vec<String> = crate::files::skill_files(dir)
        .files
        .into_iter()
        .map(|(rel, _)| rel)
        .collect();
    let more = all.len().saturating_sub(MAX_BUNDLED_FILES);
    all.truncate(MAX_BUNDLED_FILES);
    (all, more)
}
