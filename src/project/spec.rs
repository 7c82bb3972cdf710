//! Install specs: what a user types after `skillpm add`.
//!
//! A spec is hostile input that may end up as an argument to `git`, so it is
//! checked against a strict character allowlist *before* any parsing, and
//! every piece that can reach a subprocess (URL, host, ref) is rejected if it
//! could be read as an option (leading `-`) or selects a dangerous transport
//! (`ext::`, `fd::`, plain `http://`, `git://`).
//!
//! # Grammar
//!
//! ```text
//! spec      = registry | git | path
//!
//! registry  = NAME [ "@" REQ ]
//!     NAME  = 1-64 of [a-z0-9-], single hyphens, no leading/trailing hyphen
//!     REQ   = Cargo semver requirement: ^1, ~1.2, =1.4.2, 1.4.2, *
//!             (a bare version means ^; without @REQ the requirement is *;
//!             ranges with > < or commas are outside the allowlist, so they
//!             can only be written in skills.toml)
//!
//! git       = "git+" URL [ "@" REF ]
//!     URL   = "https://" [USER [":" PASS] "@"] HOST [":" PORT] "/" PATH
//!           | "ssh://"   [USER [":" PASS] "@"] HOST [":" PORT] "/" PATH
//!           | "file://"  [HOST] "/" PATH
//!           | USER "@" HOST ":" PATH                      (scp-like)
//!     REF   = tag, branch or commit; the resolver decides which.
//!             The "@" that starts REF is the last "@" after the last "/"
//!             and the last ":" of the URL, so a REF cannot contain "/".
//!
//! path      = ("./" | "../" | "/") ANY  |  "."  |  ".."
//!
//! wellknown = [ "wellknown+" ] ( "https://" | "http://" LOOPBACK ) HOST [PATH]
//!             a site publishing an Agent Skills discovery index; without
//!             the prefix, any https:// URL not ending in `.git`. A PATH
//!             ending in `/index.json` names the index itself; otherwise
//!             `PATH/.well-known/agent-skills/index.json` is tried, then
//!             the legacy `PATH/.well-known/skills/index.json`.
//!
//! github    = OWNER "/" REPO [ "/" SUBPATH ] [ "@" REF ]
//!             shorthand for `git+<base>/OWNER/REPO.git`, where base is
//!             `[sources] github` in skills.toml (default
//!             `https://github.com`). A registry name never contains `/`
//!             and a path starts with `.` or `/`, so the three never meet.
//! ```
//!
//! Every spec may only use the characters `A-Z a-z 0-9 - _ . / : @ + = ~ ^`
//! and may not start with `-`. This rules out version requirements with
//! `>`, `<`, spaces or commas, and refs containing `/`; write those in
//! `skills.toml` (`version = ">=1.2, <2"`, `branch = "feature/x"`).

use semver::VersionReq;
use skillpm_core::name::{NameError, SkillName};
use std::fmt;

/// The spec character allowlist, as shown to users in error messages.
pub const ALLOWED: &str = "A-Za-z0-9-_./:@+=~^";

