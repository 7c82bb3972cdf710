//! Where a project's manifest, lock and install roots are.
//!
//! A project is the directory holding `skills.toml`; `--global` uses a user
//! manifest and lock in the skillpm config directory and installs into
//! `~/.agents/skills`.

pub mod lockfile;
pub mod manifest;
pub mod package;
pub mod spec;

use crate::cache::{short_hash, Cache};
use crate::engine::agents;
use crate::engine::config::{Environment, MANIFEST_FILE, MAX_CONFIG_BYTES};
use crate::fs::write_dir::{Refused, WriteDir};
use crate::project::lockfile::{LockedSkill, LockedSource, Lockfile, LockfileError};
use crate::project::manifest::{Manifest, ManifestError};
use skillpm_core::bounded;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

pub const LOCK_FILE: &str = "skills.lock";
/// Largest `skills.lock` read: ~100 000 entries, far beyond real projects.
pub const MAX_LOCK_BYTES: u64 = 32 * 1024 * 1024;
/// The default install root, relative to the project.
pub const DEFAULT_TARGET: &str = ".agents/skills";

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("no skills.toml in {0} or any parent directory; run `skillpm init` first")]
    NoManifest(PathBuf),
    #[error("no home directory (HOME is unset); cannot use --global")]
    NoHome,
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Lockfile(#[from] LockfileError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no registry configured: set `default` under [registries] in skills.toml or SKILLPM_REGISTRY")]
    NoRegistry,
    #[error("registry `{0}` is not listed under [registries] in skills.toml")]
    UnknownRegistry(String),
    #[error("SKILLPM_REGISTRY: {0}")]
    BadEnvRegistry(#[from] spec::SpecError),
    #[error("install target `{target}` in skills.toml {reason}; targets must be relative paths inside the project")]
    BadTarget {
        target: String,
        reason: &'static str,
    },
    #[error("install target `{target}` in skills.toml is not a known agent ({known}); write a directory as `./{target}`")]
    UnknownAgent { target: String, known: String },
    #[error("install target `{target}`: {why}")]
    RefusedTarget {
        target: String,
        #[source]
        why: Refused,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone)]
pub struct Project {
    pub dir: PathBuf,
    pub manifest_path: PathBuf,
    pub lock_path: PathBuf,
    pub global: bool,
    pub home: Option<PathBuf>,
    /// `SKILLPM_REGISTRY`, captured once.
    pub env_registry: Option<String>,
}

/// Holds the project's cross-process lock until dropped.
pub struct ProjectGuard {
    _file: File,
}

impl Project {
    /// The project for `env`; `create` makes the global manifest directory
    /// when it is missing.
    pub fn locate(env: &Environment, global: bool) -> Result<Project, ProjectError> {
        let dir = if global {
            let dir = env.config_dir.clone().ok_or(ProjectError::NoHome)?;
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            dir
        } else {
            env.project_dir().unwrap_or_else(|| env.cwd.clone())
        };
        Ok(Project {
            manifest_path: dir.join(MANIFEST_FILE),
            lock_path: dir.join(LOCK_FILE),
            dir,
            global,
            home: env.home.clone(),
            env_registry: std::env::var("SKILLPM_REGISTRY")
                .ok()
                .filter(|s| !s.is_empty()),
        })
    }

    /// Reads the manifest text; a missing global manifest reads as empty.
    pub fn manifest_text(&self) -> Result<String, ProjectError> {
        match bounded::read_to_string(&self.manifest_path, MAX_CONFIG_BYTES) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.global => Ok(String::new()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ProjectError::NoManifest(self.dir.clone()))
            }
            Err(e) => Err(io(&self.manifest_path)(e)),
        }
    }

    pub fn read_manifest(&self) -> Result<Manifest, ProjectError> {
        Ok(Manifest::parse(
            &self.manifest_text()?,
            &self.manifest_path,
        )?)
    }

    /// Reads the lock; a missing lock is empty.
    pub fn read_lock(&self) -> Result<Lockfile, ProjectError> {
        Ok(match self.lock_text()? {
            Some(t) => Lockfile::parse(&t, &self.lock_path)?,
            None => Lockfile::default(),
        })
    }

    /// The lock's text, `None` when there is no lock.
    pub fn lock_text(&self) -> Result<Option<String>, ProjectError> {
        match bounded::read_to_string(&self.lock_path, MAX_LOCK_BYTES) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&self.lock_path)(e)),
        }
    }

    /// Takes the project's exclusive lock: concurrent skillpm runs on one
    /// project wait for each other. The lock file lives in the cache, keyed
    /// by the project's directory, so the project holds nothing to commit
    /// or ignore, and nothing committed can redirect where it is created.
    pub fn lock(&self, cache: &Cache) -> Result<ProjectGuard, ProjectError> {
        let dir = cache.root().join("projects");
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let key = self.dir.canonicalize().unwrap_or_else(|_| self.dir.clone());
        let p = dir.join(format!("{}.lock", short_hash(&key.to_string_lossy())));
        let f = crate::fs::lock_file(&p).map_err(io(&p))?;
        Ok(ProjectGuard { _file: f })
    }

    /// The install roots, absolute, each once, in the order skills.toml
    /// names them. A target is an agent name ([`agents::AGENTS`]: its
    /// project skill directory, the shared `.agents/skills` for most) or a
    /// directory; targets that come to the same directory are one root, so
    /// `["codex", "cursor", "gemini-cli"]` is one `.agents/skills`. The
    /// first root (`.agents/skills` whenever it is a target) holds the
    /// written trees, the others link to them (`crate::install`). A
    /// project's targets come from whoever wrote its skills.toml, so each
    /// must be a relative path that stays inside the project, and a
    /// `WriteDir`: no symlink leads to it (a committed
    /// `.agents -> ~/.claude` must not redirect the writes), and it is not
    /// inside `.git`.
    pub fn targets(&self, manifest: &Manifest) -> Result<Vec<WriteDir>, ProjectError> {
        let list = manifest
            .install_targets
            .clone()
            .unwrap_or_else(|| vec![DEFAULT_TARGET.to_string()]);
        let mut out: Vec<WriteDir> = Vec::new();
        let base = self.install_base()?;
        for t in &list {
            let dir = self.target(t)?;
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
        // The shared directory, when targeted, holds the trees: it is the
        // one most agents read, so the others link to it (as vercel's
        // `skills` lays out a project too).
        let shared = base.join(agents::SHARED);
        if let Some(i) = out.iter().position(|d| d.path() == shared) {
            out[..=i].rotate_right(1);
        }
        Ok(out)
    }

    /// The directory install targets are relative to: the project's, or
    /// the home for `--global`.
    pub fn install_base(&self) -> Result<&Path, ProjectError> {
        match self.global {
            true => self.home.as_deref().ok_or(ProjectError::NoHome),
            false => Ok(&self.dir),
        }
    }

    fn target(&self, target: &str) -> Result<WriteDir, ProjectError> {
        let bad = |reason| ProjectError::BadTarget {
            target: target.to_string(),
            reason,
        };
        let dir = match agents::find(target) {
            Some(agent) if self.global => agent.user_install().ok_or_else(|| {
                bad("has no skills directory under the home directory that skillpm can install into")
            })?,
            Some(agent) => agent.install,
            // A bare word that is no agent is almost always a misspelt
            // agent; a directory of that name is written `./name`.
            None if !target.contains('/') && !target.starts_with('.') => {
                return Err(ProjectError::UnknownAgent {
                    target: target.to_string(),
                    known: agents::ids(),
                })
            }
            None => target,
        };
        let rel = Path::new(dir);
        let mut normal = 0;
        for c in rel.components() {
            match c {
                Component::Normal(_) => normal += 1,
                Component::CurDir => {}
                Component::ParentDir => return Err(bad("leaves the project (`..`)")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad("is an absolute path"))
                }
            }
        }
        if normal == 0 {
            return Err(bad("is the project directory itself"));
        }
        // The user's own manifest names directories of their home, which
        // may well be links (dotfiles): taken as the user wrote them.
        if self.global {
            let home = self.home.as_ref().ok_or(ProjectError::NoHome)?;
            let normal: PathBuf = rel.components().collect();
            return Ok(WriteDir::chosen_by_user(home.join(normal)));
        }
        // Normal components only, so `./.agents/skills` and
        // `.agents/skills` are the same root.
        WriteDir::below(&self.dir, rel).map_err(|why| ProjectError::RefusedTarget {
            target: target.to_string(),
            why,
        })
    }

    /// The registry URL for a dependency: a named registry from
    /// `[registries]`, else the default registry.
    pub fn registry_url(
        &self,
        manifest: &Manifest,
        name: Option<&str>,
    ) -> Result<String, ProjectError> {
        let url = match name {
            // `registry = "default"` is the default registry, whoever
            // names it (SKILLPM_REGISTRY, else `[registries] default`),
            // as an entry without `registry` is.
            Some(n) if n != manifest::DEFAULT_REGISTRY => manifest
                .registries
                .get(n)
                .cloned()
                .ok_or_else(|| ProjectError::UnknownRegistry(n.to_string()))?,
            _ => self.default_registry(manifest)?.0,
        };
        Ok(url.trim_end_matches('/').to_string())
    }

    /// [`Project::registry_url`], except that a dependency on the default
    /// registry which `locked` already pins to a registry keeps that one
    /// when no default is configured. The lock is the truth for where a
    /// locked skill comes from, so a lock made with only `SKILLPM_REGISTRY`
    /// set installs in CI where nothing is set. A configured default still
    /// wins (the user chose it), and a named registry must be listed.
    pub fn registry_url_or_locked(
        &self,
        manifest: &Manifest,
        name: Option<&str>,
        locked: Option<&LockedSkill>,
    ) -> Result<String, ProjectError> {
        match (self.registry_url(manifest, name), locked.map(|l| &l.source)) {
            (Err(ProjectError::NoRegistry), Some(LockedSource::Registry { url })) => {
                Ok(url.clone())
            }
            (r, _) => r,
        }
    }

    /// The default registry and who named it: `SKILLPM_REGISTRY`, else
    /// `[registries] default`. The URL is checked here, where it enters,
    /// so one carrying credentials never reaches a lock, a cache path or
    /// an error message.
    pub fn default_registry(
        &self,
        manifest: &Manifest,
    ) -> Result<(String, RegistryFrom), ProjectError> {
        if let Some(u) = &self.env_registry {
            spec::check_registry_url(u)?;
            return Ok((
                u.trim_end_matches('/').to_string(),
                RegistryFrom::Environment,
            ));
        }
        let u = manifest
            .registries
            .get("default")
            .ok_or(ProjectError::NoRegistry)?;
        Ok((u.trim_end_matches('/').to_string(), RegistryFrom::Manifest))
    }
}

/// Who named the registry a command talks to. Only a registry the user
/// named for this run may receive `SKILLPM_TOKEN`: one named by a
/// project's skills.toml was chosen by whoever wrote the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryFrom {
    /// `--registry` on the command line.
    Flag,
    /// `SKILLPM_REGISTRY`.
    Environment,
    /// `[registries]` in skills.toml.
    Manifest,
}

impl RegistryFrom {
    pub fn named_by_user(self) -> bool {
        matches!(self, RegistryFrom::Flag | RegistryFrom::Environment)
    }
}
