//! Fetching through the `git` command: for ssh, where the user's ssh
//! set-up (agent, keys, `~/.ssh/config`) is `git`'s to use.
//!
//! git runs without a shell, with every user value after `--`, with
//! `GIT_ALLOW_PROTOCOL` and `protocol.allow` limited to the transports
//! the spec allowlist accepts, and with prompts disabled; everything it
//! prints is read through a cap ([`super::process`]).

use super::remote::Want;
use super::{process, SourceError};
use crate::project::spec::GitUrl;
use std::path::Path;
use std::process::Command;

/// Most a git command may print here: nothing but progress and errors.
const MAX_GIT_OUTPUT: u64 = 64 * 1024;

fn git_cmd() -> Command {
    let mut c = Command::new("git");
    c.env("GIT_ALLOW_PROTOCOL", "https:ssh")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .args(["-c", "protocol.allow=never"])
        .args(["-c", "protocol.https.allow=always"])
        .args(["-c", "protocol.ssh.allow=always"])
        // Git for Windows refuses paths over 260 characters without it;
        // other builds of git ignore the key.
        .args(["-c", "core.longpaths=true"]);
    c.stdin(std::process::Stdio::null());
    c
}

/// Fetches `want` from `url` into the bare repository at `dir`, which
/// exists ([`super::remote::init_bare`]). Keeps what arrives as one pack,
/// and skips FETCH_HEAD and background maintenance: nothing here reads
/// them, and each costs files or a process.
pub(super) fn fetch(dir: &Path, url: &GitUrl, want: &Want) -> Result<(), SourceError> {
    let mut c = git_cmd();
    c.args(["-c", "fetch.unpackLimit=1"])
        .args(["-c", "fetch.writeFetchHEAD=false"])
        .args(["-c", "maintenance.auto=false"])
        .args(["-c", "gc.auto=0"])
        .arg("--git-dir")
        .arg(dir)
        .args(["fetch", "--quiet", "--force", "--no-tags"]);
    match want {
        Want::Everything if dir.join("shallow").is_file() => {
            c.arg("--unshallow");
        }
        Want::Everything => {}
        _ => {
            c.arg("--depth=1");
        }
    }
    // git fails on a ref the server lacks, where a tag or a branch of
    // that name is asked for: every tip instead, as shallow.
    let refspecs = match want {
        Want::Refs(_) => super::remote::ALL_REFS.map(String::from).to_vec(),
        want => want.refspecs(),
    };
    c.arg("--").arg(url.as_str()).args(refspecs);
    process::run(c, "fetch from", url, MAX_GIT_OUTPUT).map(drop)
}
