//! What the integration tests of `skillpm` (tests/) and `skillpm-registry`
//! (registry-server/tests/) share: a real registry process
//! ([`registry`]), a real HTTPS git server ([`git_https`]), deterministic
//! noise ([`seeded`]) and directory snapshots ([`tree`]).

pub mod git_https;
pub mod registry;
pub mod seeded;
pub mod tree;
