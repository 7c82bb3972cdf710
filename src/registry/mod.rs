//! Client side of the registry protocol (see `DESIGN.md`, "Registry
//! protocol"). [`protocol`] holds the wire types, shared with the
//! `skillpm-registry` server; [`client`] speaks HTTP.

pub mod client;
pub use skillpm_core::protocol;

pub use client::{IndexResponse, RegistryClient, RegistryError};
pub use protocol::PublishResponse;

use std::path::Path;

/// Packs `dir` deterministically and publishes it to `registry_url`. The
/// server takes name and version from the packed `SKILL.md`.
pub async fn publish_dir(
    dir: &Path,
    registry_url: &str,
    token: &str,
) -> Result<PublishResponse, RegistryError> {
    let client = RegistryClient::new(registry_url, Some(token.to_string()))?;
    let owned = dir.to_path_buf();
    // Packing reads and compresses the whole tree: keep it off the runtime.
    let tarball = tokio::task::spawn_blocking(move || skillpm_core::archive::pack_dir(&owned))
        .await
        .map_err(|e| RegistryError::Pack {
            dir: dir.display().to_string(),
            detail: e.to_string(),
        })?
        .map_err(|e| RegistryError::Pack {
            dir: dir.display().to_string(),
            detail: e.to_string(),
        })?;
    client.publish(tarball).await
}
