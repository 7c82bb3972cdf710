//! Semver requirements as the solver's version sets.
//!
//! PubGrub works on sets of versions it can intersect and complement;
//! `semver::VersionReq` only answers "does this version match". Each
//! comparator becomes the interval it denotes under Cargo's rules, and a
//! requirement is the intersection of its comparators. Pre-releases sit
//! inside those intervals by ordering (`2.0.0-rc.1 < 2.0.0`), so the
//! solver is offered a pre-release only when a requirement names that
//! version's pre-release series ([`allows_pre`]), as semver matching does.

use pubgrub::Ranges;
use semver::{Comparator, Op, Version, VersionReq};

pub type Set = Ranges<Version>;

/// The versions `req` admits, pre-releases aside.
pub fn ranges(req: &VersionReq) -> Set {
    req.comparators
        .iter()
        .fold(Set::full(), |acc, c| acc.intersection(&comparator(c)))
}

/// Whether a requirement in `reqs` opens `v`'s pre-release series: one of
/// its comparators names a pre-release of the same major.minor.patch.
pub fn allows_pre<'a>(mut reqs: impl Iterator<Item = &'a VersionReq>, v: &Version) -> bool {
    reqs.any(|r| {
        r.comparators.iter().any(|c| {
            !c.pre.is_empty()
                && c.major == v.major
                && c.minor == Some(v.minor)
                && c.patch == Some(v.patch)
        })
    })
}

fn v(major: u64, minor: u64, patch: u64) -> Version {
    Version::new(major, minor, patch)
}

fn comparator(c: &Comparator) -> Set {
    let (major, minor, patch) = (c.major, c.minor, c.patch);
    let exact = Version {
        major,
        minor: minor.unwrap_or(0),
        patch: patch.unwrap_or(0),
        pre: c.pre.clone(),
        build: semver::BuildMetadata::EMPTY,
    };
    // The first version past what the comparator's given parts cover:
    // `1` → 2.0.0, `1.2` → 1.3.0, `1.2.3` → 1.2.4.
    let past = match (minor, patch) {
        (None, _) => v(major + 1, 0, 0),
        (Some(m), None) => v(major, m + 1, 0),
        (Some(m), Some(p)) => v(major, m, p + 1),
    };
    match c.op {
        Op::Exact | Op::Wildcard => match (minor, patch) {
            (Some(_), Some(_)) => Set::singleton(exact),
            _ => Set::between(exact, past),
        },
        Op::Greater => match (minor, patch) {
            (Some(_), Some(_)) => Set::strictly_higher_than(exact),
            _ => Set::higher_than(past),
        },
        Op::GreaterEq => Set::higher_than(exact),
        Op::Less => Set::strictly_lower_than(exact),
        Op::LessEq => match (minor, patch) {
            (Some(_), Some(_)) => Set::lower_than(exact),
            _ => Set::strictly_lower_than(past),
        },
        Op::Tilde => match minor {
            None => Set::between(exact, v(major + 1, 0, 0)),
            Some(m) => Set::between(exact, v(major, m + 1, 0)),
        },
        Op::Caret => {
            let upper = match (major, minor, patch) {
                (0, None, _) => v(1, 0, 0),
                (0, Some(0), None) => v(0, 1, 0),
                (0, Some(0), Some(p)) => v(0, 0, p + 1),
                (0, Some(m), _) => v(0, m + 1, 0),
                (major, _, _) => v(major + 1, 0, 0),
            };
            Set::between(exact, upper)
        }
        // An operator a newer semver adds: fall back to nothing rather
        // than to everything, so an unknown rule never widens a choice.
        _ => Set::empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sets agree with `VersionReq::matches` on release versions.
    #[test]
    fn sets_agree_with_semver_matching() {
        let reqs = [
            "^1.2.3",
            "^1.2",
            "^1",
            "^0.2.3",
            "^0.2",
            "^0.0.3",
            "^0.0",
            "^0",
            "~1.2.3",
            "~1.2",
            "~1",
            "=1.2.3",
            "=1.2",
            "=1",
            "1.*",
            "1.2.*",
            "*",
            ">1.2.3",
            ">1.2",
            ">1",
            ">=1.2",
            "<1.2.3",
            "<1.2",
            "<1",
            "<=1.2.3",
            "<=1.2",
            "<=1",
            ">=1.0.0, <2.5.0",
            "1.2.3",
        ];
        let mut versions = Vec::new();
        for a in 0..4 {
            for b in 0..4 {
                for c in 0..5 {
                    versions.push(v(a, b, c));
                }
            }
        }
        for r in reqs {
            let req = VersionReq::parse(r).unwrap();
            let set = ranges(&req);
            for ver in &versions {
                assert_eq!(set.contains(ver), req.matches(ver), "{r} vs {ver}: {set}");
            }
        }
    }

    #[test]
    fn pre_releases_open_only_to_their_series() {
        let req = VersionReq::parse(">=2.0.0-rc.1").unwrap();
        let rc2 = Version::parse("2.0.0-rc.2").unwrap();
        let other = Version::parse("2.1.0-rc.1").unwrap();
        assert!(allows_pre([&req].into_iter(), &rc2));
        assert!(!allows_pre([&req].into_iter(), &other));
        assert!(ranges(&req).contains(&rc2));
    }
}
