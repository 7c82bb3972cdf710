//! `GET /marketplace.json`: the registry as a Claude Code plugin
//! marketplace, added with `/plugin marketplace add <url>/marketplace.json`.
//!
//! Every package appears once, at its newest non-yanked version unless
//! the audit finds that critical, as a plugin of the same name whose source is the registry's own npm view
//! (`npm.rs`): `{"source": "npm", "package", "version", "registry"}`. A
//! marketplace added by URL is only that one file, so its plugins cannot
//! be relative paths; of the sources Claude Code reads, npm is the one
//! served from a package archive and a custom registry URL, with the
//! integrity npm checks. The version is exact, so a refreshed marketplace
//! is what moves users to a new version.

use super::npm::npm_base;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

#[derive(serde::Serialize)]
struct Marketplace {
    name: String,
    owner: Owner,
    description: String,
    plugins: Vec<Plugin>,
}

#[derive(serde::Serialize)]
struct Owner {
    name: String,
}

#[derive(serde::Serialize)]
struct Plugin {
    name: String,
    description: String,
    version: String,
    source: NpmSource,
}

#[derive(serde::Serialize)]
struct NpmSource {
    source: &'static str,
    package: String,
    version: String,
    registry: String,
}

pub async fn marketplace(State(st): State<AppState>) -> ApiResult<Response> {
    let registry = npm_base(&st)?;
    let base = st.base_url.as_deref().unwrap_or_default();
    let name = marketplace_name(base);
    let mut plugins: Vec<Plugin> = st
        .db
        .search_rows()
        .await?
        .into_iter()
        // Claude Code installs a plugin without skillpm's audit gate, so
        // a version the audit finds critical (by rules newer than its
        // publish, after `rescan`) is not offered; yanking it offers the
        // version before.
        .filter(|row| crate::audit::counts(row.audit.as_deref()).is_none_or(|c| c.critical == 0))
        .map(|row| Plugin {
            source: NpmSource {
                source: "npm",
                package: row.name.clone(),
                version: row.vers.to_string(),
                registry: registry.clone(),
            },
            name: row.name,
            description: row.description,
            version: row.vers.to_string(),
        })
        .collect();
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    let body = serde_json::to_vec(&Marketplace {
        owner: Owner { name: name.clone() },
        description: format!("Skills published to the skillpm registry at {base}"),
        name,
        plugins,
    })
    .map_err(|e| ApiError::internal("cannot encode the marketplace", e))?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response())
}

/// The marketplace's name, which users type after `@` in `/plugin install
/// NAME@MARKETPLACE`: the registry's host and port in kebab-case, as
/// Claude Code requires (`registry.example.com` → `registry-example-com`),
/// so two registries do not replace each other in a user's list.
fn marketplace_name(base: &str) -> String {
    let authority = url::Url::parse(base)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_string();
            Some(match u.port() {
                Some(p) => format!("{host}-{p}"),
                None => host,
            })
        })
        .unwrap_or_default();
    let kebab = authority
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if kebab.is_empty() {
        "skillpm-registry".to_string()
    } else {
        kebab
    }
}

#[cfg(test)]
mod tests {
    use super::marketplace_name;

    #[test]
    fn names_are_the_host_in_kebab_case() {
        assert_eq!(
            marketplace_name("https://Registry.Example.com/"),
            "registry-example-com"
        );
        assert_eq!(marketplace_name("http://127.0.0.1:8080"), "127-0-0-1-8080");
        assert_eq!(marketplace_name("http://[::1]:9/x"), "1-9");
        assert_eq!(marketplace_name(""), "skillpm-registry");
    }
}
