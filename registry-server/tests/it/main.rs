//! skillpm-registry's integration tests: one binary, a module per
//! feature, each against the real `skillpm-registry` on 127.0.0.1.

mod common;

mod audit;
mod gc;
mod hardening;
mod kill;
mod npm;
mod postgres_tls;
mod scale;
mod server;
mod signing;
mod starve;
