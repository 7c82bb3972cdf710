//! Choosing among the skills of a source that holds many (a git
//! repository without `--path`, a well-known index): `--skill`, `--all`,
//! or an error that lists them.

use super::Selection;
use crate::error::{Error, Result};
use crate::ops::sync::Run;
use crate::project::manifest::Dependency;
use crate::project::spec::Spec;
use crate::project::spec::{GitRef, GitUrl};
use crate::report::Reporter;
use crate::source::git::FoundSkill;
use crate::source::marketplace::{self, Marketplace, Plugin, PluginSource};
use crate::source::wellknown::WellKnownError;
use crate::source::SourceError;
use semver::VersionReq;
use skillpm_core::name::SkillName;
use std::collections::{HashMap, HashSet};

/// The skills an `add` error asks the user to choose from, one line
/// each (command, name, description), for the CLI to print above the
/// one-line error.
pub fn choice_listing(e: &Error) -> Option<&str> {
    match e {
        Error::Source(s) => match &**s {
            SourceError::ChooseSkills { listing, .. } => Some(listing),
            SourceError::ChoosePlugin { listing, .. } => Some(listing),
            _ => None,
        },
        _ => None,
    }
}

/// For a source that may hold many skills (a git repository without a
/// path, a well-known index), the chosen skills as manifest entries;
/// `None` when the spec names exactly one package the usual way.
pub(super) async fn choose(
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
            // A marketplace whose plugins all live elsewhere holds no
            // skill itself.
            let plugins = matches!(selection, Selection::Plugins(_));
            if found.is_empty() && !plugins {
                return Err(SourceError::BadSkill {
                    dir: origin,
                    message: "no SKILL.md anywhere in the repository".into(),
                }
                .into());
            }
            if found.iter().any(|f| f.dir.is_none()) && *selection == Selection::One {
                return Ok(None);
            }
            let mut elsewhere = Vec::new();
            let (found, plugin_of) = match selection {
                Selection::All { strict } => {
                    (installable(found, &origin, *strict, reporter)?, Vec::new())
                }
                Selection::Plugins(wanted) => {
                    let markets = run.sources.git.marketplaces(url, &commit).await?;
                    let (skills, plugins, remote) = of_plugins(&origin, &markets, wanted, found)?;
                    for (plugin, req) in remote {
                        elsewhere.extend(of_remote(run, url, &origin, plugin, req).await?);
                    }
                    (skills, plugins)
                }
                _ => (found, Vec::new()),
            };
            let rows: Vec<Row> = found.iter().map(Row::from).collect();
            let picked = match selection {
                // The plugins picked them; two of one name are still refused.
                Selection::Plugins(_) => pick(&origin, &rows, &Selection::All { strict: true })?,
                _ => match pick(&origin, &rows, selection) {
                    Err(Error::Source(e)) => {
                        let markets = run.sources.git.marketplaces(url, &commit).await;
                        return Err(with_plugins(*e, markets, reporter).into());
                    }
                    other => other?,
                },
            };
            picked
                .into_iter()
                .map(|i| {
                    entry(
                        &origin,
                        &found[i],
                        url,
                        reference.as_ref(),
                        plugin_of.get(i).cloned(),
                    )
                })
                .chain(elsewhere.into_iter().map(Ok))
                .collect::<Result<Vec<_>>>()
                .and_then(|deps| one_of_each_name(&origin, deps))
                .map(Some)
        }
        Spec::WellKnown { .. } if matches!(selection, Selection::Plugins(_)) => {
            Err(Error::NoPluginsHere)
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

/// A plugin chosen by name, with the requirement on its declared version.
type Chosen = (String, Option<VersionReq>);

/// A chosen plugin that lives in another repository, with the requirement.
type Remote<'m> = (&'m Plugin, Option<VersionReq>);

/// `--plugin NAME`, `NAME@MARKETPLACE`, `NAME@REQ` or
/// `NAME@MARKETPLACE@REQ`, as the plugin to
/// look up (`NAME` or `NAME@MARKETPLACE`) and the requirement on its
/// version. What follows `@` is a requirement when it starts as only one
/// can (a digit or one of `^~<>=*`), since a marketplace name never does.
fn plugin_spec(spec: &str) -> Result<(&str, Option<VersionReq>)> {
    match spec.rsplit_once('@') {
        Some((name, req))
            if req.starts_with(|c: char| c.is_ascii_digit() || "^~<>=*".contains(c)) =>
        {
            let req = crate::project::spec::parse_version_req(req)?;
            Ok((name, Some(req)))
        }
        _ => Ok((spec, None)),
    }
}

