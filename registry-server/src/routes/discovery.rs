//! What a client or load balancer asks first: `/health` and the registry's
//! `/config.json`.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use skillpm_core::protocol::RegistryConfig;

pub async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

/// Built only from `--public-url` or the bound address, never from the
/// request: a `Host` header is the client's to choose, and a shared cache
/// would hand the URLs it chose to everyone else. Without a known URL
/// (bound to 0.0.0.0 without `--public-url`) there is no config.json, and
/// clients fall back to the URL they were given. `no-cache` makes caches
/// revalidate, so a changed `--public-url` reaches clients at once. With
/// `--keys`, `keys` lists the keyring as it stands (`keys.rs`): every key
/// the registry has had, revoked ones marked.
pub async fn config(State(st): State<AppState>) -> ApiResult<Response> {
    let base = st.base_url.clone().ok_or(ApiError::NoEndpoint)?;
    let keys = st
        .keys
        .as_ref()
        .map(|k| k.current().public.clone())
        .unwrap_or_default();
    Ok((
        [(CACHE_CONTROL, HeaderValue::from_static("no-cache"))],
        Json(RegistryConfig {
            dl: format!("{base}/api/v1/skills"),
            api: base,
            auth_required: false,
            keys,
        }),
    )
        .into_response())
}
