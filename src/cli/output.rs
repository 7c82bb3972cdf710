//! The CLI's only ways to write to the terminal: each sanitizes what it
//! writes (see `skillpm_core::text::sanitize`), and errors become one line.

use anyhow::{Context, Result};
use std::io::Write;

/// An error that carries its own exit code (2 = usage / unknown input).
#[derive(Debug)]
pub struct Exit(pub u8, pub String);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}
impl std::error::Error for Exit {}

/// Joins an error chain into one line.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ").replace('\n', " ")
}

/// Prints `s` on stdout, sanitized: everything skillpm prints may carry
/// text from a SKILL.md, a registry or git.
pub fn print(s: &str) -> Result<()> {
    write_stdout(&skillpm_core::text::sanitize(s))
}

/// Writes text that is already terminal-safe (`render::paint`'s colour
/// codes are the only escapes it may hold); a closed pipe is not an error.
pub fn write_stdout(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to stdout"),
    }
}

/// Prints `s` on stderr unless quiet.
pub fn note(quiet: bool, s: impl std::fmt::Display) {
    if !quiet {
        eprint_line(&s.to_string());
    }
}

/// One sanitized line on stderr (see [`print`]).
pub fn eprint_line(s: &str) {
    eprintln!("{}", skillpm_core::text::sanitize(s));
}
