//! The registry-side commands: `publish`, `yank`, `owner`, `login`, and
//! where they find the registry URL and token.

use super::runtime;
use crate::engine::config::Environment;
use crate::error::{Error, Result};
use crate::project::manifest::{Manifest, DEFAULT_REGISTRY};
use crate::project::spec::RegistryChoice;
use crate::project::{Project, RegistryFrom};
use crate::source::registry::client::RegistryClient;
use crate::source::registry::credentials;
use skillpm_core::archive;
use skillpm_core::protocol::{IndexDep, PublishResponse};
use std::path::{Path, PathBuf};

/// Which registry a registry command talks to, and with which token, as
/// the user gave them on the command line (either may be absent).
#[derive(Debug, Clone, Default)]
pub struct RegistryArgs {
    pub registry: Option<RegistryChoice>,
    pub token: Option<String>,
}

impl RegistryArgs {
    /// `--registry`, else `SKILLPM_REGISTRY`, else `[registries] default`,
    /// with who named it (which decides whether `SKILLPM_TOKEN` may go
    /// there). A `--registry` URL was checked where it was parsed, like
    /// every other registry URL. A `--registry` name is looked up under
    /// `[registries]`; its URL was written by whoever wrote skills.toml,
    /// so it counts as named by the manifest, not by the user.
    pub fn url(&self, env: &Environment) -> Result<(String, RegistryFrom)> {
        if let Some(RegistryChoice::Url(u)) = &self.registry {
            return Ok((u.clone(), RegistryFrom::Flag));
        }
        let project = Project::locate(env, false)?;
        let manifest = if project.manifest_path.is_file() {
            project.read_manifest()?
        } else {
            Manifest::default()
        };
        match &self.registry {
            Some(RegistryChoice::Name(n)) if n != DEFAULT_REGISTRY => {
                let url = project.registry_url(&manifest, Some(n))?;
                Ok((url, RegistryFrom::Manifest))
            }
            _ => Ok(project.default_registry(&manifest)?),
        }
    }

    /// A client for the registry, with the token if one applies to it (see
    /// [`credentials`] for which do). A missing token is an error only when
    /// `need_token`.
    pub fn client(&self, env: &Environment, need_token: bool) -> Result<RegistryClient> {
        let (url, from) = self.url(env)?;
        let token = credentials::resolve(self.token.clone(), env.config_dir.as_deref(), &url, from);
        let token = match token {
            Ok(t) => Some(t),
            Err(e) if need_token => return Err(e.into()),
            Err(_) => None,
        };
        Ok(RegistryClient::new(&url, token)?)
    }
}

/// A package ready to publish: who it is, what it depends on, its files
/// with their sizes, and the tarball that would be uploaded.
#[derive(Debug)]
pub struct Publishable {
    pub identity: skillpm_core::publish::Identity,
    pub deps: Vec<IndexDep>,
    pub files: Vec<(String, u64)>,
    pub tarball: Vec<u8>,
}

