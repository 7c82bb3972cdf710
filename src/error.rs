//! The error type of the install pipeline: every failure is one line that
//! says what went wrong, where, and what to do next.

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
    Spec(Box<crate::spec::SpecError>),
    #[error(transparent)]
    Manifest(Box<crate::manifest::ManifestError>),
    #[error("no version of {name} matches {req} (available: {available})")]
    NoMatch {
        name: String,
        req: String,
        available: String,
    },
    #[error("{origin} holds a skill named `{found}`, but skills.toml calls it `{key}`")]
    NameMismatch {
        key: String,
        found: String,
        origin: String,
    },
    #[error("skills.lock is out of date with skills.toml: {0}; run `skillpm install` without --locked to update it")]
    LockedMismatch(String),
    #[error("{0} is not in skills.toml")]
    NotInManifest(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
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
    Spec: crate::spec::SpecError,
    Manifest: crate::manifest::ManifestError,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
