//! Who is calling: the user behind a request's API token. Kept a plain
//! function rather than an extractor so each handler decides when it runs
//! (publish authenticates before reading its body; others validate paths
//! first).

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::http::header::AUTHORIZATION;
use axum::http::HeaderMap;

/// The user behind the request's bearer token. Cargo sends the bare token
/// without `Bearer `, so both forms are accepted.
pub async fn authenticate(st: &AppState, headers: &HeaderMap) -> ApiResult<String> {
    let raw = headers.get(AUTHORIZATION).ok_or(ApiError::Unauthorized(
        "this endpoint needs an API token: `Authorization: Bearer <token>`",
    ))?;
    let raw = raw
        .to_str()
        .map_err(|_| ApiError::Unauthorized("invalid API token"))?
        .trim();
    let token = raw
        .strip_prefix("Bearer ")
        .or_else(|| raw.strip_prefix("bearer "))
        .unwrap_or(raw)
        .trim();
    if token.is_empty() {
        return Err(ApiError::Unauthorized("empty API token"));
    }
    st.db
        .token_user(token)
        .await?
        .ok_or(ApiError::Unauthorized("invalid or revoked API token"))
}
