//! Version solving: one version of each skill that satisfies every
//! requirement, or an explanation of why none exists (PubGrub, as uv and
//! Cargo's next resolver build on it).
//!
//! The solver works on what was collected beforehand ([`Universe`]), so it
//! is pure and fast: no I/O happens while it searches. Each skill offers
//! its candidates, best first; a registry package offers every version
//! its index lists, a git, path or well-known skill (or a locked one kept
//! as it is) offers exactly one.

use super::req::Set;
use pubgrub::{
    DefaultStringReporter, Dependencies, DependencyProvider, DerivationTree, External,
    PackageResolutionStatistics, PubGrubError, Reporter, Term,
};
use semver::Version;
use skillpm_core::name::SkillName;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;

/// One choice for a skill: a version and what it needs.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub version: Version,
    pub deps: Vec<(SkillName, Set)>,
}

/// Everything the solver may choose from: the project's own requirements
/// and, for each skill reachable from them, its candidates in order of
/// preference (the locked version first where it is kept, then newest
/// first).
#[derive(Debug, Default)]
pub struct Universe {
    pub root: Vec<(SkillName, Set)>,
    pub skills: BTreeMap<SkillName, Vec<Candidate>>,
}

/// A node of the solver's graph: the project, or one skill.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pkg {
    Root,
    Skill(SkillName),
}

impl fmt::Display for Pkg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pkg::Root => f.write_str("skills.toml"),
            Pkg::Skill(name) => f.write_str(name.as_str()),
        }
    }
}

/// No solution: the explanation, a few sentences from the first causes
/// to the conclusion.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoSolution(pub String);

impl Universe {
    /// The chosen version of every skill the project needs.
    pub fn solve(&self) -> Result<BTreeMap<SkillName, Version>, NoSolution> {
        match pubgrub::resolve(self, Pkg::Root, Version::new(0, 0, 0)) {
            Ok(chosen) => Ok(chosen
                .into_iter()
                .filter_map(|(p, v)| match p {
                    Pkg::Root => None,
                    Pkg::Skill(name) => Some((name, v)),
                })
                .collect()),
            Err(PubGrubError::NoSolution(mut tree)) => {
                tree.collapse_no_versions();
                Err(NoSolution(explain(&project_unversioned(tree))))
            }
            Err(e) => Err(NoSolution(e.to_string())),
        }
    }

    fn candidates(&self, name: &SkillName) -> &[Candidate] {
        self.skills.get(name).map_or(&[], Vec::as_slice)
    }
}

/// The project has no version of its own: its requirements read as
/// "skills.toml depends on …", not "skills.toml 0.0.0 depends on …".
fn project_unversioned(tree: DerivationTree<Pkg, Set, String>) -> DerivationTree<Pkg, Set, String> {
    match tree {
        DerivationTree::External(External::FromDependencyOf(Pkg::Root, _, dep, set)) => {
            DerivationTree::External(External::FromDependencyOf(Pkg::Root, Set::full(), dep, set))
        }
        DerivationTree::Derived(mut d) => {
            if let Some(Term::Positive(_)) = d.terms.get(&Pkg::Root) {
                d.terms.insert(Pkg::Root, Term::Positive(Set::full()));
            }
            let cause1 = std::sync::Arc::unwrap_or_clone(d.cause1);
            let cause2 = std::sync::Arc::unwrap_or_clone(d.cause2);
            d.cause1 = std::sync::Arc::new(project_unversioned(cause1));
            d.cause2 = std::sync::Arc::new(project_unversioned(cause2));
            DerivationTree::Derived(d)
        }
        other => other,
    }
}

fn explain(tree: &DerivationTree<Pkg, Set, String>) -> String {
    DefaultStringReporter::report(tree).replace(
        "skills.toml * is forbidden",
        "skills.toml cannot be satisfied",
    )
}

impl DependencyProvider for Universe {
    type P = Pkg;
    type V = Version;
    type VS = Set;
    type M = String;
    type Err = Infallible;
    /// Skills with conflicts first, then those with the fewest choices:
    /// the usual PubGrub heuristic, which settles the forced parts early.
    type Priority = (u32, Reverse<usize>);

    fn prioritize(
        &self,
        pkg: &Pkg,
        range: &Set,
        stats: &PackageResolutionStatistics,
    ) -> Self::Priority {
        let count = match pkg {
            Pkg::Root => 1,
            Pkg::Skill(name) => self
                .candidates(name)
                .iter()
                .filter(|c| range.contains(&c.version))
                .count(),
        };
        if count == 0 {
            return (u32::MAX, Reverse(0));
        }
        (stats.conflict_count(), Reverse(count))
    }

