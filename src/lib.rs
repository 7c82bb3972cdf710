//! skillpm: a package manager for agent skills.
//!
//! The crate is library-first: the `skillpm` binary only parses arguments
//! and prints. The [`engine`] module is the agent-side view (discovery,
//! eligibility, prompt) and is kept free of network and install code so an
//! agent runtime can embed it alone.

pub mod cache;
pub mod credentials;
pub mod engine;
pub mod error;
pub mod install;
pub mod lockfile;
pub mod manifest;
pub mod ops;
pub mod project;
pub mod registry;
pub mod report;
pub mod resolve;
pub mod source;
pub mod spec;

pub use skillpm_core::{archive, checksum, name, protocol, skill};
