//! Validated skill package names.
//!
//! A package name ends up in file paths, URLs and SQL parameters, so it is
//! parsed once at the edge into [`SkillName`] and trusted everywhere after.
//! The rules are the Agent Skills `name` rules: 1–64 characters of lowercase
//! ASCII letters, digits and single hyphens, no leading or trailing hyphen.

use std::fmt;

/// Longest accepted skill name, per the Agent Skills specification.
pub const MAX_NAME_LEN: usize = 64;

/// A skill package name that satisfies the Agent Skills naming rules.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SkillName(String);

/// Why a string is not a valid [`SkillName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("name is empty")]
    Empty,
    #[error("name is {0} characters long; at most 64 are allowed")]
    TooLong(usize),
    #[error("name has invalid character {ch:?} at position {pos}; use lowercase letters, digits and hyphens")]
    BadChar { ch: char, pos: usize },
    #[error("name must not start or end with a hyphen")]
    EdgeHyphen,
    #[error("name must not contain consecutive hyphens")]
    DoubleHyphen,
}

impl SkillName {
    /// Parses and validates a name.
    pub fn new(s: &str) -> Result<Self, NameError> {
        check_name(s)?;
        Ok(SkillName(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks `s` against the naming rules without allocating.
pub fn check_name(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    let count = s.chars().count();
    if count > MAX_NAME_LEN {
        return Err(NameError::TooLong(count));
    }
    for (pos, ch) in s.chars().enumerate() {
        if !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-') {
            return Err(NameError::BadChar { ch, pos: pos + 1 });
        }
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err(NameError::EdgeHyphen);
    }
    if s.contains("--") {
        return Err(NameError::DoubleHyphen);
    }
    Ok(())
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for SkillName {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkillName::new(s)
    }
}

impl serde::Serialize for SkillName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for SkillName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SkillName::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_spec_names() {
        for ok in ["a", "code-review", "pdf2", "a-b-c", &"x".repeat(64)] {
            assert!(SkillName::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(check_name(&"x".repeat(65)), Err(NameError::TooLong(65)));
        assert_eq!(
            check_name("Code"),
            Err(NameError::BadChar { ch: 'C', pos: 1 })
        );
        assert_eq!(check_name("-a"), Err(NameError::EdgeHyphen));
        assert_eq!(check_name("a-"), Err(NameError::EdgeHyphen));
        assert_eq!(check_name("a--b"), Err(NameError::DoubleHyphen));
        assert!(check_name("../x").is_err());
        assert!(check_name("a b").is_err());
    }
}