    fn choose_version(&self, pkg: &Pkg, range: &Set) -> Result<Option<Version>, Infallible> {
        Ok(match pkg {
            Pkg::Root => Some(Version::new(0, 0, 0)),
            Pkg::Skill(name) => self
                .candidates(name)
                .iter()
                .find(|c| range.contains(&c.version))
                .map(|c| c.version.clone()),
        })
    }

    fn get_dependencies(
        &self,
        pkg: &Pkg,
        version: &Version,
    ) -> Result<Dependencies<Pkg, Set, String>, Infallible> {
        let deps = match pkg {
            Pkg::Root => &self.root,
            Pkg::Skill(name) => {
                match self.candidates(name).iter().find(|c| c.version == *version) {
                    Some(c) => &c.deps,
                    None => return Ok(Dependencies::Unavailable("it is not offered".into())),
                }
            }
        };
        Ok(Dependencies::Available(
            deps.iter()
                .map(|(n, s)| (Pkg::Skill(n.clone()), s.clone()))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::req::ranges;

    fn name(s: &str) -> SkillName {
        SkillName::new(s).unwrap()
    }

    fn set(r: &str) -> Set {
        ranges(&semver::VersionReq::parse(r).unwrap())
    }

    fn cand(v: &str, deps: &[(&str, &str)]) -> Candidate {
        Candidate {
            version: Version::parse(v).unwrap(),
            deps: deps.iter().map(|(n, r)| (name(n), set(r))).collect(),
        }
    }

    /// A diamond: both sides meet on the one version they both allow, not
    /// the newest.
    #[test]
    fn a_diamond_meets_on_a_version_both_sides_allow() {
        let mut u = Universe {
            root: vec![(name("a"), set("*")), (name("b"), set("*"))],
            ..Universe::default()
        };
        u.skills
            .insert(name("a"), vec![cand("1.0.0", &[("c", "^1")])]);
        u.skills
            .insert(name("b"), vec![cand("1.0.0", &[("c", ">=1.1")])]);
        u.skills.insert(
            name("c"),
            vec![cand("2.0.0", &[]), cand("1.2.0", &[]), cand("1.0.0", &[])],
        );
        let got = u.solve().unwrap();
        assert_eq!(got[&name("c")], Version::new(1, 2, 0));
        assert_eq!(got.len(), 3);
    }

    /// No solution: the explanation names both requirements and says the
    /// project's requirements cannot all hold.
    #[test]
    fn a_conflict_is_explained_with_both_chains() {
        let mut u = Universe {
            root: vec![(name("review"), set("*")), (name("lint"), set("*"))],
            ..Universe::default()
        };
        u.skills
            .insert(name("review"), vec![cand("1.0.0", &[("style", ">=2")])]);
        u.skills
            .insert(name("lint"), vec![cand("1.0.0", &[("style", "<2")])]);
        u.skills
            .insert(name("style"), vec![cand("2.1.0", &[]), cand("1.5.0", &[])]);
        let why = u.solve().unwrap_err().0;
        assert!(why.contains("depends on style >=2.0.0"), "{why}");
        assert!(why.contains("lint 1.0.0 depends on style <2.0.0"), "{why}");
        assert!(why.contains("skills.toml depends on"), "{why}");
        assert!(!why.contains("0.0.0"), "{why}");
    }

    /// A cycle is two skills needing each other: both are chosen.
    #[test]
    fn a_cycle_resolves() {
        let mut u = Universe {
            root: vec![(name("a"), set("*"))],
            ..Universe::default()
        };
        u.skills
            .insert(name("a"), vec![cand("1.0.0", &[("b", "*")])]);
        u.skills
            .insert(name("b"), vec![cand("1.0.0", &[("a", "^1")])]);
        let got = u.solve().unwrap();
        assert_eq!(got.len(), 2);
    }

    /// The first candidate that fits is taken: a kept locked version
    /// listed first wins over a newer one.
    #[test]
    fn the_preferred_candidate_wins_when_it_fits() {
        let mut u = Universe {
            root: vec![(name("c"), set("^1"))],
            ..Universe::default()
        };
        u.skills.insert(
            name("c"),
            vec![cand("1.0.0", &[]), cand("1.9.0", &[]), cand("2.0.0", &[])],
        );
        assert_eq!(u.solve().unwrap()[&name("c")], Version::new(1, 0, 0));
    }
}
