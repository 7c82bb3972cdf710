//! Registry signatures over index entries, shared by the server (which
//! signs at publish) and the client (which verifies every entry it reads),
//! so both sides build the signed bytes with the one function here.
//!
//! A registry signs, for each version, the byte string [`message`]:
//!
//! ```text
//! skillpm-index-v1\n
//! NAME\n
//! VERSION\n
//! sha256:HEX\n
//! DEP-NAME REQ\n        one line per dependency, the lines sorted bytewise
//! ```
//!
//! Every field is newline-free by construction (a [`SkillName`], a semver
//! version and requirement in their canonical `Display` form, a
//! checksum), the header lines come in a fixed order and a dependency's
//! name holds no space, so two different entries never give the same
//! bytes. The first line names the format, so a signature made for
//! anything else can never pass for one of these. The registry's URL is
//! not part of the message: a key belongs to one registry (its
//! `config.json` lists it, and the lock pins its id per registry), and a
//! registry that moves to another URL keeps its signatures valid.
//!
//! What a signature covers is exactly those fields: not `yanked` (which
//! changes without re-signing), `description`, `requires` or `published`.
//!
//! Keys are ed25519 ([`ed25519_dalek`], verified with `verify_strict`). A
//! key's id is the first 16 hex digits of the sha256 of its raw 32-byte
//! public key ([`key_id`]), so an id names one key and a client checks it
//! against the key `config.json` gives. Keys and signatures travel as
//! base64 (standard alphabet, padded).
//!
//! Everything a registry sends is untrusted: [`Keyring::new`] bounds the
//! number of keys and the length of every field before decoding, and every
//! failure is a typed error, never a panic.

use crate::checksum::Checksum;
use crate::name::SkillName;
use crate::protocol::{IndexDep, IndexVersion, PublicKey, Signature};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

pub use ed25519_dalek::{SigningKey, VerifyingKey};

/// The only algorithm this build signs and verifies with.
pub const ALGORITHM: &str = "ed25519";
/// First line of every signed message.
pub const CONTEXT: &str = "skillpm-index-v1";
/// Most keys a `config.json` may list.
pub const MAX_KEYS: usize = 64;
/// Longest key id.
pub const MAX_KEY_ID: usize = 64;
/// Longest base64 public key accepted (32 bytes are 44 characters).
const MAX_KEY_B64: usize = 64;
/// Longest base64 signature accepted (64 bytes are 88 characters).
const MAX_SIG_B64: usize = 128;
/// Longest algorithm name shown in a message.
const MAX_ALGORITHM: usize = 32;

/// The bytes a registry signs for one version: see the module docs.
pub fn message(
    name: &SkillName,
    vers: &semver::Version,
    cksum: &Checksum,
    deps: &[IndexDep],
) -> Vec<u8> {
    let mut lines: Vec<String> = deps
        .iter()
        .map(|d| format!("{} {}", d.name, d.req))
        .collect();
    lines.sort();
    let mut out = format!("{CONTEXT}\n{name}\n{vers}\n{cksum}\n");
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out.into_bytes()
}

/// [`message`] of an index entry.
pub fn message_of(v: &IndexVersion) -> Vec<u8> {
    message(&v.name, &v.vers, &v.cksum, &v.deps)
}

/// The id of an ed25519 public key: the first 16 hex digits of the sha256
/// of its 32 raw bytes.
pub fn key_id(key: &VerifyingKey) -> String {
    hex::encode(&Sha256::digest(key.as_bytes())[..8])
}

/// Whether `id` has the shape of a key id: 1 to [`MAX_KEY_ID`] lower-case
/// ASCII letters and digits (what the lock's `signed-by` may hold).
pub fn valid_key_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_KEY_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// A public key as `config.json` carries it.
pub fn encode_key(key: &VerifyingKey) -> String {
    STANDARD.encode(key.as_bytes())
}

