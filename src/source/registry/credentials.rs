//! Registry tokens saved by `skillpm login`, in the user config directory
//! (`credentials.toml`, mode 0600), keyed by registry URL.
//!
//! A token is looked up in order: `--token`, `SKILLPM_TOKEN`, this file.

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

/// The saved token for `registry`, if any.
pub fn load(config_dir: &Path, registry: &str) -> Result<Option<String>, CredentialsError> {
    let path = config_dir.join(FILE);
    let doc = read_doc(&path)?;
    Ok(doc
        .get("registries")
        .and_then(|r| r.get(registry))
        .and_then(|r| r.get("token"))
        .and_then(|t| t.as_str())
        .map(str::to_string))
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
        let mut entry = Table::new();
        entry.insert("token", toml_edit::value(token));
        t.insert(registry, Item::Table(entry));
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

/// Picks the token: explicit, then environment, then the saved one.
pub fn resolve(
    explicit: Option<String>,
    config_dir: Option<&Path>,
    registry: &str,
) -> Result<String, CredentialsError> {
    if let Some(t) = explicit.filter(|t| !t.is_empty()) {
        return Ok(t);
    }
    if let Some(t) = std::env::var("SKILLPM_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        return Ok(t);
    }
    if let Some(dir) = config_dir {
        if let Some(t) = load(dir, registry)? {
            return Ok(t);
        }
    }
    Err(CredentialsError::Missing(registry.to_string()))
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
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(p).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }
}
