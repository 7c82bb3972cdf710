//! Routes and the read-mostly handlers. Every path parameter is validated
//! (`SkillName`, `semver::Version`) before it reaches a query or a file
//! path; versions are normalised so `1.0.0` and `01.0.0`-style spellings
//! cannot address different rows.

use crate::blobs::BlobStore;
use crate::db::MetaStore;
use crate::error::{ApiError, ApiResult};
use crate::search;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, ETAG, HOST, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, put};
use axum::{Json, Router};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use skillpm_core::archive::Limits;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{
    valid_login, IndexFile, IndexVersion, OkResponse, Owner, OwnerList, OwnersChange,
    RegistryConfig,
};
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: Arc<dyn MetaStore>,
    pub blobs: Arc<dyn BlobStore>,
    /// Local scratch space for unpacking uploads (never shared).
    pub scratch: std::path::PathBuf,
    pub limits: Limits,
    pub max_upload: u64,
    /// URL clients should use; `None` when bound to an unspecified address
    /// without `--public-url`, in which case the request's `Host` is used.
    pub base_url: Option<String>,
    /// `name@version` → checksum of versions already served. A published
    /// version's bytes never change (republishing is 409, yanking keeps
    /// downloads), so an entry can never be stale; it spares the metadata
    /// store one query per download.
    pub checksums: ChecksumCache,
}

/// Bounded: past [`ChecksumCache::MAX`] entries it starts over.
#[derive(Default)]
pub struct ChecksumCache(std::sync::Mutex<std::collections::HashMap<(String, String), Checksum>>);

impl ChecksumCache {
    const MAX: usize = 100_000;

    fn get(&self, name: &str, vers: &str) -> Option<Checksum> {
        let map = self.0.lock().ok()?;
        map.get(&(name.to_string(), vers.to_string())).copied()
    }

    fn insert(&self, name: &str, vers: &str, sum: Checksum) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::MAX {
                map.clear();
            }
            map.insert((name.to_string(), vers.to_string()), sum);
        }
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

pub fn router(inner: Inner) -> Router {
    let max_upload = inner.max_upload;
    let state = AppState(Arc::new(inner));
    Router::new()
        .route("/health", get(health))
        .route("/config.json", get(config))
        .route("/index/{name}", get(index))
        .route("/api/v1/skills/new", put(crate::publish::publish))
        .route("/api/v1/skills/{name}/{version}/download", get(download))
        .route("/api/v1/skills/{name}/{version}/yank", delete(yank))
        .route("/api/v1/skills/{name}/{version}/unyank", put(unyank))
        .route(
            "/api/v1/skills/{name}/owners",
            get(owners).put(add_owners).delete(remove_owners),
        )
        .route("/api/v1/search", get(search))
        .fallback(|| async { ApiError::not_found("no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed on this endpoint",
            )
        })
        .layer(DefaultBodyLimit::max(
            usize::try_from(max_upload).unwrap_or(usize::MAX),
        ))
        .with_state(state)
}

/// The user behind the request's bearer token. Cargo sends the bare token
/// without `Bearer `, so both forms are accepted.
pub async fn authenticate(st: &AppState, headers: &HeaderMap) -> ApiResult<String> {
    let raw = headers.get(AUTHORIZATION).ok_or_else(|| {
        ApiError::unauthorized("this endpoint needs an API token: `Authorization: Bearer <token>`")
    })?;
    let raw = raw
        .to_str()
        .map_err(|_| ApiError::unauthorized("invalid API token"))?
        .trim();
    let token = raw
        .strip_prefix("Bearer ")
        .or_else(|| raw.strip_prefix("bearer "))
        .unwrap_or(raw)
        .trim()
        .to_string();
    if token.is_empty() {
        return Err(ApiError::unauthorized("empty API token"));
    }
    st.db
        .token_user(&token)
        .await?
        .ok_or_else(|| ApiError::unauthorized("invalid or revoked API token"))
}

fn parse_name(s: &str) -> ApiResult<SkillName> {
    SkillName::new(s).map_err(|e| ApiError::bad_request(format!("invalid skill name {s:?}: {e}")))
}

fn parse_version(s: &str) -> ApiResult<semver::Version> {
    semver::Version::parse(s)
        .map_err(|e| ApiError::bad_request(format!("invalid version {s:?}: {e}")))
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

async fn config(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<RegistryConfig>> {
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
                .ok_or_else(|| ApiError::bad_request("missing or invalid Host header"))?;
            format!("http://{host}")
        }
    };
    Ok(Json(RegistryConfig {
        dl: format!("{base}/api/v1/skills"),
        api: base,
        auth_required: false,
    }))
}

fn rfc3339(t: i64) -> Option<String> {
    time::OffsetDateTime::from_unix_timestamp(t)
        .ok()?
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}

fn etag_matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim())
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag)
}

