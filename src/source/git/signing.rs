//! Signed commits: skills.toml's `[trust] git-allowed-signers` names an
//! allowed_signers file (git's `gpg.ssh.allowedSignersFile` format), and
//! every locked commit of a git dependency must carry an SSH signature
//! (`gpgsig`, `-----BEGIN SSH SIGNATURE-----`, namespace `git`) by one of
//! its keys.
//!
//! Parsing the file and checking the signature happen here, in process:
//! the signature is decoded and verified by RustCrypto's `ssh-key`, over
//! the commit object without its `gpgsig` header (gitoxide splits the
//! two). Nothing is asked of `ssh-keygen`, `gpg` or the user's git
//! configuration.
//!
//! What a line may hold: principals (comma-separated, quoted or not),
//! then optionally `namespaces="..."` (honoured: it must allow `git`),
//! then the key type, the base64 key and a comment. `cert-authority`,
//! `valid-after` and `valid-before` are refused with their line rather
//! than ignored: taking a certificate authority for a plain key, or
//! dropping an expiry, would accept signatures the file means to refuse.
//! Every key type ssh-keygen makes verifies: ed25519, RSA (git signs with
//! rsa-sha2-512) and ECDSA P-256, P-384 and P-521. GPG signatures are
//! recognised and refused.

use ssh_key::{HashAlg, PublicKey, SshSig};
use std::fmt;

/// The namespace git signs commits in.
const NAMESPACE: &str = "git";

/// The most an allowed_signers file may hold.
pub const MAX_ALLOWED_SIGNERS_BYTES: u64 = 1 << 20;

/// The keys an allowed_signers file lists.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    signers: Vec<Signer>,
}

#[derive(Debug, Clone)]
struct Signer {
    principals: Vec<String>,
    /// `namespaces="..."`, when given.
    namespaces: Option<Vec<String>>,
    key: PublicKey,
}

/// A line of the file that cannot be read, with its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl AllowedSigners {
    /// Parses the text of an allowed_signers file. Blank lines and lines
    /// starting with `#` are skipped; any other line that is not a signer
    /// is an error naming its line.
    pub fn parse(text: &str) -> Result<AllowedSigners, LineError> {
        let mut signers = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let signer = parse_line(line).map_err(|message| LineError {
                line: i + 1,
                message,
            })?;
            signers.push(signer);
        }
        Ok(AllowedSigners { signers })
    }

    pub fn is_empty(&self) -> bool {
        self.signers.is_empty()
    }

    /// Checks the raw commit object `data` (as git stores it, without the
    /// `commit <size>` prefix): it must carry an SSH signature in the
    /// `git` namespace by a listed key that the key's line allows for
    /// `git`. What signed it: `principals (SHA256:fingerprint)`.
    pub fn check(&self, data: &[u8]) -> Result<String, Refusal> {
        let (signature, signed) = gix::objs::CommitRefIter::signature(data, gix::hash::Kind::Sha1)
            .map_err(|e| Refusal::Unreadable(format!("does not parse as a commit: {e}")))?
            .ok_or(Refusal::Unsigned)?;
        let signature: &[u8] = signature.as_ref();
        let text = String::from_utf8_lossy(signature);
        let text = text.trim();
        if text.starts_with("-----BEGIN PGP SIGNATURE-----") {
            return Err(Refusal::Gpg);
        }
        if !text.starts_with("-----BEGIN SSH SIGNATURE-----") {
            return Err(Refusal::Unreadable(
                "has a signature that is neither SSH nor GPG".into(),
            ));
        }
        let sig = SshSig::from_pem(text.as_bytes()).map_err(|e| {
            Refusal::Unreadable(format!("has an SSH signature that does not parse: {e}"))
        })?;
        let fingerprint = sig.public_key().fingerprint(HashAlg::Sha256).to_string();
        let listed: Vec<&Signer> = self
            .signers
            .iter()
            .filter(|s| s.key.key_data() == sig.public_key())
            .collect();
        if listed.is_empty() {
            return Err(Refusal::NotAllowed { fingerprint });
        }
        let Some(signer) = listed.iter().find(|s| s.allows(NAMESPACE)) else {
            return Err(Refusal::Namespace { fingerprint });
        };
        if sig.namespace() != NAMESPACE {
            return Err(Refusal::Bad {
                fingerprint,
                detail: format!(
                    "it was made for the namespace `{}`, not `git`",
                    sig.namespace()
                ),
            });
        }
        let message = signed.to_bstring();
        signer
            .key
            .verify(NAMESPACE, message.as_ref(), &sig)
            .map_err(|e| Refusal::Bad {
                fingerprint: fingerprint.clone(),
                detail: e.to_string(),
            })?;
        Ok(format!("{} ({fingerprint})", signer.principals.join(",")))
    }
}

impl Signer {
    fn allows(&self, namespace: &str) -> bool {
        self.namespaces
            .as_ref()
            .is_none_or(|n| n.iter().any(|x| x == namespace))
    }
}

/// Why a commit's signature is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("is not signed")]
    Unsigned,
    #[error("is signed with GPG; only SSH signatures are checked")]
    Gpg,
    #[error("{0}")]
    Unreadable(String),
    #[error("is signed by {fingerprint}, which the allowed signers do not list")]
    NotAllowed { fingerprint: String },
    #[error("is signed by {fingerprint}, whose line in the allowed signers does not allow the `git` namespace")]
    Namespace { fingerprint: String },
    #[error("has a signature by {fingerprint} that does not verify: {detail}")]
    Bad { fingerprint: String, detail: String },
}