/// Packs `dir` deterministically and runs every check the registry runs
/// on an upload (its unpacker with the registry's name rules, and
/// `skillpm_core::publish::check` and `dependencies`), on this machine:
/// what passes here publishes, save for the registry's own limits, who
/// owns the name and whether the registry has what the package depends on.
pub fn prepare_publish(dir: &Path, version: Option<&semver::Version>) -> Result<Publishable> {
    let tarball = archive::pack_dir(dir).map_err(crate::source::SourceError::from)?;
    let limits = archive::Limits {
        names: skillpm_core::platform::Platform::Windows,
        ..archive::Limits::default()
    };
    let entries =
        archive::unpack_to_memory(&tarball, &limits).map_err(crate::source::SourceError::from)?;
    let mut files: Vec<(String, u64)> = Vec::new();
    let mut skill_md = None;
    let mut skill_toml = None;
    for e in &entries {
        if let archive::MemEntry::File { path, data, .. } = e {
            if path == "SKILL.md" || (path == "skill.md" && skill_md.is_none()) {
                skill_md = Some(data.as_slice());
            }
            if path == skillpm_core::publish::SKILL_TOML {
                skill_toml = Some(data.as_slice());
            }
            files.push((path.clone(), data.len() as u64));
        }
    }
    let refused = |why: String| Error::NotPublishable {
        dir: dir.to_path_buf(),
        why,
    };
    let bytes = skill_md.ok_or_else(|| refused("it has no SKILL.md at its top level".into()))?;
    let doc = skillpm_core::skill::parse(bytes).map_err(|e| refused(e.to_string()))?;
    let identity = skillpm_core::publish::check(&doc, version)
        .map_err(|r| refused(skillpm_core::publish::joined(&r)))?;
    let deps = match skill_toml {
        None => Vec::new(),
        Some(bytes) => skillpm_core::publish::dependencies(bytes, &identity.name)
            .map_err(|r| refused(skillpm_core::publish::joined(&r)))?,
    };
    // The registry's audit, on the files as packed: a critical finding
    // would be refused there (403), so it is refused here first.
    let critical: Vec<String> =
        skillpm_core::audit::scan_entries(&entries, &skillpm_core::audit::Context::WELL_KNOWN)
            .into_iter()
            .filter(|f| f.severity == skillpm_core::audit::Severity::Critical)
            .map(|f| format!("{} at {}:{}: {}", f.rule, f.file, f.line, f.message))
            .collect();
    if !critical.is_empty() {
        return Err(refused(format!(
            "the registry's audit refuses it: {}",
            critical.join("; ")
        )));
    }
    Ok(Publishable {
        identity,
        deps,
        files,
        tarball,
    })
}

/// `skillpm publish [DIR]`: checks the package as the registry will
/// ([`prepare_publish`]) and uploads it; the server takes name and
/// version from the packed `SKILL.md`.
pub fn publish(
    env: &Environment,
    reg: &RegistryArgs,
    dir: &Path,
    version: Option<&semver::Version>,
) -> Result<(String, PublishResponse)> {
    let package = prepare_publish(dir, version)?;
    let client = reg.client(env, true)?;
    let url = client.base().to_string();
    let r = runtime()?.block_on(client.publish_as(package.tarball, version))?;
    Ok((url.trim_end_matches('/').to_string(), r))
}

/// `skillpm yank NAME@VERSION [--undo]`.
pub fn yank(
    env: &Environment,
    reg: &RegistryArgs,
    name: &str,
    version: &str,
    undo: bool,
) -> Result<()> {
    let client = reg.client(env, true)?;
    Ok(runtime()?.block_on(client.yank(name, version, undo))?)
}

/// `skillpm owner list NAME`.
pub fn owners(env: &Environment, reg: &RegistryArgs, name: &str) -> Result<Vec<String>> {
    let client = reg.client(env, false)?;
    Ok(runtime()?.block_on(client.owners(name))?)
}

/// `skillpm owner add NAME USER`.
pub fn add_owners(
    env: &Environment,
    reg: &RegistryArgs,
    name: &str,
    users: &[String],
) -> Result<()> {
    let client = reg.client(env, true)?;
    Ok(runtime()?.block_on(client.add_owners(name, users))?)
}

/// `skillpm owner remove NAME USER`.
pub fn remove_owners(
    env: &Environment,
    reg: &RegistryArgs,
    name: &str,
    users: &[String],
) -> Result<()> {
    let client = reg.client(env, true)?;
    Ok(runtime()?.block_on(client.remove_owners(name, users))?)
}

/// `skillpm login`: saves `token` for the registry, returning the URL and
/// the credentials file.
pub fn login(env: &Environment, reg: &RegistryArgs, token: &str) -> Result<(String, PathBuf)> {
    let (url, _) = reg.url(env)?;
    let dir = env.config_dir.as_ref().ok_or(Error::NoConfigDir)?;
    let path = credentials::save(dir, &url, token)?;
    Ok((credentials::registry_key(&url), path))
}
