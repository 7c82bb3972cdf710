//! The binary's own modules: argument shapes, terminal rendering and
//! progress. The library never prints; these do.

pub mod args;
pub mod audit;
pub mod check_tool;
pub mod commands;
pub mod docs;
pub mod doctor;
pub mod find;
pub mod output;
pub mod progress;
pub mod render;
pub mod status;
