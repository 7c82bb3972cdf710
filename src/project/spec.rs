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

mod git_url;
mod wellknown_url;

pub use git_url::{GitRef, GitScheme, GitUrl};
pub use wellknown_url::{is_local_ip, WellKnownUrl};

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
    #[error("`{}` has no name before `@`; write `NAME@REQ`, like `code-review@^1`", show(.input))]
    NoNameBeforeAt { input: String },
    #[error("`{}` has no version requirement after `@`; write `NAME@REQ`, like `code-review@^1`, or leave out `@`", show(.input))]
    NoReqAfterAt { input: String },
    #[error("invalid registry name `{}`; use letters, digits, '-' and '_', or give a URL (`https://host`)", show(.0))]
    BadRegistryName(String),
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
    pub fn parse(s: &str) -> Result<GitHubShorthand, SpecError> {
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

/// Whether `name` is a valid key under `[registries]`: letters, digits,
/// `-` and `_`. Shared by the manifest and `--registry NAME`.
pub fn is_registry_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A registry as typed after `--registry`: a URL, or the name of an entry
/// under `[registries]` in skills.toml, as cargo's `--registry NAME`. Told
/// apart by `://`, which no registry name can contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryChoice {
    /// A checked base URL ([`check_registry_url`]), without trailing `/`.
    Url(String),
    /// A valid registry name ([`is_registry_name`]), not yet looked up.
    Name(String),
}

impl RegistryChoice {
    pub fn parse(s: &str) -> Result<RegistryChoice, SpecError> {
        if s.contains("://") {
            check_registry_url(s)?;
            return Ok(RegistryChoice::Url(s.trim_end_matches('/').to_string()));
        }
        if !is_registry_name(s) {
            return Err(SpecError::BadRegistryName(s.to_string()));
        }
        Ok(RegistryChoice::Name(s.to_string()))
    }
}

impl std::str::FromStr for RegistryChoice {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RegistryChoice::parse(s)
    }
}

impl fmt::Display for RegistryChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryChoice::Url(u) | RegistryChoice::Name(u) => f.write_str(u),
        }
    }
}

impl Spec {
    /// Parses a user-typed spec; see the module docs for the grammar.
    pub fn parse(s: &str) -> Result<Spec, SpecError> {
        check_allowlist(s)?;
        if let Some(rest) = s.strip_prefix("git+") {
            let (url, reference) = split_ref(rest);
            let url = GitUrl::parse(url)?;
            let reference = reference.map(parse_git_ref).transpose()?;
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
            let reference = reference.map(parse_git_ref).transpose()?;
            return Ok(Spec::GitHub {
                shorthand: GitHubShorthand::parse(body)?,
                reference,
            });
        }
        // `@` separates a name from its requirement; either side missing
        // is named as such, not reported as a bad name or requirement.
        let (name, req) = match s.split_once('@') {
            Some(("", _)) => {
                return Err(SpecError::NoNameBeforeAt {
                    input: s.to_string(),
                })
            }
            Some((_, "")) => {
                return Err(SpecError::NoReqAfterAt {
                    input: s.to_string(),
                })
            }
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
/// The text after a git spec's `@`: a semver requirement over the
/// repository's tags when it starts the way only a requirement can (`^`,
/// `~`, `=`, `<`, `>`, `*`: characters git refuses in ref names, or that
/// no tag begins with), else a ref.
fn parse_git_ref(r: &str) -> Result<GitRef, SpecError> {
    if r.starts_with(['^', '~', '=', '<', '>', '*']) {
        parse_version_req(r)?;
        return Ok(GitRef::Version(r.to_string()));
    }
    check_ref(r)?;
    Ok(GitRef::Unspecified(r.to_string()))
}

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

impl std::str::FromStr for Spec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Spec::parse(s)
    }
}

#[cfg(test)]
mod tests;
