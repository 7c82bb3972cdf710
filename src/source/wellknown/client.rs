//! The HTTP client for well-known sites: every hop https (or http to
//! loopback), remote hosts only unless the URL names this machine, and
//! every body read with a cap.

use super::{WellKnownError, WellKnownSource};
use crate::project::spec::WellKnownUrl;
use crate::source::SourceError;
use skillpm_core::text::sanitize;
use std::sync::Arc;

impl WellKnownSource {
    /// The client for `url`: one whose resolver refuses this machine
    /// ([`crate::source::http::RemoteOnly`]) unless the URL names this machine
    /// by literal, which only a user's own spec (or an index it led to on
    /// this machine) can do.
    async fn client(&self, url: &WellKnownUrl) -> Result<&reqwest::Client, SourceError> {
        if self.offline {
            return Err(SourceError::Offline("a well-known index".into()));
        }
        let (cell, remote) = if url.is_local() {
            (&self.http_local, false)
        } else {
            (&self.http, true)
        };
        cell.get_or_try_init(|| async {
            let builder = crate::source::http::builder()
                .map_err(WellKnownError::Client)?
                // Every hop must satisfy the same rules as the first
                // URL: https, or http to loopback only.
                .redirect(reqwest::redirect::Policy::custom(|attempt| {
                    if attempt.previous().len() >= 5 {
                        return attempt.error("too many redirects");
                    }
                    let first = attempt
                        .previous()
                        .first()
                        .and_then(|u| WellKnownUrl::from_url(u.clone()).ok());
                    match first.map(|f| f.allows(attempt.url().clone())) {
                        Some(Ok(_)) => attempt.follow(),
                        Some(Err(why)) => attempt.error(why.to_string()),
                        None => attempt.error("redirect from an unusable URL refused"),
                    }
                }));
            let builder = if remote {
                builder.dns_resolver(Arc::new(crate::source::http::RemoteOnly))
            } else {
                builder
            };
            builder.build().map_err(|e| WellKnownError::Build(e).into())
        })
        .await
    }

    /// GETs `url` with a cap; `Ok(None)` on 404/410 (so discovery can try
    /// the next location).
    pub(super) async fn get(
        &self,
        url: &WellKnownUrl,
        cap: u64,
    ) -> Result<Option<Vec<u8>>, SourceError> {
        let shown = || sanitize(url.as_str()).into_owned();
        let failed = |source| WellKnownError::Request {
            url: shown(),
            source,
        };
        let too_large = || WellKnownError::TooLarge { url: shown(), cap };
        let client = self.client(url).await?;
        let mut resp = client
            .get(url.as_url().clone())
            .send()
            .await
            .map_err(failed)?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND || status == reqwest::StatusCode::GONE {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(WellKnownError::Status {
                url: shown(),
                status,
            }
            .into());
        }
        if resp.content_length().is_some_and(|n| n > cap) {
            return Err(too_large().into());
        }
        let mut out = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(failed)? {
            if out.len() as u64 + chunk.len() as u64 > cap {
                return Err(too_large().into());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Some(out))
    }

    pub(super) async fn get_found(
        &self,
        url: &WellKnownUrl,
        cap: u64,
    ) -> Result<Vec<u8>, SourceError> {
        self.get(url, cap).await?.ok_or_else(|| {
            WellKnownError::NotFound {
                url: sanitize(url.as_str()).into_owned(),
            }
            .into()
        })
    }
}
