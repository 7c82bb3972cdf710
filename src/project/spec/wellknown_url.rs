//! The URL of a well-known site (`wellknown+https://...`): where an index
//! may be fetched from, and where a redirect or a relative link in it may
//! lead.

use super::{show, SpecError};
use std::fmt;

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
