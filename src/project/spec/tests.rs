use super::*;

fn bad_char(spec: &str) -> (char, usize) {
    match Spec::parse(spec) {
        Err(SpecError::InvalidChar { ch, pos, .. }) => (ch, pos),
        other => panic!("{spec:?}: expected InvalidChar, got {other:?}"),
    }
}

#[test]
fn rejects_each_metacharacter_with_position() {
    for c in [
        ' ', '"', '\'', ';', '|', '&', '$', '(', ')', '<', '>', '`', '*', '!', '#', '\n', '\t',
        '\\', '%', '?', ',', '\0', '\u{7f}', 'é', '\u{202e}',
    ] {
        let spec = format!("foo{c}bar");
        assert_eq!(bad_char(&spec), (c, 4), "{c:?}");
    }
    assert_eq!(bad_char("git+https://h/x;rm"), (';', 16));
}

#[test]
fn error_message_names_char_and_position() {
    let e = Spec::parse("foo;rm").unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid character ';' at position 4 in spec `foo;rm`; only A-Za-z0-9-_./:@+=~^ are allowed"
    );
    let e = Spec::parse("foo\nbar").unwrap_err().to_string();
    assert!(
        e.contains(r"'\n' at position 4") && e.contains(r"`foo\nbar`"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    let e = Spec::parse("caf\u{e9}").unwrap_err().to_string();
    assert!(e.contains("U+00E9 at position 4"), "{e}");
    let e = Spec::parse("a\u{7f}").unwrap_err().to_string();
    assert!(e.contains("U+007F at position 2"), "{e}");
}

#[test]
fn error_message_masks_credentials() {
    let e = Spec::parse("git+https://u:s3cret@h/x y")
        .unwrap_err()
        .to_string();
    assert!(!e.contains("s3cret"), "{e}");
}

#[test]
fn rejects_empty_and_leading_dash() {
    assert!(matches!(Spec::parse(""), Err(SpecError::Empty { .. })));
    for s in ["-x", "--upload-pack=x", "-oProxyCommand=x"] {
        assert!(
            matches!(Spec::parse(s), Err(SpecError::LeadingDash { .. })),
            "{s}"
        );
    }
}

#[test]
fn rejects_bad_transports() {
    assert!(matches!(
        Spec::parse("git+ext::sh -c x"),
        Err(SpecError::InvalidChar { ch: ' ', .. })
    ));
    for (s, scheme) in [
        ("git+ext::foo", "ext::"),
        ("git+fd::3", "fd::"),
        ("git+http://h/x.git", "http://"),
        ("git+git://h/x.git", "git://"),
        ("git+HTTPS://h/x.git", "HTTPS://"),
    ] {
        match Spec::parse(s) {
            Err(SpecError::UnsupportedScheme { scheme: got, .. }) => assert_eq!(got, scheme),
            other => panic!("{s}: {other:?}"),
        }
    }
    assert!(matches!(
        Spec::parse("git+h/x.git"),
        Err(SpecError::BadGitUrl { .. })
    ));
    assert!(matches!(
        Spec::parse("git+h:x.git"),
        Err(SpecError::BadGitUrl { .. })
    ));
    let e = Spec::parse("git+http://h/x").unwrap_err().to_string();
    assert!(e.contains("`http://`"), "{e}");
}

#[test]
fn rejects_option_injection_inside_urls() {
    for s in [
        "git+ssh://-oProxyCommand=x/y",
        "git+ssh://git@-oProxyCommand=x/y",
        "git+-u@h:x",
        "git+git@-h:x",
        "git+git@h:-x",
        "git+https://h/-x",
        "git+https://h/x.git@-v",
        "git+https://h/x.git@",
    ] {
        assert!(Spec::parse(s).is_err(), "{s}");
    }
}

#[test]
fn parses_registry_specs() {
    let cases = [
        ("code-review", "*"),
        ("code-review@^1", "^1"),
        ("code-review@~1.2", "~1.2"),
        ("code-review@=1.4.2", "=1.4.2"),
        ("code-review@1.4.2", "^1.4.2"),
    ];
    for (s, req) in cases {
        match Spec::parse(s) {
            Ok(Spec::Registry {
                name,
                req: r,
                registry,
            }) => {
                assert_eq!(name.as_str(), "code-review");
                assert_eq!(r, VersionReq::parse(req).unwrap(), "{s}");
                assert_eq!(registry, None);
            }
            other => panic!("{s}: {other:?}"),
        }
    }
    assert!(matches!(
        Spec::parse("Code"),
        Err(SpecError::BadName { .. })
    ));
    assert!(matches!(
        Spec::parse("code@"),
        Err(SpecError::NoReqAfterAt { .. })
    ));
    assert_eq!(
        Spec::parse("@pdf").unwrap_err().to_string(),
        "`@pdf` has no name before `@`; write `NAME@REQ`, like `code-review@^1`"
    );
    assert!(matches!(
        Spec::parse("code@x.y"),
        Err(SpecError::BadVersionReq { .. })
    ));
    assert!(matches!(
        Spec::parse("a@1@2"),
        Err(SpecError::BadVersionReq { .. })
    ));
    assert!(matches!(
        Spec::parse("https://h/x.git"),
        Err(SpecError::MissingGitPrefix { .. })
    ));
    assert!(matches!(
        Spec::parse("git@h:x.git"),
        Err(SpecError::MissingGitPrefix { .. })
    ));
}

#[test]
fn parses_path_specs() {
    for s in ["./a", "../a/b", "/abs/dir", ".", ".."] {
        assert_eq!(
            Spec::parse(s),
            Ok(Spec::Path {
                path: s.to_string()
            })
        );
    }
}

fn git(s: &str) -> (String, Option<String>) {
    match Spec::parse(s) {
        Ok(Spec::Git { url, reference }) => (
            url.as_str().to_string(),
            reference.map(|r| r.as_str().to_string()),
        ),
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn splits_refs_for_every_url_shape() {
    let r = |s: &str| Some(s.to_string());
    let cases: &[(&str, &str, Option<String>)] = &[
        ("git+https://h/o/r.git", "https://h/o/r.git", None),
        (
            "git+https://h/o/r.git@v1.2.0",
            "https://h/o/r.git",
            r("v1.2.0"),
        ),
        (
            "git+https://u:t@h/o/r.git@main",
            "https://u:t@h/o/r.git",
            r("main"),
        ),
        ("git+https://h:8443/r@v1", "https://h:8443/r", r("v1")),
        ("git+ssh://git@host/x.git", "ssh://git@host/x.git", None),
        (
            "git+ssh://git@host:22/x.git@v2",
            "ssh://git@host:22/x.git",
            r("v2"),
        ),
        ("git+git@host:org/x.git", "git@host:org/x.git", None),
        ("git+git@host:org/x.git@v3", "git@host:org/x.git", r("v3")),
        ("git+git@host:x.git@v4", "git@host:x.git", r("v4")),
        ("git+file:///tmp/repo", "file:///tmp/repo", None),
        (
            "git+file:///tmp/repo@0123abc",
            "file:///tmp/repo",
            r("0123abc"),
        ),
    ];
    for (spec, url, reference) in cases {
        assert_eq!(git(spec), (url.to_string(), reference.clone()), "{spec}");
    }
}

#[test]
fn redacts_credentials() {
    let cases = [
        ("https://user:tok@host/x", "https://host/x", true),
        ("https://tok@host/x", "https://host/x", true),
        ("https://host:8443/x", "https://host:8443/x", false),
        ("ssh://git@host/x.git", "ssh://git@host/x.git", false),
        (
            "ssh://git:pw@host:22/x.git",
            "ssh://git@host:22/x.git",
            true,
        ),
        ("git@host:org/x.git", "git@host:org/x.git", false),
        ("file:///tmp/r", "file:///tmp/r", false),
    ];
    for (raw, red, secret) in cases {
        let u = GitUrl::parse(raw).unwrap();
        assert_eq!(u.redacted(), red);
        assert_eq!(u.to_string(), red);
        assert!(!format!("{u:?}").contains("tok"));
        assert_eq!(u.has_credentials(), secret, "{raw}");
        assert_eq!(u.as_str(), raw);
    }
    assert!(GitUrl::parse("file:///tmp/r").unwrap().is_file());
    let spec = Spec::parse("git+https://u:tok@h/x@v1").unwrap();
    assert_eq!(spec.to_string(), "git+https://h/x@v1");
    assert!(!format!("{spec:?}").contains("tok"));
}

#[test]
fn validates_subpaths_and_registry_urls() {
    assert!(check_subpath("skills/foo").is_ok());
    for s in ["", "/abs", "../x", "a/../b", "a\\b", "-x", "a/\n"] {
        assert!(check_subpath(s).is_err(), "{s:?}");
    }
    assert!(check_registry_url("http://127.0.0.1:7878").is_ok());
    assert!(check_registry_url("https://skills.acme.internal/x").is_ok());
    for s in [
        "ftp://h",
        "https://u:p@h",
        "https://u@h",
        "nope",
        "https://h/?a=b",
    ] {
        assert!(check_registry_url(s).is_err(), "{s}");
    }
    let e = check_registry_url("https://u:s3cret@h")
        .unwrap_err()
        .to_string();
    assert!(!e.contains("s3cret"), "{e}");
}

#[test]
fn never_panics_and_redaction_is_stable() {
    let tokens = [
        "git+", "https://", "ssh://", "file://", "@", ":", "/", "-", "x", "::", "#", ".", "u:p@",
        "\u{e9}", "1",
    ];
    let n = tokens.len();
    for i in 0..n.pow(4) {
        let mut s = String::new();
        let mut k = i;
        for _ in 0..4 {
            s.push_str(tokens[k % n]);
            k /= n;
        }
        if let Ok(Spec::Git { url, .. }) = Spec::parse(&s) {
            let again = GitUrl::parse(&url.redacted()).unwrap();
            assert_eq!(again.redacted(), url.redacted(), "{s}");
            assert!(!again.has_credentials(), "{s}");
        }
        let _ = GitUrl::parse(&s);
        let _ = check_registry_url(&s);
        let _ = check_subpath(&s);
    }
}

#[test]
fn parses_well_known_specs() {
    for (s, want) in [
        ("https://docs.example.com", "https://docs.example.com/"),
        (
            "wellknown+https://docs.example.com/sub",
            "https://docs.example.com/sub",
        ),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/"),
        (
            "wellknown+http://localhost:1/x/index.json",
            "http://localhost:1/x/index.json",
        ),
    ] {
        match Spec::parse(s) {
            Ok(Spec::WellKnown { url }) => assert_eq!(url.as_str(), want),
            other => panic!("{s}: {other:?}"),
        }
    }
    assert!(matches!(
        Spec::parse("https://github.com/org/repo"),
        Err(SpecError::MissingGitPrefix { .. })
    ));
    let site = WellKnownUrl::parse("https://h/x").unwrap();
    assert!(site
        .allows(url::Url::parse("http://127.0.0.1:1/a").unwrap())
        .is_err());
    assert!(site.allows(url::Url::parse("https://o/a").unwrap()).is_ok());
    let local = WellKnownUrl::parse("http://127.0.0.1:1/").unwrap();
    assert!(local
        .allows(url::Url::parse("http://localhost:2/a").unwrap())
        .is_ok());
}

#[test]
fn a_remote_index_cannot_point_at_this_machine_or_link_local_addresses() {
    let site = WellKnownUrl::parse("https://skills.example.com/").unwrap();
    for to in [
        "https://127.0.0.1:8443/a.tar.gz",
        "https://127.9.9.9/a",
        "https://[::1]/a",
        "https://[::ffff:127.0.0.1]/a",
        "https://0.0.0.0:22/a",
        "https://[::]/a",
        "https://169.254.169.254/latest/meta-data/",
        "https://[fe80::1]/a",
        "https://localhost/a",
        "https://LocalHost./a",
        "https://api.localhost/a",
    ] {
        let err = site
            .allows(url::Url::parse(to).unwrap())
            .expect_err(to)
            .to_string();
        assert!(err.contains("may not lead to this machine"), "{to}: {err}");
    }
    for to in [
        "https://cdn.example.net/a.tar.gz",
        "https://10.0.0.5/a",
        "https://192.168.1.10/a",
        "https://[2001:db8::1]/a",
        "https://8.8.8.8/a",
    ] {
        assert!(site.allows(url::Url::parse(to).unwrap()).is_ok(), "{to}");
    }
    // A site the user runs here may serve from here, over https too.
    for from in [
        "https://127.0.0.1:8443/",
        "https://localhost/",
        "http://[::1]:9/",
    ] {
        let here = WellKnownUrl::parse(from).unwrap();
        assert!(
            here.allows(url::Url::parse("https://127.0.0.1:9/a").unwrap())
                .is_ok(),
            "{from}"
        );
    }
    for s in [
        "http://docs.example.com",
        "wellknown+ftp://h/x",
        "https://u:p@h",
        "wellknown+file:///x",
    ] {
        assert!(
            matches!(Spec::parse(s), Err(SpecError::BadWellKnownUrl { .. })),
            "{s}"
        );
    }
    let Ok(Spec::WellKnown { url }) = Spec::parse("https://h/docs") else {
        panic!("parse")
    };
    let c: Vec<String> = url
        .index_candidates()
        .iter()
        .map(|u| u.to_string())
        .collect();
    assert_eq!(
        c,
        [
            "https://h/docs/.well-known/agent-skills/index.json",
            "https://h/docs/.well-known/skills/index.json"
        ]
    );
}

#[test]
fn parses_github_shorthand() {
    let Ok(Spec::GitHub {
        shorthand,
        reference,
    }) = Spec::parse("anthropics/skills/skills/pdf@v1")
    else {
        panic!("parse")
    };
    assert_eq!(shorthand.owner, "anthropics");
    assert_eq!(shorthand.repo, "skills");
    assert_eq!(shorthand.path.as_deref(), Some("skills/pdf"));
    assert_eq!(reference, Some(GitRef::Unspecified("v1".into())));
    assert_eq!(
        shorthand.url(DEFAULT_GITHUB_BASE).map(|u| u.redacted()),
        Ok("https://github.com/anthropics/skills.git".to_string())
    );
    assert_eq!(
        shorthand.url("file:///tmp/mirror/").map(|u| u.redacted()),
        Ok("file:///tmp/mirror/anthropics/skills.git".to_string())
    );
    for s in ["-o/r", "o/-r", "./x", "o/../x", "o/r/a/../b", ".o/r", "o/"] {
        assert!(
            !matches!(Spec::parse(s), Ok(Spec::GitHub { .. })),
            "{s} must not be a shorthand"
        );
    }
    // A registry name is never a shorthand.
    assert!(matches!(
        Spec::parse("code-review"),
        Ok(Spec::Registry { .. })
    ));
}

/// `--registry` takes a checked URL or a registry name, told apart by
/// `://`; anything else is refused before it is looked up.
#[test]
fn parses_registry_choices() {
    assert_eq!(
        RegistryChoice::parse("https://skills.acme.internal/").unwrap(),
        RegistryChoice::Url("https://skills.acme.internal".into())
    );
    assert_eq!(
        RegistryChoice::parse("acme_2").unwrap(),
        RegistryChoice::Name("acme_2".into())
    );
    for bad in ["", "acme.internal", "ftp://h", "https://u:p@h", "a b"] {
        assert!(RegistryChoice::parse(bad).is_err(), "{bad}");
    }
}

/// After a git spec's `@`, what only a requirement can start with is a
/// semver range over the repository's tags; anything else stays a ref,
/// and a broken range is refused as a requirement.
#[test]
fn a_git_ref_that_reads_as_a_requirement_is_a_tag_range() {
    let reference = |s: &str| match Spec::parse(s).unwrap() {
        Spec::Git { reference, .. } | Spec::GitHub { reference, .. } => reference.unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(reference("acme/skills@^1"), GitRef::Version("^1".into()));
    assert_eq!(
        reference("git+https://h/r.git@~1.2"),
        GitRef::Version("~1.2".into())
    );
    assert_eq!(
        reference("acme/skills@=2.0.0"),
        GitRef::Version("=2.0.0".into())
    );
    assert_eq!(
        reference("acme/skills@v1.2.0"),
        GitRef::Unspecified("v1.2.0".into())
    );
    assert_eq!(
        reference("acme/skills@1.2.0"),
        GitRef::Unspecified("1.2.0".into())
    );
    assert!(matches!(
        Spec::parse("acme/skills@^x"),
        Err(SpecError::BadVersionReq { .. })
    ));
}