/// The skills of the plugins `wanted` names that live in this
/// repository, each with the name of the plugin that brought it (by
/// index), and the plugins that live in another one; a plugin that is not
/// listed, or whose skills cannot be installed, is refused with why.
fn of_plugins<'m>(
    origin: &str,
    markets: &'m [Marketplace],
    wanted: &[String],
    found: Vec<FoundSkill>,
) -> Result<(Vec<FoundSkill>, Vec<Chosen>, Vec<Remote<'m>>)> {
    let clean = |s: &str| skillpm_core::text::sanitize(s).into_owned();
    let mut by_dir: HashMap<String, FoundSkill> = found
        .into_iter()
        .map(|f| (f.dir.clone().unwrap_or_default(), f))
        .collect();
    let (mut skills, mut plugins, mut remote) = (Vec::new(), Vec::new(), Vec::new());
    for spec in wanted {
        let (lookup, req) = plugin_spec(spec)?;
        let Some(plugin) = marketplace::find(markets, lookup) else {
            let rows = plugin_rows(markets);
            return Err(SourceError::ChoosePlugin {
                origin: clean(origin),
                plugin: clean(spec),
                count: rows.len(),
                listing: listing(&rows),
            }
            .into());
        };
        if let Some(problem) = &plugin.problem {
            return Err(SourceError::BadSkill {
                dir: format!("{}: plugin `{}`", clean(origin), clean(&plugin.name)),
                message: clean(problem),
            }
            .into());
        }
        if matches!(plugin.source, PluginSource::Git { .. }) {
            remote.push((plugin, req));
            continue;
        }
        // A skill two chosen plugins share is added once, by the first.
        for dir in &plugin.skills {
            if let Some(f) = by_dir.remove(dir) {
                skills.push(f);
                plugins.push((plugin.name.clone(), req.clone()));
            }
        }
    }
    Ok((skills, plugins, remote))
}

/// The skills of `plugin`, which lives in another repository, as entries
/// pointing at that repository (at the commit or ref the marketplace
/// gives), so the lock and `install --locked` reproduce them. A
/// marketplace from elsewhere may not point at this machine (`file://`,
/// loopback, `localhost`, link-local), as a skill's dependencies may not
/// (SECURITY.md, "A repository's files are not the user's word").
async fn of_remote(
    run: &Run<'_>,
    market: &GitUrl,
    origin: &str,
    plugin: &Plugin,
    req: Option<VersionReq>,
) -> Result<Vec<(Option<SkillName>, Dependency)>> {
    let PluginSource::Git {
        url,
        reference,
        root,
        listed,
    } = &plugin.source
    else {
        unreachable!("only plugins of another repository are passed here")
    };
    let clean = |s: &str| skillpm_core::text::sanitize(s).into_owned();
    let refused = |message: String| -> Error {
        SourceError::BadSkill {
            dir: format!("{}: plugin `{}`", clean(origin), clean(&plugin.name)),
            message,
        }
        .into()
    };
    if url.is_local() && !market.is_local() {
        return Err(refused(format!(
            "it lives in {}, on this machine, where a marketplace from elsewhere may not point",
            url.redacted()
        )));
    }
    let git = &run.sources.git;
    let (commit, found) = git.discover(url, reference.as_ref(), false).await?;
    let held = git.plugin_at(url, &commit, root, listed.as_deref()).await?;
    let where_ = format!("{}@{}", url.redacted(), &commit[..12.min(commit.len())]);
    held.skills
        .iter()
        .map(|dir| {
            let f = found
                .iter()
                .find(|f| f.dir.as_deref().unwrap_or_default() == dir)
                .ok_or_else(|| refused(format!("{where_} has no skill at `{}`", clean(dir))))?;
            entry(
                &where_,
                f,
                url,
                reference.as_ref(),
                Some((plugin.name.clone(), req.clone())),
            )
        })
        .collect()
}

