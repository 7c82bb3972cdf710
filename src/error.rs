//! The error type of the library's commands: every failure is one line
//! that says what went wrong, where, and what to do next. Each variant
//! keeps its cause, so the CLI can print the whole chain.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Project(Box<crate::project::ProjectError>),
    #[error(transparent)]
    Source(Box<crate::source::SourceError>),
    #[error(transparent)]
    Install(Box<crate::install::InstallError>),
    #[error(transparent)]
    Cache(Box<crate::cache::CacheError>),
    #[error(transparent)]
    Spec(Box<crate::project::spec::SpecError>),
    #[error(transparent)]
    Manifest(Box<crate::project::manifest::ManifestError>),
    #[error(transparent)]
    Registry(Box<crate::source::registry::client::RegistryError>),
    #[error(transparent)]
    Credentials(Box<crate::source::registry::credentials::CredentialsError>),
    #[error(transparent)]
    Fs(Box<crate::fs::FsError>),
    #[error(transparent)]
    Dependency(Box<crate::resolve::DependencyError>),
    #[error(transparent)]
    Journal(Box<crate::install::journal::JournalError>),
    #[error(transparent)]
    Doctor(Box<crate::ops::DoctorError>),
    #[error("{skipped} of the {total} skills of {origin} cannot be installed (each named above); without --strict they are skipped")]
    Uninstallable {
        origin: String,
        skipped: usize,
        total: usize,
    },
    #[error("--skill and --all choose among the skills of a git repository (without --path) or a well-known site; this spec names one package")]
    NothingToChoose,
    #[error("--plugin chooses among the plugins of a git repository's marketplace (without --path); this spec names no git repository")]
    NoPluginsHere,
    #[error(
        "{origin}: `{first}` and `{second}` are both named `{name}`; add one of them with --path"
    )]
    SameName {
        origin: String,
        first: String,
        second: String,
        name: String,
    },
    #[error("`{name}`: {source}")]
    BadName {
        name: String,
        #[source]
        source: skillpm_core::name::NameError,
    },
    #[error("skills.lock is out of date with skills.toml: {detail}; run `skillpm install` without {flag} to update it")]
    LockedMismatch { detail: String, flag: &'static str },
    #[error("{0} is not in skills.toml")]
    NotInManifest(String),
    #[error("{0} is not in skills.lock; run `skillpm install` first if it should be")]
    NotInstalled(String),
    /// `add` of skills that skills.toml has from elsewhere.
    #[error("{listing}; add --replace to take {} from the new source instead", if *.count == 1 { "it" } else { "them" })]
    WouldReplace { count: usize, listing: String },
    /// `add --registry` with a spec that names no registry skill.
    #[error("--registry {registry} applies to registry skills (`NAME[@REQ]`), not `{spec}`; add it without --registry")]
    RegistryNotForSpec { registry: String, spec: String },
    /// `add PATH` of a directory that holds no skill.
    #[error("`{path}` is not a skill directory: {reason}")]
    NotSkillDir { path: String, reason: &'static str },
    #[error("{} already exists", .0.display())]
    AlreadyExists(PathBuf),
    #[error("{} cannot be published: {why}", dir.display())]
    NotPublishable { dir: PathBuf, why: String },
    #[error("{}: {detail}", path.display())]
    BadImport { path: PathBuf, detail: String },
    #[error(transparent)]
    AuditScan(#[from] skillpm_core::audit::ScanError),
    #[error("{0}")]
    NothingToAudit(String),
    /// The install gate: a critical finding nobody accepted.
    #[error("refusing to install {skill}: {rule} (critical) at {file}:{line}: {message}{more}; if you have reviewed it, pass --allow {rule}@{skill} or waive it in skills.toml [audit.waive]")]
    AuditBlocked {
        skill: String,
        rule: &'static str,
        file: String,
        line: usize,
        message: String,
        more: String,
    },
    #[error("no cache directory: set XDG_CACHE_HOME or HOME")]
    NoCacheDir,
    #[error("no config directory: set HOME")]
    NoConfigDir,
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("internal: {0} was not prepared")]
    NotPrepared(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The wrapped errors are boxed so `Result<T, Error>` stays small.
macro_rules! boxed_from {
    ($($variant:ident: $ty:ty),* $(,)?) => {$(
        impl From<$ty> for Error {
            fn from(e: $ty) -> Self {
                Error::$variant(Box::new(e))
            }
        }
    )*};
}

boxed_from! {
    Project: crate::project::ProjectError,
    Source: crate::source::SourceError,
    Install: crate::install::InstallError,
    Cache: crate::cache::CacheError,
    Spec: crate::project::spec::SpecError,
    Manifest: crate::project::manifest::ManifestError,
    Registry: crate::source::registry::client::RegistryError,
    Credentials: crate::source::registry::credentials::CredentialsError,
    Fs: crate::fs::FsError,
    Journal: crate::install::journal::JournalError,
    Doctor: crate::ops::DoctorError,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