/// Why a spec (or a URL, ref or version requirement inside one) is rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("empty {what}; give a skill name (`code-review@^1`), `git+https://...` or a path like `./dir`")]
    Empty { what: &'static str },
    #[error("invalid character {} at position {pos} in {what} `{}`; only {ALLOWED} are allowed", describe_char(*.ch), show(.input))]
    InvalidChar {
        what: &'static str,
        ch: char,
        pos: usize,
        input: String,
    },
    #[error("{what} `{}` starts with '-', which git would read as an option; remove the leading '-'", show(.input))]
    LeadingDash { what: &'static str, input: String },
    #[error("invalid skill name `{name}`: {source}")]
    BadName {
        name: String,
        #[source]
        source: NameError,
    },
    #[error("invalid version requirement `{req}`: {message}; use `^1.2`, `~1.2` or `1.4.2` on the command line, or any Cargo requirement (`>=1.2, <2`) in skills.toml")]
    BadVersionReq { req: String, message: String },
    #[error("unsupported git URL scheme `{scheme}` in `{url}`; use https://, ssh://, file:// or user@host:path")]
    UnsupportedScheme { scheme: String, url: String },
    #[error("invalid git URL `{url}`: {reason}")]
    BadGitUrl { url: String, reason: String },
    #[error("`{input}` looks like a git URL; write it as `git+{input}`")]
    MissingGitPrefix { input: String },
    #[error("invalid path `{}` inside the repository: {reason}", show(.path))]
    BadSubpath { path: String, reason: &'static str },
    #[error("invalid registry URL `{url}`: {reason}")]
    BadRegistryUrl { url: String, reason: String },
    #[error("invalid well-known URL `{url}`: {reason}")]
    BadWellKnownUrl { url: String, reason: String },
    #[error("invalid GitHub shorthand `{}`: {reason}; write `owner/repo[/path][@ref]`", show(.input))]
    BadShorthand { input: String, reason: &'static str },
}

/// A parsed install spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    Registry {
        name: SkillName,
        req: VersionReq,
        /// Always `None` from a spec: registry choice lives in the manifest,
        /// so a typed spec can never silently redirect to another server.
        registry: Option<String>,
    },
    Git {
        url: GitUrl,
        reference: Option<GitRef>,
    },
    Path {
        path: String,
    },
    /// A site publishing an Agent Skills discovery index.
    WellKnown {
        url: WellKnownUrl,
    },
    /// `owner/repo[/path][@ref]`, expanded against a configurable base.
    GitHub {
        shorthand: GitHubShorthand,
        reference: Option<GitRef>,
    },
}

/// Whether `ip` reaches this machine (loopback, the unspecified address,
/// which Linux routes to itself) or a link-local neighbour (169.254/16,
/// where cloud metadata services answer, and fe80::/10); an IPv4-mapped
/// IPv6 address counts as its IPv4 address.
pub fn is_local_ip(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_unspecified() || v4.is_link_local(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_local_ip(IpAddr::V4(v4)),
            None => {
                v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xffc0) == 0xfe80
            }
        },
    }
}

/// An `http(s)` URL a well-known source may fetch: https anywhere, plain
/// http only to a loopback address (local servers and tests), never
/// credentials. Holds a parsed [`url::Url`], so joining relative URLs
/// follows RFC 3986.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WellKnownUrl(url::Url);

impl WellKnownUrl {
    pub fn parse(s: &str) -> Result<WellKnownUrl, SpecError> {
        let url = url::Url::parse(s).map_err(|e| SpecError::BadWellKnownUrl {
            url: show(s),
            reason: e.to_string(),
        })?;
        WellKnownUrl::from_url(url)
    }

    /// Checks an already parsed URL (an artifact URL resolved against an
    /// index) against the same rules.
    pub fn from_url(url: url::Url) -> Result<WellKnownUrl, SpecError> {
        let bad = |reason: &str| SpecError::BadWellKnownUrl {
            url: show(url.as_str()),
            reason: reason.to_string(),
        };
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => return Err(bad("it has no host")),
        };
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => {
                return Err(bad(
                    "plain http:// is only allowed to a loopback address; use https://",
                ))
            }
            _ => return Err(bad("only https:// is supported")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("it contains credentials"));
        }
        Ok(WellKnownUrl(url))
    }

    pub fn as_url(&self) -> &url::Url {
        &self.0
    }

    /// Whether this is plain `http://` (which [`WellKnownUrl::from_url`]
    /// only allows to loopback).
    pub fn is_plain_http(&self) -> bool {
        self.0.scheme() == "http"
    }

    /// Whether a URL that `self` hands out (an artifact URL in an index, a
    /// redirect target) may be fetched: it must pass the same rules, a
    /// plain-http (loopback) URL only comes from another loopback one, and
    /// a URL naming this machine or a link-local address only comes from a
    /// URL that names one too. So a site the user did not run here can
    /// never point the client at local services, over http or https, nor at
    /// a cloud metadata address (169.254.169.254).
    pub fn allows(&self, next: url::Url) -> Result<WellKnownUrl, SpecError> {
        let next = WellKnownUrl::from_url(next)?;
        let refuse = |why: &str| SpecError::BadWellKnownUrl {
            url: show(next.as_str()),
            reason: format!("{why} ({})", show(self.as_str())),
        };
        if next.is_plain_http() && !self.is_plain_http() {
            return Err(refuse("an https:// URL may not lead to plain http://"));
        }
        if next.is_local() && !self.is_local() {
            return Err(refuse(
                "a remote site may not lead to this machine or a link-local address",
            ));
        }
        Ok(next)
    }

    /// Whether the host names this machine (loopback, `localhost`, the
    /// unspecified address, which Linux routes to itself) or a link-local
    /// address, by literal; IPv4-mapped IPv6 spellings count as their IPv4
    /// address. A DNS name is never local here: what it resolves to is
    /// checked when it is resolved (`source::http::RemoteOnly`). Private
    /// ranges (10/8, 192.168/16, ...) are not local: an intranet site may
    /// serve its artifacts from them.
    pub fn is_local(&self) -> bool {
        match self.0.host() {
            Some(url::Host::Ipv4(ip)) => is_local_ip(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => is_local_ip(std::net::IpAddr::V6(ip)),
            Some(url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d == "localhost" || d.ends_with(".localhost")
            }
            None => false,
        }
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The index URLs to try for this site, best first: the URL itself
    /// when it names an `index.json`, else the RFC v0.2.0 location and
    /// then the legacy v0.1.0 one, both under the URL's path.
    pub fn index_candidates(&self) -> Vec<WellKnownUrl> {
        if self.0.path().ends_with("/index.json") {
            return vec![self.clone()];
        }
        let mut base = self.0.clone();
        base.set_query(None);
        base.set_fragment(None);
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        [
            ".well-known/agent-skills/index.json",
            ".well-known/skills/index.json",
        ]
        .iter()
        .filter_map(|rel| base.join(rel).ok())
        .map(WellKnownUrl)
        .collect()
    }
}

impl fmt::Display for WellKnownUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

/// `owner/repo[/path]` as typed: each part checked, nothing expanded yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubShorthand {
    pub owner: String,
    pub repo: String,
    pub path: Option<String>,
}

