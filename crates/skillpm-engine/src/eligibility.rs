//! Requirements and whether this machine meets them.
//!
//! Skills declare requirements in three dialects seen in public
//! collections: a top-level `requires:` block, an agent's own block such as
//! `sven: {requires_bins, requires_env, always, user_invocable_only}`, and
//! OpenClaw's `metadata.openclaw.{requires.{bins, anyBins, env}, os, always}`
//! (also under the older `clawdbot` / `clawdis` keys). They are merged into
//! one [`Requirements`]. Kinds the engine does not know never hide a skill;
//! they are listed as unchecked.

use crate::config::Environment;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Everything a skill asks of its environment, from every dialect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    pub bins: Vec<String>,
    pub any_bins: Vec<String>,
    pub env: Vec<String>,
    pub os: Vec<String>,
    pub conflicts: Vec<String>,
    /// Requirement kinds the engine cannot check (`mcp`, `python`, ...).
    pub unchecked: Vec<String>,
    pub always: bool,
    pub user_invocable_only: bool,
}

const OPENCLAW_KEYS: &[&str] = &["openclaw", "clawdbot", "clawdis"];

impl Requirements {
    pub fn from_frontmatter(fm: &Map<String, Value>) -> Self {
        let mut r = Requirements::default();
        if let Some(req) = fm.get("requires") {
            r.merge_requires_block(req);
        }
        if let Some(os) = fm.get("os") {
            push_strings(&mut r.os, os);
        }
        if let Some(c) = fm.get("conflicts") {
            push_strings(&mut r.conflicts, c);
        }
        r.always |= is_true(fm.get("always"));
        r.user_invocable_only |= is_true(fm.get("user_invocable_only"));
        for (key, value) in fm {
            let Some(block) = value.as_object() else {
                continue;
            };
            if key == "metadata" {
                for k in OPENCLAW_KEYS {
                    if let Some(oc) = block.get(*k).and_then(Value::as_object) {
                        if let Some(req) = oc.get("requires") {
                            r.merge_requires_block(req);
                        }
                        if let Some(os) = oc.get("os") {
                            push_strings(&mut r.os, os);
                        }
                        r.always |= is_true(oc.get("always"));
                    }
                }
                continue;
            }
            // An agent's own block: `sven: {requires_bins: [...], ...}`.
            if let Some(b) = block.get("requires_bins") {
                push_strings(&mut r.bins, b);
            }
            if let Some(e) = block.get("requires_env") {
                push_strings(&mut r.env, e);
            }
            r.always |= is_true(block.get("always"));
            r.user_invocable_only |= is_true(block.get("user_invocable_only"));
        }
        for list in [
            &mut r.bins,
            &mut r.any_bins,
            &mut r.env,
            &mut r.os,
            &mut r.conflicts,
            &mut r.unchecked,
        ] {
            list.sort();
            list.dedup();
        }
        r
    }

    fn merge_requires_block(&mut self, req: &Value) {
        let Some(map) = req.as_object() else {
            // `requires: [git, docker]` is read as a list of binaries.
            push_strings(&mut self.bins, req);
            return;
        };
        for (k, v) in map {
            match k.as_str() {
                "bins" => push_strings(&mut self.bins, v),
                "anyBins" | "any_bins" => push_strings(&mut self.any_bins, v),
                "env" => push_strings(&mut self.env, v),
                "os" => push_strings(&mut self.os, v),
                other => self.unchecked.push(other.to_string()),
            }
        }
    }
}

/// YAML is read as 1.2, where `yes`/`on` are strings; skills written for
/// YAML 1.1 loaders still mean "true" by them, and loading is lenient.
pub(super) fn is_true(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => {
            matches!(s.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "y")
        }
        _ => false,
    }
}

/// The opposite spelling of [`is_true`]: `false`, or a string such as
/// `"no"`; absent or anything else is not false.
pub(super) fn is_false(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => !*b,
        Some(Value::String(s)) => {
            matches!(
                s.to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "n"
            )
        }
        _ => false,
    }
}

/// Accepts a string or a list of strings; other shapes are ignored rather
/// than fatal, because loading is lenient.
fn push_strings(out: &mut Vec<String>, v: &Value) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => {
            out.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
        }
        _ => {}
    }
}

/// Maps the spellings skills use to `std::env::consts::OS`.
pub fn normalize_os(os: &str) -> String {
    match os.to_ascii_lowercase().as_str() {
        "darwin" | "macos" | "osx" | "mac" => "macos".to_string(),
        "win32" | "windows" => "windows".to_string(),
        other => other.to_string(),
    }
}

