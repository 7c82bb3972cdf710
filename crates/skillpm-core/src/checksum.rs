//! `sha256:<hex>` checksums.
//!
//! Checksums come from lockfiles and registry indexes, both untrusted, so the
//! textual form is parsed once into [`Checksum`]; comparing two values can
//! then never be fooled by case or prefix differences.

use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Read;

/// A SHA-256 digest, printed as `sha256:<64 lowercase hex digits>`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Checksum([u8; 32]);

/// Bytes and their sha256. Every constructor hashes, so whatever takes a
/// `Verified` (the cache, the installer) holds the true checksum of what
/// it holds: [`Verified::check`] compares it with an expected one;
/// [`Verified::of`] is for bytes made in this process (a packed tree),
/// whose checksum then names them in the lock and is compared, not
/// computed again. The bytes are shared, not copied, when a `Verified`
/// is cloned: a resolved package is held by the resolver's memo, the
/// lock's resolution and the installer at once, and copying every tree
/// three times cost an add of 100 git skills ~1 100 page faults.
#[derive(Debug, Clone)]
pub struct Verified {
    checksum: Checksum,
    bytes: bytes::Bytes,
}

impl Verified {
    /// Hashes bytes made in this process.
    pub fn of(bytes: Vec<u8>) -> Verified {
        Verified {
            checksum: Checksum::of_bytes(&bytes),
            bytes: bytes.into(),
        }
    }

    /// Hashes `bytes`; `Err(actual)` when they are not `expected`.
    pub fn check(bytes: Vec<u8>, expected: &Checksum) -> Result<Verified, Checksum> {
        let v = Verified::of(bytes);
        if v.checksum != *expected {
            return Err(v.checksum);
        }
        Ok(v)
    }

    pub fn checksum(&self) -> &Checksum {
        &self.checksum
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid checksum {0:?}: expected `sha256:` followed by 64 hex digits")]
pub struct ChecksumError(pub String);

impl Checksum {
    /// Hashes a byte slice.
    pub fn of_bytes(data: &[u8]) -> Self {
        Checksum(Sha256::digest(data).into())
    }

    /// Hashes everything a reader yields.
    pub fn of_reader<R: Read>(mut r: R) -> std::io::Result<Self> {
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(Checksum(h.finalize().into()))
    }

    pub fn from_digest(bytes: [u8; 32]) -> Self {
        Checksum(bytes)
    }

    /// Parses `sha256:<hex>`; a bare 64-digit hex string is accepted too,
    /// because that is what `sha256sum` and Cargo's `cksum` print.
    pub fn parse(s: &str) -> Result<Self, ChecksumError> {
        let hexpart = s.strip_prefix("sha256:").unwrap_or(s);
        if hexpart.len() != 64 {
            return Err(ChecksumError(s.to_string()));
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(hexpart, &mut out).map_err(|_| ChecksumError(s.to_string()))?;
        Ok(Checksum(out))
    }

    /// The 64 lowercase hex digits, used as a cache key and file name.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Checksum {
    type Err = ChecksumError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Checksum::parse(s)
    }
}

impl serde::Serialize for Checksum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Checksum {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Checksum::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clone names the same bytes: the resolver, the lock's resolution
    /// and the installer hold one tree, not three copies of it.
    #[test]
    fn a_verified_clone_shares_its_bytes() {
        let v = Verified::of(vec![7u8; 4096]);
        let c = v.clone();
        assert_eq!(c.bytes().as_ptr(), v.bytes().as_ptr());
        assert_eq!(c.checksum(), v.checksum());
        assert_eq!(*v.checksum(), Checksum::of_bytes(&[7u8; 4096]));
    }

    #[test]
    fn round_trips_and_matches_sha256sum() {
        let c = Checksum::of_bytes(b"abc");
        let s = c.to_string();
        assert_eq!(
            s,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Checksum::parse(&s).ok(), Some(c));
        assert_eq!(Checksum::parse(&s[7..]).ok(), Some(c));
        assert_eq!(Checksum::of_reader(&b"abc"[..]).ok(), Some(c));
    }

    #[test]
    fn rejects_garbage() {
        assert!(Checksum::parse("sha256:zz").is_err());
        assert!(Checksum::parse("md5:00").is_err());
        assert!(Checksum::parse(&format!("sha256:{}", "g".repeat(64))).is_err());
    }
}
