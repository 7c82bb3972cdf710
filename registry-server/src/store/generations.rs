//! Index generations: a per-package counter, stored beside the package
//! row, that every change to what `GET /index/NAME` shows (publish, yank,
//! un-yank, owner change) raises in the same transaction. A replica may
//! keep a rendered index for as long as its generation is the newest it
//! knows of.
//!
//! Generations are global and commit-ordered: a change takes the next
//! number after the largest one committed (under the writer lock on
//! SQLite, under a transaction-scoped advisory lock on PostgreSQL), so a
//! replica learns every change made anywhere by asking for the packages
//! whose generation exceeds the largest it has seen. This process's own
//! writes are recorded at once; other replicas' are picked up by polling
//! ([`POLL_EVERY`]). Until a poll has succeeded within [`MAX_STALE`],
//! [`Generations::fresh`] says no and callers go to the database.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// How often a replica asks the database for other replicas' changes.
pub const POLL_EVERY: Duration = Duration::from_millis(200);
/// How old the last successful poll may be before cached indexes are no
/// longer trusted (a yank made on one replica is served by every replica
/// within this time).
pub const MAX_STALE: Duration = Duration::from_millis(800);

/// The newest generation this process knows of, per package changed since
/// it started.
pub struct Generations {
    latest: RwLock<HashMap<String, i64>>,
    /// The largest generation seen by polling: the next poll asks for
    /// anything above it.
    watermark: AtomicI64,
    /// Milliseconds after `start` of the last successful poll, plus one
    /// (0: never).
    polled_at: AtomicU64,
    start: Instant,
}

impl Default for Generations {
    fn default() -> Self {
        Generations {
            latest: RwLock::new(HashMap::new()),
            watermark: AtomicI64::new(0),
            polled_at: AtomicU64::new(0),
            start: Instant::now(),
        }
    }
}

impl Generations {
    /// The newest generation known for `name`; 0 when it has not changed
    /// since this process started watching.
    pub fn latest(&self, name: &str) -> i64 {
        self.latest
            .read()
            .map(|m| m.get(name).copied().unwrap_or(0))
            .unwrap_or(i64::MAX)
    }

    /// Records that `name` reached generation `gen`.
    pub fn saw(&self, name: &str, gen: i64) {
        if let Ok(mut m) = self.latest.write() {
            let e = m.entry(name.to_string()).or_insert(gen);
            *e = (*e).max(gen);
        }
    }

    /// The generation the next poll starts above.
    pub fn watermark(&self) -> i64 {
        self.watermark.load(Ordering::Acquire)
    }

    /// Records a successful poll: the changes it found (name, generation)
    /// and, with them, the new watermark.
    pub fn polled(&self, changes: &[(String, i64)]) {
        for (name, gen) in changes {
            self.saw(name, *gen);
        }
        if let Some(max) = changes.iter().map(|(_, g)| *g).max() {
            self.watermark.fetch_max(max, Ordering::AcqRel);
        }
        let now = self.start.elapsed().as_millis() as u64 + 1;
        self.polled_at.store(now, Ordering::Release);
    }

    /// Starts watching from `watermark` (the largest generation in the
    /// database now), before anything is cached.
    pub fn start_at(&self, watermark: i64) {
        self.polled(&[]);
        self.watermark.fetch_max(watermark, Ordering::AcqRel);
    }

    /// Whether polling is recent enough for cached indexes to be served.
    pub fn fresh(&self) -> bool {
        match self.polled_at.load(Ordering::Acquire) {
            0 => false,
            at => {
                let now = self.start.elapsed().as_millis() as u64 + 1;
                now.saturating_sub(at) <= MAX_STALE.as_millis() as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_generation_and_the_watermark() {
        let g = Generations::default();
        assert!(!g.fresh());
        assert_eq!(g.latest("a"), 0);
        g.start_at(5);
        assert!(g.fresh());
        assert_eq!(g.watermark(), 5);
        g.polled(&[("a".into(), 7), ("b".into(), 6)]);
        g.saw("a", 6);
        assert_eq!(g.latest("a"), 7);
        assert_eq!(g.latest("b"), 6);
        assert_eq!(g.watermark(), 7);
    }
}
