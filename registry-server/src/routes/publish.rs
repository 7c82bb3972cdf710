//! `PUT /api/v1/skills/new`.
//!
//! Order matters: authenticate before reading the body, cap the body while
//! reading it, unpack with the client's own hardened unpacker (so the
//! server accepts exactly what clients can install), validate `SKILL.md`,
//! check `skill.toml`'s dependencies against this registry, run the audit
//! (a critical finding is refused), refuse doomed
//! uploads before storing anything, store the blob durably, and only then
//! commit the row that makes the version visible.

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
use skillpm_core::audit;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::{IndexDep, PublishResponse};
use skillpm_core::publish;
use skillpm_core::signing;
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
    for dep in &meta.deps {
        check_dep(&st, dep).await?;
    }
    let deps = serde_json::to_string(&meta.deps)
        .map_err(|e| ApiError::internal("cannot encode the dependencies", e))?;
    // Signed with the key active now: what the index will serve, from the
    // same typed values (`skillpm_core::signing::message`).
    let sig = st.keys.as_ref().and_then(|k| {
        let loaded = k.current();
        let active = loaded.active.as_ref()?;
        Some(signing::sign(
            &active.key,
            &meta.skill_name,
            &meta.vers,
            &cksum,
            &meta.deps,
        ))
    });
    if st.keys.is_some() && sig.is_none() {
        return Err(ApiError::internal(
            "cannot sign the new version",
            "the key directory has no active key",
        ));
    }

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
        deps,
        body: meta.body,
        sig_key: sig.as_ref().map(|s| s.keyid.clone()),
        sig: sig.map(|s| s.sig),
        audit: meta.audit,
    };
    st.db.insert_version(&row, &user).await?;
    Ok(Json(response))
}

/// Refuses a dependency this registry cannot satisfy: no package of that
/// name, or no version of it, yanked ones aside, that matches. A version
/// yanked after this check still resolves for a lock that names it, as
/// any yanked version does, so the check is not repeated in the insert's
/// transaction.
async fn check_dep(st: &AppState, dep: &IndexDep) -> ApiResult<()> {
    let (_, rows) = st.db.index_rows(dep.name.as_str()).await?;
    let refuse = |why: String| {
        Err(ApiError::BadRequest(format!(
            "{}: dependency `{}` {}: {why}",
            publish::SKILL_TOML,
            dep.name,
            dep.req
        )))
    };
    if rows.is_empty() {
        return refuse(format!("no package named `{}` in this registry", dep.name));
    }
    let mut available: Vec<semver::Version> = rows
        .iter()
        .filter(|r| !r.yanked)
        .filter_map(|r| semver::Version::parse(&r.vers).ok())
        .collect();
    if available.iter().any(|v| dep.req.matches(v)) {
        return Ok(());
    }
    if available.is_empty() {
        return refuse("every published version is yanked".into());
    }
    available.sort();
    // The newest are the ones a publisher most likely meant.
    let shown = available.len().min(MAX_SHOWN);
    let mut listed: Vec<String> = available[available.len() - shown..]
        .iter()
        .map(ToString::to_string)
        .collect();
    if available.len() > shown {
        listed.insert(0, format!("{} older, …", available.len() - shown));
    }
    refuse(format!(
        "no published version matches (available: {})",
        listed.join(", ")
    ))
}

/// Versions listed when none matches a dependency's requirement.
const MAX_SHOWN: usize = 10;

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
    deps: Vec<IndexDep>,
    body: String,
    /// The audit's findings (none critical), as stored.
    audit: String,
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
        .find_map(|f| root_file(dir.path(), f))
        .ok_or_else(|| ApiError::BadRequest("package has no SKILL.md at its root".into()))?;
    let doc = skill::read(&file).map_err(|e| ApiError::BadRequest(at(e.line(), &e)))?;
    // The one check `skillpm publish --dry-run` runs too: the registry
    // dialect (what published before `validate` followed the
    // specification to the letter still publishes), a name and a version.
    let identity =
        publish::check(&doc, given).map_err(|r| ApiError::BadRequest(publish::joined(&r)))?;
    let (skill_name, vers) = (identity.name, identity.version);
    // The client's install gate, run before anything is stored: what it
    // would refuse to install is refused here (403), every critical
    // finding named.
    let findings =
        crate::audit::scan(dir.path()).map_err(|e| ApiError::internal("auditing the upload", e))?;
    let critical: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == audit::Severity::Critical)
        .map(|f| format!("{} at {}:{}: {}", f.rule, f.file, f.line, f.message))
        .collect();
    if !critical.is_empty() {
        return Err(ApiError::AuditRefused(critical.join("; ")));
    }
    let deps = match root_file(dir.path(), publish::SKILL_TOML) {
        None => Vec::new(),
        Some(path) => {
            let bytes = read_bounded(&path, publish::MAX_SKILL_TOML)?;
            publish::dependencies(&bytes, &skill_name)
                .map_err(|r| ApiError::BadRequest(publish::joined(&r)))?
        }
    };
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
        deps,
        body: doc.body.clone(),
        audit: crate::audit::Stored::of(&findings).encode(),
    })
}

/// `name` at the top of the unpacked package, when it is a regular file.
fn root_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    let p = dir.join(name);
    std::fs::symlink_metadata(&p)
        .is_ok_and(|m| m.is_file())
        .then_some(p)
}

/// At most `cap + 1` bytes of `path`: enough for the caller to see that
/// it is too large without reading all of it.
fn read_bounded(path: &Path, cap: usize) -> ApiResult<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(cap as u64 + 1).read_to_end(&mut out))
        .map_err(|e| ApiError::internal(format!("cannot read {}", path.display()), e))?;
    Ok(out)
}
