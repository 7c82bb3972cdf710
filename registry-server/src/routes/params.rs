//! Path parameters, validated before they reach a query or a file path;
//! versions are normalised so `1.0.0` and `01.0.0`-style spellings cannot
//! address different rows.

use crate::error::{ApiError, ApiResult};
use skillpm_core::name::SkillName;

pub fn parse_name(s: &str) -> ApiResult<SkillName> {
    SkillName::new(s).map_err(|e| ApiError::BadRequest(format!("invalid skill name {s:?}: {e}")))
}

/// The canonical spelling of a version given in a path.
pub fn parse_version(s: &str) -> ApiResult<String> {
    semver::Version::parse(s)
        .map(|v| v.to_string())
        .map_err(|e| ApiError::BadRequest(format!("invalid version {s:?}: {e}")))
}
