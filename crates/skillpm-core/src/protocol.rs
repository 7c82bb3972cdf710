//! Wire types of the registry protocol, shared by the client and
//! `skillpm-registry` so the two can never drift apart.
//!
//! The shapes follow Cargo's sparse index and crates.io's web API where a
//! counterpart exists (`vers`, `cksum`, `yanked`, `{"errors":[{"detail"}]}`),
//! so anyone who knows those protocols can read ours. Unknown fields are
//! ignored on read, which lets the server add fields without breaking older
//! clients.

use crate::checksum::Checksum;
use crate::name::SkillName;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `GET /config.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryConfig {
    /// Base of download URLs: `{dl}/{name}/{version}/download`.
    pub dl: String,
    /// Base of the web API: `{api}/api/v1/...`.
    pub api: String,
    #[serde(rename = "auth-required", default)]
    pub auth_required: bool,
    /// The public keys index entries are signed with (see
    /// [`crate::signing`]), current and past, revoked ones marked. Absent
    /// from a registry that does not sign.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<PublicKey>,
}

/// One signing key of a registry, as `config.json` lists it. Untrusted
/// like everything a registry sends: [`crate::signing::Keyring::new`]
/// checks every field before a key is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKey {
    /// The key id entries name in their `sig`: for ed25519 the first 16
    /// hex digits of the sha256 of the raw public key
    /// ([`crate::signing::key_id`]).
    pub id: String,
    /// `ed25519`; a key of another algorithm is listed but cannot verify
    /// anything for this client.
    pub algorithm: String,
    /// The raw public key, base64 (standard alphabet, padded).
    pub key: String,
    /// RFC 3339 time the key was made; informative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// RFC 3339 time the key was revoked: an entry signed by it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

/// The registry's signature over an index entry's name, version,
/// checksum and dependencies ([`crate::signing::message`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The id of the key in `config.json` that made it.
    pub keyid: String,
    /// The signature, base64 (standard alphabet, padded).
    pub sig: String,
}

/// `POST /api/v1/yanked`: of the versions named, which are yanked. A
/// locked install asks this once per [`MAX_YANKED_QUERY`] packages
/// instead of reading one index per package only to warn about yanks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YankedQuery {
    pub packages: Vec<PackageVersion>,
}

/// The answer to a [`YankedQuery`]: the yanked ones among the versions
/// asked about, sorted; a name the registry does not know is left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YankedReply {
    pub yanked: Vec<PackageVersion>,
}

/// One version of one package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PackageVersion {
    pub name: SkillName,
    pub vers: semver::Version,
}

/// Most packages one [`YankedQuery`] may name.
pub const MAX_YANKED_QUERY: usize = 1000;

/// `GET /index/{name}`: every version of one package.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexFile {
    pub name: SkillName,
    pub versions: Vec<IndexVersion>,
}

/// One published version as the index lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexVersion {
    pub name: SkillName,
    pub vers: semver::Version,
    /// sha256 of the tarball, computed by the server, never the publisher.
    pub cksum: Checksum,
    #[serde(default)]
    pub yanked: bool,
    #[serde(default)]
    pub description: String,
    /// The frontmatter `requires` block as published (eligibility hints).
    #[serde(default)]
    pub requires: Map<String, Value>,
    /// Skill-to-skill dependencies: registry packages of the same
    /// registry, from the version's `skill.toml`.
    #[serde(default)]
    pub deps: Vec<IndexDep>,
    /// RFC 3339 publication time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// The registry's signature over `name`, `vers`, `cksum` and `deps`;
    /// absent from a registry that does not sign (and left out of the
    /// JSON then, so the index reads as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<Signature>,
    /// What the registry's audit found in this version (rules that did
    /// not refuse it at publish, or a later `skillpm-registry rescan`).
    /// Absent when it found nothing or never scanned the version; not
    /// covered by `sig`, since a re-scan with newer rules may change it.
    /// Read leniently: a malformed value reads as absent rather than
    /// making the whole entry unreadable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub audit: Option<AuditSummary>,
}

/// The registry's audit of one version, kept small: counts per severity
/// over every finding, and the first findings (most severe first) without
/// their messages or excerpts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditSummary {
    #[serde(default)]
    pub counts: AuditCounts,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<AuditNote>,
    /// Findings counted but not listed (the list is capped).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u64,
}

/// Findings per severity (`skillpm_core::audit::Severity`); zero counts
/// are left out of the JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditCounts {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub critical: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub error: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warning: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub note: u64,
}

impl AuditCounts {
    pub fn total(&self) -> u64 {
        self.critical + self.error + self.warning + self.note
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Counts one finding of `severity` (`note`, `warning`, `error`,
    /// `critical`; anything else is not counted).
    pub fn add(&mut self, severity: &str) {
        match severity {
            "critical" => self.critical += 1,
            "error" => self.error += 1,
            "warning" => self.warning += 1,
            "note" => self.note += 1,
            _ => {}
        }
    }

    /// `1 critical, 2 errors, 1 warning`: the non-zero counts, most
    /// severe first; empty when there are none.
    pub fn phrase(&self) -> String {
        let mut parts = Vec::new();
        for (n, one, many) in [
            (self.critical, "critical", "critical"),
            (self.error, "error", "errors"),
            (self.warning, "warning", "warnings"),
            (self.note, "note", "notes"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        parts.join(", ")
    }
}

/// One listed finding: the rule's id, its severity (as text, so a newer
/// registry's severity names do not break older clients), and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditNote {
    pub rule: String,
    pub severity: String,
    pub file: String,
    #[serde(default)]
    pub line: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `Some` when the value reads as `T`, `None` when it does not.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// A dependency of a published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexDep {
    pub name: SkillName,
    pub req: semver::VersionReq,
}

/// `PUT /api/v1/skills/new` success body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishResponse {
    pub name: SkillName,
    pub vers: semver::Version,
    pub cksum: Checksum,
}

/// `GET /api/v1/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResults {
    pub skills: Vec<SearchHit>,
    pub meta: SearchMeta,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub name: SkillName,
    pub max_version: semver::Version,
    pub description: String,
    /// The registry's audit findings in `max_version`, per severity;
    /// absent when there are none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub audit: Option<AuditCounts>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchMeta {
    /// Matches in total, before `per_page` cut the list.
    pub total: u64,
}