/// The manifest entry for the skill `f` of `url` (at `origin`), or why
/// it cannot be installed.
fn entry(
    origin: &str,
    f: &FoundSkill,
    url: &GitUrl,
    reference: Option<&GitRef>,
    plugin: Option<Chosen>,
) -> Result<(Option<SkillName>, Dependency)> {
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
            reference: reference.cloned(),
            path: f.dir.clone(),
            plugin_version: plugin.as_ref().and_then(|p| p.1.clone()),
            plugin: plugin.map(|p| p.0),
        },
    ))
}

/// `deps`, refused when two would share a manifest key (two plugins, one
/// here and one elsewhere, may hold skills of one name).
fn one_of_each_name(
    origin: &str,
    deps: Vec<(Option<SkillName>, Dependency)>,
) -> Result<Vec<(Option<SkillName>, Dependency)>> {
    let where_ = |d: &Dependency| match d {
        Dependency::Git { url, path, .. } => {
            format!("{}:{}", url.redacted(), path.as_deref().unwrap_or("."))
        }
        other => format!("{other:?}"),
    };
    let mut first: HashMap<&SkillName, &Dependency> = HashMap::new();
    for (name, dep) in &deps {
        let Some(name) = name else { continue };
        if let Some(before) = first.insert(name, dep) {
            return Err(Error::SameName {
                origin: skillpm_core::text::sanitize(origin).into_owned(),
                first: where_(before),
                second: where_(dep),
                name: name.to_string(),
            });
        }
    }
    Ok(deps)
}

/// The ask to choose, `e`, with the plugins of the repository's
/// marketplaces listed after its skills. A marketplace that cannot be
/// read is only warned about: the skills can still be added one by one.
fn with_plugins(
    e: SourceError,
    markets: std::result::Result<std::sync::Arc<Vec<Marketplace>>, SourceError>,
    reporter: &dyn Reporter,
) -> SourceError {
    let SourceError::ChooseSkills {
        origin,
        count,
        listing: skills,
        ..
    } = e
    else {
        return e;
    };
    let markets = markets.unwrap_or_else(|e| {
        reporter.report(crate::report::Event::Warning {
            message: e.to_string(),
        });
        Default::default()
    });
    let rows = plugin_rows(&markets);
    let listing = match rows.is_empty() {
        true => skills,
        false => format!("skills:\n{skills}\nplugins:\n{}", listing(&rows)),
    };
    SourceError::ChooseSkills {
        origin,
        count,
        listing,
        plugins: rows.len(),
    }
}

/// The plugins of `markets` as `add` lists them: name (with its
/// marketplace when there are several), declared version, and its
/// description, or why it cannot be installed from here. A plugin two
/// files of one marketplace list (Claude Code's and Codex's) is shown once.
fn plugin_rows(markets: &[Marketplace]) -> Vec<Row> {
    let names: HashSet<&Option<String>> = markets.iter().map(|m| &m.name).collect();
    let named = names.len() > 1;
    let mut seen = HashSet::new();
    markets
        .iter()
        .flat_map(|m| m.plugins.iter().map(move |p| (m, p)))
        .filter(|(m, p)| seen.insert((&m.name, &p.name)))
        .map(|(m, p)| Row {
            command: match (named, &m.name) {
                (true, Some(market)) => format!("{}@{market}", p.name),
                _ => p.name.clone(),
            },
            name: p
                .version
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_default(),
            dir: String::new(),
            description: match (&p.problem, &p.source) {
                (Some(why), _) => format!("(cannot be installed: {why})"),
                (None, PluginSource::Git { url, .. }) => {
                    format!("(from {}) {}", url.redacted(), p.description)
                }
                (None, _) if p.skills.len() == 1 => format!("(1 skill) {}", p.description),
                (None, _) => format!("({} skills) {}", p.skills.len(), p.description),
            },
        })
        .collect()
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
            plugins: 0,
        }
        .into()
    };
    let picked: Vec<usize> = match selection {
        Selection::One if rows.len() == 1 => vec![0],
        Selection::One => return Err(ask()),
        Selection::All { .. } | Selection::Plugins(_) => (0..rows.len()).collect(),
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
                            plugins: 0,
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
    let names = rows
        .iter()
        .flat_map(|r| [r.name.as_str(), r.command.as_str()]);
    skillpm_core::text::nearest(n, names).map(skillpm_core::text::sanitize)
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
