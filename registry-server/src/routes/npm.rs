//! `GET /npm/<name>` and `GET /npm/<name>/-/<name>-<version>.tgz`: a
//! read-only npm registry view of the packages, so that the marketplace
//! (`marketplace.rs`) can name them as Claude Code `npm` plugin sources
//! and `npm install --registry <this>/npm/` installs them. The npm
//! package of a version is derived from its stored tarball (`crate::npm`).
//!
//! The packument lists every non-yanked version; a yanked version's
//! tarball still downloads, as its `/download` does, so a lock that
//! names it keeps installing.

use super::params::{parse_name, parse_version};
use crate::error::{ApiError, ApiResult};
use crate::npm::{self, Dist, NpmTarball};
use crate::state::AppState;
use crate::store::StoreError;
use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use std::collections::BTreeMap;

#[derive(serde::Serialize)]
struct Packument {
    name: String,
    description: String,
    #[serde(rename = "dist-tags")]
    dist_tags: DistTags,
    versions: BTreeMap<String, VersionDoc>,
}

#[derive(serde::Serialize)]
struct DistTags {
    latest: String,
}

#[derive(serde::Serialize)]
struct VersionDoc {
    name: String,
    version: String,
    description: String,
    dist: DistDoc,
}

#[derive(serde::Serialize)]
struct DistDoc {
    tarball: String,
    integrity: String,
    shasum: String,
}

pub async fn packument(
    State(st): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let name = parse_name(&name)?;
    let base = npm_base(&st)?;
    let (_, rows) = st.db.index_rows(name.as_str()).await?;
    let mut versions = BTreeMap::new();
    let mut latest: Option<(semver::Version, String)> = None;
    for r in rows.into_iter().filter(|r| !r.yanked) {
        let corrupt = |e: Box<dyn std::error::Error + Send + Sync>| {
            ApiError::internal(format!("corrupt row for {name}@{}", r.vers), e)
        };
        let vers = semver::Version::parse(&r.vers).map_err(|e| corrupt(e.into()))?;
        let cksum = Checksum::parse(&r.cksum).map_err(|e| corrupt(e.into()))?;
        let dist = dist_of(&st, &name, &vers, &r.description, cksum).await?;
        if latest.as_ref().is_none_or(|(v, _)| vers > *v) {
            latest = Some((vers.clone(), r.description.clone()));
        }
        let v = vers.to_string();
        versions.insert(
            v.clone(),
            VersionDoc {
                name: name.to_string(),
                description: r.description,
                dist: DistDoc {
                    tarball: format!("{base}/{name}/-/{name}-{v}.tgz"),
                    integrity: dist.integrity,
                    shasum: dist.shasum,
                },
                version: v,
            },
        );
    }
    // No listed version: npm has nothing to install, as for an unknown name.
    let (latest, description) = latest.ok_or_else(|| StoreError::NoSkill(name.to_string()))?;
    let body = serde_json::to_vec(&Packument {
        name: name.to_string(),
        description,
        dist_tags: DistTags {
            latest: latest.to_string(),
        },
        versions,
    })
    .map_err(|e| ApiError::internal("cannot encode the packument", e))?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response())
}

pub async fn tarball(
    State(st): State<AppState>,
    Path((name, file)): Path<(String, String)>,
) -> ApiResult<Response> {
    let name = parse_name(&name)?;
    // npm's own file name for a version: `<name>-<version>.tgz`.
    let vers = file
        .strip_prefix(name.as_str())
        .and_then(|f| f.strip_prefix('-'))
        .and_then(|f| f.strip_suffix(".tgz"))
        .ok_or_else(|| {
            ApiError::BadRequest(format!(
                "invalid tarball name {:?}: expected {name}-<version>.tgz",
                skillpm_core::text::sanitize(&file)
            ))
        })?;
    let vers = parse_version(vers)?;
    let no_version = || StoreError::NoVersion {
        name: name.to_string(),
        vers: vers.clone(),
    };
    let (_, rows) = st.db.index_rows(name.as_str()).await?;
    let row = rows
        .into_iter()
        .find(|r| r.vers == vers)
        .ok_or_else(no_version)?;
    let cksum = Checksum::parse(&row.cksum)
        .map_err(|e| ApiError::internal(format!("corrupt checksum of {name}@{vers}"), e))?;
    let semver = semver::Version::parse(&vers)
        .map_err(|e| ApiError::internal(format!("corrupt version of {name}@{vers}"), e))?;
    let built = build(&st, &name, &semver, &row.description, cksum).await?;
    Ok((
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            // Derived deterministically from immutable bytes.
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        built.bytes,
    )
        .into_response())
}

/// Where the npm view is, absolute: npm fetches a tarball from the URL the
/// packument gives, and Claude Code needs an absolute `registry`.
pub(super) fn npm_base(st: &AppState) -> ApiResult<String> {
    let base = st.base_url.as_deref().ok_or(ApiError::NoPublicUrl)?;
    Ok(format!("{}/npm", base.trim_end_matches('/')))
}

/// The digests of a version's npm package, built once per version.
async fn dist_of(
    st: &AppState,
    name: &SkillName,
    vers: &semver::Version,
    description: &str,
    cksum: Checksum,
) -> ApiResult<Dist> {
    if let Some(d) = st.npm.get(name.as_str(), &vers.to_string()) {
        return Ok(d);
    }
    Ok(build(st, name, vers, description, cksum).await?.dist)
}

/// Builds a version's npm package from its stored tarball (off the async
/// threads: it unpacks and compresses) and remembers its digests.
async fn build(
    st: &AppState,
    name: &SkillName,
    vers: &semver::Version,
    description: &str,
    cksum: Checksum,
) -> ApiResult<NpmTarball> {
    let Some(stored) = st.blobs.get(&cksum).await? else {
        return Err(ApiError::MissingBlob {
            sum: cksum,
            name: name.to_string(),
            vers: vers.to_string(),
        });
    };
    let (name2, vers2, desc, limits) = (
        name.clone(),
        vers.clone(),
        description.to_string(),
        st.limits.clone(),
    );
    let built = tokio::task::spawn_blocking(move || {
        npm::build(&name2, &vers2, &desc, (&stored, &cksum), &limits)
    })
    .await?
    .map_err(|e| ApiError::internal(format!("npm package of {name}@{vers}"), e))?;
    st.npm
        .insert(name.as_str(), &vers.to_string(), built.dist.clone());
    Ok(built)
}