/// The registry's signature of an entry with these fields, by `key`.
pub fn sign(
    key: &SigningKey,
    name: &SkillName,
    vers: &semver::Version,
    cksum: &Checksum,
    deps: &[IndexDep],
) -> Signature {
    use ed25519_dalek::Signer as _;
    let sig = key.sign(&message(name, vers, cksum, deps));
    Signature {
        keyid: key_id(&key.verifying_key()),
        sig: STANDARD.encode(sig.to_bytes()),
    }
}

/// Whether `sig` (base64, as an entry's `sig` carries it) is `key`'s
/// signature of `msg`: for a registry checking what it signed before,
/// with any key it ever had, revoked ones included.
pub fn verifies(key: &VerifyingKey, msg: &[u8], sig: &str) -> bool {
    if sig.len() > MAX_SIG_B64 {
        return false;
    }
    let Some(bytes) = STANDARD
        .decode(sig.as_bytes())
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
    else {
        return false;
    };
    key.verify_strict(msg, &ed25519_dalek::Signature::from_bytes(&bytes))
        .is_ok()
}

/// Decodes a base64 ed25519 public key as `config.json` carries it.
pub fn decode_public(b64: &str) -> Result<VerifyingKey, &'static str> {
    decode_key(b64)
}

/// Why a `config.json` key list is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("lists {0} keys; at most {MAX_KEYS} are accepted")]
    TooMany(usize),
    #[error("key {index}: id {id} is not 1-{MAX_KEY_ID} lower-case letters and digits")]
    BadId { index: usize, id: String },
    #[error("key {0} is listed twice")]
    Duplicate(String),
    #[error("key {id}: {reason}")]
    BadKey { id: String, reason: &'static str },
    #[error("key {id}: the id does not match the key, whose id is {expected}")]
    IdMismatch { id: String, expected: String },
}

/// Why an index entry's signature is refused. Each names the entry and
/// the key, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("{name}@{vers}: the signature by key {keyid} does not verify: the entry is not what the registry signed")]
    Invalid {
        name: String,
        vers: String,
        keyid: String,
    },
    #[error(
        "{name}@{vers} is signed by key {keyid}, which the registry's config.json does not list"
    )]
    UnknownKey {
        name: String,
        vers: String,
        keyid: String,
    },
    #[error("{name}@{vers} is signed by key {keyid}, which the registry has revoked")]
    Revoked {
        name: String,
        vers: String,
        keyid: String,
    },
    #[error("{name}@{vers} is signed by {algorithm} key {keyid}, which this skillpm cannot verify; upgrade skillpm")]
    Unsupported {
        name: String,
        vers: String,
        keyid: String,
        algorithm: String,
    },
    #[error("{name}@{vers}: malformed signature by key {keyid}: {reason}")]
    Malformed {
        name: String,
        vers: String,
        keyid: String,
        reason: &'static str,
    },
}

/// One key of a [`Keyring`].
#[derive(Debug, Clone)]
enum KeyState {
    Live(VerifyingKey),
    Revoked,
    /// Another algorithm: listed, but nothing here can verify with it.
    Unsupported(String),
}

/// A registry's keys, checked: what entries are verified against.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    keys: Vec<(String, KeyState)>,
}

/// `s` as a message may show it: at most 64 characters, quoted and
/// escaped when it is not a plain key id.
fn shown(s: &str) -> String {
    if valid_key_id(s) {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX_KEY_ID).collect();
        format!("{cut:?}")
    }
}

