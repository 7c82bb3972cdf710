//! Where the engine looks, and what the user switched off.
//!
//! The engine reads only the `[engine]` table of the project's `skills.toml`
//! and of the user config (`$XDG_CONFIG_HOME/skillpm/config.toml`); the rest
//! of those files belongs to the installer. Everything the process
//! environment contributes (home, PATH, variables, OS) is captured once in
//! [`Environment`] so tests can build it explicitly and results are
//! reproducible. It is also the run's context: it owns the run's worker
//! threads ([`Workers`]), so nothing a run holds lives in a static.

use crate::parallel::Workers;
use crate::tools::{HostTools, ToolPolicy, ToolValidation};
use serde::Deserialize;
use skillpm_core::platform::UserDirs;
use skillpm_core::text::line_of;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The project manifest's file name; its directory is the project.
pub const MANIFEST_FILE: &str = "skills.toml";

/// Everything the engine needs from the outside world, and the run's
/// worker threads.
#[derive(Debug, Clone)]
pub struct Environment {
    /// The home directory (`%USERPROFILE%` on Windows).
    pub home: Option<PathBuf>,
    /// The skillpm user config directory (`$XDG_CONFIG_HOME/skillpm`,
    /// `%APPDATA%\skillpm` on Windows).
    pub config_dir: Option<PathBuf>,
    /// The XDG config directory (`$XDG_CONFIG_HOME`, else `~/.config`),
    /// where some agents keep their skills on every platform.
    pub xdg_config: Option<PathBuf>,
    /// Windows' `%APPDATA%`; `None` elsewhere.
    pub app_data: Option<PathBuf>,
    pub cwd: PathBuf,
    /// The project directory given with `-C`, if any.
    pub project_override: Option<PathBuf>,
    pub path_var: Option<OsString>,
    /// Names of environment variables that are set and non-empty.
    pub env_set: BTreeSet<String>,
    /// `std::env::consts::OS` spelling: `linux`, `macos`, `windows`, ...
    pub os: String,
    /// The binaries an embedder declares available; `None` searches
    /// `path_var` as a shell would.
    pub bins: Option<BTreeSet<String>>,
    /// The host's tools given on the command line (`status --tools`);
    /// `None` falls back to `[engine] tools`.
    pub tools: Option<Vec<String>>,
    /// The run's worker threads, shared by every clone of this
    /// environment: the catalog's parsing (and the installer's packing
    /// and staging) share them.
    pub workers: Workers,
}

