//! The HTTP surface: which handler serves which path (the book's
//! docs/src/reference/registry-api.md). One file per endpoint group below.

mod discovery;
mod download;
mod index;
mod marketplace;
mod npm;
mod owners;
mod params;
mod publish;
mod search;
mod wellknown;
mod yank;
mod yanked;

use crate::error::ApiError;
use crate::state::{AppState, Inner};
use axum::extract::DefaultBodyLimit;
use axum::http::header::CACHE_CONTROL;
use axum::http::HeaderValue;
use axum::response::Response;
use axum::routing::{delete, get, post, put};
use axum::Router;

pub fn router(inner: Inner) -> Router {
    let max_upload = inner.max_upload;
    Router::new()
        .route("/health", get(discovery::health))
        .route("/config.json", get(discovery::config))
        .route("/index/{name}", get(index::index))
        .route("/api/v1/skills/new", put(publish::publish))
        .route(
            "/api/v1/skills/{name}/{version}/download",
            get(download::download),
        )
        .route("/api/v1/skills/{name}/{version}/yank", delete(yank::yank))
        .route("/api/v1/skills/{name}/{version}/unyank", put(yank::unyank))
        .route(
            "/api/v1/skills/{name}/owners",
            get(owners::list).put(owners::add).delete(owners::remove),
        )
        .route("/api/v1/search", get(search::search))
        .route(
            "/api/v1/yanked",
            post(yanked::yanked).layer(DefaultBodyLimit::max(yanked::MAX_QUERY_BYTES)),
        )
        .route("/marketplace.json", get(marketplace::marketplace))
        .route("/npm/{name}", get(npm::packument))
        .route("/npm/{name}/-/{file}", get(npm::tarball))
        .route(
            "/.well-known/agent-skills/index.json",
            get(wellknown::index),
        )
        .fallback(|| async { ApiError::NoEndpoint })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(
            usize::try_from(max_upload).unwrap_or(usize::MAX),
        ))
        .layer(axum::middleware::map_response(default_cache_control))
        .with_state(AppState::new(inner))
}

/// Responses that chose no cache policy (errors, owners, search) get
/// `no-store`, so no shared cache keeps one client's answer for another.
async fn default_cache_control(mut resp: Response) -> Response {
    resp.headers_mut()
        .entry(CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    resp
}
