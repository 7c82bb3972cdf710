//! HTTP client for the registry protocol.
//!
//! Everything a registry sends is untrusted: response bodies are read with
//! a size cap, and server-supplied error text is flattened to one printable
//! line before it reaches a terminal. The token is marked sensitive and
//! never appears in `Debug` output or error messages.
//!
//! Every request goes to the origin (scheme, host and port) the user
//! configured, and nowhere else: `config.json` may move `dl` and `api` to
//! another path but not to another origin, and redirects are followed only
//! within it. A registry is trusted with the user's token and with knowing
//! what they install, not with choosing who else learns either.

use crate::project::spec::mask_userinfo;
use crate::source::http::FirstAlone;
use crate::source::tls::TlsError;
use crate::source::{chain, one_line};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use reqwest::{Method, StatusCode};
use skillpm_core::protocol::{
    ErrorBody, IndexFile, OkResponse, OwnerList, OwnersChange, PackageVersion, PublishResponse,
    RegistryConfig, SearchResults, YankedQuery, YankedReply,
};
use skillpm_core::signing::{KeyError, Keyring};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Largest JSON document (index, search, config) the client accepts.
pub const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;
/// Largest error body read to extract a `detail`.
const MAX_ERROR_BYTES: u64 = 64 * 1024;
/// GETs are tried this many times in total on 5xx and connection errors.
const GET_ATTEMPTS: u32 = 3;
pub use crate::source::http::timeout;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("invalid registry URL {url:?}: {reason}")]
    BadUrl {
        url: String,
        #[source]
        reason: UrlProblem,
    },
    #[error("the API token contains invalid characters")]
    InvalidToken,
    #[error("invalid skill name {name:?}: {source}")]
    InvalidName {
        name: String,
        #[source]
        source: skillpm_core::name::NameError,
    },
    #[error("invalid version {version:?}: {source}")]
    InvalidVersion {
        version: String,
        #[source]
        source: semver::Error,
    },
    /// No client can be made: TLS cannot be set up.
    #[error("cannot reach registry {host}: {}", chain(.source))]
    Tls {
        host: String,
        #[source]
        source: TlsError,
    },
    /// The message names every cause: reqwest's own ("error sending
    /// request for url") does not say what went wrong.
    #[error("cannot reach registry {host}: {}", one_line(&chain(.source)))]
    Transport {
        host: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("registry {host} answered {status}: {detail}")]
    Status {
        host: String,
        status: u16,
        detail: String,
    },
    #[error("registry {host} sent more than {limit} bytes; refusing the response")]
    TooLarge { host: String, limit: u64 },
    #[error("registry {host} sent an invalid response: {source}")]
    InvalidJson {
        host: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("registry {host} sent an invalid response: index of {name}: {source}")]
    InvalidIndex {
        host: String,
        name: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("registry {host} sent an invalid response: index of {name} lists another package")]
    IndexOfAnother { host: String, name: String },
    /// A `dl` or `api` URL of `config.json`, or one made from it.
    #[error("registry {host} sent an invalid response: {what} {url:?}: {source}")]
    InvalidUrl {
        host: String,
        what: &'static str,
        url: String,
        #[source]
        source: url::ParseError,
    },
    #[error("registry {host} sent an invalid response: config.json `keys`: {source}")]
    BadKeys {
        host: String,
        #[source]
        source: KeyError,
    },
    #[error("registry {host} sent an invalid response: 304 to an unconditional request")]
    UnaskedNotModified { host: String },
    #[error("registry {host} needs an API token for this; run `skillpm login` or set one")]
    NoToken { host: String },
    #[error(
        "registry {host}: {what} {url} is not on the configured registry's origin ({origin}); \
         skillpm sends requests and tokens only to the registry you configured"
    )]
    OtherOrigin {
        host: String,
        what: &'static str,
        url: String,
        origin: String,
    },
    #[error(
        "registry {host}'s config.json sends downloads to {url}, over plain http; downloads \
         from another origin must be https"
    )]
    PlainDownloads { host: String, url: String },
}

