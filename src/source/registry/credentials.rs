//! Registry tokens saved by `skillpm login`, in the user config directory
//! (`credentials.toml`, mode 0600), keyed by normalised registry URL.
//!
//! Tokens are scoped the way cargo scopes them, because a project's
//! `skills.toml` is written by whoever wrote the project, and naming a
//! registry there must not be a way to collect the reader's tokens:
//! - `--token` goes to the registry this command talks to;
//! - `SKILLPM_TOKEN` only when the user named that registry for this run
//!   (`--registry` or `SKILLPM_REGISTRY`), never to one that came from
//!   `skills.toml`;
//! - a saved token only to the registry it was saved for: same scheme,
//!   host, port and path, after normalising case, default ports and
//!   trailing slashes.
//!
//! The HTTP client adds the last guard: it sends a token only to the
//! origin it was configured with, whatever `config.json` or a redirect
//! says.

use crate::project::spec::mask_userinfo;
use crate::project::RegistryFrom;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, Table};

pub const FILE: &str = "credentials.toml";

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error(
        "no token for {0}: pass --token, set SKILLPM_TOKEN, or run `skillpm login --registry {0}`"
    )]
    Missing(String),
    #[error(
        "no token for {0}: SKILLPM_TOKEN is set, but it is only sent to the registry named by \
         --registry or SKILLPM_REGISTRY, and {0} comes from skills.toml; pass `--registry {0}` \
         to send it there, or run `skillpm login --registry {0}`"
    )]
    EnvTokenNotForManifestRegistry(String),
}

fn file_err(path: &Path, message: impl ToString) -> CredentialsError {
    CredentialsError::File {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

fn read_doc(path: &Path) -> Result<DocumentMut, CredentialsError> {
    match std::fs::read_to_string(path) {
        Ok(t) => t
            .parse::<DocumentMut>()
            .map_err(|e| file_err(path, e.message())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DocumentMut::new()),
        Err(e) => Err(file_err(path, e)),
    }
}

/// The key a registry's token is saved under: scheme, host and port as
/// `url` normalises them (lower case, default port dropped) and the path
/// without trailing slashes, so `HTTPS://Reg.example:443/x/` and
/// `https://reg.example/x` share one token and no other URL does.
pub fn registry_key(registry: &str) -> String {
    let Ok(url) = url::Url::parse(registry.trim()) else {
        return mask_userinfo(registry.trim().trim_end_matches('/'));
    };
    let host = url.host_str().unwrap_or_default();
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let path = url.path().trim_end_matches('/');
    format!("{}://{host}{port}{path}", url.scheme())
}

/// The saved token for `registry`, if any. Keys are compared normalised,
/// so files written before keys were normalised still match exactly the
/// registry they were saved for.
pub fn load(config_dir: &Path, registry: &str) -> Result<Option<String>, CredentialsError> {
    let path = config_dir.join(FILE);
    let doc = read_doc(&path)?;
    let want = registry_key(registry);
    let Some(regs) = doc.get("registries").and_then(Item::as_table_like) else {
        return Ok(None);
    };
    let token = regs
        .iter()
        .filter(|(k, _)| registry_key(k) == want)
        .find_map(|(_, v)| v.get("token").and_then(|t| t.as_str()))
        .map(str::to_string);
    Ok(token)
}

/// Saves `token` for `registry`, creating the file with mode 0600 before
/// any secret is written to it.
pub fn save(config_dir: &Path, registry: &str, token: &str) -> Result<PathBuf, CredentialsError> {
    std::fs::create_dir_all(config_dir).map_err(|e| file_err(config_dir, e))?;
    let path = config_dir.join(FILE);
    let mut doc = read_doc(&path)?;
    let regs = doc
        .entry("registries")
        .or_insert_with(|| Item::Table(Table::new()));
    if let Some(t) = regs.as_table_mut() {
        t.set_implicit(true);
        let key = registry_key(registry);
        t.retain(|k, _| registry_key(k) != key);
        let mut entry = Table::new();
        entry.insert("token", toml_edit::value(token));
        t.insert(&key, Item::Table(entry));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(config_dir).map_err(|e| file_err(&path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o600))
            .map_err(|e| file_err(&path, e))?;
    }
    std::io::Write::write_all(&mut tmp, doc.to_string().as_bytes())
        .map_err(|e| file_err(&path, e))?;
    tmp.persist(&path).map_err(|e| file_err(&path, e.error))?;
    Ok(path)
}

/// Picks the token for `registry`, which came `from` where it says:
/// `--token`, then `SKILLPM_TOKEN` (only for a registry the user named for
/// this run), then the one saved for exactly this registry. See the
/// module docs for why.
pub fn resolve(
    explicit: Option<String>,
    config_dir: Option<&Path>,
    registry: &str,
    from: RegistryFrom,
) -> Result<String, CredentialsError> {
    if let Some(t) = explicit.filter(|t| !t.is_empty()) {
        return Ok(t);
    }
    let env_token = std::env::var("SKILLPM_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    if let Some(t) = env_token.as_ref().filter(|_| from.named_by_user()) {
        return Ok(t.clone());
    }
    if let Some(dir) = config_dir {
        if let Some(t) = load(dir, registry)? {
            return Ok(t);
        }
    }
    let shown = registry_key(registry);
    Err(if env_token.is_some() {
        CredentialsError::EnvTokenNotForManifestRegistry(shown)
    } else {
        CredentialsError::Missing(shown)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_with_private_mode_and_loads_back() {
        let t = tempfile::tempdir().unwrap();
        let p = save(t.path(), "http://127.0.0.1:1", "tok1").unwrap();
        save(t.path(), "http://other", "tok2").unwrap();
        assert_eq!(
            load(t.path(), "http://127.0.0.1:1").unwrap().as_deref(),
            Some("tok1")
        );
        assert_eq!(
            load(t.path(), "http://other").unwrap().as_deref(),
            Some("tok2")
        );
        assert_eq!(load(t.path(), "http://none").unwrap(), None);
        // One registry, however it is spelled; nothing else.
        assert_eq!(
            load(t.path(), "HTTP://127.0.0.1:1/").unwrap().as_deref(),
            Some("tok1")
        );
        save(t.path(), "http://127.0.0.1:1/", "tok3").unwrap();
        assert_eq!(
            load(t.path(), "http://127.0.0.1:1").unwrap().as_deref(),
            Some("tok3")
        );
        for other in [
            "https://127.0.0.1:1",
            "http://127.0.0.1:2",
            "http://127.0.0.1:1/sub",
            "http://127.0.0.2:1",
        ] {
            assert_eq!(load(t.path(), other).unwrap(), None, "{other}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(p).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }

    #[test]
    fn keys_normalise_case_default_ports_and_slashes() {
        assert_eq!(
            registry_key("HTTPS://Reg.Example:443/x/"),
            "https://reg.example/x"
        );
        assert_eq!(registry_key("http://h:80"), "http://h");
        assert_eq!(registry_key("http://h:8080/"), "http://h:8080");
        assert_ne!(registry_key("http://h"), registry_key("https://h"));
    }
}