/// The default base of the `owner/repo` shorthand.
pub const DEFAULT_GITHUB_BASE: &str = "https://github.com";

impl GitHubShorthand {
    fn parse(s: &str) -> Result<GitHubShorthand, SpecError> {
        let bad = |reason| SpecError::BadShorthand {
            input: s.to_string(),
            reason,
        };
        let mut parts = s.splitn(3, '/');
        let owner = parts.next().unwrap_or("");
        let repo = parts.next().unwrap_or("");
        let path = parts
            .next()
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| !p.is_empty());
        let part_ok = |p: &str| {
            !p.is_empty()
                && p.len() <= 100
                && !p.starts_with(['-', '.'])
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !part_ok(owner) {
            return Err(bad(
                "the owner must be letters, digits, '-', '_' or '.', not starting with '-' or '.'",
            ));
        }
        let repo = repo.strip_suffix(".git").unwrap_or(repo);
        if !part_ok(repo) {
            return Err(bad("the repository must be letters, digits, '-', '_' or '.', not starting with '-' or '.'"));
        }
        if let Some(p) = path {
            check_subpath(p)?;
        }
        Ok(GitHubShorthand {
            owner: owner.to_string(),
            repo: repo.to_string(),
            path: path.map(str::to_string),
        })
    }

    /// Checks a `[sources] github` base by expanding a sample repository.
    pub fn check_base(base: &str) -> Result<(), SpecError> {
        GitHubShorthand {
            owner: "o".into(),
            repo: "r".into(),
            path: None,
        }
        .url(base)
        .map(drop)
    }

    /// The full git URL under `base` (`https://github.com`, a GitHub
    /// Enterprise host, a mirror, or a `file://` directory in tests).
    pub fn url(&self, base: &str) -> Result<GitUrl, SpecError> {
        GitUrl::parse(&format!(
            "{}/{}/{}.git",
            base.trim_end_matches('/'),
            self.owner,
            self.repo
        ))
    }
}

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

/// Checks the character allowlist; runs before any parsing so that no later
/// stage ever sees shell metacharacters, whitespace or look-alike Unicode.
pub fn check_allowlist(s: &str) -> Result<(), SpecError> {
    check_chars("spec", s)?;
    if s.starts_with('-') {
        return Err(SpecError::LeadingDash {
            what: "spec",
            input: s.to_string(),
        });
    }
    Ok(())
}

