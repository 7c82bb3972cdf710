//! git as a child process whose output is untrusted: a repository (or the
//! server it comes from) decides how much git prints, so stdout is read
//! through a cap by whoever consumes it, stderr is drained on a thread that
//! keeps only its tail, and a child that is given up on is killed rather
//! than left running or blocked on a full pipe.

use super::SourceError;
use crate::project::spec::GitUrl;
use std::io::Read;
use std::process::{ChildStdout, Command, Stdio};
use std::thread::JoinHandle;

/// How much of git's stderr is kept: enough for its last message.
const STDERR_TAIL: usize = 8 * 1024;

/// The largest file a git child may write. `git fetch` has no cap on
/// what a server sends (`receive.maxInputSize` is the pushing side's), so
/// a hostile server could fill the cache's disk through it; this is far
/// above any skills repository's pack, and above every file skillpm
/// writes itself (an in-process fetch is cut at 2 GiB).
#[cfg(unix)]
pub(super) const MAX_FILE_BYTES: u64 = 4 << 30;

/// The most memory a git child may write to (`RLIMIT_DATA`: its heap
/// and every private writable mapping; the packs it maps read-only do
/// not count). git keeps a server's whole ref advertisement in memory
/// and caps none of it, so a hostile server that lists refs without end
/// would otherwise take all of the machine's memory before git failed;
/// with the cap, git's allocation fails ("Out of memory") and so does the
/// fetch. Far above what a skills repository's fetch needs, and above
/// anything skillpm itself holds (which inherits the same cap).
#[cfg(unix)]
pub(super) const MAX_DATA_BYTES: u64 = 4 << 30;

/// Lowers this process's file-size limit (`RLIMIT_FSIZE`, soft) to
/// [`MAX_FILE_BYTES`] and its data limit (`RLIMIT_DATA`) to
/// [`MAX_DATA_BYTES`] before the first git child, which inherits them, as
/// do git's own children (`index-pack` writes the pack): a write past the
/// first ends that process with `SIGXFSZ`, an allocation past the second
/// fails, and the fetch fails. Only lowered, never raised; the hard
/// limits are left alone.
#[cfg(unix)]
fn cap_children() {
    // A process fact: the limits are the process's, lowered once.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use rustix::process::Resource;
        lower(Resource::Fsize, MAX_FILE_BYTES);
        lower(Resource::Data, MAX_DATA_BYTES);
    });
}

/// Windows has no inherited resource limits (a job object would be the
/// equivalent); git's children there run uncapped, as git itself does.
#[cfg(not(unix))]
fn cap_children() {}

/// Lowers the soft limit of `resource` to `cap` unless it is lower.
#[cfg(unix)]
fn lower(resource: rustix::process::Resource, cap: u64) {
    use rustix::process::{getrlimit, setrlimit, Rlimit};
    let now = getrlimit(resource);
    if now.current.is_none_or(|soft| soft > cap) {
        let capped = Rlimit {
            current: Some(cap),
            maximum: now.maximum,
        };
        let _ = setrlimit(resource, capped);
    }
}

/// A running git command. Dropping it before [`Git::finish`] kills it.
pub(super) struct Git<'a> {
    child: std::process::Child,
    stderr: Option<JoinHandle<Vec<u8>>>,
    what: &'static str,
    url: &'a GitUrl,
}

impl<'a> Git<'a> {
    /// Starts `c` with stdout and stderr piped.
    pub(super) fn spawn(
        mut c: Command,
        what: &'static str,
        url: &'a GitUrl,
    ) -> Result<Self, SourceError> {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        cap_children();
        let mut child = c.spawn().map_err(SourceError::GitMissing)?;
        let stderr = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut tail = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = e.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > 2 * STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                }
                tail
            })
        });
        Ok(Git {
            child,
            stderr,
            what,
            url,
        })
    }

    pub(super) fn stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// An error about this command, with credentials masked.
    pub(super) fn error(&self, detail: impl Into<String>) -> SourceError {
        SourceError::Git {
            what: self.what,
            url: self.url.redacted(),
            detail: detail.into(),
        }
    }

    /// Waits for git; a failure becomes an error carrying what git said
    /// went wrong ([`summary`]).
    pub(super) fn finish(mut self) -> Result<(), SourceError> {
        drop(self.child.stdout.take());
        let status = self.child.wait().map_err(SourceError::GitMissing)?;
        let tail = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&tail);
        // git may echo the URL it was given; never let credentials through.
        let err = err.replace(self.url.as_str(), &self.url.redacted());
        Err(self.error(summary(&err)))
    }
}

/// git's stderr as one line: the lines that say what went wrong (`fatal:`,
/// `error:`, what the server said with `remote:`, ssh's own), joined, else
/// its last line. git closes most failures with advice ("Please make sure
/// you have the correct access rights / and the repository exists."), whose
/// last line alone said nothing.
fn summary(err: &str) -> String {
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let telling: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            ["fatal:", "error:", "remote:", "ssh:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect();
    match (telling.is_empty(), lines.last()) {
        (false, _) => telling.join("; "),
        (true, Some(last)) => last.to_string(),
        (true, None) => "git failed".to_string(),
    }
}

impl Drop for Git<'_> {
    fn drop(&mut self) {
        // After `finish` the child has been reaped and this is a no-op.
        // The stderr thread is left to end by itself: a helper git
        // started (ssh, a remote helper) may hold the pipe a while longer.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `c` to completion, reading at most `cap` bytes of its stdout; a
/// command that prints more is killed and refused.
pub(super) fn run(
    c: Command,
    what: &'static str,
    url: &GitUrl,
    cap: u64,
) -> Result<Vec<u8>, SourceError> {
    let mut git = Git::spawn(c, what, url)?;
    let mut out = Vec::new();
    if let Some(stdout) = git.stdout() {
        stdout
            .take(cap + 1)
            .read_to_end(&mut out)
            .map_err(|e| git.error(format!("cannot read its output: {e}")))?;
    }
    if out.len() as u64 > cap {
        return Err(git.error(format!("it printed more than {cap} bytes; stopped it")));
    }
    git.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// An unknown ssh host: the reason, not git's closing advice.
    #[test]
    fn the_summary_keeps_what_went_wrong() {
        let err = "ssh: Could not resolve hostname nowhere.invalid: Name or service not known\n\
                   fatal: Could not read from remote repository.\n\n\
                   Please make sure you have the correct access rights\n\
                   and the repository exists.\n";
        assert_eq!(
            super::summary(err),
            "ssh: Could not resolve hostname nowhere.invalid: Name or service not known; \
             fatal: Could not read from remote repository."
        );
        assert_eq!(super::summary("just this\n"), "just this");
        assert_eq!(super::summary(""), "git failed");
    }
}
