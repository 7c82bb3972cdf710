//! `validate` over a tree: finds every skill below a path and applies the
//! strict Agent Skills rules of [`skillpm_core::validate`] to each.

pub use skillpm_core::validate::*;

use super::discover::scan_root;
use skillpm_core::skill::SKILL_FILES;
use std::path::Path;

/// Validates `path`: a skill directory, or a tree of skills.
pub fn validate_path(path: &Path) -> Vec<Violation> {
    if SKILL_FILES.iter().any(|f| path.join(f).is_file()) {
        return validate_skill_dir(path);
    }
    let mut found = Vec::new();
    scan_root(path, 0, &mut found);
    if found.is_empty() {
        return vec![Violation {
            file: path.to_path_buf(),
            line: None,
            severity: Severity::Error,
            message: "no SKILL.md found here or below".to_string(),
        }];
    }
    found
        .iter()
        .flat_map(|f| validate_skill_dir(&f.dir))
        .collect()
}
