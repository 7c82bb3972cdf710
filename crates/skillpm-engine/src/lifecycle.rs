//! Where a skill is in its life, as the seed design names the stages:
//! Discovered → Evaluated → Eligible or Ineligible → Loaded → Active.
//!
//! A catalog is built whole, so what `status` reports is always past
//! evaluation: every skill is `eligible` or `ineligible` (skipped,
//! shadowed or invalid, each with its reason). `discovered` and
//! `evaluated` are the stages a runtime passes through while it builds;
//! `loaded` (its instructions were given to a model) and `active` (in use
//! by a session) are known only to whoever serves the skill, so a runtime
//! embedding the engine tracks them with [`Lifecycle::can_become`], or
//! keeps a [`Tracker`], which hands each move back as an [`Event`].

use crate::catalog::{Catalog, SkillEntry, State};
use serde::Serialize;
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

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

/// One change of one skill's stage, as a [`Tracker`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    /// `skill` moved from `from` (`None`: it was new) to `to`.
    Moved {
        skill: String,
        from: Option<Lifecycle>,
        to: Lifecycle,
    },
    /// `skill` is gone from the catalog; it was at `from`.
    Removed { skill: String, from: Lifecycle },
}

/// A move [`Lifecycle::can_become`] does not allow, or of a skill the
/// tracker does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("no skill `{0}` is tracked")]
    Unknown(String),
    #[error("`{skill}` is {from} and cannot become {to}", from = .from.as_str(), to = .to.as_str())]
    Move {
        skill: String,
        from: Lifecycle,
        to: Lifecycle,
    },
}

/// Where each skill of a runtime stands, by command. The engine keeps no
/// per-session state; a runtime keeps a tracker per session (or one for
/// all), feeds it each catalog it builds ([`Tracker::evaluate`]: new and
/// changed skills pass through discovered, evaluated, then eligible or
/// ineligible; a hot reload of a changed skill sends it back to
/// discovered first) and records loads and activations
/// ([`Tracker::move_to`]). Every call returns its events in order.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Command → stage and the fingerprint of what was evaluated.
    skills: BTreeMap<String, (Lifecycle, u64)>,
}

impl Tracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// The stage of `skill`, if tracked.
    pub fn stage(&self, skill: &str) -> Option<Lifecycle> {
        self.skills.get(skill).map(|(l, _)| *l)
    }

    /// Takes in a freshly built catalog: skills that are new or whose
    /// file, state or reason changed are evaluated again (a loaded or
    /// active one goes back to discovered: what it loaded is stale),
    /// unchanged ones keep their stage, and missing ones are removed.
    /// Events come sorted by command.
    pub fn evaluate(&mut self, catalog: &Catalog) -> Vec<Event> {
        let mut seen: BTreeMap<&str, &SkillEntry> = BTreeMap::new();
        for e in &catalog.skills {
            // The entry the agent gets: the first (highest precedence)
            // that is not shadowed.
            if e.state != State::Shadowed {
                seen.entry(e.command.as_str()).or_insert(e);
            }
        }
        let mut events = Vec::new();
        let gone: Vec<String> = self
            .skills
            .keys()
            .filter(|k| !seen.contains_key(k.as_str()))
            .cloned()
            .collect();
        for skill in gone {
            if let Some((from, _)) = self.skills.remove(&skill) {
                events.push(Event::Removed { skill, from });
            }
        }
        for (command, entry) in seen {
            let print = fingerprint(entry);
            let from = match self.skills.get(command) {
                Some((_, p)) if *p == print => continue,
                Some((stage, _)) => Some(*stage),
                None => None,
            };
            let settled = Lifecycle::of(entry.state);
            let mut at = from;
            for to in [Lifecycle::Discovered, Lifecycle::Evaluated, settled] {
                if at == Some(to) {
                    continue;
                }
                events.push(Event::Moved {
                    skill: command.to_string(),
                    from: at,
                    to,
                });
                at = Some(to);
            }
            self.skills.insert(command.to_string(), (settled, print));
        }
        events.sort_by(|a, b| event_skill(a).cmp(event_skill(b)));
        events
    }

    /// Moves `skill` to `to` (loaded when its instructions were given to
    /// a model, active while a session uses it, loaded again when that
    /// ends), if [`Lifecycle::can_become`] allows it.
    pub fn move_to(&mut self, skill: &str, to: Lifecycle) -> Result<Event, Refused> {
        let (stage, _) = self
            .skills
            .get_mut(skill)
            .ok_or_else(|| Refused::Unknown(skill.to_string()))?;
        let from = *stage;
        if !from.can_become(to) {
            return Err(Refused::Move {
                skill: skill.to_string(),
                from,
                to,
            });
        }
        *stage = to;
        Ok(Event::Moved {
            skill: skill.to_string(),
            from: Some(from),
            to,
        })
    }
}

