//! The error type of the well-known source: what went wrong with a site,
//! its index or an artifact.

use super::index::{EntryError, IndexError};
use crate::source::{chain, one_line};
use skillpm_core::name::SkillName;
use skillpm_core::text::sanitize;

/// What went wrong with a well-known site, its index or an artifact.
/// Messages keep their causes' text (a reqwest error says little alone),
/// which the CLI's one-line printer then does not repeat.
#[derive(Debug, thiserror::Error)]
pub enum WellKnownError {
    #[error("cannot start HTTP: {}", chain(.0))]
    Client(#[source] crate::source::tls::TlsError),
    #[error("cannot start HTTP: {0}")]
    Build(#[source] reqwest::Error),
    #[error("GET {url}: {}", one_line(&chain(.source)))]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("GET {url}: the server answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("GET {url}: more than {cap} bytes; refusing it")]
    TooLarge { url: String, cap: u64 },
    #[error("GET {url}: not found (404)")]
    NotFound { url: String },
    #[error(
        "no Agent Skills index at {tried} (404); if this is a git repository, write `git+URL`"
    )]
    NoIndex { tried: String },
    #[error("{url}: {}", chain(.source))]
    Index {
        url: String,
        #[source]
        source: IndexError,
    },
    #[error("{}", chain(.0))]
    Entry(#[source] EntryError),
    #[error("{index} lists no usable skill{}", skipped_note(.skipped))]
    NoneUsable { index: String, skipped: Vec<String> },
    #[error("{index}: a well-known skill needs a name")]
    Unnamed { index: String },
    #[error("{index} does not list a skill named `{name}`")]
    NotListed { index: String, name: SkillName },
    #[error("{index} no longer lists `{name}` as files; run `skillpm update {name}`")]
    NoLongerFiles { index: String, name: SkillName },
}

/// ` (N entries skipped; first: …)`, or nothing when none was.
fn skipped_note(skipped: &[String]) -> String {
    match skipped.first() {
        Some(first) => format!(
            " ({} entries skipped; first: {})",
            skipped.len(),
            sanitize(first)
        ),
        None => String::new(),
    }
}
