//! Choosing among the skills of a source that holds many (a git
//! repository without `--path`, a well-known index): `--skill`, `--all`,
//! or an error that lists them.

use super::Selection;
use crate::error::{Error, Result};
use crate::ops::sync::Run;
use crate::project::manifest::Dependency;
use crate::project::spec::Spec;
use crate::report::Reporter;
use crate::source::git::FoundSkill;
use crate::source::wellknown::WellKnownError;
use crate::source::SourceError;
use skillpm_core::name::SkillName;
use std::collections::HashMap;

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
