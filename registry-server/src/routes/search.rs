//! `GET /api/v1/search?q=&per_page=`: parameter checks here, the ranking
//! itself in `crate::search`.

use crate::error::{ApiError, ApiResult};
use crate::search::rank;
use crate::state::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::Json;
use serde::Deserialize;
use skillpm_core::protocol::SearchResults;

/// `per_page` is a string so that a non-number gets our own error text
/// instead of serde's.
#[derive(Deserialize)]
pub struct SearchParams {
    q: Option<String>,
    per_page: Option<String>,
}

pub async fn search(
    State(st): State<AppState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> ApiResult<Json<SearchResults>> {
    let Query(p) = params.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let q = p.q.unwrap_or_default();
    if q.len() > 256 {
        return Err(ApiError::BadRequest(
            "query is longer than 256 bytes".into(),
        ));
    }
    let per_page = match p.per_page.as_deref() {
        None | Some("") => 10,
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=100).contains(n))
            .ok_or_else(|| {
                ApiError::BadRequest("`per_page` must be a number from 1 to 100".into())
            })?,
    };
    let rows = st.db.search_rows().await?;
    let results = tokio::task::spawn_blocking(move || rank(rows, &q, per_page)).await?;
    Ok(Json(results))
}
