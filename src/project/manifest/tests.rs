use super::*;

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    Manifest::parse(text, Path::new("skills.toml"))
}

fn err(text: &str) -> ManifestError {
    match parse(text) {
        Err(e) => e,
        Ok(m) => panic!("expected an error for {text:?}, got {m:?}"),
    }
}

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

const FULL: &str = r#"
[skills]
code-review = "^1"
pdf = { version = "~2.1", registry = "acme" }
house-style = { git = "https://github.com/acme/skills.git", tag = "v1.4.0", path = "house-style" }
local-thing = { path = "./vendor/local-thing" }

[registries]
default = "http://127.0.0.1:7878"
acme = "https://skills.acme.internal"

[install]
targets = [".agents/skills", ".claude/skills"]

[engine]
roots = ["extra/skills"]
disabled = ["some-skill"]

[something-else]
x = 1
"#;

#[test]
fn parses_the_documented_example() {
    let m = parse(FULL).unwrap();
    assert_eq!(m.skills.len(), 4);
    assert_eq!(
        m.skills[&name("code-review")],
        Dependency::Registry {
            req: VersionReq::parse("^1").unwrap(),
            registry: None
        }
    );
    assert_eq!(
        m.skills[&name("pdf")],
        Dependency::Registry {
            req: VersionReq::parse("~2.1").unwrap(),
            registry: Some("acme".into())
        }
    );
    match &m.skills[&name("house-style")] {
        Dependency::Git {
            url,
            reference,
            path,
            ..
        } => {
            assert_eq!(url.as_str(), "https://github.com/acme/skills.git");
            assert_eq!(reference, &Some(GitRef::Tag("v1.4.0".into())));
            assert_eq!(path.as_deref(), Some("house-style"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        m.skills[&name("local-thing")],
        Dependency::Path {
            path: "./vendor/local-thing".into()
        }
    );
    assert_eq!(m.registries.len(), 2);
    assert_eq!(
        m.install_targets,
        Some(vec![".agents/skills".into(), ".claude/skills".into()])
    );
    assert_eq!(parse("").unwrap(), Manifest::default());
}

#[test]
fn accepts_ranges_sub_tables_and_credential_urls() {
    let m = parse(
        "[skills.a]\nversion = \">=1.2, <2\"\n[skills]\nb = { git = \"https://u:tok@h/x.git\", ref = \"main\" }\n",
    );
    // `[skills]` after `[skills.a]` is valid TOML.
    let m = m.unwrap();
    assert_eq!(
        m.skills[&name("a")],
        Dependency::Registry {
            req: VersionReq::parse(">=1.2, <2").unwrap(),
            registry: None
        }
    );
    match &m.skills[&name("b")] {
        Dependency::Git { url, reference, .. } => {
            assert_eq!(url.to_string(), "https://h/x.git");
            assert_eq!(reference, &Some(GitRef::Unspecified("main".into())));
        }
        other => panic!("{other:?}"),
    }
    assert!(!format!("{m:?}").contains("tok"));
}

#[test]
fn errors_name_file_and_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("[skills]\na = \"^1\"\nb = [\n", 3, "TOML syntax error"),
        ("[skills]\n\nBad = \"^1\"\n", 3, "invalid skill name `Bad`"),
        (
            "[skills]\na = \"^1\"\nb = \"not a req\"\n",
            3,
            "invalid version requirement",
        ),
        ("[skills]\na = 5\n", 2, "`skills.a` must be"),
        ("skills = 5\n", 1, "`skills` must be a table"),
        (
            "[skills]\na = { git = \"http://h/x\" }\n",
            2,
            "unsupported git URL scheme `http://`",
        ),
        ("[skills]\na = { git = \"ext::sh\" }\n", 2, "`ext::`"),
        (
            "[skills]\na = { git = \"https://h/x\", tag = \"a\", rev = \"b\" }\n",
            2,
            "`tag` and `rev`",
        ),
        (
            "[skills]\na = { git = \"https://h/x\", tag = \"-x\" }\n",
            2,
            "starts with '-'",
        ),
        (
            "[skills]\na = { git = \"https://h/x\", version = \"1\", tag = \"v1\" }\n",
            2,
            "`version` and `tag`",
        ),
        (
            "[skills]\na = { git = \"https://h/x\", path = \"../up\" }\n",
            2,
            "`..`",
        ),
        (
            "[skills]\na = { version = \"1\", tag = \"v1\" }\n",
            2,
            "`version` and `tag`",
        ),
        (
            "[skills]\na = { path = \"./x\", version = \"1\" }\n",
            2,
            "`path` and `version`",
        ),
        (
            "[skills]\na = { colour = \"red\" }\n",
            2,
            "unknown key `colour`",
        ),
        ("[skills]\na = {}\n", 2, "has no source"),
        ("[skills]\na = { path = \"\" }\n", 2, "`path` is empty"),
        (
            "[skills]\na = { version = 1 }\n",
            2,
            "`skills.a.version` must be a string",
        ),
        (
            "[skills]\n\n[skills.a]\n\nversion = \"foo\"\n",
            5,
            "invalid version requirement",
        ),
        (
            "[skills]\na = { version = \"1\", registry = \"nope\" }\n",
            2,
            "registry `nope`, which is not defined",
        ),
        (
            "[registries]\nx = \"ftp://h\"\n",
            2,
            "only http:// and https://",
        ),
        (
            "[registries]\nx = \"https://u:p@h\"\n",
            2,
            "contains credentials",
        ),
        (
            "[registries]\n\"a b\" = \"https://h\"\n",
            2,
            "invalid registry name",
        ),
        ("[install]\ntargets = \"x\"\n", 2, "install.targets"),
        ("[install]\ntargets = [\n\"a\",\n3]\n", 4, "install.targets"),
    ];
    for (text, line, needle) in cases {
        let e = err(text);
        let msg = e.to_string();
        assert_eq!(e.line, *line, "{text:?}: {msg}");
        assert!(msg.starts_with(&format!("skills.toml:{line}: ")), "{msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
    // The default registry needs no [registries] entry.
    assert!(parse("[skills]\na = { version = \"1\", registry = \"default\" }\n").is_ok());
}

#[test]
fn editor_round_trips_untouched_text() {
    let text = "# my skills\n[skills]\ncode-review   =   \"^1\"   # pinned by team\n\n[engine]\nroots = [ 'x' ]\n";
    let ed = ManifestEditor::parse(text, Path::new("skills.toml")).unwrap();
    assert_eq!(ed.to_string(), text);
}

#[test]
fn editor_adds_replaces_and_removes() {
    let text = "# top comment\n[skills]\nzeta = \"^1\"   # keep me\nalpha = { path = \"./a\" }\n\n[registries]\nacme = \"https://a\"\n";
    let mut ed = ManifestEditor::parse(text, Path::new("skills.toml")).unwrap();

    ed.set_dependency(
        &name("zeta"),
        &Dependency::Registry {
            req: VersionReq::parse("~2.1").unwrap(),
            registry: None,
        },
    );
    ed.set_dependency(
        &name("pdf"),
        &Dependency::Registry {
            req: VersionReq::parse("^2").unwrap(),
            registry: Some("acme".into()),
        },
    );
    ed.set_dependency(
        &name("house"),
        &Dependency::Git {
            url: GitUrl::parse("https://github.com/acme/skills.git").unwrap(),
            reference: Some(GitRef::Tag("v1.4.0".into())),
            path: Some("house-style".into()),
            plugin: None,
            plugin_version: None,
        },
    );
    assert!(ed.remove_dependency(&name("alpha")));
    assert!(!ed.remove_dependency(&name("alpha")));
    let out = ed.to_string();
    assert_eq!(
        out,
        "# top comment\n[skills]\nzeta = \"~2.1\"   # keep me\n\
         pdf = { version = \"^2\", registry = \"acme\" }\n\
         house = { git = \"https://github.com/acme/skills.git\", tag = \"v1.4.0\", path = \"house-style\" }\n\
         \n[registries]\nacme = \"https://a\"\n"
    );
    // What the editor writes, the reader accepts.
    let m = parse(&out).unwrap();
    assert_eq!(m.skills.len(), 3);
}

#[test]
fn editor_creates_skills_table() {
    let mut ed = ManifestEditor::parse("", Path::new("skills.toml")).unwrap();
    ed.set_dependency(
        &name("local"),
        &Dependency::Path {
            path: "./vendor/local".into(),
        },
    );
    assert_eq!(
        ed.to_string(),
        "[skills]\nlocal = { path = \"./vendor/local\" }\n"
    );
    assert!(ManifestEditor::parse("skills = 1", Path::new("s.toml")).is_err());
    let e = ManifestEditor::parse("[skills\n", Path::new("s.toml"))
        .err()
        .unwrap();
    assert_eq!(e.line, 1);
}

#[test]
fn init_template_is_a_valid_empty_manifest() {
    let m = parse(init_template()).unwrap();
    assert!(m.skills.is_empty());
    let mut ed = ManifestEditor::parse(init_template(), Path::new("skills.toml")).unwrap();
    ed.set_dependency(
        &name("code-review"),
        &Dependency::Registry {
            req: VersionReq::parse("^1").unwrap(),
            registry: None,
        },
    );
    let out = ed.to_string();
    assert!(out.contains("# code-review = \"^1\""));
    assert!(parse(&out)
        .unwrap()
        .skills
        .contains_key(&name("code-review")));
}

#[test]
fn truncated_input_never_panics() {
    for end in 0..=FULL.len() {
        if let Some(prefix) = FULL.get(..end) {
            if let Err(e) = parse(prefix) {
                assert!(e.line >= 1 && e.line <= prefix.lines().count().max(1) + 1);
            }
            let _ = ManifestEditor::parse(prefix, Path::new("skills.toml"));
        }
    }
}

#[test]
fn well_known_entries_and_the_github_base() {
    let m = parse(
        "[sources]\ngithub = \"https://ghe.example.com\"\n[skills]\n\
         docs = { wellknown = \"https://docs.example.com/.well-known/agent-skills/index.json\" }\n",
    )
    .unwrap();
    assert_eq!(m.github_base.as_deref(), Some("https://ghe.example.com"));
    match &m.skills[&name("docs")] {
        Dependency::WellKnown { index } => assert_eq!(
            index.as_str(),
            "https://docs.example.com/.well-known/agent-skills/index.json"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        *err("[skills]\nd = { wellknown = \"https://x\", version = \"1\" }\n").kind,
        ManifestErrorKind::Conflict {
            a: "wellknown",
            b: "version",
            ..
        }
    ));
    assert!(matches!(
        *err("[skills]\nd = { wellknown = \"http://x.example\" }\n").kind,
        ManifestErrorKind::BadSpec { .. }
    ));
    let e = err("[sources]\ngithub = \"ext::sh\"\n");
    assert!(
        matches!(*e.kind, ManifestErrorKind::BadGitHubBase(_)),
        "{e}"
    );
    assert_eq!(e.line, 2);

    let mut ed = ManifestEditor::parse("# keep\n[skills]\n", Path::new("skills.toml")).unwrap();
    let dep = Dependency::WellKnown {
        index: WellKnownUrl::parse("https://d.example/.well-known/agent-skills/index.json")
            .unwrap(),
    };
    ed.set_dependency(&name("docs"), &dep);
    let text = ed.to_string();
    assert_eq!(parse(&text).unwrap().skills[&name("docs")], dep);
    assert!(text.starts_with("# keep\n"), "{text}");
}

#[test]
fn the_trust_table_names_an_allowed_signers_file() {
    let m = parse("[trust]\ngit-allowed-signers = \".skillpm/allowed_signers\"\n").unwrap();
    assert_eq!(
        m.trust.git_allowed_signers.as_deref(),
        Some(".skillpm/allowed_signers")
    );
    assert_eq!(parse("").unwrap().trust, TrustPolicy::default());
    for (text, wanted) in [
        ("[trust]\ngit-allowed-signers = 7\n", "must be the path"),
        ("[trust]\ngit-allowed-signers = \"\"\n", "must be the path"),
        (
            "[trust]\ngit-gpg-keyring = \"k\"\n",
            "GPG signatures are not checked",
        ),
        ("[trust]\nsigners = \"k\"\n", "unknown key `trust.signers`"),
        ("trust = 1\n", "`trust` must be a table"),
    ] {
        let e = err(text);
        assert!(e.to_string().contains(wanted), "{text}: {e}");
    }
}

/// `plugin-version` is a requirement on a git entry's `plugin`: kept as
/// written, refused without a plugin or when it is no requirement.
#[test]
fn plugin_version_needs_a_plugin_and_a_requirement() {
    let m = parse(
        "[skills]\npdf = { git = \"https://h/x.git\", plugin = \"docs\", plugin-version = \"^6\" }\n",
    )
    .unwrap();
    match &m.skills[&name("pdf")] {
        Dependency::Git { plugin_version, .. } => {
            assert_eq!(
                plugin_version.as_ref().map(|r| r.to_string()).as_deref(),
                Some("^6")
            )
        }
        other => panic!("{other:?}"),
    }
    let e = err("[skills]\npdf = { git = \"https://h/x.git\", plugin-version = \"^6\" }\n");
    assert!(
        e.to_string()
            .contains("`plugin-version` is a requirement on its `plugin`"),
        "{e}"
    );
    let e = err(
        "[skills]\npdf = { git = \"https://h/x.git\", plugin = \"docs\", plugin-version = \"six\" }\n",
    );
    assert!(e.to_string().contains("six"), "{e}");
}
