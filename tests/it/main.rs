//! skillpm's integration tests: one binary, a module per feature. Each
//! drives the real `skillpm` binary (and, where a registry is involved,
//! the real `skillpm-registry`) on 127.0.0.1, with real git repositories,
//! tarballs and third-party clients.

mod common;
mod mock;

mod add_kill;
mod add_many;
mod add_registry;
mod agents;
mod audit;
mod check_tool;
mod commands;
mod converge;
mod dependencies;
mod doctor;
mod engine_cli;
mod engine_search;
mod faults;
mod first_use;
mod git_export;
mod git_fetch_once;
mod git_https;
mod git_pack_bomb;
mod git_signing;
mod hidden_text;
mod hostile_files;
mod hostile_packages;
mod hostile_registry;
mod hostile_walks;
mod import;
mod install_git_path;
mod install_kill;
mod install_registry;
mod lifecycle;
mod load;
mod lock_registry;
mod marketplace;
mod mcp;
mod mcp_prompts;
mod noop_runs;
mod replace;
mod sanitize;
mod signatures;
mod skill_system_prompt;
mod tokens_and_origins;
mod validate_strict;
mod wellknown;
mod yank_warning;
