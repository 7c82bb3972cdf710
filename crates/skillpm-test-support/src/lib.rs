//! What the integration tests of `skillpm` (tests/) and `skillpm-registry`
//! (registry-server/tests/) share: a real registry process
//! ([`registry`]), a real HTTPS git server ([`git_https`]), a tunnelling proxy ([`proxy`]), a
//! rewriting reverse proxy ([`rewrite`]), a TLS front speaking HTTP/2
//! ([`tls_front`]), deterministic
//! noise ([`seeded`]) and directory snapshots ([`tree`]).

mod background;
pub mod git_https;
pub mod proxy;
pub mod registry;
pub mod rewrite;
pub mod seeded;
mod tls;
pub use tls::{issued, loopback_name, Issued};
pub mod tls_front;
pub mod tree;
