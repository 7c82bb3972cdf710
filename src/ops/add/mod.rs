//! `skillpm add SPEC...`: edit the manifest, resolve the new entries,
//! install. The manifest is only written once everything installed.
//!
//! A git repository (without `--path`) or a well-known index may hold
//! many skills: with one, it is taken; with several, `add` lists them and
//! asks for `--skill NAME...` or `--all`. Each chosen skill becomes its
//! own manifest entry; skills of one repository share its one fetch.

use super::sync::Run;
use super::{Options, Summary};
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::{Dependency, Manifest, ManifestEditor, DEFAULT_REGISTRY};
use crate::project::spec::{self, RegistryChoice, Spec};
use crate::project::{Project, ProjectError, RegistryFrom};
use crate::report::Reporter;
use crate::resolve::Refresh;
use crate::source::git::FoundSkill;
use crate::source::registry::credentials;
use crate::source::wellknown::WellKnownError;
use crate::source::{Request, SourceError};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use semver::VersionReq;
use skillpm_core::name::SkillName;
use skillpm_core::skill;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

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
    if !chose && *selection != Selection::One {
        return Err(Error::NothingToChoose);
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

/// Refuses an `add` that would point a skill skills.toml already has at
/// another origin (another repository, directory, registry or site), as
/// `--all` of a second collection would silently do for every name the two
/// share; names them all, the first with both origins. A new version or
/// ref of the same origin is an update, and passes.
fn refuse_replacing(
    before: &std::collections::BTreeMap<SkillName, Dependency>,
    names: &[SkillName],
    deps: &[(Option<SkillName>, Dependency)],
) -> Result<()> {
    let replaced: Vec<(&SkillName, &Dependency, &Dependency)> = names
        .iter()
        .zip(deps)
        .filter_map(|(name, (_, new))| {
            let old = before.get(name)?;
            (!old.same_origin(new)).then_some((name, old, new))
        })
        .collect();
    let Some((name, old, new)) = replaced.first() else {
        return Ok(());
    };
    let first = format!("`{name}` from {}, not {}", old.origin(), new.origin());
    let listing = match replaced.len() {
        1 => format!("skills.toml has {first}"),
        n => {
            let all: Vec<String> = replaced.iter().map(|(n, ..)| format!("`{n}`")).collect();
            format!(
                "skills.toml has {n} of these skills from other sources ({}): {first}",
                all.join(", ")
            )
        }
    };
    Err(Error::WouldReplace {
        count: replaced.len(),
        listing,
    })
}

/// The skills an `add` error asks the user to choose from, one line
/// each (command, name, description), for the CLI to print above the
/// one-line error.
pub fn choice_listing(e: &Error) -> Option<&str> {
    match e {
        Error::Source(s) => match &**s {
            SourceError::ChooseSkills { listing, .. } => Some(listing),
            _ => None,
        },
        _ => None,
    }
}

/// `^VERSION` (the version parses back as a requirement by construction).
fn caret(v: &semver::Version) -> VersionReq {
    VersionReq::parse(&format!("^{v}")).unwrap_or(VersionReq::STAR)
}

/// Which registry `add` writes on its registry entries, and the
/// `[registries]` entry it adds to skills.toml for that, if any.
#[derive(Debug, Default)]
struct RegistryChoiceFor {
    /// The entries' `registry` key; `None` is the default registry.
    key: Option<String>,
    /// `[registries] NAME = URL` to write with the entries.
    record: Option<(String, String)>,
}

impl RegistryChoiceFor {
    /// `--registry NAME` must be listed under `[registries]` (or be
    /// `default`), as cargo's `--registry` must be configured. A
    /// `--registry URL` is recorded by the name it is listed under, else
    /// under a name made from its host, so the entry keeps naming it as
    /// cargo's `registry = "NAME"` does. Without the flag, a default
    /// registry known only from `SKILLPM_REGISTRY` becomes
    /// `[registries] default`, so a teammate without the variable
    /// resolves against the same registry.
    fn decide(
        choice: Option<&RegistryChoice>,
        manifest: &Manifest,
        project: &Project,
    ) -> Result<RegistryChoiceFor> {
        let named = |name: &str| match name {
            DEFAULT_REGISTRY => None,
            n => Some(n.to_string()),
        };
        match choice {
            None => {
                // A malformed SKILLPM_REGISTRY is reported by the
                // resolution that needs it, not by an add of a git skill.
                let record = match project.default_registry(manifest) {
                    Ok((url, RegistryFrom::Environment))
                        if !manifest.registries.contains_key(DEFAULT_REGISTRY) =>
                    {
                        Some((DEFAULT_REGISTRY.to_string(), url))
                    }
                    _ => None,
                };
                Ok(RegistryChoiceFor { key: None, record })
            }
            Some(RegistryChoice::Name(n)) => {
                if n != DEFAULT_REGISTRY && !manifest.registries.contains_key(n) {
                    return Err(ProjectError::UnknownRegistry(n.clone()).into());
                }
                Ok(RegistryChoiceFor {
                    key: named(n),
                    record: None,
                })
            }
            Some(RegistryChoice::Url(url)) => {
                let want = credentials::registry_key(url);
                let listed = manifest
                    .registries
                    .iter()
                    .find(|(_, u)| credentials::registry_key(u) == want);
                if let Some((name, _)) = listed {
                    return Ok(RegistryChoiceFor {
                        key: named(name),
                        record: None,
                    });
                }
                let name = name_for_url(url, manifest);
                Ok(RegistryChoiceFor {
                    key: Some(name.clone()),
                    record: Some((name, url.clone())),
                })
            }
        }
    }
}

/// A `[registries]` name for `url`: its host with `-` for `.` and `:`,
/// then its port if it has one (`skills.acme.internal`,
/// `127-0-0-1-7878`), with `-2`, `-3`, ... when the name is taken by
/// another URL. Never `default`: that would make every plain entry
/// resolve there.
fn name_for_url(url: &str, manifest: &Manifest) -> String {
    let parsed = url::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or("registry");
    let mut base: String = host
        .trim_matches(['[', ']'])
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect::<String>()
        .trim_matches('-')
        .to_string();
    if base.is_empty() {
        base = "registry".into();
    }
    if let Some(port) = parsed.as_ref().and_then(url::Url::port) {
        base.push_str(&format!("-{port}"));
    }
    let taken = |n: &str| n == DEFAULT_REGISTRY || manifest.registries.contains_key(n);
    let mut name = base.clone();
    let mut n = 2;
    while taken(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// The manifest entry a spec asks for, and its name if the spec says it.
/// A registry spec takes `registry`, the registry `add` chose for it.
fn dependency(
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
fn check_skill_dir(cwd: &Path, typed: &str) -> Result<()> {
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
fn expand_shorthand(
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

/// For a source that may hold many skills (a git repository without a
/// path, a well-known index), the chosen skills as manifest entries;
/// `None` when the spec names exactly one package the usual way.
async fn choose(
    run: &Run<'_>,
    spec: &Spec,
    subpath: Option<&str>,
    selection: &Selection,
    reporter: &dyn Reporter,
) -> Result<Option<Vec<(Option<SkillName>, Dependency)>>> {
    match spec {
        Spec::Git { url, reference } if subpath.is_none() => {
            let all = matches!(selection, Selection::All { .. });
            let (commit, found) = run
                .sources
                .git
                .discover(url, reference.as_ref(), all)
                .await?;
            let origin = format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]);
            if found.is_empty() {
                return Err(SourceError::BadSkill {
                    dir: origin,
                    message: "no SKILL.md anywhere in the repository".into(),
                }
                .into());
            }
            if found.iter().any(|f| f.dir.is_none()) && *selection == Selection::One {
                return Ok(None);
            }
            let found = match selection {
                Selection::All { strict } => installable(found, &origin, *strict, reporter)?,
                _ => found,
            };
            let rows: Vec<Row> = found.iter().map(Row::from).collect();
            let picked = pick(&origin, &rows, selection)?;
            picked
                .into_iter()
                .map(|i| {
                    let f: &FoundSkill = &found[i];
                    if let Some(problem) = &f.problem {
                        return Err(SourceError::BadSkill {
                            dir: format!("{origin}:{}", f.dir.as_deref().unwrap_or(".")),
                            message: problem.clone(),
                        }
                        .into());
                    }
                    let name = SkillName::new(&f.name).map_err(|source| Error::BadName {
                        name: f.name.clone(),
                        source,
                    })?;
                    Ok((
                        Some(name),
                        Dependency::Git {
                            url: url.clone(),
                            reference: reference.clone(),
                            path: f.dir.clone(),
                        },
                    ))
                })
                .collect::<Result<Vec<_>>>()
                .map(Some)
        }
        Spec::WellKnown { url } => {
            let index = run.sources.wellknown.discover(url).await?;
            let origin = index.url.to_string();
            if index.skills.is_empty() {
                return Err(SourceError::from(WellKnownError::NoneUsable {
                    index: skillpm_core::text::sanitize(&origin).into_owned(),
                    skipped: index.skipped.clone(),
                })
                .into());
            }
            let rows: Vec<Row> = index
                .skills
                .iter()
                .map(|l| Row {
                    command: l.name.to_string(),
                    name: l.name.to_string(),
                    dir: String::new(),
                    description: l.description.clone(),
                })
                .collect();
            let picked = pick(&origin, &rows, selection)?;
            Ok(Some(
                picked
                    .into_iter()
                    .map(|i| {
                        (
                            Some(index.skills[i].name.clone()),
                            Dependency::WellKnown {
                                index: index.url.clone(),
                            },
                        )
                    })
                    .collect(),
            ))
        }
        _ => Ok(None),
    }
}

/// The skills of a repository that `--all` can install. Each of the
/// others (a [`FoundSkill::problem`], or a name two of them share) is
/// reported with its directory and why; then, unless `strict`, they are
/// skipped and the rest installed, as a repository as it is (hundreds of
/// skills, some invalid) would otherwise be refused one skill per run.
fn installable(
    found: Vec<FoundSkill>,
    origin: &str,
    strict: bool,
    reporter: &dyn Reporter,
) -> Result<Vec<FoundSkill>> {
    let total = found.len();
    let mut sharing: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in found.iter().filter(|f| f.problem.is_none()) {
        let dir = f.dir.as_deref().unwrap_or(".");
        sharing.entry(f.name.as_str()).or_default().push(dir);
    }
    let why_not = |f: &FoundSkill| -> Option<String> {
        if let Some(problem) = &f.problem {
            return Some(problem.clone());
        }
        let dirs = &sharing[f.name.as_str()];
        (dirs.len() > 1).then(|| {
            format!(
                "{} skills here are named `{}` ({}); add one of them with --path",
                dirs.len(),
                f.name,
                dirs.join(", ")
            )
        })
    };
    let verdicts: Vec<Option<String>> = found.iter().map(why_not).collect();
    let skipped = verdicts.iter().flatten().count();
    if skipped == 0 {
        return Ok(found);
    }
    for (f, why) in found.iter().zip(&verdicts) {
        if let Some(why) = why {
            let dir = f.dir.as_deref().unwrap_or(".");
            reporter.report(crate::report::Event::Warning {
                message: format!("cannot install {dir}: {why}"),
            });
        }
    }
    let origin = skillpm_core::text::sanitize(origin).into_owned();
    if strict {
        return Err(Error::Uninstallable {
            origin,
            skipped,
            total,
        });
    }
    reporter.report(crate::report::Event::Warning {
        message: format!(
            "skipped {skipped} of the {total} skills of {origin} (--strict makes this an error)"
        ),
    });
    Ok(found
        .into_iter()
        .zip(verdicts)
        .filter_map(|(f, why)| why.is_none().then_some(f))
        .collect())
}

/// A skill as `add` shows it when asking which to take.
struct Row {
    command: String,
    name: String,
    dir: String,
    description: String,
}

impl From<&FoundSkill> for Row {
    fn from(f: &FoundSkill) -> Self {
        Row {
            command: f.command.clone(),
            name: f.name.clone(),
            dir: f.dir.clone().unwrap_or_default(),
            description: f.description.clone(),
        }
    }
}

/// Indexes of the rows `selection` picks; asks (an error listing every
/// row) when it is ambiguous, and names what `--skill` did not find.
fn pick(origin: &str, rows: &[Row], selection: &Selection) -> Result<Vec<usize>> {
    let ask = || -> Error {
        SourceError::ChooseSkills {
            origin: skillpm_core::text::sanitize(origin).into_owned(),
            count: rows.len(),
            listing: listing(rows),
        }
        .into()
    };
    let picked: Vec<usize> = match selection {
        Selection::One if rows.len() == 1 => vec![0],
        Selection::One => return Err(ask()),
        Selection::All { .. } => (0..rows.len()).collect(),
        Selection::Named(names) => {
            let mut out = Vec::new();
            for n in names {
                let hit = rows
                    .iter()
                    .position(|r| r.name == *n)
                    .or_else(|| rows.iter().position(|r| r.command == *n || r.dir == *n));
                match hit {
                    Some(i) if !out.contains(&i) => out.push(i),
                    Some(_) => {}
                    None => {
                        let hint = match nearest(n, rows) {
                            Some(near) => format!(" (did you mean `{near}`?)"),
                            None => String::new(),
                        };
                        return Err(SourceError::ChooseSkills {
                            origin: format!(
                                "{} has no skill `{}`{hint}; it",
                                skillpm_core::text::sanitize(origin),
                                skillpm_core::text::sanitize(n)
                            ),
                            count: rows.len(),
                            listing: listing(rows),
                        }
                        .into());
                    }
                }
            }
            out
        }
    };
    // Manifest keys are names: two picked skills may not share one.
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(picked.len());
    for &j in &picked {
        if let Some(&i) = first.get(rows[j].name.as_str()) {
            let clean = |s: &str| skillpm_core::text::sanitize(s).into_owned();
            return Err(Error::SameName {
                origin: clean(origin),
                first: clean(&rows[i].dir),
                second: clean(&rows[j].dir),
                name: clean(&rows[i].name),
            });
        }
        first.insert(&rows[j].name, j);
    }
    Ok(picked)
}

/// The name or command of `rows` closest to the mistyped `n`, if one is
/// within two edits (and is not mostly edits, for short names).
fn nearest<'r>(n: &str, rows: &'r [Row]) -> Option<std::borrow::Cow<'r, str>> {
    rows.iter()
        .flat_map(|r| [r.name.as_str(), r.command.as_str()])
        .map(|c| (strsim::osa_distance(n, c), c))
        .filter(|&(d, c)| d <= 2 && d < c.chars().count().min(n.chars().count()))
        .min()
        .map(|(_, c)| skillpm_core::text::sanitize(c))
}

/// `  command  name  description`, aligned, sanitized, one per line.
fn listing(rows: &[Row]) -> String {
    let clean = |s: &str, max: usize| -> String {
        let one: String = skillpm_core::text::sanitize(s)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if one.chars().count() > max {
            let cut: String = one.chars().take(max.saturating_sub(1)).collect();
            format!("{cut}…")
        } else {
            one
        }
    };
    let cells: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                clean(&r.command, 60),
                clean(&r.name, 64),
                clean(&r.description, 80),
            )
        })
        .collect();
    let w1 = cells.iter().map(|c| c.0.chars().count()).max().unwrap_or(0);
    let w2 = cells.iter().map(|c| c.1.chars().count()).max().unwrap_or(0);
    cells
        .iter()
        .map(|(c, n, d)| format!("  {c:<w1$}  {n:<w2$}  {d}").trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(dir: &str, name: &str) -> Row {
        Row {
            command: dir.to_string(),
            name: name.to_string(),
            dir: dir.to_string(),
            description: String::new(),
        }
    }

    /// A recorded URL is named after its host and port; a name taken by
    /// another URL, or `default`, gets a number instead.
    #[test]
    fn registry_names_come_from_host_and_port() {
        let mut m = Manifest::default();
        assert_eq!(
            name_for_url("https://Skills.Acme.internal/api", &m),
            "skills-acme-internal"
        );
        assert_eq!(name_for_url("http://127.0.0.1:7878", &m), "127-0-0-1-7878");
        assert_eq!(name_for_url("http://[::1]:8080", &m), "1-8080");
        assert_eq!(name_for_url("http://default", &m), "default-2");
        m.registries
            .insert("skills-acme-internal".into(), "https://x".into());
        assert_eq!(
            name_for_url("https://skills.acme.internal/other", &m),
            "skills-acme-internal-2"
        );
    }

    /// Two skills that would share a manifest key are refused, naming
    /// both directories; distinct names are all picked, in order.
    #[test]
    fn picking_refuses_two_skills_with_one_name() {
        let rows = [
            row("a/pdf", "pdf"),
            row("b/docx", "docx"),
            row("c/pdf", "pdf"),
        ];
        let err = pick("repo", &rows, &Selection::All { strict: false })
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`a/pdf` and `c/pdf` are both named `pdf`"),
            "{err}"
        );
        let distinct = &rows[..2];
        assert_eq!(
            pick("repo", distinct, &Selection::All { strict: false }).unwrap(),
            [0, 1]
        );
    }
}
