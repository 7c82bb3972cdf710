//! `POST /api/v1/yanked`: which of the named versions are yanked, for a
//! locked install's warning, in one request instead of one index read
//! per package. Answered from the same rendered indexes `GET /index/NAME`
//! serves, so it can never disagree with them.

use super::index::current;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::StoreError;
use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use skillpm_core::protocol::{IndexFile, YankedQuery, YankedReply, MAX_YANKED_QUERY};
use std::collections::{BTreeMap, BTreeSet};

/// Most bytes a query may have: [`MAX_YANKED_QUERY`] names and versions
/// at their longest, with room to spare.
pub const MAX_QUERY_BYTES: usize = 512 * 1024;

pub async fn yanked(State(st): State<AppState>, body: Bytes) -> ApiResult<Json<YankedReply>> {
    if body.len() > MAX_QUERY_BYTES {
        return Err(ApiError::BadRequest(format!(
            "the query is larger than {MAX_QUERY_BYTES} bytes"
        )));
    }
    let query: YankedQuery = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("not a yanked query: {e}")))?;
    if query.packages.len() > MAX_YANKED_QUERY {
        return Err(ApiError::BadRequest(format!(
            "at most {MAX_YANKED_QUERY} packages per query"
        )));
    }
    let mut asked: BTreeMap<_, BTreeSet<_>> = BTreeMap::new();
    for p in query.packages {
        asked.entry(p.name).or_default().insert(p.vers);
    }
    let mut yanked = Vec::new();
    for (name, versions) in asked {
        let rendered = match current(&st, &name).await {
            Ok(r) => r,
            Err(ApiError::Store(StoreError::NoSkill(_))) => continue,
            Err(e) => return Err(e),
        };
        let index: IndexFile = serde_json::from_slice(&rendered.body)
            .map_err(|e| ApiError::internal(format!("cannot read the index of {name}"), e))?;
        yanked.extend(
            index
                .versions
                .into_iter()
                .filter(|v| v.yanked && versions.contains(&v.vers))
                .map(|v| skillpm_core::protocol::PackageVersion {
                    name: name.clone(),
                    vers: v.vers,
                }),
        );
    }
    yanked.sort();
    Ok(Json(YankedReply { yanked }))
}