/// `GET /api/v1/skills/{name}/owners`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerList {
    pub users: Vec<Owner>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub login: String,
}

/// Body of `PUT`/`DELETE /api/v1/skills/{name}/owners`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnersChange {
    pub users: Vec<String>,
}

/// `{"ok": true}` of yank, unyank and owner changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OkResponse {
    pub ok: bool,
}

/// Every error response: `{"errors":[{"detail":"..."}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub errors: Vec<ErrorDetail>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub detail: String,
}

impl ErrorBody {
    pub fn new(detail: impl Into<String>) -> Self {
        ErrorBody {
            errors: vec![ErrorDetail {
                detail: detail.into(),
            }],
        }
    }

    /// All details joined into one line, for one-line error messages.
    pub fn joined(&self) -> String {
        self.errors
            .iter()
            .map(|e| e.detail.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Whether `user` is an acceptable login: it is stored, echoed in JSON and
/// shown in terminals, so keep it to a plain identifier.
pub fn valid_login(user: &str) -> bool {
    !user.is_empty()
        && user.len() <= 64
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str = r#"{"name":"a","vers":"1.0.0","cksum":"sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"}"#;

    #[test]
    fn audit_is_optional_both_ways() {
        let old: IndexVersion = serde_json::from_str(ENTRY).unwrap();
        assert_eq!(old.audit, None);
        assert!(!serde_json::to_string(&old).unwrap().contains("audit"));

        let with = ENTRY.replace(
            "}",
            r#","audit":{"counts":{"error":1},"findings":[{"rule":"pipe-to-shell","severity":"error","file":"SKILL.md","line":3}],"future":1}}"#,
        );
        let v: IndexVersion = serde_json::from_str(&with).unwrap();
        let a = v.audit.unwrap();
        assert_eq!(a.counts.error, 1);
        assert_eq!(a.counts.phrase(), "1 error");
        assert_eq!(a.findings[0].rule, "pipe-to-shell");

        let bad = ENTRY.replace("}", r#","audit":"nonsense"}"#);
        let v: IndexVersion = serde_json::from_str(&bad).unwrap();
        assert_eq!(v.audit, None);
    }

    #[test]
    fn counts_phrase_most_severe_first() {
        let c = AuditCounts {
            critical: 1,
            error: 0,
            warning: 2,
            note: 1,
        };
        assert_eq!(c.phrase(), "1 critical, 2 warnings, 1 note");
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"critical":1,"warning":2,"note":1}"#
        );
    }
}
