//! `GET /.well-known/agent-skills/index.json`: the registry as an Agent
//! Skills discovery index (RFC v0.2.0), so any tool that speaks the RFC can
//! discover and install from a self-hosted registry.
//!
//! Every package appears once, at its newest non-yanked version, as type
//! `archive`: the `url` is the version's download (absolute under
//! `--public-url` or the bound address, else an absolute path that the
//! client resolves against the index URL per RFC 3986) and the `digest` is
//! the sha256 the registry computed at publish, i.e. the digest of exactly
//! the bytes that URL serves. Like `/index/NAME`, the body carries an
//! `ETag` (`If-None-Match` → 304) and must be revalidated; it is rendered
//! once per change of the store's index generation.

use crate::error::{ApiError, ApiResult};
use crate::state::{AppState, RenderedIndex};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use skillpm_core::checksum::Checksum;
use skillpm_core::protocol::AuditSummary;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The discovery schema this index follows.
pub const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Rendered indexes, one per store (keyed by the store's address, since
/// tests run several registries in one process).
fn rendered() -> &'static Mutex<HashMap<usize, RenderedIndex>> {
    static CACHE: OnceLock<Mutex<HashMap<usize, RenderedIndex>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

#[derive(serde::Serialize)]
struct Index<'a> {
    #[serde(rename = "$schema")]
    schema: &'a str,
    skills: Vec<Entry>,
}

#[derive(serde::Serialize)]
struct Entry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    url: String,
    digest: String,
    /// The registry's audit findings in this version (not part of the
    /// discovery schema; its clients must ignore unrecognized fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    audit: Option<AuditSummary>,
}

pub async fn index(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    let key = std::sync::Arc::as_ptr(&st.db) as *const () as usize;
    // Read before the rows: a change in between re-renders next time.
    let gen = st.db.max_generation().await?;
    let cached = rendered()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .filter(|r| r.gen == gen)
        .cloned();
    let r = match cached {
        Some(r) => r,
        None => {
            let r = render(&st, gen).await?;
            rendered()
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, r.clone());
            r
        }
    };
    Ok(super::index::revalidated(&headers, r))
}

async fn render(st: &AppState, gen: i64) -> ApiResult<RenderedIndex> {
    let base = st.base_url.as_deref().unwrap_or("").trim_end_matches('/');
    let mut skills = Vec::new();
    // One row per package with a listed version: its newest non-yanked.
    for row in st.db.search_rows().await? {
        let vers = row.vers.to_string();
        let Some(cksum) = st.db.cksum_of(&row.name, &vers).await? else {
            continue;
        };
        let digest = Checksum::parse(&cksum)
            .map_err(|e| ApiError::internal(format!("corrupt row for {}@{vers}", row.name), e))?;
        skills.push(Entry {
            url: format!("{base}/api/v1/skills/{}/{vers}/download", row.name),
            name: row.name,
            kind: "archive",
            description: row.description,
            digest: digest.to_string(),
            audit: crate::audit::summary(row.audit.as_deref()),
        });
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    let body = serde_json::to_vec(&Index {
        schema: SCHEMA,
        skills,
    })
    .map_err(|e| ApiError::internal("cannot encode the well-known index", e))?;
    super::index::rendered(gen, body)
}
