//! `load`: the `<skill_content>` block an agent receives when it invokes a
//! skill — the body, where the skill lives, what files it bundles, and which
//! sub-skills sit directly below it.

use crate::catalog::{Catalog, State};
use crate::discover::SKILL_FILES;
use crate::prompt::{xml_cdata, xml_escape};
use skillpm_core::skill::INSTALL_MARKER;
use std::path::{Path, PathBuf};

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
    let mut body = format!("\n{}", doc.body);
    if !body.ends_with('\n') {
        body.push('\n');
    }
    out.push_str(&xml_cdata(&body));
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

/// Files under `dir` (relative, sorted), excluding the skill file itself,
/// the installer's marker (bookkeeping, not the skill's) and any sub-skill
/// directory; returns the first [`MAX_BUNDLED_FILES`] and how
/// many more there are.
///
/// The walk follows symlinks (skills link shared references) but visits
/// each directory once and looks at no more than [`MAX_WALK_ENTRIES`]
/// entries, so a link to an ancestor or a huge tree cannot keep the agent
/// waiting.
pub fn bundled_files(dir: &Path) -> (Vec<String>, usize) {
    let mut all = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut entries = 0usize;
    let mut stack: Vec<(PathBuf, String)> = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, rel)) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&d) else {
            continue;
        };
        if !seen.insert(dir_key(&meta, &d)) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            entries += 1;
            if entries > MAX_WALK_ENTRIES {
                stack.clear();
                break;
            }
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let path = e.path();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // Follow symlinks with metadata(); a dangling link is skipped.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                let is_sub_skill = SKILL_FILES.iter().any(|f| path.join(f).is_file());
                if !is_sub_skill && !name.starts_with('.') && child.matches('/').count() < 16 {
                    stack.push((path, child));
                }
            } else if !(rel.is_empty()
                && (SKILL_FILES.contains(&name.as_str()) || name == INSTALL_MARKER))
            {
                all.push(child);
            }
        }
    }
    all.sort();
    let more = all.len().saturating_sub(MAX_BUNDLED_FILES);
    all.truncate(MAX_BUNDLED_FILES);
    (all, more)
}

/// How many directory entries `load` looks at, at most, in one skill.
pub const MAX_WALK_ENTRIES: usize = 10_000;

/// Identifies a directory however it was reached (through which links).
#[cfg(unix)]
fn dir_key(meta: &std::fs::Metadata, _path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn dir_key(_meta: &std::fs::Metadata, path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}
