//! `skillpm add SPEC...`: edit the manifest, resolve the new entries,
//! install. The manifest is only written once everything installed.
//!
//! A git repository (without `--path`) or a well-known index may hold
//! many skills: with one, it is taken; with several, `add` lists them and
//! asks for `--skill NAME...` or `--all`. Each chosen skill becomes its
//! own manifest entry; skills of one repository share its one fetch.

mod choose;
mod dependency;
mod registry;
mod replace;

pub use choose::choice_listing;

use super::sync::Run;
use super::{Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::{Dependency, Manifest, ManifestEditor, DEFAULT_REGISTRY};
use crate::project::spec::{self, RegistryChoice, Spec};
use crate::project::{Project, ProjectError};
use crate::report::Reporter;
use crate::resolve::Refresh;
use crate::source::Request;
use choose::choose;
use dependency::{caret, check_skill_dir, dependency, expand_shorthand};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use registry::RegistryChoiceFor;
use replace::refuse_replacing;
use semver::VersionReq;
use skillpm_core::name::SkillName;

/// How many specs resolve at once while `add` learns their names.
const NAME_CONCURRENCY: usize = 16;

/// Which skills of a multi-skill source to add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// The only skill, or the repository root; several is an error that
    /// lists them.
    #[default]
    One,
    /// These, by name, command or directory (`--skill`).
    Named(Vec<String>),
    /// Every skill found (`--all`); those that cannot be installed are
    /// skipped with a warning, or with `strict` fail the command.
    All { strict: bool },
    /// The skills of these plugins of the repository's marketplaces
    /// (`--plugin NAME` or `NAME@MARKETPLACE`).
    Plugins(Vec<String>),
}

/// What `add` was asked for, beyond the flags shared by the commands
/// that install.
#[derive(Debug, Clone, Default)]
pub struct AddRequest {
    /// The specs as typed.
    pub specs: Vec<String>,
    /// `--path`: the skill's directory inside a git repository.
    pub subpath: Option<String>,
    pub selection: Selection,
    /// `--replace`: take skills skills.toml has from elsewhere from here.
    pub replace: bool,
    /// `--registry`: where registry specs resolve, recorded in skills.toml.
    pub registry: Option<RegistryChoice>,
}

pub fn add(
    env: &Environment,
    request: &AddRequest,
    opts: &Options,
    reporter: &dyn Reporter,
) -> Result<Summary> {
    let selection = &request.selection;
    let subpath = request.subpath.as_deref();
    let parsed: Vec<Spec> = request
        .specs
        .iter()
        .map(|s| Spec::parse(s))
        .collect::<Result<_, _>>()?;
    if let Some(p) = subpath {
        spec::check_subpath(p)?;
    }
    for s in &parsed {
        if let Spec::Path { path } = s {
            check_skill_dir(&env.cwd, path)?;
        }
    }
    if let (Some(choice), Some(other)) = (
        &request.registry,
        parsed.iter().find(|s| !matches!(s, Spec::Registry { .. })),
    ) {
        return Err(Error::RegistryNotForSpec {
            registry: choice.to_string(),
            spec: other.to_string(),
        });
    }
    let project = Project::locate(env, opts.global)?;
    let run = Run::new(env, &project, opts, "add", reporter)?;
    // Like pnpm and cargo, `add` in a directory without skills.toml starts
    // one; it is only written once everything installed.
    let text = match project.manifest_text() {
        Err(ProjectError::NoManifest(_)) => String::new(),
        r => r?,
    };
    let mut editor = ManifestEditor::parse(&text, &project.manifest_path)?;
    let current = match text.is_empty() {
        true => Manifest::default(),
        false => Manifest::parse(&text, &project.manifest_path)?,
    };
    let github_base = current
        .github_base
        .as_deref()
        .unwrap_or(spec::DEFAULT_GITHUB_BASE);
    let registry_for = RegistryChoiceFor::decide(request.registry.as_ref(), &current, &project)?;
    let mut deps: Vec<(Option<SkillName>, Dependency)> = Vec::new();
    let mut chose = false;
    for spec in parsed {
        let (spec, sub) = expand_shorthand(spec, github_base, subpath)?;
        let sub = sub.as_deref();
        match run
            .rt
            .block_on(choose(&run, &spec, sub, selection, reporter))?
        {
            Some(chosen) => {
                chose = true;
                deps.extend(chosen)
            }
            None => deps.push(dependency(env, &project, spec, sub, &registry_for.key)?),
        }
    }
    match selection {
        _ if chose => {}
        Selection::One => {}
        Selection::Plugins(_) => return Err(Error::NoPluginsHere),
        _ => return Err(Error::NothingToChoose),
    }
    let names = run.rt.block_on(names_of(&run, &deps, reporter))?;
    let before = current.skills;
    if !request.replace {
        refuse_replacing(&before, &names, &deps)?;
    }
    for (name, (_, dep)) in names.iter().zip(&deps) {
        editor.set_dependency(name, dep);
    }
    // The registry this add resolved against goes into skills.toml with
    // the entries, so a clone of the project resolves them there again.
    let on_default = |d: &Dependency| matches!(d, Dependency::Registry { registry: None, .. });
    if let Some((name, url)) = &registry_for.record {
        if name != DEFAULT_REGISTRY || deps.iter().any(|(_, d)| on_default(d)) {
            editor.set_registry(name, url);
        }
    }
    let new_text = editor.to_string();
    let manifest = Manifest::parse(&new_text, &project.manifest_path)?;
    // As with `cargo add`, re-adding a registry entry exactly as it stands
    // keeps its locked version: a no-op `add` asks the registry nothing.
    let unchanged = |n: &SkillName| match (before.get(n), manifest.skills.get(n)) {
        (Some(old @ Dependency::Registry { .. }), Some(new)) => old == new,
        _ => false,
    };
    let refresh = Refresh::Only(names.iter().filter(|n| !unchanged(n)).cloned().collect());
    let outcome = run.sync_writing(&manifest, &refresh, reporter, |lock| {
        // A bare `add NAME` records `^<resolved version>`, as `cargo add`
        // does, so a later `update` cannot jump a major version.
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
        (new_text != text).then_some(new_text)
    });
    run.finish(outcome)
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
