//! `skillpm init`: a commented `skills.toml`, never overwriting one. The
//! agents the project already uses (their directories exist) are shown in
//! it and proposed as `[install] targets`, commented, so nothing is
//! installed anywhere the user did not choose.

use crate::engine::agents::{self, SHARED};
use crate::engine::config::{Environment, MANIFEST_FILE};
use crate::error::{Error, Result};
use crate::fs::write_atomic;
use crate::project::manifest::init_template;
use std::path::PathBuf;

/// What `init` wrote and what it found.
#[derive(Debug, Clone)]
pub struct Initialized {
    pub path: PathBuf,
    /// Agent id and the path that showed it is used, in id order.
    pub detected: Vec<(&'static str, &'static str)>,
}

pub fn init(env: &Environment) -> Result<Initialized> {
    let dir = env
        .project_override
        .as_ref()
        .map(|p| env.cwd.join(p))
        .unwrap_or_else(|| env.cwd.clone());
    let path = dir.join(MANIFEST_FILE);
    if path.exists() {
        return Err(Error::AlreadyExists(path));
    }
    let detected: Vec<(&'static str, &'static str)> =
        agents::detect(|p| std::fs::symlink_metadata(dir.join(p)).is_ok())
            .into_iter()
            .map(|(a, p)| (a.id, p))
            .collect();
    let shared = dir.join(SHARED).is_dir();
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    write_atomic(&path, &template(&detected, shared))?;
    Ok(Initialized { path, detected })
}

/// The template, its `[install]` section replaced by the detected agents
/// when there are any.
fn template(detected: &[(&str, &str)], shared: bool) -> String {
    let base = init_template();
    if detected.is_empty() && !shared {
        return base.to_string();
    }
    let head = base.find("# [install]").map_or(base, |i| &base[..i]);
    let mut out = head.to_string();
    out.push_str("# [install]\n# Agents this project already uses (their directories exist):\n");
    let mut targets: Vec<String> = Vec::new();
    if shared {
        out.push_str(&format!("#   {SHARED} (read by most agents)\n"));
        targets.push(format!("{SHARED:?}"));
    }
    for (id, found) in detected {
        out.push_str(&format!("#   {id}: {found}\n"));
        targets.push(format!("{id:?}"));
    }
    out.push_str(
        "# Agent names install into each agent's skill directory; agents sharing\n\
         # .agents/skills get one copy there, the others a link to it.\n",
    );
    out.push_str(&format!("# targets = [{}]\n", targets.join(", ")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposes_detected_agents_commented() {
        let t = template(&[("claude-code", ".claude"), ("cursor", ".cursor")], true);
        assert!(
            t.ends_with("# targets = [\".agents/skills\", \"claude-code\", \"cursor\"]\n"),
            "{t}"
        );
        assert!(t.contains("#   claude-code: .claude\n"));
        assert_eq!(t.matches("[install]").count(), 1);
        assert_eq!(template(&[], false), init_template());
    }
}
