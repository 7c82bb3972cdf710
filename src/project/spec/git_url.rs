//! Git URLs and refs: the transports the allowlist accepts, checked for
//! option injection, with credentials redacted wherever they are shown.

use super::{check_chars, is_local_ip, looks_scp, mask_userinfo, SpecError};
use std::fmt;

/// A git revision selector.
///
/// A spec cannot tell a tag from a branch, so it yields `Unspecified` and
/// leaves the decision to the resolver; the manifest says which it means.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GitRef {
    Unspecified(String),
    Tag(String),
    Branch(String),
    Rev(String),
    /// A semver requirement over the repository's version tags (`v1.2.3`,
    /// `1.2.3`, or a monorepo's `NAME-v1.2.3`), checked when parsed: the
    /// highest matching tag is taken.
    Version(String),
}

/// Which transport a [`GitUrl`] uses; only these are ever handed to git.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GitScheme {
    Https,
    Ssh,
    File,
    /// `user@host:path`, which git runs over ssh.
    Scp,
}

/// A git URL that passed the transport allowlist and option-injection checks.
///
/// The original text is kept because git must receive exactly what the user
/// wrote (including credentials); everything shown to humans or stored in
/// the lockfile goes through [`GitUrl::redacted`] instead, which is also what
/// `Display` and `Debug` print.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GitUrl {
    raw: String,
    scheme: GitScheme,
    redacted: String,
    host: String,
    has_secret: bool,
}

impl GitRef {
    /// The ref text as git should receive it.
    pub fn as_str(&self) -> &str {
        match self {
            GitRef::Unspecified(s)
            | GitRef::Tag(s)
            | GitRef::Branch(s)
            | GitRef::Rev(s)
            | GitRef::Version(s) => s,
        }
    }

    /// The manifest key this ref is written under.
    pub fn key(&self) -> &'static str {
        match self {
            GitRef::Unspecified(_) => "ref",
            GitRef::Tag(_) => "tag",
            GitRef::Branch(_) => "branch",
            GitRef::Rev(_) => "rev",
            GitRef::Version(_) => "version",
        }
    }

    /// The requirement of a [`GitRef::Version`].
    pub fn version_req(&self) -> Option<semver::VersionReq> {
        match self {
            GitRef::Version(r) => semver::VersionReq::parse(r).ok(),
            _ => None,
        }
    }
}