impl Keyring {
    /// Checks a `config.json` key list: at most [`MAX_KEYS`], ids well
    /// formed and unique, each ed25519 key 32 bytes of valid base64 that
    /// is a valid point and whose id is [`key_id`] of it.
    pub fn new(keys: &[PublicKey]) -> Result<Keyring, KeyError> {
        if keys.len() > MAX_KEYS {
            return Err(KeyError::TooMany(keys.len()));
        }
        let mut out: Vec<(String, KeyState)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            if !valid_key_id(&k.id) {
                return Err(KeyError::BadId {
                    index: i + 1,
                    id: shown(&k.id),
                });
            }
            if out.iter().any(|(id, _)| *id == k.id) {
                return Err(KeyError::Duplicate(k.id.clone()));
            }
            let state = if k.algorithm != ALGORITHM {
                KeyState::Unsupported(k.algorithm.chars().take(MAX_ALGORITHM).collect())
            } else {
                let key = decode_key(&k.key).map_err(|reason| KeyError::BadKey {
                    id: k.id.clone(),
                    reason,
                })?;
                let expected = key_id(&key);
                if expected != k.id {
                    return Err(KeyError::IdMismatch {
                        id: k.id.clone(),
                        expected,
                    });
                }
                match k.revoked {
                    Some(_) => KeyState::Revoked,
                    None => KeyState::Live(key),
                }
            };
            out.push((k.id.clone(), state));
        }
        Ok(Keyring { keys: out })
    }

    /// Whether the registry lists any key it has not revoked (so it signs).
    pub fn signs(&self) -> bool {
        self.keys
            .iter()
            .any(|(_, s)| matches!(s, KeyState::Live(_)))
    }

    /// Verifies an entry's signature: `Ok(None)` when it has none, the
    /// signing key's id when it verifies with a listed, unrevoked key.
    pub fn verify<'v>(&self, v: &'v IndexVersion) -> Result<Option<&'v str>, SignatureError> {
        let Some(sig) = &v.sig else {
            return Ok(None);
        };
        let (name, vers) = (v.name.to_string(), v.vers.to_string());
        let keyid = shown(&sig.keyid);
        let Some((_, state)) = self.keys.iter().find(|(id, _)| *id == sig.keyid) else {
            return Err(SignatureError::UnknownKey { name, vers, keyid });
        };
        let key = match state {
            KeyState::Live(key) => key,
            KeyState::Revoked => return Err(SignatureError::Revoked { name, vers, keyid }),
            KeyState::Unsupported(algorithm) => {
                return Err(SignatureError::Unsupported {
                    name,
                    vers,
                    keyid,
                    algorithm: algorithm.clone(),
                })
            }
        };
        let malformed = |reason| SignatureError::Malformed {
            name: name.clone(),
            vers: vers.clone(),
            keyid: keyid.clone(),
            reason,
        };
        if sig.sig.len() > MAX_SIG_B64 {
            return Err(malformed("longer than any ed25519 signature"));
        }
        let bytes = STANDARD
            .decode(sig.sig.as_bytes())
            .map_err(|_| malformed("not base64"))?;
        let bytes: [u8; 64] = bytes
            .try_into()
            .map_err(|_| malformed("not 64 bytes long"))?;
        let signature = ed25519_dalek::Signature::from_bytes(&bytes);
        key.verify_strict(&message_of(v), &signature)
            .map_err(|_| SignatureError::Invalid {
                name: name.clone(),
                vers: vers.clone(),
                keyid: keyid.clone(),
            })?;
        Ok(Some(sig.keyid.as_str()))
    }
}

/// A base64 ed25519 public key, refused unless it is 32 bytes that decode
/// to a point of the curve.
fn decode_key(b64: &str) -> Result<VerifyingKey, &'static str> {
    if b64.len() > MAX_KEY_B64 {
        return Err("longer than any ed25519 public key");
    }
    let bytes = STANDARD
        .decode(b64.as_bytes())
        .map_err(|_| "the key is not base64")?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| "the key is not 32 bytes long")?;
    let key = VerifyingKey::from_bytes(&bytes).map_err(|_| "not an ed25519 public key")?;
    if key.is_weak() {
        return Err("a weak ed25519 key");
    }
    Ok(key)
}

#[cfg(test)]
mod tests;
