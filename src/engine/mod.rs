//! The agent-side engine: discovery, `SKILL.md` parsing, eligibility, and
//! the prompt/load renderings. It performs no network access and installs
//! nothing, so an agent runtime can embed it alone.

pub mod catalog;
pub mod config;
pub mod discover;
pub mod eligibility;
pub mod load;
pub mod prompt;
pub use skillpm_core::skill;
pub mod validate;
