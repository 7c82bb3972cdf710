//! What a spec becomes in skills.toml: shorthands expanded, path specs
//! checked and made relative to the project, a registry spec's entry.

use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::Dependency;
use crate::project::spec::{self, Spec};
use crate::project::Project;
use semver::VersionReq;
use skillpm_core::name::SkillName;
use skillpm_core::skill;
use std::path::{Component, Path, PathBuf};

/// `^VERSION` (the version parses back as a requirement by construction).
pub(super) fn caret(v: &semver::Version) -> VersionReq {
    VersionReq::parse(&format!("^{v}")).unwrap_or(VersionReq::STAR)
}

/// The manifest entry a spec asks for, and its name if the spec says it.
/// A registry spec takes `registry`, the registry `add` chose for it.
pub(super) fn dependency(
    env: &Environment,
    project: &Project,
    spec: Spec,
    subpath: Option<&str>,
    registry: &Option<String>,
) -> Result<(Option<SkillName>, Dependency)> {
    Ok(match spec {
        Spec::Registry { name, req, .. } => (
            Some(name),
            Dependency::Registry {
                req,
                registry: registry.clone(),
            },
        ),
        Spec::Git { url, reference } => (
            None,
            Dependency::Git {
                url,
                reference,
                path: subpath.map(str::to_string),
                plugin: None,
                plugin_version: None,
            },
        ),
        Spec::Path { path } => (
            None,
            Dependency::Path {
                path: relative_to_project(env, project, &path),
            },
        ),
        // Expanded and listed before this point; kept total for safety.
        Spec::WellKnown { url } => (None, Dependency::WellKnown { index: url }),
        Spec::GitHub { .. } => unreachable!("shorthands are expanded first"),
    })
}

/// Refuses a path spec that is no skill directory, naming the path as
/// typed: once made relative to the project it reads as a path the user
/// never wrote (`/etc` as `../../../../etc`).
pub(super) fn check_skill_dir(cwd: &Path, typed: &str) -> Result<()> {
    let dir = cwd.join(typed);
    let reason = if !dir.exists() {
        "it does not exist"
    } else if !dir.is_dir() {
        "it is not a directory"
    } else if skill::find_skill_file(&dir).is_none() {
        "no SKILL.md"
    } else {
        return Ok(());
    };
    Err(Error::NotSkillDir {
        path: typed.to_string(),
        reason,
    })
}

/// `owner/repo[/path][@ref]` as the git spec it stands for, and the
/// subdirectory to use: the shorthand's own path, or `--path`.
pub(super) fn expand_shorthand(
    spec: Spec,
    base: &str,
    subpath: Option<&str>,
) -> Result<(Spec, Option<String>)> {
    let Spec::GitHub {
        shorthand,
        reference,
    } = spec
    else {
        return Ok((spec, subpath.map(str::to_string)));
    };
    let url = shorthand.url(base)?;
    if let (Some(_), Some(p)) = (&shorthand.path, subpath) {
        return Err(spec::SpecError::BadSubpath {
            path: p.to_string(),
            reason: "the shorthand already names a path; give only one",
        }
        .into());
    }
    let sub = shorthand.path.or_else(|| subpath.map(str::to_string));
    Ok((Spec::Git { url, reference }, sub))
}

/// A path typed relative to the working directory, made relative to the
/// project (`./x`, or `../vendor/x` outside it) so the manifest and lock
/// stay valid wherever the project is checked out. Only a path on another
/// root (a different drive) stays absolute.
fn relative_to_project(env: &Environment, project: &Project, rel: &str) -> String {
    let abs = normalize(&env.cwd.join(rel));
    let base = normalize(&project.dir);
    let common = abs
        .components()
        .zip(base.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return abs.display().to_string();
    }
    let ups = base.components().count() - common;
    let mut out = if ups == 0 {
        PathBuf::from(".")
    } else {
        (0..ups).map(|_| Component::ParentDir).collect()
    };
    out.extend(abs.components().skip(common));
    out.display().to_string()
}

/// Removes `.` and `..` components lexically (the directory may not exist).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}
