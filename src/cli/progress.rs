//! The CLI's [`Reporter`]: an `indicatif` bar for downloads on a TTY,
//! plain lines otherwise, nothing with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use skillpm::report::{Event, Reporter};
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

    fn line(&self, s: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
            Some(bar) => bar.println(s),
            None => eprintln!("{s}"),
        }
    }
}

impl Reporter for CliReporter {
    fn report(&self, event: Event) {
        match event {
            Event::Warning { message } => {
                // Warnings are shown even with --quiet.
                eprintln!("warning: {message}");
            }
            Event::Downloaded { .. } => {
                if let Some(bar) = self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
                    bar.inc(1);
                }
            }
            Event::Downloading { name, version } if !self.tty => {
                self.line(&format!("Downloading {name}@{version}"));
            }
            Event::Installed {
                name,
                version,
                from_cache,
            } if !self.tty => {
                let from = if from_cache { " (cached)" } else { "" };
                self.line(&format!("Installed {name}@{version}{from}"));
            }
            Event::Removed { name } => self.line(&format!("Removed {name}")),
            _ => {}
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
