//! `skillpm add SPEC...`: edit the manifest, resolve the new entries,
//! install. The manifest is only written once everything installed.

use super::sync::Run;
use super::{Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::fs::write_atomic;
use crate::project::manifest::{Dependency, Manifest, ManifestEditor};
use crate::project::spec::{self, Spec};
use crate::project::{Project, ProjectError};
use crate::report::Reporter;
use crate::resolve::Refresh;
use crate::source::Request;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use semver::VersionReq;
use skillpm_core::name::SkillName;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// How many specs resolve at once while `add` learns their names.
const NAME_CONCURRENCY: usize = 16;

pub fn add(
    env: &Environment,
    specs: &[String],
    subpath: Option<&str>,
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let parsed: Vec<Spec> = specs
        .iter()
        .map(|s| Spec::parse(s))
        .collect::<Result<_, _>>()?;
    if let Some(p) = subpath {
        spec::check_subpath(p)?;
    }
    let project = Project::locate(env, opts.global)?;
    let run = Run::new(&project, opts)?;
    // Like pnpm and cargo, `add` in a directory without skills.toml starts
    // one; it is only written once everything installed.
    let text = match project.manifest_text() {
        Err(ProjectError::NoManifest(_)) => String::new(),
        r => r?,
    };
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    let deps: Vec<(Option<SkillName>, Dependency)> = parsed
        .into_iter()
        .map(|spec| dependency(env, &project, spec, subpath))
        .collect();
    let names = run.rt.block_on(names_of(&run, &deps, reporter))?;
    for (name, (_, dep)) in names.iter().zip(&deps) {
        editor.set_dependency(name, dep);
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    let refresh = Refresh::Only(names.iter().cloned().collect::<BTreeSet<_>>());
    let summary = run.sync(&manifest, &refresh, reporter)?;
    // A bare `add NAME` records `^<resolved version>`, as `cargo add`
    // does, so a later `update` cannot jump a major version.
    let lock = project.read_lock()?;
    for (name, (_, dep)) in names.iter().zip(&deps) {
        if let (Dependency::Registry { req, registry }, Some(l)) = (dep, lock.get(name)) {
            if *req == VersionReq::STAR {
                let caret = Dependency::Registry {
                    req: caret(&l.version),
                    registry: registry.clone(),
                };
                editor.set_dependency(name, &caret);
            }
        }
    }
    let new_text = editor.to_string();
    if new_text != text {
        write_atomic(&project.manifest_path, &new_text)
            .map_err(Error::io(&project.manifest_path))?;
    }
    Ok(summary)
}

/// `^VERSION` (the version parses back as a requirement by construction).
fn caret(v: &semver::Version) -> VersionReq {
    VersionReq::parse(&format!("^{v}")).unwrap_or(VersionReq::STAR)
}

/// The manifest entry a spec asks for, and its name if the spec says it.
fn dependency(
    env: &Environment,
    project: &Project,
    spec: Spec,
    subpath: Option<&str>,
) -> (Option<SkillName>, Dependency) {
    match spec {
        Spec::Registry {
            name,
            req,
            registry,
        } => (Some(name), Dependency::Registry { req, registry }),
        Spec::Git { url, reference } => (
            None,
            Dependency::Git {
                url,
                reference,
                path: subpath.map(str::to_string),
            },
        ),
        Spec::Path { path } => (
            None,
            Dependency::Path {
                path: relative_to_project(env, project, &path),
            },
        ),
    }
}

/// Each dependency's package name. A registry spec names itself; git and
/// path packages are named by their own `SKILL.md`, so they are resolved
/// now, concurrently, through the run's sources, which remember the result
/// for the install that follows (one fetch, one pack).
async fn names_of(
    run: &Run<'_>,
    deps: &[(Option<SkillName>, Dependency)],
    reporter: &dyn Reporter,
) -> Result<Vec<SkillName>> {
    stream::iter(deps)
        .map(|(name, dep)| async move {
            if let Some(name) = name {
                return Ok(name.clone());
            }
            let req = Request {
                name: None,
                dep,
                registry_url: None,
            };
            Ok::<_, Error>(run.sources.resolve(req, reporter).await?.locked.name)
        })
        .buffered(NAME_CONCURRENCY)
        .try_collect()
        .await
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
