use super::*;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const TREE: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn sum(b: &[u8]) -> Checksum {
    Checksum::of_bytes(b)
}

fn skill(name: &str, source: LockedSource, path: Option<&str>) -> LockedSkill {
    LockedSkill {
        name: SkillName::new(name).unwrap(),
        version: semver::Version::parse("1.4.2").unwrap(),
        checksum: sum(name.as_bytes()),
        tree: matches!(source, LockedSource::Git { .. }).then(|| TREE.to_string()),
        dependencies: Vec::new(),
        source,
        path: path.map(String::from),
        signed_by: None,
        plugin: None,
    }
}

fn sample() -> Vec<LockedSkill> {
    vec![
        skill(
            "local-thing",
            LockedSource::Path {
                path: "./vendor/local \"thing\"\\x".into(),
            },
            None,
        ),
        skill(
            "code-review",
            LockedSource::Registry {
                url: "http://127.0.0.1:7878".into(),
            },
            None,
        ),
        skill(
            "house-style",
            LockedSource::Git {
                url: GitUrl::parse("https://github.com/acme/skills.git").unwrap(),
                commit: COMMIT.into(),
            },
            Some("house-style"),
        ),
    ]
}

fn parse(text: &str) -> Result<Lockfile, LockfileError> {
    Lockfile::parse(text, Path::new("skills.lock"))
}

#[test]
fn serialization_is_deterministic_and_round_trips() {
    let mut a = Lockfile::default();
    for s in sample() {
        a.upsert(s);
    }
    let mut b = Lockfile::default();
    for s in sample().into_iter().rev() {
        b.upsert(s);
    }
    let text = a.to_toml_string();
    assert_eq!(text, b.to_toml_string());
    let expected = format!(
        "{HEADER}version = 1\n\
         \n[[skill]]\nname = \"code-review\"\nversion = \"1.4.2\"\nsource = \"registry+http://127.0.0.1:7878\"\nchecksum = \"{}\"\n\
         \n[[skill]]\nname = \"house-style\"\nversion = \"1.4.2\"\nsource = \"git+https://github.com/acme/skills.git#{COMMIT}\"\npath = \"house-style\"\ntree = \"{TREE}\"\nchecksum = \"{}\"\n\
         \n[[skill]]\nname = \"local-thing\"\nversion = \"1.4.2\"\nsource = \"path+./vendor/local \\\"thing\\\"\\\\x\"\nchecksum = \"{}\"\n",
        sum(b"code-review"),
        sum(b"house-style"),
        sum(b"local-thing"),
    );
    assert_eq!(text, expected);
    let back = parse(&text).unwrap();
    assert_eq!(back, a);
    assert_eq!(back.to_toml_string(), text);
    // An unsorted vector still serializes canonically.
    let c = Lockfile {
        skills: sample(),
        ..Default::default()
    };
    assert_eq!(c.to_toml_string(), text);
    assert_eq!(
        Lockfile::default().to_toml_string(),
        format!("{HEADER}version = 1\n")
    );
    assert_eq!(
        parse(&Lockfile::default().to_toml_string()).unwrap(),
        Lockfile::default()
    );
}

