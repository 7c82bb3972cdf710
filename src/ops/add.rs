//! `skillpm add SPEC...`: edit the manifest, resolve the new entries,
//! install. The manifest is only written once everything installed.

use super::sync::Run;
use super::{Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::fs::write_atomic;
use crate::project::manifest::{Dependency, Manifest, ManifestEditor};
use crate::project::spec::{self, Spec};
use crate::project::Project;
use crate::report::Reporter;
use crate::resolve::Refresh;
use crate::source::Request;
use futures_util::stream::{self, StreamExt, TryStreamExt};
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
    let _guard = project.lock()?;
    let text = project.manifest_text()?;
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    let deps: Vec<(Option<SkillName>, Dependency)> = parsed
        .into_iter()
        .map(|spec| dependency(env, &project, spec, subpath))
        .collect();
    let run = Run::new(&project, opts)?;
    let names = run.rt.block_on(names_of(&run, &deps, reporter))?;
    for (name, (_, dep)) in names.iter().zip(&deps) {
        editor.set_dependency(name, dep);
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    let refresh = Refresh::Only(names.into_iter().collect::<BTreeSet<_>>());
    let summary = run.sync(&manifest, &refresh, reporter)?;
    if new_text != text {
        write_atomic(&project.manifest_path, &new_text)
            .map_err(Error::io(&project.manifest_path))?;
    }
    Ok(summary)
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
/// project so the manifest stays valid wherever skillpm runs.
fn relative_to_project(env: &Environment, project: &Project, rel: &str) -> String {
    let abs = normalize(&env.cwd.join(rel));
    match abs.strip_prefix(&project.dir) {
        Ok(p) => format!("./{}", p.display()),
        Err(_) => abs.display().to_string(),
    }
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