fn check_chars(what: &'static str, s: &str) -> Result<(), SpecError> {
    if s.is_empty() {
        return Err(SpecError::Empty { what });
    }
    match s.chars().enumerate().find(|&(_, c)| !is_allowed(c)) {
        Some((i, ch)) => Err(SpecError::InvalidChar {
            what,
            ch,
            pos: i + 1,
            input: s.to_string(),
        }),
        None => Ok(()),
    }
}

/// Whether `c` is in [`ALLOWED`].
pub fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./:@+=~^".contains(c)
}

/// Names a character so that invisible or look-alike characters are obvious.
fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() || matches!(c, ' ' | '\n' | '\r' | '\t' | '\0') {
        format!("{c:?}")
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// Renders hostile input for a one-line message: control and non-ASCII
/// characters are escaped and any URL password/token is masked.
pub(crate) fn show(s: &str) -> String {
    let masked = mask_userinfo(s);
    let mut out = String::with_capacity(masked.len());
    for c in masked.chars() {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    out
}

/// Masks `user:secret@` and `token@` after `://`, best effort, for text
/// that failed validation and so cannot be parsed as a [`GitUrl`] (bad
/// specs, unusable registry URLs, refused redirect targets).
pub fn mask_userinfo(s: &str) -> String {
    let Some(i) = s.find("://") else {
        return s.to_string();
    };
    let start = i + 3;
    let rest = &s[start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..auth_end].rfind('@') {
        Some(at) => format!("{}***{}", &s[..start], &rest[at..]),
        None => s.to_string(),
    }
}

/// Parses a Cargo-style version requirement; shared by specs and the
/// manifest so both accept exactly the same syntax.
pub fn parse_version_req(s: &str) -> Result<VersionReq, SpecError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SpecError::BadVersionReq {
            req: s.to_string(),
            message: "it is empty".to_string(),
        });
    }
    VersionReq::parse(t).map_err(|e| SpecError::BadVersionReq {
        req: show(s),
        message: e.to_string(),
    })
}

/// Validates a subdirectory inside a git repository (`--path`, manifest
/// `path` on git deps, lockfile `path`), which is joined onto a checkout
/// and must never climb out of it.
pub fn check_subpath(s: &str) -> Result<(), SpecError> {
    let bad = |reason| {
        Err(SpecError::BadSubpath {
            path: s.to_string(),
            reason,
        })
    };
    if s.is_empty() {
        return bad("it is empty; leave it out for the repository root");
    }
    if s.starts_with('/') || s.contains('\\') {
        return bad("it must be a relative path with '/' separators");
    }
    if s.chars().any(|c| c.is_control()) {
        return bad("it contains a control character");
    }
    if s.split('/').any(|seg| seg == "..") {
        return bad("it must not contain `..`");
    }
    if s.split('/').any(|seg| seg.starts_with('-')) {
        return bad("no path component may start with '-'");
    }
    Ok(())
}

/// Validates a registry base URL: http(s) only, and no credentials, because
/// the URL is written to the checked-in lockfile.
pub fn check_registry_url(s: &str) -> Result<(), SpecError> {
    let bad = |reason: &str| {
        Err(SpecError::BadRegistryUrl {
            url: show(s),
            reason: reason.to_string(),
        })
    };
    let url = match url::Url::parse(s) {
        Ok(u) => u,
        Err(e) => return bad(&format!("{e}; expected `https://host[:port][/path]`")),
    };
    if url.scheme() != "https" && url.scheme() != "http" {
        return bad("only http:// and https:// registries are supported");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return bad("it contains credentials; remove them and configure a token instead");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return bad("it has no host");
    }
    if url.query().is_some() || url.fragment().is_some() {
        return bad("it must not have a query or fragment");
    }
    Ok(())
}