#[test]
fn escapes_control_characters() {
    let mut l = Lockfile::default();
    l.upsert(skill(
        "odd",
        LockedSource::Path {
            path: "./a\u{1}b\u{7f}c\u{e9}".into(),
        },
        None,
    ));
    let text = l.to_toml_string();
    assert!(text.contains(r#""path+./a\u0001b\u007Fc"#), "{text}");
    // Control characters in a path source are rejected on the way back.
    assert!(parse(&text).is_err());
    l.upsert(skill(
        "odd",
        LockedSource::Path {
            path: "./caf\u{e9}\ttab".into(),
        },
        None,
    ));
    assert!(parse(&l.to_toml_string()).is_err());
    l.upsert(skill(
        "odd",
        LockedSource::Path {
            path: "./caf\u{e9}".into(),
        },
        None,
    ));
    assert_eq!(parse(&l.to_toml_string()).unwrap(), l);
}

#[test]
fn get_upsert_remove() {
    let mut l = Lockfile::default();
    for s in sample() {
        assert!(l.upsert(s).is_none());
    }
    let names: Vec<_> = l.skills.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(names, ["code-review", "house-style", "local-thing"]);
    let n = SkillName::new("house-style").unwrap();
    assert!(l.get(&n).is_some());
    let mut newer = skill(
        "house-style",
        LockedSource::Registry {
            url: "https://r".into(),
        },
        None,
    );
    newer.version = semver::Version::new(2, 0, 0);
    assert!(l.upsert(newer.clone()).is_some());
    assert_eq!(l.get(&n), Some(&newer));
    assert_eq!(l.skills.len(), 3);
    assert!(l.remove(&n).is_some());
    assert!(l.remove(&n).is_none());
    assert!(l.get(&n).is_none());
}

#[test]
fn credentials_never_written() {
    let mut l = Lockfile::default();
    l.upsert(skill(
        "x",
        LockedSource::Git {
            url: GitUrl::parse("https://user:tok@h/x.git").unwrap(),
            commit: COMMIT.into(),
        },
        None,
    ));
    let text = l.to_toml_string();
    assert!(!text.contains("tok"), "{text}");
    assert!(parse(&text).is_ok());
}

#[test]
fn parses_sources() {
    let ok = [
        "registry+http://127.0.0.1:7878",
        "registry+https://skills.acme.internal/sub",
        "git+https://github.com/acme/skills.git#0123456789abcdef0123456789abcdef01234567",
        "git+ssh://git@host/x.git#0123456789abcdef0123456789abcdef01234567",
        "git+git@host:org/x.git#0123456789abcdef0123456789abcdef01234567",
        "path+./vendor/local-thing",
    ];
    for s in ok {
        let src = LockedSource::parse(s).unwrap();
        assert_eq!(src.to_string(), s);
    }
    let bad = [
        ("registry+https://u:p@h", "credentials"),
        ("registry+https://tok@h", "credentials"),
        ("registry+ftp://h", "http"),
        ("git+https://h/x.git", "no `#COMMIT`"),
        ("git+https://h/x.git#0123abc", "40 lowercase hex"),
        (
            "git+https://h/x.git#0123456789ABCDEF0123456789abcdef01234567",
            "40 lowercase hex",
        ),
        (
            "git+https://h/x.git#0123456789abcdef0123456789abcdef012345678",
            "40 lowercase hex",
        ),
        (
            "git+https://u:tok@h/x.git#0123456789abcdef0123456789abcdef01234567",
            "credentials",
        ),
        (
            "git+http://h/x.git#0123456789abcdef0123456789abcdef01234567",
            "http://",
        ),
        (
            "git+ext::sh#0123456789abcdef0123456789abcdef01234567",
            "ext::",
        ),
        ("path+", "empty"),
        ("svn+x", "unknown source"),
    ];
    for (s, needle) in bad {
        let e = LockedSource::parse(s).unwrap_err().to_string();
        assert!(e.contains(needle), "{s}: {e}");
        assert!(!e.contains("tok@") && !e.contains(":p@"), "{s}: {e}");
    }
}

#[test]
fn errors_name_file_and_line() {
    let good = format!("sha256:{}", "a".repeat(64));
    let entry = |extra: &str| {
        format!(
            "[[skill]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+https://r\"\nchecksum = \"{good}\"\n{extra}"
        )
    };
    let cases: Vec<(String, usize, &str)> = vec![
        ("version = 1\n[[skill]\n".into(), 2, "TOML syntax error"),
        (
            "# hi\n[[skill]]\nname = \"a\"\n".into(),
            1,
            "missing `version = 1`",
        ),
        (
            "# hi\n\nversion = 2\n".into(),
            3,
            "unsupported lockfile version 2; upgrade skillpm",
        ),
        (
            "version = \"1\"\n".into(),
            1,
            "`version` must be the integer 1",
        ),
        (
            "version = 1\nextra = true\n".into(),
            2,
            "unknown key `extra` in the lockfile",
        ),
        (
            "version = 1\nskill = 3\n".into(),
            2,
            "`skill` must be a list",
        ),
        (
            format!("version = 1\n\n{}", entry("colour = \"red\"\n")),
            8,
            "unknown key `colour` in [[skill]]",
        ),
        (
            "version = 1\n\n[[skill]]\nname = \"a\"\n".into(),
            3,
            "missing `version`",
        ),
        (
            format!(
                "version = 1\n\n{}",
                entry("").replace("name = \"a\"", "name = \"A\"")
            ),
            4,
            "invalid skill name `A`",
        ),
        (
            format!("version = 1\n\n{}", entry("").replace("1.0.0", "^1")),
            5,
            "invalid version `^1`",
        ),
        (
            format!("version = 1\n\n{}", entry("").replace(&good, "sha256:zz")),
            7,
            "invalid checksum",
        ),
        (
            format!(
                "version = 1\n\n{}",
                entry("").replace("registry+https://r", "git+https://h/x#abc")
            ),
            6,
            "expected 40 lowercase hex",
        ),
        (
            format!(
                "version = 1\n\n{}",
                entry("").replace("registry+https://r", "registry+https://u:tok@r")
            ),
            6,
            "credentials",
        ),
        (
            format!("version = 1\n\n{}", entry("path = \"x\"\n")),
            8,
            "has `path` but is not a git source; remove the `path` line",
        ),
        (
            format!("version = 1\n\n{}", entry(&format!("tree = \"{TREE}\"\n"))),
            8,
            "has `tree` but is not a git source; remove the `tree` line",
        ),
        (
            format!("version = 1\n\n{}", entry("name2 = 1\n")),
            8,
            "unknown key `name2`",
        ),
        (
            format!("version = 1\n\n{}\n{}", entry(""), entry("")),
            10,
            "skill `a` is listed more than once",
        ),
        (
            format!(
                "version = 1\n\n{}",
                entry("").replace("checksum = ", "checksum = 5 #")
            ),
            7,
            "`checksum` must be a string",
        ),
    ];
    for (text, line, needle) in &cases {
        let e = parse(text).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.line, *line, "{text:?}: {msg}");
        assert!(msg.starts_with(&format!("skills.lock:{line}: ")), "{msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
        assert!(!msg.contains('\n') && !msg.contains("tok@"), "{msg}");
    }
    let git = format!(
        "version = 1\n[[skill]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"git+https://h/x#{COMMIT}\"\npath = \"../up\"\nchecksum = \"{good}\"\n"
    );
    let e = parse(&git).unwrap_err();
    assert_eq!(e.line, 6, "{e}");
    // A git entry's tree is a full lower-case object id, or absent (a lock
    // written before trees were recorded).
    let git = |extra: &str| {
        format!("version = 1\n[[skill]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"git+https://h/x#{COMMIT}\"\n{extra}checksum = \"{good}\"\n")
    };
    assert_eq!(parse(&git("")).unwrap().skills[0].tree, None);
    let tree = parse(&git(&format!("tree = \"{TREE}\"\n"))).unwrap();
    assert_eq!(tree.skills[0].tree.as_deref(), Some(TREE));
    for bad in [
        "89ABCDEF",
        "89abcdef",
        "HEAD",
        "89abcdef0123456789abcdef0123456789abcdeg",
    ] {
        let e = parse(&git(&format!("tree = \"{bad}\"\n"))).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        assert!(e.to_string().contains("invalid tree"), "{e}");
    }
}

#[test]
fn truncated_input_never_panics() {
    let text = Lockfile {
        skills: sample(),
        ..Default::default()
    }
    .to_toml_string();
    for end in 0..=text.len() {
        if let Some(prefix) = text.get(..end) {
            if let Err(e) = parse(prefix) {
                assert!(e.line >= 1 && e.line <= prefix.lines().count().max(1) + 1);
            }
        }
    }
}

#[test]
fn well_known_entries_round_trip_and_are_checked() {
    let wk = skill(
        "docs-helper",
        LockedSource::WellKnown {
            index: WellKnownUrl::parse(
                "https://docs.example.com/.well-known/agent-skills/index.json",
            )
            .unwrap(),
            artifact: WellKnownUrl::parse("https://docs.example.com/a/docs-helper.tar.gz").unwrap(),
            digest: sum(b"artifact"),
        },
        None,
    );
    let lock = Lockfile {
        skills: vec![wk.clone()],
        ..Default::default()
    };
    let text = lock.to_toml_string();
    assert!(
        text.contains(
            "source = \"wellknown+https://docs.example.com/.well-known/agent-skills/index.json\"\n\
         artifact = \"https://docs.example.com/a/docs-helper.tar.gz\"\n\
         digest = \"sha256:"
        ),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap(), lock);

    let missing = text.replace("artifact = ", "# artifact = ");
    assert!(matches!(
        *parse(&missing).unwrap_err().kind,
        LockfileErrorKind::MissingKey("artifact")
    ));
    let plain = text.replace("https://docs.example.com/a/", "http://docs.example.com/a/");
    assert!(matches!(
        *parse(&plain).unwrap_err().kind,
        LockfileErrorKind::BadSource { .. }
    ));
    let registry = "version = 1\n[[skill]]\nname = \"x\"\nversion = \"1.0.0\"\n\
        source = \"registry+https://r.example\"\ndigest = \"sha256:00\"\n\
        checksum = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n";
    assert!(matches!(
        *parse(registry).unwrap_err().kind,
        LockfileErrorKind::WellKnownKeyElsewhere { key: "digest", .. }
    ));
}

/// The graph round-trips in one canonical form, and a lock whose edges
/// are unsorted, point at the skill itself or at a skill the lock does not
/// hold is refused at the entry's line.
#[test]
fn dependency_edges_round_trip_and_must_be_whole() {
    let mut lock = Lockfile::default();
    for mut s in sample() {
        if s.name.as_str() == "code-review" {
            s.dependencies = vec![
                SkillName::new("house-style").unwrap(),
                SkillName::new("local-thing").unwrap(),
            ];
        }
        lock.upsert(s);
    }
    let text = lock.to_toml_string();
    assert!(
        text.contains("dependencies = [\"house-style\", \"local-thing\"]\n"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap(), lock);

    let edges = "\"house-style\", \"local-thing\"";
    let refused = |to: &str, says: &str, at: &str| {
        let bad = text.replacen(edges, to, 1);
        let e = parse(&bad).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        let line = bad.lines().position(|l| l.starts_with(at)).unwrap() + 1;
        assert_eq!(e.line, line, "{e}");
    };
    let at_edges = "dependencies = ";
    refused("\"local-thing\", \"house-style\"", "sorted", at_edges);
    refused("\"code-review\"", "sorted", at_edges);
    refused("\"ghost\"", "depends on `ghost`", "name = \"code-review\"");
}

#[test]
fn signed_by_round_trips_after_the_checksum_and_only_on_registry_entries() {
    let mut lock = Lockfile::default();
    for mut s in sample() {
        if matches!(s.source, LockedSource::Registry { .. }) {
            s.signed_by = Some("0123456789abcdef".into());
        }
        lock.upsert(s);
    }
    let text = lock.to_toml_string();
    assert!(
        text.contains(&format!(
            "checksum = \"{}\"\nsigned-by = \"0123456789abcdef\"\n",
            sum(b"code-review")
        )),
        "{text}"
    );
    assert_eq!(text.matches("signed-by").count(), 1, "{text}");
    let back = parse(&text).unwrap();
    assert_eq!(back, lock);
    assert_eq!(back.to_toml_string(), text);
    // A lock from before signatures reads as unsigned entries.
    let old = text.replace("signed-by = \"0123456789abcdef\"\n", "");
    let back = parse(&old).unwrap();
    assert!(back.skills.iter().all(|s| s.signed_by.is_none()));
    // The signing key changes nothing that is installed.
    let (a, b) = (&lock.skills[0], &back.skills[0]);
    assert!(!a.pins_other_than(b));

    let good = format!("sha256:{}", "a".repeat(64));
    for (source, value, wanted) in [
        ("registry+https://r", "\"UPPER\"", "invalid `signed-by`"),
        ("registry+https://r", "\"\"", "invalid `signed-by`"),
        ("registry+https://r", "7", "`signed-by` must be a string"),
        (
            "path+./x",
            "\"0123456789abcdef\"",
            "is not a registry or git source",
        ),
        (
            "git+https://h/r.git#0123456789abcdef0123456789abcdef01234567",
            "\"0123456789abcdef\"",
            "principals and key fingerprint",
        ),
        (
            "git+https://h/r.git#0123456789abcdef0123456789abcdef01234567",
            "\"a (SHA256:x y)\"",
            "principals and key fingerprint",
        ),
    ] {
        let text = format!(
            "version = 1\n[[skill]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"{source}\"\nchecksum = \"{good}\"\nsigned-by = {value}\n"
        );
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.to_string().contains(wanted), "{e}");
    }
}

#[test]
fn a_git_entry_records_who_signed_its_commit() {
    let mut lock = Lockfile::default();
    let signer =
        "alice@example.com,alice@corp (SHA256:J2jRx4lRKOqP1bH1mXcTnsbYm6Dqy6cJ0nR2mTqG7wA)";
    for mut s in sample() {
        if matches!(s.source, LockedSource::Git { .. }) {
            s.signed_by = Some(signer.into());
        }
        lock.upsert(s);
    }
    let text = lock.to_toml_string();
    assert!(
        text.contains(&format!("signed-by = \"{signer}\"\n")),
        "{text}"
    );
    let back = parse(&text).unwrap();
    assert_eq!(back, lock);
    assert_eq!(back.to_toml_string(), text);
}

#[test]
fn a_git_entry_records_its_plugin_and_the_reader_checks_it() {
    let mut git = sample().remove(2);
    git.plugin = Some(PluginPin {
        name: SkillName::new("document-skills").unwrap(),
        version: Some(semver::Version::new(6, 2, 0)),
    });
    let mut lock = Lockfile::default();
    lock.upsert(git);
    let text = lock.to_toml_string();
    assert!(
        text.contains("plugin = \"document-skills\"\nplugin-version = \"6.2.0\"\n"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap(), lock);
    let good = sum(b"x");
    for (source, keys, want) in [
        ("path+./x", "plugin = \"p\"\n", "is not a git source"),
        (
            "git+https://h/r.git#0123456789abcdef0123456789abcdef01234567",
            "plugin = \"Bad Name\"\n",
            "invalid plugin",
        ),
        (
            "git+https://h/r.git#0123456789abcdef0123456789abcdef01234567",
            "plugin = \"p\"\nplugin-version = \"one\"\n",
            "invalid plugin-version",
        ),
        (
            "git+https://h/r.git#0123456789abcdef0123456789abcdef01234567",
            "plugin-version = \"1.0.0\"\n",
            "without `plugin`",
        ),
    ] {
        let text = format!(
            "version = 1\n[[skill]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"{source}\"\n{keys}checksum = \"{good}\"\n"
        );
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(want), "{keys}: {err}");
    }
}

#[test]
fn downloads_round_trip_sorted_and_belong_to_locked_skills() {
    let good = sum(b"x");
    let hex = "ab".repeat(32);
    let skill = |name: &str| {
        format!("[[skill]]\nname = \"{name}\"\nversion = \"1.0.0\"\nsource = \"path+./{name}\"\nchecksum = \"{good}\"\n")
    };
    let download = |name: &str, url: &str| {
        format!("[[download]]\nskill = \"{name}\"\nurl = \"{url}\"\nsha256 = \"{hex}\"\n")
    };
    let text = format!(
        "{HEADER}version = 1\n\n{}\n{}\n{}\n{}",
        skill("a"),
        skill("b"),
        download("a", "https://h/z"),
        download("b", "https://h/a")
    );
    let lock = parse(&text).unwrap();
    assert_eq!(lock.downloads.len(), 2);
    assert_eq!(lock.to_toml_string(), text);
    let a = SkillName::new("a").unwrap();
    assert_eq!(lock.download(&a, "https://h/z").unwrap().sha256, hex);

    let mut kept = Lockfile::default();
    kept.upsert(lock.get(&a).unwrap().clone());
    kept.keep_downloads(&lock);
    assert_eq!(kept.downloads.len(), 1, "b's download goes with b");

    for (downloads, want) in [
        (download("c", "https://h/z"), "not locked"),
        (download("a", "http://example.com/z"), "plain http"),
        (
            download("b", "https://h/a") + "\n" + &download("a", "https://h/z"),
            "sorted",
        ),
        (
            download("a", "https://h/z").replace(&hex, "XYZ"),
            "64 lower-case",
        ),
        (download("a", "https://h/z") + "extra = 1\n", "unknown key"),
    ] {
        let text = format!("version = 1\n{}{}{}", skill("a"), skill("b"), downloads);
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(want), "{downloads}: {err}");
    }
}
