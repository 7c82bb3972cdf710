//! skillpm-core: what the `skillpm` client and the `skillpm-registry`
//! server must agree on, and nothing that speaks HTTP.
//!
//! A package is only trusted if both sides read it the same way, so the
//! name rules, checksums, the archive format and its hardened unpacker, the
//! `SKILL.md` parser and validator, and the registry's wire types live here
//! once, and each binary links exactly this much of the other.

pub mod archive;
pub mod audit;
pub mod bounded;
pub mod checksum;
pub mod fingerprint;
pub mod name;
pub mod platform;
pub mod protocol;
pub mod publish;
pub mod signing;
pub mod skill;
pub mod text;
pub mod validate;

pub use checksum::Checksum;
pub use name::SkillName;
