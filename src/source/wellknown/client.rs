//! The HTTP client for well-known sites: every hop https (or http to
//! loopback), remote hosts only unless the URL names this machine, and
//! every body read with a cap.

use super::{WellKnownError, WellKnownSource};
use crate::project::spec::WellKnownUrl;
use crate::source::SourceError;
use skillpm_core::text::sanitize;

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
            crate::source::http::untrusted(remote)
                .map_err(WellKnownError::Client)?
                .build()
                .map_err(|e| WellKnownError::Build(e).into())
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
        let resp = client
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
        match crate::source::http::read_capped(resp, cap)
            .await
            .map_err(failed)?
        {
            Some(body) => Ok(Some(body)),
            None => Err(too_large().into()),
        }
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
