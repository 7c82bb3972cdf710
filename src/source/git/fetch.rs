//! Fetching over https in this process (gitoxide), not through `git`.
//!
//! `git fetch` over https costs three processes (git, git-remote-https,
//! index-pack) and an OpenSSL start-up before the first byte; for a small
//! repository that was most of an `add`. Here the fetch speaks the smart
//! HTTP protocol through the same rustls stack, timeouts and user agent as
//! the registry client, and writes the received pack and its index
//! straight into the bare clone, so what reads objects afterwards cannot
//! tell which way they came.
//!
//! The repository is opened isolated: no system, user or environment
//! configuration is read, only `protocol.allow` overrides that admit https
//! and nothing else. Anything this path does not do (credentials in the
//! URL, credential helpers, proxies set in git config, ssh, file) is left
//! to the `git` command, which the caller falls back to.

use super::SourceError;
use crate::project::spec::{GitScheme, GitUrl};
use crate::source::registry::client::{chain, one_line};
use gix::protocol::transport::client::blocking_io::http;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// The refs every fetch maps into the bare clone, as the `git` path does.
pub(super) const REFSPECS: [&str; 3] = [
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+HEAD:refs/skillpm/HEAD",
];

/// Whether `url` can be fetched here rather than by `git`: https without
/// credentials in it (those belong to git's credential machinery).
pub(super) fn handles(url: &GitUrl) -> bool {
    url.scheme() == GitScheme::Https && !url.has_credentials()
}

/// Fetches [`REFSPECS`] of `url` into the bare repository at `repo`
/// (created when missing).
pub(super) fn fetch(repo: &Path, url: &GitUrl) -> Result<(), SourceError> {
    // The whole chain: gitoxide keeps the reason ("invalid peer
    // certificate: UnknownIssuer") below "Transport handshake failed".
    let err = |e: &dyn std::error::Error| SourceError::Git {
        what: "fetch from",
        url: url.redacted(),
        detail: one_line(&chain(e)).replace(url.as_str(), &url.redacted()),
    };
    let repo = open(repo).map_err(|e| err(&*e))?;
    let remote = repo
        .remote_at(url.as_str())
        .and_then(|r| r.with_refspecs(REFSPECS, gix::remote::Direction::Fetch))
        .map_err(|e| err(&e))?;
    let mut conn = remote
        .connect(gix::remote::Direction::Fetch)
        .map_err(|e| err(&e))?;
    let backend = http::reqwest::Options {
        configure_client: Some(Box::new(|builder| {
            Ok(crate::source::http::blocking(builder))
        })),
        configure_request: None,
    };
    let options = http::Options {
        backend: Some(Arc::new(Mutex::new(backend))),
        ..Default::default()
    };
    conn.set_transport_options(Box::new(options));
    let interrupt = AtomicBool::new(false);
    conn.prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(|e| err(&e))?
        .receive(gix::progress::Discard, &interrupt)
        .map_err(|e| err(&e))?;
    Ok(())
}

/// The bare clone, created on first use, opened without any configuration
/// but its own and the transport allowlist.
fn open(dir: &Path) -> Result<gix::Repository, Box<dyn std::error::Error + Send + Sync>> {
    if !dir.join("HEAD").is_file() {
        init_bare(dir)?;
    }
    let options = gix::open::Options::isolated().cli_overrides([
        "protocol.allow=never",
        "protocol.https.allow=always",
        // Version 1 asks for the refs and the pack in two requests;
        // version 2 takes three (capabilities, ls-refs, fetch).
        "protocol.version=1",
        // No reflogs: the cache clone has no use for its refs' history.
        "core.logAllRefUpdates=false",
    ]);
    Ok(gix::open_opts(dir, options)?)
}

/// The least a bare repository needs, without the sample hooks, the
/// description and the file-system probes a full `init` writes (a cache
/// clone uses none of them). `HEAD` comes last, so an init cut short is
/// simply done again.
fn init_bare(dir: &Path) -> std::io::Result<()> {
    for sub in ["objects/pack", "objects/info", "refs/heads", "refs/tags"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )?;
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n")
}
