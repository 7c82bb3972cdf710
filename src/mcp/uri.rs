//! `skill://` URIs: how a skill's command and a file's path inside the skill
//! become a URI, and how a URI a client sent is checked before any lookup.
//!
//! Nothing here touches the disk. A client's URI is only ever a key into
//! the served snapshot, so it cannot reach a file the snapshot does not
//! hold; the checks below exist to give hostile spellings
//! (`skill://x/../../etc/passwd`, `%2e%2e`, `%2f`, NUL) a clear refusal
//! rather than a plain "not found".

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

/// The scheme every served resource uses.
pub const SCHEME: &str = "skill://";

/// The enumeration resource in the Agent Skills discovery-index shape.
pub const INDEX_URI: &str = "skill://index.json";

/// The session's view of each skill's lifecycle ([`super::loaded`]).
pub const LIFECYCLE_URI: &str = "skill://lifecycle.json";

/// Characters a path segment cannot carry literally: RFC 3986 delimiters,
/// `%` itself, and everything outside printable ASCII (non-ASCII is always
/// encoded by `utf8_percent_encode`).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Encodes a `/`-separated path segment by segment.
pub fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The URI of the directory holding skill `command`, without a trailing slash.
pub fn skill_base(command: &str) -> String {
    format!("{SCHEME}{}", encode_path(command))
}

/// The URI of `rel` (a `/`-separated path) inside skill `command`.
pub fn file_uri(command: &str, rel: &str) -> String {
    format!("{}/{}", skill_base(command), encode_path(rel))
}

/// Why a client's URI was refused before lookup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("`{0}` is not a skill:// URI")]
    Scheme(String),
    #[error("`{0}` leaves its skill (`.` or `..` segment); paths outside a skill are refused")]
    Escapes(String),
    #[error("`{0}` is not a valid path (bad percent-encoding, NUL, backslash, query or fragment)")]
    Malformed(String),
}

/// Checks a URI a client sent and returns the canonical spelling the
/// snapshot is keyed by (each segment decoded, then re-encoded), so
/// `skill://a/%53KILL.md` finds `skill://a/SKILL.md` while every spelling
/// of `..` is refused.
pub fn canonical(uri: &str) -> Result<String, UriError> {
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| UriError::Scheme(uri.to_string()))?;
    if rest.contains(['?', '#']) {
        return Err(UriError::Malformed(uri.to_string()));
    }
    let mut out = Vec::new();
    for seg in rest.split('/') {
        let decoded = percent_decode_str(seg)
            .decode_utf8()
            .map_err(|_| UriError::Malformed(uri.to_string()))?;
        if decoded == "." || decoded == ".." {
            return Err(UriError::Escapes(uri.to_string()));
        }
        // A decoded `/` or `\` would smuggle a separator past the split;
        // NUL and other controls never name a real file.
        if decoded.contains(['/', '\\']) || decoded.chars().any(char::is_control) {
            return Err(UriError::Malformed(uri.to_string()));
        }
        out.push(utf8_percent_encode(&decoded, SEGMENT).to_string());
    }
    Ok(format!("{SCHEME}{}", out.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_segments_and_keeps_the_command_prefix() {
        assert_eq!(
            file_uri("sven/implement", "SKILL.md"),
            "skill://sven/implement/SKILL.md"
        );
        assert_eq!(
            file_uri("my skill", "a b.md"),
            "skill://my%20skill/a%20b.md"
        );
        assert_eq!(file_uri("-x", "r/%.md"), "skill://-x/r/%25.md");
    }

    #[test]
    fn canonical_refuses_every_spelling_of_dot_dot() {
        for bad in [
            "skill://x/../../etc/passwd",
            "skill://x/%2e%2e/%2E%2E/etc/passwd",
            "skill://x/./SKILL.md",
            "skill://x/.%2e/y",
        ] {
            assert!(matches!(canonical(bad), Err(UriError::Escapes(_))), "{bad}");
        }
        for bad in [
            "skill://x/a%2f..%2fb",
            "skill://x/a%00b",
            "skill://x/a%5c..",
            "skill://x/SKILL.md?x=1",
            "skill://x/%ff",
        ] {
            assert!(
                matches!(canonical(bad), Err(UriError::Malformed(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            canonical("file:///etc/passwd"),
            Err(UriError::Scheme(_))
        ));
    }

    #[test]
    fn canonical_normalises_harmless_encodings() {
        assert_eq!(
            canonical("skill://a/%53KILL.md").unwrap(),
            "skill://a/SKILL.md"
        );
        assert_eq!(
            canonical("skill://my skill/x").unwrap(),
            "skill://my%20skill/x"
        );
    }
}
