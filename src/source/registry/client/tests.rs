use super::*;

#[test]
fn normalises_base_and_hides_token() {
    let c = RegistryClient::new("http://127.0.0.1:1/prefix", Some("spm_secret".into()));
    let c = match c {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(c.base().as_str(), "http://127.0.0.1:1/prefix/");
    assert!(!format!("{c:?}").contains("spm_secret"));
    assert!(RegistryClient::new("file:///etc", None).is_err());
    assert!(RegistryClient::new("https://u:p@x.example", None).is_err());
}

#[test]
fn redacts_userinfo() {
    assert_eq!(
        mask_userinfo("http://u:tok3n@h:1/p@x"),
        "http://***@h:1/p@x"
    );
    assert_eq!(mask_userinfo("https://h/a"), "https://h/a");
    assert_eq!(mask_userinfo("no scheme"), "no scheme");
    let e = RegistryClient::new("https://u:tok3n@x.example", None).unwrap_err();
    assert!(!e.to_string().contains("tok3n"), "{e}");
}

/// Refused input is a variant holding its cause, and says what it
/// said when it was a sentence.
#[test]
fn refused_input_keeps_its_cause() {
    use std::error::Error as _;
    let e = check_version("1.x").unwrap_err();
    assert!(matches!(&e, RegistryError::InvalidVersion { version, .. } if version == "1.x"));
    assert!(e.source().is_some());
    assert!(
        e.to_string().starts_with("invalid version \"1.x\": "),
        "{e}"
    );
    let e = check_name("Bad Name").unwrap_err();
    assert!(matches!(&e, RegistryError::InvalidName { .. }));
    assert!(
        e.to_string()
            .starts_with("invalid skill name \"Bad Name\": "),
        "{e}"
    );
    let e = RegistryClient::new("ftp://x.example", None).unwrap_err();
    assert!(matches!(
        &e,
        RegistryError::BadUrl {
            reason: UrlProblem::Scheme,
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "invalid registry URL \"ftp://x.example\": only http:// and https:// registries are supported"
    );
}

/// A request that gets no answer keeps reqwest's error, and the
/// message still names the cause under it.
#[test]
fn an_unreachable_registry_says_why() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let c = RegistryClient::new("http://127.0.0.1:1", None).unwrap();
    let e = rt.block_on(c.index("x", None)).unwrap_err();
    assert!(matches!(&e, RegistryError::Transport { source, .. } if source.is_connect()));
    let text = e.to_string();
    assert!(
        text.starts_with("cannot reach registry 127.0.0.1:1: "),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
}

#[test]
fn one_line_strips_controls() {
    assert_eq!(one_line("a\nb\x1b[31m  c"), "a b [31m c");
}

#[test]
fn downloads_may_come_from_a_cdn_over_https_never_over_plain_http() {
    let url = |s: &str| Url::parse(s).unwrap();
    let https = RegistryClient::new("https://reg.example", None).unwrap();
    assert!(https
        .download_origin(&url("https://reg.example/dl"))
        .is_ok());
    assert!(https
        .download_origin(&url("https://static.cdn.example/dl"))
        .is_ok());
    assert_eq!(
        https.dl_origin.get(),
        Some(&url("https://static.cdn.example/").origin())
    );
    for plain in ["http://static.cdn.example/dl", "http://127.0.0.1:9/dl"] {
        let e = https.download_origin(&url(plain)).unwrap_err().to_string();
        assert!(e.contains("plain http"), "{plain}: {e}");
    }
    assert!(https
        .download_origin(&url("https://u:p@cdn.example/dl"))
        .is_err());
    // A plain-http registry on this machine (a local server, the tests)
    // may use another loopback port, and nothing else over http.
    let local = RegistryClient::new("http://127.0.0.1:8000", None).unwrap();
    assert!(local
        .download_origin(&url("http://127.0.0.1:9000/dl"))
        .is_ok());
    assert!(local
        .download_origin(&url("http://cdn.example/dl"))
        .is_err());
}
