//! skillpm: a package manager for agent skills.
//!
//! The crate is library-first: the `skillpm` binary only parses arguments
//! and prints. Data flows one way: spec → manifest → resolve (through a
//! [`source::Source`]) → lock → plan → prepare → apply → lock written.
//! The [`engine`] is the agent-side view (discovery, eligibility, prompt,
//! load): the `skillpm-engine` crate, free of network, async and install
//! code so an agent runtime can embed it alone.

pub use skillpm_engine as engine;
pub mod error;
pub mod mcp;
pub mod ops;
pub mod project;
pub mod report;
pub mod resolve;
pub mod source;

mod cache;
mod fs;
mod install;
mod parallel;

pub use cache::Cache;
pub use install::MARKER;
pub use skillpm_core::{archive, audit, checksum, name, platform, protocol, publish, skill, text};