impl fmt::Display for GitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl GitUrl {
    /// Validates a git URL (without the `git+` prefix). The allowlist is
    /// applied here too, because manifest URLs never went through a spec.
    pub fn parse(s: &str) -> Result<GitUrl, SpecError> {
        check_chars("git URL", s)?;
        let bad = |reason: &str| SpecError::BadGitUrl {
            url: mask_userinfo(s),
            reason: reason.to_string(),
        };
        if s.starts_with('-') {
            return Err(SpecError::LeadingDash {
                what: "git URL",
                input: s.to_string(),
            });
        }
        // `<transport>::<address>` (ext::, fd::, ...) wins over everything
        // in git, so it is detected first.
        if let Some(p) = s.find("::") {
            if !s[..p].contains('/') {
                return Err(SpecError::UnsupportedScheme {
                    scheme: format!("{}::", &s[..p]),
                    url: mask_userinfo(s),
                });
            }
        }
        let (scheme, authority, path) = if let Some(i) = s.find("://") {
            let name = &s[..i];
            let scheme = match name {
                "https" => GitScheme::Https,
                "ssh" => GitScheme::Ssh,
                "file" => GitScheme::File,
                _ => {
                    return Err(SpecError::UnsupportedScheme {
                        scheme: format!("{name}://"),
                        url: mask_userinfo(s),
                    })
                }
            };
            let rest = &s[i + 3..];
            let end = rest.find('/').unwrap_or(rest.len());
            (scheme, &rest[..end], &rest[end..])
        } else if looks_scp(s) {
            let colon = s.find(':').unwrap_or(s.len());
            (
                GitScheme::Scp,
                &s[..colon],
                s.get(colon + 1..).unwrap_or(""),
            )
        } else {
            return Err(bad(
                "it has no scheme; use https://, ssh://, file:// or user@host:path",
            ));
        };

        let (userinfo, hostport) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((user, pw)) => (Some(user), Some(pw)),
                None => (Some(u), None),
            },
            None => (None, None),
        };
        let (host, port) = match (scheme, hostport.split_once(':')) {
            (GitScheme::Scp, _) | (_, None) => (hostport, None),
            (_, Some((h, p))) => (h, Some(p)),
        };
        if scheme == GitScheme::Scp && user.is_none_or(str::is_empty) {
            return Err(bad("the user before '@' is empty"));
        }
        if host.is_empty() && scheme != GitScheme::File {
            return Err(bad("the host is empty"));
        }
        if host.contains('@') || user.is_some_and(|u| u.contains('@')) {
            return Err(bad("it has more than one '@' before the host"));
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
        {
            return Err(bad(
                "the host may only contain letters, digits, '.', '-' and '_'",
            ));
        }
        if let Some(p) = port {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) || p.len() > 5 {
                return Err(bad("the port must be a number"));
            }
        }
        if path.trim_matches('/').is_empty() {
            return Err(bad("the repository path is empty"));
        }
        let parts = [user.unwrap_or(""), password.unwrap_or(""), host];
        if parts.iter().any(|p| p.starts_with('-'))
            || path.split(['/', ':', '@']).any(|seg| seg.starts_with('-'))
        {
            return Err(bad(
                "no part of it may start with '-', which git or ssh would read as an option",
            ));
        }

        let hostport_clean = match port {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let keep_user = matches!(scheme, GitScheme::Ssh | GitScheme::Scp);
        let user_prefix = match user {
            Some(u) if keep_user && !u.is_empty() => format!("{u}@"),
            _ => String::new(),
        };
        let redacted = match scheme {
            GitScheme::Scp => format!("{user_prefix}{hostport_clean}:{path}"),
            GitScheme::Https => format!("https://{hostport_clean}{path}"),
            GitScheme::Ssh => format!("ssh://{user_prefix}{hostport_clean}{path}"),
            GitScheme::File => format!("file://{hostport_clean}{path}"),
        };
        let has_secret = password.is_some() || (userinfo.is_some() && !keep_user);
        Ok(GitUrl {
            raw: s.to_string(),
            scheme,
            redacted,
            host: host.to_string(),
            has_secret,
        })
    }

    /// The URL exactly as written, credentials included: pass this to git
    /// (after `--`) and nowhere else.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The URL without password or token, safe for messages and lockfiles.
    pub fn redacted(&self) -> String {
        self.redacted.clone()
    }

    pub fn scheme(&self) -> GitScheme {
        self.scheme
    }

    /// The host name; empty for `file:///path`.
    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn is_file(&self) -> bool {
        self.scheme == GitScheme::File
    }

    /// Whether the URL reaches this machine's files or services: `file://`,
    /// or a host that names this machine or a link-local address by
    /// literal (as [`WellKnownUrl::is_local`] decides for sites).
    pub fn is_local(&self) -> bool {
        if self.is_file() {
            return true;
        }
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) => is_local_ip(ip),
            Err(_) => {
                let d = host.trim_end_matches('.').to_ascii_lowercase();
                d == "localhost" || d.ends_with(".localhost")
            }
        }
    }

    /// Whether the URL carries a secret that [`GitUrl::redacted`] drops;
    /// the lockfile refuses such URLs.
    pub fn has_credentials(&self) -> bool {
        self.has_secret
    }
}

impl fmt::Display for GitUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted)
    }
}

impl fmt::Debug for GitUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GitUrl({:?})", self.redacted)
    }
}
