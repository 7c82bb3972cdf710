//! `GET /index/<name>`: every version of a package, with an `ETag` so
//! clients revalidate with `If-None-Match` and get `304` when unchanged.
//! The rendered body and its `ETag` are kept per package until the
//! package's index generation moves (publish, yank, owner change, here or
//! on another replica; see `state::IndexCache`).

use super::params::parse_name;
use crate::error::{ApiError, ApiResult, BoxError};
use crate::state::{AppState, RenderedIndex};
use crate::store::StoreError;
use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{IndexFile, IndexVersion, Signature};

pub async fn index(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let name = parse_name(&name)?;
    Ok(revalidated(&headers, current(&st, &name).await?))
}

/// The package's index as it stands: the cached rendering while the
/// package's generation has not moved, else rendered anew and cached.
pub(super) async fn current(st: &AppState, name: &SkillName) -> ApiResult<RenderedIndex> {
    let cache = st.index_cache().await;
    if let Some(r) = cache.get(st.db.as_ref(), name.as_str()) {
        return Ok(r);
    }
    let r = render(st, name).await?;
    cache.put(st.db.as_ref(), name.as_str(), r.clone());
    Ok(r)
}

/// Serves a rendered JSON document (an index) with its `ETag`: `304` when
/// the client's `If-None-Match` matches, else the body; caches must
/// revalidate every time. Shared with the well-known index.
pub(super) fn revalidated(headers: &HeaderMap, r: RenderedIndex) -> Response {
    let cache_control = HeaderValue::from_static("public, max-age=0, must-revalidate");
    if etag_matches(headers, &r.etag) {
        return (
            StatusCode::NOT_MODIFIED,
            [(ETAG, r.etag), (CACHE_CONTROL, cache_control)],
        )
            .into_response();
    }
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (ETAG, r.etag),
            (CACHE_CONTROL, cache_control),
        ],
        r.body,
    )
        .into_response()
}

/// A rendered body at generation `gen`, with its `ETag` (the sha256 of
/// the bytes).
pub(super) fn rendered(gen: i64, body: Vec<u8>) -> ApiResult<RenderedIndex> {
    let etag = format!("\"{}\"", hex::encode(Sha256::digest(&body)));
    let etag = HeaderValue::from_str(&etag)
        .map_err(|e| ApiError::internal("cannot encode the ETag", e))?;
    Ok(RenderedIndex {
        gen,
        body: body.into(),
        etag,
    })
}

/// Reads the package's rows and renders its index, with the generation
/// they were read at.
async fn render(st: &AppState, name: &SkillName) -> ApiResult<RenderedIndex> {
    let (gen, rows) = st.db.index_rows(name.as_str()).await?;
    if rows.is_empty() {
        return Err(StoreError::NoSkill(name.to_string()).into());
    }
    let mut versions = Vec::with_capacity(rows.len());
    for r in rows {
        let corrupt =
            |e: BoxError| ApiError::internal(format!("corrupt row for {name}@{}", r.vers), e);
        let vers = semver::Version::parse(&r.vers).map_err(|e| corrupt(e.into()))?;
        let cksum = Checksum::parse(&r.cksum).map_err(|e| corrupt(e.into()))?;
        // Unlike `requires` (shown, never acted on), a dependency dropped
        // here would install a package without what it needs: a row that
        // does not read is an error.
        let deps = serde_json::from_str(&r.deps).map_err(|e| corrupt(e.into()))?;
        // Served as stored: the registry does not vouch for its own
        // database by checking it here; clients verify.
        let sig = match (r.sig_key, r.sig) {
            (Some(keyid), Some(sig)) => Some(Signature { keyid, sig }),
            _ => None,
        };
        versions.push(IndexVersion {
            name: name.clone(),
            vers,
            cksum,
            yanked: r.yanked,
            description: r.description,
            requires: serde_json::from_str(&r.requires).unwrap_or_default(),
            deps,
            published: rfc3339(r.published),
            sig,
            // Shown, never acted on: a record that does not read is
            // left out rather than failing the index.
            audit: crate::audit::summary(r.audit.as_deref()),
        });
    }
    versions.sort_by(|a, b| a.vers.cmp(&b.vers));
    let index = IndexFile {
        name: name.clone(),
        versions,
    };
    let body =
        serde_json::to_vec(&index).map_err(|e| ApiError::internal("cannot encode the index", e))?;
    rendered(gen, body)
}

fn rfc3339(t: i64) -> Option<String> {
    time::OffsetDateTime::from_unix_timestamp(t)
        .ok()?
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// Weak validators (`W/"..."`) match too: the body is the same either way.
fn etag_matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Ok(etag) = etag.to_str() else {
        return false;
    };
    headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim())
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag)
}
