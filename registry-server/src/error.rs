//! The one error type handlers return, and the only place a failure
//! becomes an HTTP status.
//!
//! Every failure leaves the server as `{"errors":[{"detail":"..."}]}` with a
//! status code a client can act on; internal causes are logged here and
//! never shown to the caller (paths and SQL stay private).

use crate::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use skillpm_core::archive::UnpackError;
use skillpm_core::checksum::Checksum;
use skillpm_core::protocol::ErrorBody;
use std::error::Error as StdError;

pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Variants say what went wrong and [`ApiError::status`] alone picks the
/// code, so neither handlers nor stores choose one. A variant's text is the
/// `detail` a client sees for a 4xx; a 5xx says only "internal server
/// error" and its cause goes to the log.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A malformed path, query or body; the text says which.
    #[error("{0}")]
    BadRequest(String),
    #[error("cannot read the upload: {0}")]
    ReadBody(#[source] axum::Error),
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("no such endpoint")]
    NoEndpoint,
    #[error("method not allowed on this endpoint")]
    MethodNotAllowed,
    #[error("the upload is larger than this registry's limit of {0} bytes")]
    UploadTooLarge(u64),
    /// The audit found what blocks an install (`skillpm_core::audit`):
    /// each critical finding, one per line's worth, in the text.
    #[error("refused by the audit: {0}")]
    AuditRefused(String),
    /// The upload is not a package this registry accepts, or unpacking it
    /// failed on our side.
    #[error("package: {0}")]
    Package(#[from] UnpackError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("blob {sum} of {name}@{vers} is missing")]
    MissingBlob {
        sum: Checksum,
        name: String,
        vers: String,
    },
    /// The npm view and the marketplace give absolute URLs, which a
    /// registry knows only from `--public-url` (or the address it bound).
    #[error("this registry serves no npm packages or marketplace without an absolute URL: start it with --public-url")]
    NoPublicUrl,
    #[error("{context}")]
    Internal {
        context: String,
        #[source]
        source: BoxError,
    },
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A failure on our side; `context` says what was being done, for the
    /// log only.
    pub fn internal(context: impl Into<String>, source: impl Into<BoxError>) -> Self {
        ApiError::Internal {
            context: context.into(),
            source: source.into(),
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) | ApiError::ReadBody(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::NoEndpoint | ApiError::NoPublicUrl => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UploadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::AuditRefused(_) => StatusCode::FORBIDDEN,
            ApiError::Package(e) => unpack_status(e),
            ApiError::Store(e) => store_status(e),
            ApiError::MissingBlob { .. } | ApiError::Internal { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> Self {
        ApiError::internal("task", e)
    }
}

fn unpack_status(e: &UnpackError) -> StatusCode {
    match e {
        UnpackError::TooLarge { .. }
        | UnpackError::UnpackedTooLarge { .. }
        | UnpackError::TooManyEntries { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        UnpackError::Io { .. } | UnpackError::BadDestination { .. } => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::BAD_REQUEST,
    }
}

fn store_status(e: &StoreError) -> StatusCode {
    match e {
        StoreError::NoSkill(_) | StoreError::NoVersion { .. } | StoreError::NoUser(_) => {
            StatusCode::NOT_FOUND
        }
        StoreError::NotOwner { .. } => StatusCode::FORBIDDEN,
        StoreError::VersionExists { .. } => StatusCode::CONFLICT,
        StoreError::LastOwner(_) | StoreError::Confusable { .. } => StatusCode::BAD_REQUEST,
        StoreError::Sqlite(_)
        | StoreError::Poisoned
        | StoreError::Postgres(_)
        | StoreError::Pool(_)
        | StoreError::ObjectStore(_)
        | StoreError::Io { .. }
        | StoreError::Dir { .. }
        | StoreError::Task(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// `error: cause: cause ...` for the log. Some errors repeat their cause
/// in their own text and some do not; a cause the text already ends with
/// is not printed twice.
fn chain(e: &dyn StdError) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = if status.is_server_error() {
            eprintln!("skillpm-registry: internal error: {}", chain(&self));
            "internal server error".to_string()
        } else {
            self.to_string()
        };
        (status, Json(ErrorBody::new(detail))).into_response()
    }
}
