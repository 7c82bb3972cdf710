//! What the integration tests of `skillpm` (tests/) and `skillpm-registry`
//! (registry-server/tests/) share: a real registry process
//! ([`registry`]), deterministic noise ([`seeded`]) and directory
//! snapshots ([`tree`]).

pub mod registry;
pub mod seeded;
pub mod tree;