impl Spec {
    /// Parses a user-typed spec; see the module docs for the grammar.
    pub fn parse(s: &str) -> Result<Spec, SpecError> {
        check_allowlist(s)?;
        if let Some(rest) = s.strip_prefix("git+") {
            let (url, reference) = split_ref(rest);
            let url = GitUrl::parse(url)?;
            let reference = match reference {
                Some(r) => {
                    check_ref(r)?;
                    Some(GitRef::Unspecified(r.to_string()))
                }
                None => None,
            };
            return Ok(Spec::Git { url, reference });
        }
        if s == "."
            || s == ".."
            || s.starts_with("./")
            || s.starts_with("../")
            || s.starts_with('/')
        {
            return Ok(Spec::Path {
                path: s.to_string(),
            });
        }
        if let Some(rest) = s.strip_prefix("wellknown+") {
            return Ok(Spec::WellKnown {
                url: WellKnownUrl::parse(rest)?,
            });
        }
        let is_web = s.starts_with("https://") || s.starts_with("http://");
        if is_web && !s.trim_end_matches('/').ends_with(".git") && !is_git_forge(s) {
            return Ok(Spec::WellKnown {
                url: WellKnownUrl::parse(s)?,
            });
        }
        if s.contains("://") || s.contains("::") || looks_scp(s) {
            return Err(SpecError::MissingGitPrefix {
                input: mask_userinfo(s),
            });
        }
        if s.contains('/') {
            let (body, reference) = split_ref(s);
            let reference = match reference {
                Some(r) => {
                    check_ref(r)?;
                    Some(GitRef::Unspecified(r.to_string()))
                }
                None => None,
            };
            return Ok(Spec::GitHub {
                shorthand: GitHubShorthand::parse(body)?,
                reference,
            });
        }
        let (name, req) = match s.split_once('@') {
            Some((n, r)) => (n, parse_version_req(r)?),
            None => (s, VersionReq::STAR),
        };
        let name = SkillName::new(name).map_err(|source| SpecError::BadName {
            name: name.to_string(),
            source,
        })?;
        Ok(Spec::Registry {
            name,
            req,
            registry: None,
        })
    }
}

impl fmt::Display for Spec {
    /// Prints the canonical spec text, with credentials removed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::Registry { name, req, .. } => write!(f, "{name}@{req}"),
            Spec::Git { url, reference } => {
                write!(f, "git+{url}")?;
                if let Some(r) = reference {
                    write!(f, "@{}", r.as_str())?;
                }
                Ok(())
            }
            Spec::Path { path } => f.write_str(path),
            Spec::WellKnown { url } => write!(f, "wellknown+{url}"),
            Spec::GitHub {
                shorthand,
                reference,
            } => {
                write!(f, "{}/{}", shorthand.owner, shorthand.repo)?;
                if let Some(p) = &shorthand.path {
                    write!(f, "/{p}")?;
                }
                if let Some(r) = reference {
                    write!(f, "@{}", r.as_str())?;
                }
                Ok(())
            }
        }
    }
}

/// Hosts whose web URLs are git repositories, never well-known sites
/// (`https://github.com/org/repo` asks for `git+`).
fn is_git_forge(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| {
        matches!(
            u.host_str(),
            Some("github.com" | "www.github.com" | "gitlab.com" | "codeberg.org")
        )
    })
}

/// Splits `URL@REF` at the last `@` that follows the last `/` and `:`.
fn split_ref(s: &str) -> (&str, Option<&str>) {
    let after = match (s.rfind('/'), s.rfind(':')) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return (s, None),
    };
    match s.rfind('@') {
        Some(at) if at > after => (&s[..at], Some(&s[at + 1..])),
        _ => (s, None),
    }
}

/// `user@host:path` with no `/` before the first `:`, as git decides it.
fn looks_scp(s: &str) -> bool {
    match s.find(':') {
        Some(colon) => !s[..colon].contains('/') && s[..colon].contains('@'),
        None => false,
    }
}

/// Validates a git ref; refs become git arguments, so the spec allowlist
/// applies to them even when they come from the manifest.
pub fn check_ref(r: &str) -> Result<(), SpecError> {
    check_chars("git ref", r)?;
    if r.starts_with('-') {
        return Err(SpecError::LeadingDash {
            what: "git ref",
            input: r.to_string(),
        });
    }
    Ok(())
}

impl GitRef {
    /// The ref text as git should receive it.
    pub fn as_str(&self) -> &str {
        match self {
            GitRef::Unspecified(s) | GitRef::Tag(s) | GitRef::Branch(s) | GitRef::Rev(s) => s,
        }
    }

    /// The manifest key this ref is written under.
    pub fn key(&self) -> &'static str {
        match self {
            GitRef::Unspecified(_) => "ref",
            GitRef::Tag(_) => "tag",
            GitRef::Branch(_) => "branch",
            GitRef::Rev(_) => "rev",
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

impl std::str::FromStr for Spec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Spec::parse(s)
    }
}

#[cfg(test)]
mod tests;
