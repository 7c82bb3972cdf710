//! The CLI's [`Reporter`]: an `indicatif` bar for downloads on a TTY,
//! plain lines otherwise, nothing with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use skillpm::report::{Event, Reporter};
use skillpm_core::text;
use std::io::IsTerminal;
use std::sync::Mutex;

pub struct CliReporter {
    quiet: bool,
    tty: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl CliReporter {
    pub fn new(quiet: bool) -> Self {
        CliReporter {
            quiet,
            tty: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    /// Prints `line` above the bar if one is drawn; `--quiet` hides it
    /// unless `always`.
    fn emit(&self, line: &str, always: bool) {
        if self.quiet && !always {
            return;
        }
        match self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

/// The line `event` prints (sanitized: events carry names and messages
/// that came from registries and git) and whether it shows even with
/// `--quiet`. On a TTY the bar stands in for per-package lines.
fn line_for(event: &Event, tty: bool) -> Option<(String, bool)> {
    let (line, always) = match event {
        // Warnings are shown even with --quiet.
        Event::Warning { message } => (format!("warning: {message}"), true),
        Event::Recovered { message } => (message.clone(), true),
        Event::Downloading { name, version } if !tty => {
            (format!("Downloading {name}@{version}"), false)
        }
        Event::Installed {
            name,
            version,
            from_cache,
        } if !tty => {
            let from = if *from_cache { " (cached)" } else { "" };
            (format!("Installed {name}@{version}{from}"), false)
        }
        Event::Removed { name } => (format!("Removed {name}"), false),
        _ => return None,
    };
    Some((text::sanitize(&line).into_owned(), always))
}

impl Reporter for CliReporter {
    fn report(&self, event: Event) {
        if let Event::Downloaded { .. } = event {
            if let Some(bar) = self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
                bar.inc(1);
            }
        }
        if let Some((line, always)) = line_for(&event, self.tty) {
            self.emit(&line, always);
        }
    }

    fn downloads_starting(&self, count: usize) {
        if self.quiet || !self.tty {
            return;
        }
        let bar = ProgressBar::new(count as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} Downloading [{bar:30}] {pos}/{len}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(bar);
        }
    }

    fn downloads_finished(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_are_sanitized() {
        let hostile = "x\x1b]0;owned\x07\u{9b}2J\u{202e}\r";
        let events = [
            Event::Warning {
                message: hostile.into(),
            },
            Event::Downloading {
                name: hostile.into(),
                version: hostile.into(),
            },
            Event::Installed {
                name: hostile.into(),
                version: hostile.into(),
                from_cache: true,
            },
            Event::Removed {
                name: hostile.into(),
            },
        ];
        for e in &events {
            let (line, _) = line_for(e, false).expect("a line");
            assert!(
                line.contains("x\\x1b]0;owned\\x07\\x9b2J\\u{202e}\\x0d"),
                "{line}"
            );
            assert!(!line.chars().any(text::is_unsafe_char), "{line:?}");
        }
    }
}
