//! `DELETE .../<version>/yank` and `PUT .../<version>/unyank`: hide a
//! version from resolution (or show it again) while keeping it
//! downloadable for lock files that already pin it.

use super::params::{parse_name, parse_version};
use crate::auth::authenticate;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use skillpm_core::protocol::OkResponse;

pub async fn yank(
    State(st): State<AppState>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<OkResponse>> {
    set_yank(st, headers, name, version, true).await
}

pub async fn unyank(
    State(st): State<AppState>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<OkResponse>> {
    set_yank(st, headers, name, version, false).await
}

async fn set_yank(
    st: AppState,
    headers: HeaderMap,
    name: String,
    version: String,
    yanked: bool,
) -> ApiResult<Json<OkResponse>> {
    let name = parse_name(&name)?.to_string();
    let vers = parse_version(&version)?;
    let user = authenticate(&st, &headers).await?;
    st.db.set_yanked(&name, &vers, &user, yanked).await?;
    Ok(Json(OkResponse { ok: true }))
}
