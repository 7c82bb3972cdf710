//! `PUT /api/v1/skills/new`.
//!
//! Order matters: authenticate before reading the body, cap the body while
//! reading it, unpack with the client's own hardened unpacker (so the
//! server accepts exactly what clients can install), validate `SKILL.md`,
//! refuse doomed uploads before storing anything, store the blob durably,
//! and only then commit the row that makes the version visible.

use crate::auth::authenticate;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::NewVersion;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header::CONTENT_LENGTH, HeaderMap};
use axum::Json;
use http_body_util::BodyExt;
use skillpm_core::archive::{unpack_to_new_dir, Limits};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::PublishResponse;
use skillpm_core::publish;
use skillpm_core::skill;
use std::path::Path;
use std::time::Duration;

/// `?version=X`: the version the publisher names, for a `SKILL.md` that
/// declares none (`skillpm publish --version`).
#[derive(serde::Deserialize)]
pub struct PublishParams {
    version: Option<String>,
}

pub async fn publish(
    State(st): State<AppState>,
    params: Result<Query<PublishParams>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<PublishResponse>> {
    let Query(p) = params.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let given = match p.version.as_deref() {
        None => None,
        Some(v) => Some(semver::Version::parse(v).map_err(|e| {
            ApiError::BadRequest(format!("`version` {v:?} is not a semver version: {e}"))
        })?),
    };
    let user = authenticate(&st, &headers).await?;
    let bytes = read_body(body, &headers, st.max_upload).await?;
    let cksum = Checksum::of_bytes(&bytes);
    let limits = st.limits.clone();
    let tmp = st.scratch.clone();
    let (meta, bytes) = tokio::task::spawn_blocking(move || {
        let meta = inspect(&bytes, &tmp, &limits, given.as_ref());
        (meta, bytes)
    })
    .await?;
    let meta = meta?;

    st.db.precheck(&meta.name, &meta.vers, &user).await?;

    // The blob first: once the row commits, any replica may serve it.
    st.blobs.put(&cksum, bytes::Bytes::from(bytes)).await?;

    let response = PublishResponse {
        name: meta.skill_name.clone(),
        vers: meta.vers.clone(),
        cksum,
    };
    let row = NewVersion {
        name: meta.name,
        vers: meta.vers,
        cksum: cksum.to_string(),
        description: meta.description,
        requires: meta.requires,
        body: meta.body,
    };
    st.db.insert_version(&row, &user).await?;
    Ok(Json(response))
}

/// Reads at most `cap` bytes. An oversized body is partly drained before
/// answering 413, because closing a socket with unread data makes the
/// kernel reset the connection and the client would never see the status.
async fn read_body(mut body: Body, headers: &HeaderMap, cap: u64) -> ApiResult<Vec<u8>> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap) {
        drain(body, cap).await;
        return Err(ApiError::UploadTooLarge(cap));
    }
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(ApiError::ReadBody)?;
        if let Ok(data) = frame.into_data() {
            if out.len() as u64 + data.len() as u64 > cap {
                drain(body, cap).await;
                return Err(ApiError::UploadTooLarge(cap));
            }
            out.extend_from_slice(&data);
        }
    }
    if out.is_empty() {
        return Err(ApiError::BadRequest(
            "the upload is empty; send the .tar.gz made by `skillpm pack` as the body".into(),
        ));
    }
    Ok(out)
}

async fn drain(mut body: Body, cap: u64) {
    let budget = cap.clamp(1 << 20, 16 << 20);
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let mut seen = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(d) = frame.data_ref() {
                seen += d.len() as u64;
                if seen > budget {
                    break;
                }
            }
        }
    })
    .await;
}

/// What the package says about itself.
struct Meta {
    skill_name: SkillName,
    name: String,
    vers: semver::Version,
    description: String,
    requires: String,
    body: String,
}

fn at(line: Option<usize>, msg: impl std::fmt::Display) -> String {
    match line {
        Some(l) => format!("SKILL.md line {l}: {msg}"),
        None => format!("SKILL.md: {msg}"),
    }
}

/// Unpacks into a scratch dir (removed on return) and validates `SKILL.md`.
/// Blocking.
fn inspect(
    bytes: &[u8],
    tmp: &Path,
    limits: &Limits,
    given: Option<&semver::Version>,
) -> ApiResult<Meta> {
    let dir = unpack_to_new_dir(bytes, None, tmp, limits)?;
    let file = ["SKILL.md", "skill.md"]
        .iter()
        .map(|f| dir.path().join(f))
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .ok_or_else(|| ApiError::BadRequest("package has no SKILL.md at its root".into()))?;
    let doc = skill::read(&file).map_err(|e| ApiError::BadRequest(at(e.line(), &e)))?;
    // The one check `skillpm publish --dry-run` runs too: the registry
    // dialect (what published before `validate` followed the
    // specification to the letter still publishes), a name and a version.
    let identity = publish::check(&doc, given).map_err(|refusals| {
        let said: Vec<String> = refusals.iter().map(ToString::to_string).collect();
        ApiError::BadRequest(said.join("; "))
    })?;
    let (skill_name, vers) = (identity.name, identity.version);
    let requires = match doc.frontmatter.get("requires") {
        Some(v @ serde_json::Value::Object(_)) => v.to_string(),
        _ => "{}".to_string(),
    };
    Ok(Meta {
        name: skill_name.to_string(),
        skill_name,
        vers,
        description: doc.description().to_string(),
        requires,
        body: doc.body.clone(),
    })
}