impl Environment {
    /// Captures the current process's environment.
    pub fn from_process(project_override: Option<PathBuf>) -> std::io::Result<Self> {
        let dirs = UserDirs::of_process();
        let env_set = std::env::vars_os()
            .filter(|(_, v)| !v.is_empty())
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        let cwd = std::env::current_dir()?;
        // `-C DIR` names a project that must exist, as `cargo -C` and
        // `git -C` require; silently using another directory would act on
        // the wrong project.
        if let Some(p) = &project_override {
            let dir = cwd.join(p);
            if !dir.is_dir() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("-C {}: no such directory", dir.display()),
                ));
            }
        }
        Ok(Environment {
            home: dirs.home,
            config_dir: dirs.config,
            xdg_config: dirs.xdg_config,
            app_data: dirs.app_data,
            cwd,
            project_override,
            path_var: std::env::var_os("PATH"),
            env_set,
            os: std::env::consts::OS.to_string(),
            bins: None,
            tools: None,
            workers: Workers::new(),
        })
    }

    /// The same environment with the host's tools given on the command
    /// line (`None` leaves `[engine] tools` in charge).
    pub fn with_tools(mut self, tools: Option<Vec<String>>) -> Self {
        if tools.is_some() {
            self.tools = tools;
        }
        self
    }

    /// An environment that reads nothing from the process or the disk:
    /// no home, no config, no project, no binaries, no variables, this OS,
    /// a worker thread per core (at most eight). An embedder fills in what its host offers ([`Self::bins`],
    /// [`Self::env_set`], [`Self::tools`], [`Self::os`]) and builds a
    /// catalog with [`crate::catalog::Catalog::from_roots`].
    pub fn isolated() -> Self {
        Environment {
            home: None,
            config_dir: None,
            xdg_config: None,
            app_data: None,
            cwd: PathBuf::from("/"),
            project_override: None,
            path_var: None,
            env_set: BTreeSet::new(),
            os: std::env::consts::OS.to_string(),
            bins: Some(BTreeSet::new()),
            tools: None,
            workers: Workers::new(),
        }
    }

    /// The project directory: `-C` if given, else the nearest ancestor of
    /// the working directory holding `skills.toml`. `None` means "no
    /// project"; the working directory then stands in for project roots.
    pub fn project_dir(&self) -> Option<PathBuf> {
        if let Some(p) = &self.project_override {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                self.cwd.join(p)
            };
            return Some(p);
        }
        self.cwd
            .ancestors()
            .find(|d| d.join(MANIFEST_FILE).is_file())
            .map(Path::to_path_buf)
    }

    /// The directory whose `.agents/skills` etc. are the project roots.
    pub fn project_base(&self) -> PathBuf {
        self.project_dir().unwrap_or_else(|| self.cwd.clone())
    }

    pub fn user_config_file(&self) -> Option<PathBuf> {
        self.config_dir.as_ref().map(|d| d.join("config.toml"))
    }
}

/// The `[engine]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct EngineTable {
    pub roots: Vec<String>,
    pub disabled: Vec<String>,
    /// The host's tools, checked against each skill's tool references.
    pub tools: Option<Vec<String>>,
    /// What a missing tool does (see [`crate::tools`]).
    pub tool_validation: Option<ToolValidation>,
    /// Honoured in the user's own config only: a project's roots (its
    /// `[engine] roots`, and `.agents/skills` or `.claude/skills` when a
    /// link) may lead outside the project. Off by default, because a
    /// project's files come from whoever wrote the repository.
    pub trust_project_roots: bool,
}

/// The tool policy from config: the project's `[engine]` table over the
/// user's, key by key, and [`Environment::tools`] (`--tools`) over both.
/// A file that cannot be read is an error here as it is for discovery.
pub fn tool_policy(env: &Environment) -> Result<ToolPolicy, ConfigError> {
    let mut tools = None;
    let mut validation = None;
    let files = [
        env.user_config_file(),
        env.project_dir().map(|p| p.join(MANIFEST_FILE)),
    ];
    for file in files.into_iter().flatten() {
        let t = read_engine_table(&file)?;
        tools = t.tools.or(tools);
        validation = t.tool_validation.or(validation);
    }
    let tools = env.tools.clone().or(tools);
    Ok(ToolPolicy {
        host: tools.map(HostTools::new),
        validation: validation.unwrap_or_default(),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FileWithEngine {
    engine: EngineTable,
}

/// A config file that exists but cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

/// Largest `skills.toml` or `config.toml` read; a project's manifest comes
/// from whoever wrote the repository.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Reads the `[engine]` table of a TOML file; a missing file is empty.
pub fn read_engine_table(file: &Path) -> Result<EngineTable, ConfigError> {
    let text = match skillpm_core::bounded::read_to_string(file, MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(EngineTable::default()),
        Err(e) => {
            return Err(ConfigError {
                file: file.to_path_buf(),
                line: 1,
                message: e.to_string(),
            })
        }
    };
    toml::from_str::<FileWithEngine>(&text)
        .map(|f| f.engine)
        .map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: line_of(&text, e.span().map(|s| s.start).unwrap_or(0)),
            message: e.message().to_string(),
        })
}

/// Expands `~/` and makes `p` absolute against `base`.
pub fn resolve_path(p: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (p.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}
