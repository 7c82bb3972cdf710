//! The agent-side engine: discovery, `SKILL.md` parsing, eligibility, and
//! the prompt/load renderings. It performs no network access, runs no
//! async runtime and installs nothing, so an agent runtime can embed it
//! alone (`examples/embed.rs` depends on this crate only).

pub mod agent_view;
pub mod agents;
pub mod authorize;
pub mod catalog;
pub mod commands;
pub mod config;
pub mod disclose;
pub mod discover;
pub mod eligibility;
pub mod embed;
pub mod files;
pub mod installers;
pub mod lifecycle;
pub mod load;
pub mod parallel;
pub mod parses;
pub mod prompt;
pub mod search;
pub use skillpm_core::skill;
#[cfg(test)]
mod testing;
pub mod tools;
pub mod triggers;
pub mod validate;