/// One signer line: principals, options, key type, key, comment.
fn parse_line(line: &str) -> Result<Signer, String> {
    let (principals, rest) = word(line)?;
    // A pattern list, quoted or not: quotes only keep spaces in.
    let principals: Vec<String> = unquote(&principals)
        .split(',')
        .map(|p| p.trim().to_string())
        .collect();
    if principals.iter().any(|p| p.is_empty()) {
        return Err("an empty principal".into());
    }
    if principals
        .iter()
        .any(|p| p.chars().any(|c| c.is_control() || c == '(' || c == ')'))
    {
        return Err("a principal with a control character or parenthesis".into());
    }
    const FORMAT: &str = "expected PRINCIPALS [OPTIONS] KEYTYPE BASE64KEY [COMMENT]";
    let (mut next, mut rest) = word(rest)?;
    if next.is_empty() {
        return Err(FORMAT.into());
    }
    let mut namespaces = None;
    if !is_key_type(&next) {
        for option in split_unquoted(&next, ',') {
            let (name, value) = match option.split_once('=') {
                Some((n, v)) => (n.trim().to_ascii_lowercase(), Some(unquote(v.trim()))),
                None => (option.trim().to_ascii_lowercase(), None),
            };
            match (name.as_str(), value) {
                ("namespaces", Some(v)) => {
                    namespaces = Some(v.split(',').map(|n| n.trim().to_string()).collect())
                }
                ("cert-authority", _) => {
                    return Err(
                        "cert-authority is not supported; list each signer's own key".into(),
                    )
                }
                ("valid-after" | "valid-before", _) => {
                    return Err(format!(
                        "{name} is not supported; remove the line of a key that is no longer valid"
                    ))
                }
                (other, _) => return Err(format!("unknown option `{other}`")),
            }
        }
        (next, rest) = word(rest)?;
    }
    let (key, _comment) = word(rest)?;
    if next.is_empty() || key.is_empty() {
        return Err(FORMAT.into());
    }
    let key = PublicKey::from_openssh(&format!("{next} {key}"))
        .map_err(|e| format!("the {next} key does not parse: {e}"))?;
    Ok(Signer {
        principals,
        namespaces,
        key,
    })
}

/// Whether `s` names an SSH key type rather than options.
fn is_key_type(s: &str) -> bool {
    s.starts_with("ssh-") || s.starts_with("ecdsa-") || s.starts_with("sk-")
}

/// The first whitespace-separated word of `s` (double quotes keep
/// whitespace inside), and what follows it.
fn word(s: &str) -> Result<(String, &str), String> {
    let s = s.trim_start();
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return Ok((s[..i].to_string(), &s[i..])),
            _ => {}
        }
    }
    if quoted {
        return Err("an unterminated quote".into());
    }
    Ok((s.to_string(), ""))
}

/// `s` split at each `sep` outside double quotes.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut quoted, mut start) = (false, 0);
    for (i, c) in s.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            out.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&s[start..]);
    out
}

fn unquote(s: &str) -> String {
    s.replace('"', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILM+rvN+ot98qgEN796jTiQfZfG1KaT0PtFDJ/XFSqti";

    #[test]
    fn allowed_signers_lines_with_quotes_options_and_comments() {
        let text = format!(
            "# the team\n\n\
             alice@example.com {KEY} alice's laptop\n\
             \"bob@example.com,carol@example.com\" namespaces=\"git,file\" {KEY}\n\
             dave@example.com,\"eve @example.com\" {KEY}\n   # indented comment\n"
        );
        let signers = AllowedSigners::parse(&text).unwrap();
        let s = &signers.signers;
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].principals, ["alice@example.com"]);
        assert_eq!(s[0].namespaces, None);
        assert_eq!(s[1].principals, ["bob@example.com", "carol@example.com"]);
        assert_eq!(
            s[1].namespaces.as_deref(),
            Some(&["git".to_string(), "file".to_string()][..])
        );
        assert!(s[1].allows("git"));
        assert_eq!(s[2].principals, ["dave@example.com", "eve @example.com"]);
    }

    #[test]
    fn bad_allowed_signers_lines_name_their_line() {
        for (line, wanted) in [
            (format!("a@b cert-authority {KEY}"), "cert-authority"),
            (format!("a@b valid-after=\"20240101\" {KEY}"), "valid-after"),
            (format!("a@b frobnicate {KEY}"), "unknown option"),
            ("a@b ssh-ed25519 AAAAnotakey".to_string(), "does not parse"),
            ("a@b".to_string(), "expected PRINCIPALS"),
            (format!("\"a@b {KEY}"), "unterminated quote"),
            (format!(",a@b {KEY}"), "empty principal"),
        ] {
            let text = format!(
                "# ok\n{KEY_LINE}\n{line}\n",
                KEY_LINE = format_args!("x@y {KEY}")
            );
            let e = AllowedSigners::parse(&text).unwrap_err();
            assert_eq!(e.line, 3, "{line}: {e}");
            assert!(e.message.contains(wanted), "{line}: {e}");
        }
    }

    #[test]
    fn a_namespace_list_without_git_does_not_allow_git() {
        let s = AllowedSigners::parse(&format!("a@b namespaces=\"file\" {KEY}")).unwrap();
        assert!(!s.signers[0].allows("git"));
    }

    #[test]
    fn unsigned_and_gpg_signed_commits_are_refused() {
        let signers = AllowedSigners::parse(&format!("a@b {KEY}")).unwrap();
        let commit = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n";
        assert_eq!(signers.check(commit), Err(Refusal::Unsigned));
        let gpg = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nm\n";
        assert_eq!(signers.check(gpg), Err(Refusal::Gpg));
    }
}
