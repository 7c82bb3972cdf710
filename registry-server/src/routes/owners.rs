//! `GET`, `PUT` and `DELETE /api/v1/skills/<name>/owners`: who may publish
//! and yank a package.

use super::params::parse_name;
use crate::auth::authenticate;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use skillpm_core::protocol::{valid_login, OkResponse, Owner, OwnerList, OwnersChange};

pub async fn list(
    State(st): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<OwnerList>> {
    let name = parse_name(&name)?.to_string();
    let users = st.db.owners(&name).await?;
    Ok(Json(OwnerList {
        users: users.into_iter().map(|login| Owner { login }).collect(),
    }))
}

pub async fn add(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Json<OwnersChange>, JsonRejection>,
) -> ApiResult<Json<OkResponse>> {
    change(&st, &headers, &name, body, true).await
}

pub async fn remove(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Json<OwnersChange>, JsonRejection>,
) -> ApiResult<Json<OkResponse>> {
    change(&st, &headers, &name, body, false).await
}

/// Adds (or removes) owners after the checks both share: the caller is
/// authenticated, then every named user is a well-formed login. The body
/// is taken as a `Result` so a bad one is answered in our error format,
/// and only after authentication.
async fn change(
    st: &AppState,
    headers: &HeaderMap,
    name: &str,
    body: Result<Json<OwnersChange>, JsonRejection>,
    add: bool,
) -> ApiResult<Json<OkResponse>> {
    let name = parse_name(name)?.to_string();
    let user = authenticate(st, headers).await?;
    let Json(change) = body.map_err(|e| {
        ApiError::BadRequest(format!(
            "expected a JSON body {{\"users\": [...]}}: {}",
            e.body_text()
        ))
    })?;
    if change.users.is_empty() {
        return Err(ApiError::BadRequest("`users` is empty".into()));
    }
    if let Some(bad) = change.users.iter().find(|u| !valid_login(u)) {
        return Err(ApiError::BadRequest(format!("invalid login {bad:?}")));
    }
    if add {
        st.db.add_owners(&name, &user, &change.users).await?;
    } else {
        st.db.remove_owners(&name, &user, &change.users).await?;
    }
    Ok(Json(OkResponse { ok: true }))
}