/// Why a skill is not eligible: a stable code and a human sentence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reason {
    pub code: String,
    pub detail: String,
}

impl Reason {
    pub fn new(code: &str, detail: impl Into<String>) -> Self {
        Reason {
            code: code.to_string(),
            detail: detail.into(),
        }
    }
}

/// Answers "is this binary on PATH" once per name, since thousands of skills
/// often ask for the same few tools.
pub struct Probe<'a> {
    env: &'a Environment,
    bins: RefCell<BTreeMap<String, bool>>,
}

impl<'a> Probe<'a> {
    pub fn new(env: &'a Environment) -> Self {
        Probe {
            env,
            bins: RefCell::new(BTreeMap::new()),
        }
    }

    pub fn has_bin(&self, bin: &str) -> bool {
        if let Some(&hit) = self.bins.borrow().get(bin) {
            return hit;
        }
        let hit = match (&self.env.bins, &self.env.path_var) {
            (Some(declared), _) => declared.contains(bin),
            (None, Some(path)) => which::which_in(bin, Some(path), &self.env.cwd).is_ok(),
            (None, None) => false,
        };
        self.bins.borrow_mut().insert(bin.to_string(), hit);
        hit
    }

    /// The first unmet requirement, checked in a fixed order so the same
    /// skill always reports the same reason.
    pub fn check(&self, r: &Requirements) -> Option<Reason> {
        if !r.os.is_empty() {
            let here = normalize_os(&self.env.os);
            if !r.os.iter().any(|o| normalize_os(o) == here) {
                return Some(Reason::new(
                    "unsupported-os",
                    format!("needs {}; this is {here}", r.os.join(" or ")),
                ));
            }
        }
        if let Some(b) = r.bins.iter().find(|b| !self.has_bin(b)) {
            return Some(Reason::new("missing-bin", format!("`{b}` is not on PATH")));
        }
        if !r.any_bins.is_empty() && !r.any_bins.iter().any(|b| self.has_bin(b)) {
            return Some(Reason::new(
                "missing-bin",
                format!("none of `{}` is on PATH", r.any_bins.join("`, `")),
            ));
        }
        if let Some(e) = r.env.iter().find(|e| !self.env.env_set.contains(*e)) {
            return Some(Reason::new(
                "missing-env",
                format!("environment variable `{e}` is not set"),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::frontmatter as fm;

    #[test]
    fn merges_all_three_dialects() {
        let r = Requirements::from_frontmatter(&fm(
            "requires: {bins: [git], env: [A], mcp: [rube]}\nsven: {requires_bins: [docker], requires_env: [B], user_invocable_only: true}\nmetadata: {\"openclaw\": {\"requires\": {\"anyBins\": [\"rg\", \"grep\"]}, \"os\": [\"darwin\"], \"always\": true}}\nconflicts: [other]\n",
        ));
        assert_eq!(r.bins, ["docker", "git"]);
        assert_eq!(r.env, ["A", "B"]);
        assert_eq!(r.any_bins, ["grep", "rg"]);
        assert_eq!(r.os, ["darwin"]);
        assert_eq!(r.unchecked, ["mcp"]);
        assert_eq!(r.conflicts, ["other"]);
        assert!(r.always && r.user_invocable_only);
    }

    /// How a binary is found is the platform's (the `which` crate): on
    /// Unix and macOS an executable file on PATH; on Windows a file on
    /// PATH with one of `PATHEXT`'s extensions (`docker` is `docker.exe`),
    /// where there is no executable bit.
    #[test]
    fn binaries_are_found_on_path_as_the_platform_finds_them() {
        let t = tempfile::tempdir().unwrap();
        let mut env = Environment::isolated();
        env.bins = None;
        env.path_var = Some(t.path().as_os_str().to_owned());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let write = |name: &str, mode: u32| {
                let p = t.path().join(name);
                std::fs::write(&p, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            };
            write("tool", 0o755);
            write("notes", 0o644);
            let probe = Probe::new(&env);
            assert!(probe.has_bin("tool"));
            assert!(!probe.has_bin("notes"), "not executable");
            assert!(!probe.has_bin("absent"));
        }
        #[cfg(windows)]
        {
            std::fs::write(t.path().join("tool.exe"), "").unwrap();
            assert!(Probe::new(&env).has_bin("tool"));
        }
    }

    #[test]
    fn normalizes_os_names() {
        assert_eq!(normalize_os("Darwin"), "macos");
        assert_eq!(normalize_os("linux"), "linux");
    }
}
