//! `skillpm init`: a commented `skills.toml`, never overwriting one.

use crate::engine::config::{Environment, MANIFEST_FILE};
use crate::error::{Error, Result};
use crate::fs::write_atomic;
use crate::project::manifest::init_template;
use std::path::PathBuf;

pub fn init(env: &Environment) -> Result<PathBuf> {
    let dir = env
        .project_override
        .as_ref()
        .map(|p| env.cwd.join(p))
        .unwrap_or_else(|| env.cwd.clone());
    let path = dir.join(MANIFEST_FILE);
    if path.exists() {
        return Err(Error::AlreadyExists(path));
    }
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    write_atomic(&path, init_template()).map_err(Error::io(&path))?;
    Ok(path)
}
