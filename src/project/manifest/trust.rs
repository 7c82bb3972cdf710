//! skills.toml's `[trust]` table: whose signatures a git dependency's
//! locked commit must carry.
//!
//! ```toml
//! [trust]
//! git-allowed-signers = ".skillpm/allowed_signers"
//! ```
//!
//! The file is git's own `gpg.ssh.allowedSignersFile` format, named
//! relative to the directory of skills.toml. It is only named here; the
//! run reads and parses it (`source::git::signing`), so that a broken
//! file is reported by the command that needs it, with its own line.

use super::{wrong_type, Ctx, ManifestError, ManifestErrorKind};
use toml_edit::Item;

/// `[trust]`: nothing set means commits are taken signed or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustPolicy {
    /// `git-allowed-signers`, as written (relative to the project
    /// directory unless absolute).
    pub git_allowed_signers: Option<String>,
}

pub(super) fn parse(
    cx: &Ctx<'_>,
    key: &toml_edit::Key,
    item: &Item,
) -> Result<TrustPolicy, ManifestError> {
    let table = item
        .as_table_like()
        .ok_or_else(|| cx.at(key, item, wrong_type("trust".into(), "a table")))?;
    let mut policy = TrustPolicy::default();
    for (name, _) in table.iter() {
        let Some((k, v)) = table.get_key_value(name) else {
            continue;
        };
        match name {
            "git-allowed-signers" => match v.as_str() {
                Some(p) if !p.trim().is_empty() && !p.chars().any(char::is_control) => {
                    policy.git_allowed_signers = Some(p.to_string())
                }
                _ => {
                    return Err(cx.at(
                        k,
                        v,
                        wrong_type(
                            "trust.git-allowed-signers".into(),
                            "the path of an allowed_signers file, like \".skillpm/allowed_signers\"",
                        ),
                    ))
                }
            },
            "git-gpg-keyring" | "gpg-keyring" | "git-gpg" => {
                return Err(cx.at(
                    k,
                    v,
                    ManifestErrorKind::Trust(format!(
                        "`trust.{name}`: GPG signatures are not checked by this build; sign with an SSH key and list it in git-allowed-signers"
                    )),
                ))
            }
            other => {
                return Err(cx.at(
                    k,
                    v,
                    ManifestErrorKind::Trust(format!(
                        "unknown key `trust.{other}`; expected git-allowed-signers"
                    )),
                ))
            }
        }
    }
    Ok(policy)
}