fn event_skill(e: &Event) -> &str {
    match e {
        Event::Moved { skill, .. } | Event::Removed { skill, .. } => skill,
    }
}

/// What evaluation read: the file's path, frontmatter and body, and the
/// verdict. Equal fingerprints mean nothing to re-evaluate.
fn fingerprint(e: &SkillEntry) -> u64 {
    let mut h = DefaultHasher::new();
    e.path.hash(&mut h);
    e.state.as_str().hash(&mut h);
    e.reason.as_ref().map(|r| (&r.code, &r.detail)).hash(&mut h);
    if let Some(doc) = &e.doc {
        serde_json::to_string(&doc.frontmatter)
            .unwrap_or_default()
            .hash(&mut h);
        doc.body.hash(&mut h);
    }
    h.finish()
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

    fn moved(skill: &str, from: Option<Lifecycle>, to: Lifecycle) -> Event {
        Event::Moved {
            skill: skill.into(),
            from,
            to,
        }
    }

    #[test]
    fn a_tracker_reports_each_move_as_an_event() {
        let (dir, cat) = crate::testing::catalog(&[
            ("alpha", "First.", "", "a\n"),
            (
                "beta",
                "Needs a tool.",
                "requires: {bins: [no-such-tool-here]}",
                "b\n",
            ),
        ]);
        let mut t = Tracker::new();
        let first = t.evaluate(&cat);
        assert_eq!(
            first,
            [
                moved("alpha", None, Discovered),
                moved("alpha", Some(Discovered), Evaluated),
                moved("alpha", Some(Evaluated), Eligible),
                moved("beta", None, Discovered),
                moved("beta", Some(Discovered), Evaluated),
                moved("beta", Some(Evaluated), Ineligible),
            ]
        );
        assert!(t.evaluate(&cat).is_empty(), "nothing changed");

        assert_eq!(
            t.move_to("alpha", Loaded),
            Ok(moved("alpha", Some(Eligible), Loaded))
        );
        assert_eq!(
            t.move_to("alpha", Active),
            Ok(moved("alpha", Some(Loaded), Active))
        );
        assert!(matches!(
            t.move_to("beta", Loaded),
            Err(Refused::Move { .. })
        ));
        assert!(matches!(
            t.move_to("gamma", Loaded),
            Err(Refused::Unknown(_))
        ));

        // Hot reload: alpha's file changed, beta's directory is gone.
        std::fs::write(
            dir.path().join("alpha/SKILL.md"),
            "---\ndescription: First, edited.\n---\na2\n",
        )
        .unwrap();
        std::fs::remove_dir_all(dir.path().join("beta")).unwrap();
        let roots = [dir.path().to_path_buf()];
        let env = crate::config::Environment::isolated();
        let again = Catalog::from_roots(&env, &roots, Default::default());
        assert_eq!(
            t.evaluate(&again),
            [
                moved("alpha", Some(Active), Discovered),
                moved("alpha", Some(Discovered), Evaluated),
                moved("alpha", Some(Evaluated), Eligible),
                Event::Removed {
                    skill: "beta".into(),
                    from: Ineligible
                },
            ]
        );
        assert_eq!(t.stage("alpha"), Some(Eligible));
        assert_eq!(
            serde_json::to_value(moved("alpha", Some(Eligible), Loaded)).unwrap(),
            serde_json::json!({"event": "moved", "skill": "alpha", "from": "eligible", "to": "loaded"})
        );
    }
}