async fn index(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let name = parse_name(&name)?;
    let rows = st.db.versions(name.as_str()).await?;
    if rows.is_empty() {
        return Err(ApiError::not_found(format!("no skill named `{name}`")));
    }
    let mut versions = Vec::with_capacity(rows.len());
    for r in rows {
        let (Ok(vers), Ok(cksum)) = (semver::Version::parse(&r.vers), Checksum::parse(&r.cksum))
        else {
            return Err(ApiError::internal(format!(
                "corrupt row for {name}@{}",
                r.vers
            )));
        };
        versions.push(IndexVersion {
            name: name.clone(),
            vers,
            cksum,
            yanked: r.yanked,
            description: r.description,
            requires: serde_json::from_str(&r.requires).unwrap_or_default(),
            deps: Vec::new(),
            published: rfc3339(r.published),
        });
    }
    versions.sort_by(|a, b| a.vers.cmp(&b.vers));
    let body = serde_json::to_vec(&IndexFile { name, versions }).map_err(ApiError::internal)?;
    let etag = format!("\"{}\"", hex::encode(Sha256::digest(&body)));
    let cache = HeaderValue::from_static("public, max-age=0, must-revalidate");
    let etag_value = HeaderValue::from_str(&etag).map_err(ApiError::internal)?;
    if etag_matches(&headers, &etag) {
        return Ok((
            StatusCode::NOT_MODIFIED,
            [(ETAG, etag_value), (CACHE_CONTROL, cache)],
        )
            .into_response());
    }
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (ETAG, etag_value),
            (CACHE_CONTROL, cache),
        ],
        body,
    )
        .into_response())
}

async fn download(
    State(st): State<AppState>,
    Path((name, version)): Path<(String, String)>,
) -> ApiResult<Response> {
    let name = parse_name(&name)?;
    let vers = parse_version(&version)?.to_string();
    let cksum = match st.checksums.get(name.as_str(), &vers) {
        Some(sum) => sum,
        None => {
            let text = st
                .db
                .cksum_of(name.as_str(), &vers)
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no version {vers} of `{name}`")))?;
            let sum = Checksum::parse(&text).map_err(ApiError::internal)?;
            st.checksums.insert(name.as_str(), &vers, sum);
            sum
        }
    };
    let bytes =
        st.blobs.get(&cksum).await?.ok_or_else(|| {
            ApiError::internal(format!("blob {cksum} of {name}@{vers} is missing"))
        })?;
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/gzip")),
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        bytes,
    )
        .into_response())
}

async fn set_yank(
    st: AppState,
    headers: HeaderMap,
    name: String,
    version: String,
    yanked: bool,
) -> ApiResult<Json<OkResponse>> {
    let name = parse_name(&name)?.to_string();
    let vers = parse_version(&version)?.to_string();
    let user = authenticate(&st, &headers).await?;
    st.db.set_yanked(&name, &vers, &user, yanked).await?;
    Ok(Json(OkResponse { ok: true }))
}

async fn yank(
    State(st): State<AppState>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<OkResponse>> {
    set_yank(st, headers, name, version, true).await
}

async fn unyank(
    State(st): State<AppState>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<OkResponse>> {
    set_yank(st, headers, name, version, false).await
}

async fn owners(
    State(st): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<OwnerList>> {
    let name = parse_name(&name)?.to_string();
    let users = st.db.owners(&name).await?;
    Ok(Json(OwnerList {
        users: users.into_iter().map(|login| Owner { login }).collect(),
    }))
}

/// Shared checks of owner changes: caller owns the package, every named
/// user is a well-formed login that exists.
async fn owner_change(
    st: &AppState,
    headers: &HeaderMap,
    name: &str,
    body: Result<Json<OwnersChange>, JsonRejection>,
) -> ApiResult<(String, String, Vec<String>)> {
    let name = parse_name(name)?.to_string();
    let user = authenticate(st, headers).await?;
    let Json(change) = body.map_err(|e| {
        ApiError::bad_request(format!(
            "expected a JSON body {{\"users\": [...]}}: {}",
            e.body_text()
        ))
    })?;
    if change.users.is_empty() {
        return Err(ApiError::bad_request("`users` is empty"));
    }
    if let Some(bad) = change.users.iter().find(|u| !valid_login(u)) {
        return Err(ApiError::bad_request(format!("invalid login {bad:?}")));
    }
    Ok((name, user, change.users))
}

async fn add_owners(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Json<OwnersChange>, JsonRejection>,
) -> ApiResult<Json<OkResponse>> {
    let (name, user, users) = owner_change(&st, &headers, &name, body).await?;
    st.db.add_owners(&name, &user, &users).await?;
    Ok(Json(OkResponse { ok: true }))
}

async fn remove_owners(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Json<OwnersChange>, JsonRejection>,
) -> ApiResult<Json<OkResponse>> {
    let (name, user, users) = owner_change(&st, &headers, &name, body).await?;
    st.db.remove_owners(&name, &user, &users).await?;
    Ok(Json(OkResponse { ok: true }))
}

#[derive(Deserialize)]
struct SearchParams {
    q: Option<String>,
    per_page: Option<String>,
}

async fn search(
    State(st): State<AppState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> ApiResult<Json<skillpm_core::protocol::SearchResults>> {
    let Query(p) = params.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let q = p.q.unwrap_or_default();
    if q.len() > 256 {
        return Err(ApiError::bad_request("query is longer than 256 bytes"));
    }
    let per_page = match p.per_page.as_deref() {
        None | Some("") => 10,
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=100).contains(n))
            .ok_or_else(|| ApiError::bad_request("`per_page` must be a number from 1 to 100"))?,
    };
    let rows = st.db.search_rows().await?;
    let results = tokio::task::spawn_blocking(move || search::rank(rows, &q, per_page)).await?;
    Ok(Json(results))
}
