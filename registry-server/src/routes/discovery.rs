//! What a client or load balancer asks first: `/health` and the registry's
//! `/config.json`.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::HOST;
use axum::http::HeaderMap;
use axum::Json;
use skillpm_core::protocol::RegistryConfig;

pub async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

/// Without a known public URL the `Host` the client used is echoed back,
/// so it is checked to be a plain host name first.
pub async fn config(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Json<RegistryConfig>> {
    let base = match &st.base_url {
        Some(b) => b.clone(),
        None => {
            let host = headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .filter(|h| {
                    !h.is_empty()
                        && h.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
                })
                .ok_or_else(|| ApiError::BadRequest("missing or invalid Host header".into()))?;
            format!("http://{host}")
        }
    };
    Ok(Json(RegistryConfig {
        dl: format!("{base}/api/v1/skills"),
        api: base,
        auth_required: false,
    }))
}