/// Why a registry URL is refused.
#[derive(Debug, thiserror::Error)]
pub enum UrlProblem {
    #[error(transparent)]
    Parse(#[from] url::ParseError),
    #[error("only http:// and https:// registries are supported")]
    Scheme,
    #[error("no host")]
    NoHost,
    #[error("credentials in the URL are not allowed; use a token")]
    Credentials,
}

impl RegistryError {
    /// The HTTP status the server answered with, if it answered at all.
    pub fn status(&self) -> Option<u16> {
        match self {
            RegistryError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }
}

type Result<T> = std::result::Result<T, RegistryError>;

/// Result of an index fetch that may be answered from the caller's cache.
#[derive(Debug, Clone)]
pub enum IndexResponse {
    /// The server confirmed the caller's `ETag`; reuse the cached body.
    NotModified,
    /// A new body: parsed, raw (for the caller's cache) and its `ETag`.
    Fresh {
        index: IndexFile,
        etag: Option<String>,
        body: Vec<u8>,
    },
}

/// A client for one registry. Cheap to clone; clones share the connection
/// pool and the fetched `config.json`.
#[derive(Clone)]
pub struct RegistryClient {
    base: Url,
    /// The only origin requests (and the token) go to.
    origin: url::Origin,
    host: String,
    token: Option<String>,
    http: reqwest::Client,
    /// Where `config.json`'s `dl` sends downloads when that is another
    /// origin (a CDN): set once the config is read, and the only other
    /// origin a request or redirect may reach. No token ever goes there.
    dl_origin: Arc<std::sync::OnceLock<url::Origin>>,
    first: Arc<FirstAlone>,
    config: Arc<tokio::sync::OnceCell<RegistryConfig>>,
    keyring: Arc<tokio::sync::OnceCell<Keyring>>,
}

impl std::fmt::Debug for RegistryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryClient")
            .field("base", &self.base.as_str())
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl RegistryClient {
    /// A client for the registry at `base` (e.g. `https://skills.example`).
    /// The token is only sent on requests that need one.
    pub fn new(base: &str, token: Option<String>) -> Result<Self> {
        let bad = |reason: UrlProblem| RegistryError::BadUrl {
            url: mask_userinfo(base),
            reason,
        };
        let mut url = Url::parse(base).map_err(|e| bad(e.into()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(UrlProblem::Scheme));
        }
        if url.host_str().is_none() {
            return Err(bad(UrlProblem::NoHost));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad(UrlProblem::Credentials));
        }
        url.set_query(None);
        url.set_fragment(None);
        // A trailing slash makes `join` append instead of replacing the
        // last path segment of registries served under a prefix.
        if !url.path().ends_with('/') {
            let p = format!("{}/", url.path());
            url.set_path(&p);
        }
        let host = host_of(&url);
        let origin = url.origin();
        let allowed = origin.clone();
        let dl_origin: Arc<std::sync::OnceLock<url::Origin>> = Arc::default();
        let dl_allowed = dl_origin.clone();
        let http = crate::source::http::builder()
            .map_err(|source| RegistryError::Tls {
                host: host.clone(),
                source,
            })?
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 5 {
                    return attempt.error("too many redirects");
                }
                let to = attempt.url().origin();
                let downgrade = attempt.url().scheme() == "http"
                    && attempt.previous().iter().any(|u| u.scheme() == "https");
                if downgrade {
                    attempt.error("redirect from https to plain http refused")
                } else if to == allowed || dl_allowed.get() == Some(&to) {
                    attempt.follow()
                } else {
                    attempt.error("redirect to another origin refused")
                }
            }))
            .build()
            .map_err(|source| RegistryError::Transport {
                host: host.clone(),
                source,
            })?;
        Ok(RegistryClient {
            base: url,
            origin,
            host,
            token: token.filter(|t| !t.is_empty()),
            http,
            dl_origin,
            first: Arc::default(),
            config: Arc::new(tokio::sync::OnceCell::new()),
            keyring: Arc::new(tokio::sync::OnceCell::new()),
        })
    }

    /// The normalised base URL (always ends in `/`).
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// `config.json`, fetched once per client. A registry without one is
    /// treated as serving everything from its base URL.
    pub async fn config(&self) -> Result<&RegistryConfig> {
        self.config
            .get_or_try_init(|| async {
                let url = self.url("config.json")?;
                match self.get_json::<RegistryConfig>(url, MAX_JSON_BYTES).await {
                    Ok(c) => {
                        let what = "config.json `api`";
                        let api =
                            Url::parse(&c.api).map_err(|e| self.invalid_url(what, &c.api, e))?;
                        self.own_origin(what, &api)?;
                        let what = "config.json `dl`";
                        let dl = Url::parse(&c.dl).map_err(|e| self.invalid_url(what, &c.dl, e))?;
                        self.download_origin(&dl)?;
                        Ok(c)
                    }
                    Err(e) if e.is_not_found() => {
                        let base = self.base.as_str().trim_end_matches('/').to_string();
                        Ok(RegistryConfig {
                            dl: format!("{base}/api/v1/skills"),
                            api: base,
                            auth_required: false,
                            keys: Vec::new(),
                        })
                    }
                    Err(e) => Err(e),
                }
            })
            .await
    }

    /// The keys `config.json` lists, checked once per client
    /// ([`Keyring::new`]); empty for a registry that does not sign or
    /// serves no `config.json`.
    pub async fn keyring(&self) -> Result<&Keyring> {
        self.keyring
            .get_or_try_init(|| async {
                let config = self.config().await?;
                Keyring::new(&config.keys).map_err(|source| RegistryError::BadKeys {
                    host: self.host.clone(),
                    source,
                })
            })
            .await
    }

    /// Every version of `name`. With `etag` (from an earlier `Fresh`), an
    /// unchanged index costs one `304`.
    pub async fn index(&self, name: &str, etag: Option<&str>) -> Result<IndexResponse> {
        check_name(name)?;
        let url = self.url(&format!("index/{name}"))?;
        let mut headers = HeaderMap::new();
        if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(t.trim()).ok()) {
            headers.insert(IF_NONE_MATCH, tag);
        }
        let resp = self.get(url, headers).await?;
        if resp.status() == StatusCode::NOT_MODIFIED {
            return Ok(IndexResponse::NotModified);
        }
        let etag = resp
            .headers()
            .get(ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = self.read_capped(resp, MAX_JSON_BYTES).await?;
        let index: IndexFile =
            serde_json::from_slice(&body).map_err(|source| RegistryError::InvalidIndex {
                host: self.host.clone(),
                name: name.to_string(),
                source,
            })?;
        if index.name.as_str() != name || index.versions.iter().any(|v| v.name.as_str() != name) {
            return Err(RegistryError::IndexOfAnother {
                host: self.host.clone(),
                name: name.to_string(),
            });
        }
        Ok(IndexResponse::Fresh { index, etag, body })
    }

    /// The tarball of `name@version`, refusing more than `max_bytes`. The
    /// caller verifies the checksum against the index or lock.
    pub async fn download(&self, name: &str, version: &str, max_bytes: u64) -> Result<Vec<u8>> {
        let resp = self.download_response(name, version).await?;
        self.read_capped(resp, max_bytes).await
    }

    /// [`RegistryClient::download`]'s request, answered up to the headers:
    /// the caller sees the announced size before the body is read
    /// ([`RegistryClient::read_capped`]).
    pub async fn download_response(&self, name: &str, version: &str) -> Result<reqwest::Response> {
        check_name(name)?;
        let version = check_version(version)?;
        let dl = self.config().await?.dl.clone();
        let url = if dl.contains("{crate}") || dl.contains("{version}") {
            dl.replace("{crate}", name).replace("{version}", &version)
        } else {
            format!("{}/{name}/{version}/download", dl.trim_end_matches('/'))
        };
        let url = Url::parse(&url).map_err(|e| self.invalid_url("download URL", &url, e))?;
        if self.dl_origin.get() != Some(&url.origin()) {
            self.own_origin("download URL", &url)?;
        }
        self.get(url, HeaderMap::new()).await
    }

    /// Publishes a packed skill; the server reads name and version from
    /// its `SKILL.md`.
    /// Uploads a package, which names its version in its `SKILL.md`.
    pub async fn publish(&self, tarball: Vec<u8>) -> Result<PublishResponse> {
        self.publish_as(tarball, None).await
    }

    /// Uploads a package; `version` names its version when its `SKILL.md`
    /// declares none (the index records it).
    pub async fn publish_as(
        &self,
        tarball: Vec<u8>,
        version: Option<&semver::Version>,
    ) -> Result<PublishResponse> {
        let mut url = self.api_url("api/v1/skills/new").await?;
        if let Some(v) = version {
            url.query_pairs_mut().append_pair("version", &v.to_string());
        }
        let req = self
            .authed(Method::PUT, url)?
            .header(CONTENT_TYPE, "application/gzip")
            .body(tarball);
        self.send_json(req).await
    }

    /// Yanks (or with `undo`, restores) one version.
    pub async fn yank(&self, name: &str, version: &str, undo: bool) -> Result<()> {
        check_name(name)?;
        let version = check_version(version)?;
        let (method, action) = if undo {
            (Method::PUT, "unyank")
        } else {
            (Method::DELETE, "yank")
        };
        let url = self
            .api_url(&format!("api/v1/skills/{name}/{version}/{action}"))
            .await?;
        let _: OkResponse = self.send_json(self.authed(method, url)?).await?;
        Ok(())
    }

    /// Logins of the owners of `name`.
    pub async fn owners(&self, name: &str) -> Result<Vec<String>> {
        check_name(name)?;
        let url = self
            .api_url(&format!("api/v1/skills/{name}/owners"))
            .await?;
        let list: OwnerList = self.get_json(url, MAX_JSON_BYTES).await?;
        Ok(list.users.into_iter().map(|o| o.login).collect())
    }

    pub async fn add_owners(&self, name: &str, users: &[String]) -> Result<()> {
        self.change_owners(Method::PUT, name, users).await
    }

    pub async fn remove_owners(&self, name: &str, users: &[String]) -> Result<()> {
        self.change_owners(Method::DELETE, name, users).await
    }

    async fn change_owners(&self, method: Method, name: &str, users: &[String]) -> Result<()> {
        check_name(name)?;
        let url = self
            .api_url(&format!("api/v1/skills/{name}/owners"))
            .await?;
        let body = OwnersChange {
            users: users.to_vec(),
        };
        let _: OkResponse = self
            .send_json(self.authed(method, url)?.json(&body))
            .await?;
        Ok(())
    }

    /// Ranked text search over names, descriptions and bodies.
    pub async fn search(&self, q: &str, per_page: u32) -> Result<SearchResults> {
        let mut url = self.api_url("api/v1/search").await?;
        url.query_pairs_mut()
            .append_pair("q", q)
            .append_pair("per_page", &per_page.to_string());
        self.get_json(url, MAX_JSON_BYTES).await
    }

    /// Which of `packages` (at most `MAX_YANKED_QUERY`) are yanked, in
    /// one request. A registry without the endpoint answers 404 or 405.
    pub async fn yanked(&self, packages: Vec<PackageVersion>) -> Result<YankedReply> {
        let url = self.api_url("api/v1/yanked").await?;
        self.send_json(self.http.post(url).json(&YankedQuery { packages }))
            .await
    }

    fn url(&self, path: &str) -> Result<Url> {
        self.base.join(path).map_err(|e| RegistryError::BadUrl {
            url: format!("{}{path}", self.base),
            reason: e.into(),
        })
    }

    async fn api_url(&self, path: &str) -> Result<Url> {
        let api = self.config().await?.api.clone();
        let full = format!("{}/{path}", api.trim_end_matches('/'));
        let url = Url::parse(&full).map_err(|e| self.invalid_url("API URL", &full, e))?;
        self.own_origin("API URL", &url)?;
        Ok(url)
    }

    /// Refuses any URL outside the configured origin. Checked where the
    /// registry hands the client a URL (`config.json`), again where each
    /// request URL is made, and by the redirect policy.
    fn own_origin(&self, what: &'static str, url: &Url) -> Result<()> {
        if url.origin() == self.origin {
            return Ok(());
        }
        Err(RegistryError::OtherOrigin {
            host: self.host.clone(),
            what,
            url: one_line(&mask_userinfo(url.as_str()))
                .chars()
                .take(200)
                .collect(),
            origin: self.origin.ascii_serialization(),
        })
    }

    /// Accepts `config.json`'s `dl`: this registry's origin, or another
    /// one (a CDN, as crates.io serves downloads from static.crates.io)
    /// over https; plain http elsewhere only from a plain-http registry
    /// to a loopback address (local servers and tests), so a registry
    /// reached over https never sends the client to http.
    fn download_origin(&self, dl: &Url) -> Result<()> {
        if dl.origin() == self.origin {
            return Ok(());
        }
        let loopback = match dl.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        let secure = match dl.scheme() {
            "https" => true,
            "http" => self.base.scheme() == "http" && loopback,
            _ => false,
        };
        if !secure || !dl.username().is_empty() || dl.password().is_some() {
            return Err(RegistryError::PlainDownloads {
                host: self.host.clone(),
                url: one_line(&mask_userinfo(dl.as_str()))
                    .chars()
                    .take(200)
                    .collect(),
            });
        }
        let _ = self.dl_origin.set(dl.origin());
        Ok(())
    }

    fn authed(&self, method: Method, url: Url) -> Result<reqwest::RequestBuilder> {
        self.own_origin("request URL", &url)?;
        let token = self
            .token
            .as_deref()
            .ok_or_else(|| RegistryError::NoToken {
                host: self.host.clone(),
            })?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| RegistryError::InvalidToken)?;
        value.set_sensitive(true);
        Ok(self.http.request(method, url).header(AUTHORIZATION, value))
    }

    /// GET with bounded retries: idempotent, so a 5xx or a dropped
    /// connection is worth another try; anything else is final.
    async fn get(&self, url: Url, headers: HeaderMap) -> Result<reqwest::Response> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt >= GET_ATTEMPTS;
            let req = self.http.get(url.clone()).headers(headers.clone());
            match self.first.send(req).await {
                Ok(resp) if resp.status().is_server_error() && !last => {}
                Ok(resp) => return self.check(resp).await,
                // `is_request` covers a kept-alive connection the server
                // closed just as it was reused (idle timeouts, eviction).
                Err(e) if (e.is_connect() || e.is_timeout() || e.is_request()) && !last => {}
                Err(e) => return Err(self.transport(e)),
            }
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
        }
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: Url, cap: u64) -> Result<T> {
        let resp = self.get(url, HeaderMap::new()).await?;
        let body = self.read_capped(resp, cap).await?;
        serde_json::from_slice(&body).map_err(|e| self.invalid_json(e))
    }

    async fn send_json<T: serde::de::DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<T> {
        let resp = self.first.send(req).await.map_err(|e| self.transport(e))?;
        let resp = self.check(resp).await?;
        let body = self.read_capped(resp, MAX_JSON_BYTES).await?;
        serde_json::from_slice(&body).map_err(|e| self.invalid_json(e))
    }

    /// Turns a non-success status into an error carrying the server's
    /// `detail`; passes 2xx and 304 through.
    async fn check(&self, resp: reqwest::Response) -> Result<reqwest::Response> {
        let status = resp.status();
        if status.is_success() || status == StatusCode::NOT_MODIFIED {
            return Ok(resp);
        }
        if status.is_redirection() {
            // The redirect policy refused it (other host, or a scheme such
            // as file:// that reqwest will not even try).
            let to: String = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect();
            return Err(RegistryError::Status {
                host: self.host.clone(),
                status: status.as_u16(),
                detail: one_line(&format!(
                    "refused redirect to {:?}; only redirects within {} are followed",
                    mask_userinfo(&to),
                    self.origin.ascii_serialization()
                )),
            });
        }
        let body = self
            .read_capped(resp, MAX_ERROR_BYTES)
            .await
            .unwrap_or_default();
        let detail = match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(e) if !e.errors.is_empty() => e.joined(),
            _ => {
                let text = String::from_utf8_lossy(&body);
                let text = text.trim();
                if text.is_empty() {
                    status.canonical_reason().unwrap_or("no detail").to_string()
                } else {
                    text.chars().take(300).collect()
                }
            }
        };
        Err(RegistryError::Status {
            host: self.host.clone(),
            status: status.as_u16(),
            detail: one_line(&detail),
        })
    }

    /// Reads a body, stopping as soon as it passes `cap`, so a hostile
    /// server cannot make the client buffer without bound.
    /// The body of `resp`, refused past `cap` bytes (announced or read).
    pub async fn read_capped(&self, mut resp: reqwest::Response, cap: u64) -> Result<Vec<u8>> {
        let too_large = || RegistryError::TooLarge {
            host: self.host.clone(),
            limit: cap,
        };
        if resp.content_length().is_some_and(|n| n > cap) {
            return Err(too_large());
        }
        let mut out = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport(e))? {
            if out.len() as u64 + chunk.len() as u64 > cap {
                return Err(too_large());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    fn transport(&self, source: reqwest::Error) -> RegistryError {
        RegistryError::Transport {
            host: self.host.clone(),
            source,
        }
    }

    fn invalid_json(&self, source: serde_json::Error) -> RegistryError {
        RegistryError::InvalidJson {
            host: self.host.clone(),
            source,
        }
    }

    /// `url`, which the registry's `config.json` gave or made, as `what`.
    fn invalid_url(&self, what: &'static str, url: &str, source: url::ParseError) -> RegistryError {
        RegistryError::InvalidUrl {
            host: self.host.clone(),
            what,
            url: mask_userinfo(url),
            source,
        }
    }
}

fn host_of(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => url.to_string(),
    }
}

fn check_name(name: &str) -> Result<()> {
    skillpm_core::name::check_name(name).map_err(|source| RegistryError::InvalidName {
        name: name.to_string(),
        source,
    })
}

fn check_version(v: &str) -> Result<String> {
    semver::Version::parse(v)
        .map(|v| v.to_string())
        .map_err(|source| RegistryError::InvalidVersion {
            version: v.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests;
