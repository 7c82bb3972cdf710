//! Progress reporting. The library reports events through [`Reporter`]; the
//! CLI decides how to draw them (progress bars on a TTY, plain lines
//! otherwise, nothing with `--quiet`). The library never writes to the
//! terminal itself.

/// Something worth telling the user while an operation runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Resolving {
        name: String,
    },
    Downloading {
        name: String,
        version: String,
    },
    Downloaded {
        name: String,
        bytes: u64,
    },
    Installed {
        name: String,
        version: String,
        from_cache: bool,
    },
    Removed {
        name: String,
    },
    Warning {
        message: String,
    },
    /// What became of a run that was interrupted (its journal finished or
    /// rolled back), one line.
    Recovered {
        message: String,
    },
}

pub trait Reporter: Sync {
    fn report(&self, event: Event);
    /// Called once with the number of downloads about to start.
    fn downloads_starting(&self, _count: usize) {}
    fn downloads_finished(&self) {}
}

/// Discards everything.
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _event: Event) {}
}
