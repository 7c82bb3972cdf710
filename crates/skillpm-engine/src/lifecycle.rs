//! Where a skill is in its life, as the seed design names the stages:
//! Discovered → Evaluated → Eligible or Ineligible → Loaded → Active.
//!
//! A catalog is built whole, so what `status` reports is always past
//! evaluation: every skill is `eligible` or `ineligible` (skipped,
//! shadowed or invalid, each with its reason). `discovered` and
//! `evaluated` are the stages a runtime passes through while it builds;
//! `loaded` (its instructions were given to a model) and `active` (in use
//! by a session) are known only to whoever serves the skill, so a runtime
//! embedding the engine tracks them with [`Lifecycle::can_become`].

use crate::catalog::State;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    /// Found in a root; its `SKILL.md` not yet read.
    Discovered,
    /// Read, its requirements being checked.
    Evaluated,
    /// Offered to the agent.
    Eligible,
    /// Not offered; the catalog entry's reason says why.
    Ineligible,
    /// Its instructions were given to a model.
    Loaded,
    /// In use by a session.
    Active,
}

impl Lifecycle {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Discovered => "discovered",
            Self::Evaluated => "evaluated",
            Self::Eligible => "eligible",
            Self::Ineligible => "ineligible",
            Self::Loaded => "loaded",
            Self::Active => "active",
        }
    }

    /// The stage an evaluated catalog entry in `state` is at.
    pub fn of(state: State) -> Lifecycle {
        match state {
            State::Eligible => Self::Eligible,
            State::Skipped | State::Shadowed | State::Invalid => Self::Ineligible,
        }
    }

    /// Whether a skill at `self` may move to `next`: forward one stage
    /// (an eligible skill is loaded, a loaded one made active), back from
    /// `active` to `loaded` when its session ends, and back to
    /// `discovered` from anywhere when its files change (hot reload
    /// evaluates it again).
    pub fn can_become(self, next: Lifecycle) -> bool {
        use Lifecycle::*;
        matches!(
            (self, next),
            (Discovered, Evaluated)
                | (Evaluated, Eligible | Ineligible)
                | (Eligible, Loaded)
                | (Loaded, Active)
                | (Active, Loaded)
                | (_, Discovered)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Lifecycle::*;
    use super::*;

    #[test]
    fn states_map_to_stages() {
        assert_eq!(Lifecycle::of(State::Eligible), Eligible);
        for s in [State::Skipped, State::Shadowed, State::Invalid] {
            assert_eq!(Lifecycle::of(s), Ineligible);
        }
    }

    #[test]
    fn transitions_follow_the_stages() {
        let path = [Discovered, Evaluated, Eligible, Loaded, Active, Loaded];
        for w in path.windows(2) {
            assert!(w[0].can_become(w[1]), "{w:?}");
        }
        assert!(Evaluated.can_become(Ineligible));
        for (from, to) in [
            (Discovered, Eligible),
            (Ineligible, Loaded),
            (Eligible, Active),
            (Evaluated, Loaded),
            (Loaded, Eligible),
        ] {
            assert!(!from.can_become(to), "{from:?} -> {to:?}");
        }
        for from in [Discovered, Evaluated, Eligible, Ineligible, Loaded, Active] {
            assert!(from.can_become(Discovered), "{from:?} reloads");
        }
        assert_eq!(
            serde_json::to_value(Ineligible).unwrap(),
            serde_json::json!(Ineligible.as_str())
        );
    }
}
