//! skillpm: a package manager for agent skills.
//!
//! The crate is library-first: the `skillpm` binary only parses arguments
//! and prints. The [`engine`] module is the agent-side view (discovery,
//! eligibility, prompt) and is kept free of network and install code so an
//! agent runtime can embed it alone.

pub mod checksum;
pub mod engine;
pub mod lockfile;
pub mod manifest;
pub mod name;
pub mod package;
pub mod spec;
