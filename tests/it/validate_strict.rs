//! `skillpm validate` is the authoring gate and follows the Agent Skills
//! specification to the letter, while `status`, `prompt` and `load` stay
//! lenient; checked through the real binary, and against the reference
//! validator `skills-ref` on the same fixtures.

use crate::common;
use common::{stderr, stdout, Fixture, Registry};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn validate(f: &Fixture, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    let out = f.skillpm(&all);
    (out.status.code(), stdout(&out), stderr(&out))
}

fn arg(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn md(dir: &Path) -> String {
    dir.join("SKILL.md").display().to_string()
}

/// A skill `validate` accepts publishes, or `validate` says why not: one
/// without a version gets a note naming where the version goes and the
/// `--version` flag; one with `metadata.version` gets none.
#[test]
fn validate_says_when_publish_would_want_a_version() {
    let f = Fixture::new();
    let bare = f.skill(&f.project_root(), "bare", "name: bare\ndescription: d", "");
    let (code, out, err) = validate(&f, &[arg(&bare)]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        err.contains(&format!("{} declares no version", md(&bare))),
        "{err}"
    );
    assert!(
        err.contains("under `metadata:`") && err.contains("--version"),
        "{err}"
    );
    let versioned = f.skill(
        &f.project_root(),
        "versioned",
        "name: versioned\ndescription: d\nmetadata:\n  version: \"1.0.0\"",
        "",
    );
    let (code, out, err) = validate(&f, &[arg(&versioned)]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!err.contains("no version"), "{err}");
}

// ------------------------------------------------------------ item 16

#[test]
fn unknown_keys_are_errors_and_skillpm_keys_need_the_dialect_flag() {
    let f = Fixture::new();
    let dir = f.skill(
        &f.project_root(),
        "tool",
        "name: tool\ndescription: d\nversion: \"1.0.0\"\nsven:\n  requires_env: [HOME]\nhomepage: https://x\nmetadata:\n  openclaw: {always: true}",
        "",
    );
    let md = md(&dir);
    let (code, out, _) = validate(&f, &[arg(&dir)]);
    assert_eq!(code, Some(1), "{out}");
    for (line, key) in [(4, "version"), (5, "sven"), (7, "homepage")] {
        assert!(
            out.contains(&format!(
                "{md}:{line}: error: unknown frontmatter key `{key}`"
            )),
            "{out}"
        );
    }
    assert!(
        out.contains(&format!("{md}:8: error: `metadata.openclaw`")),
        "{out}"
    );
    assert!(out.contains("pass `--dialect skillpm`"), "{out}");
    assert!(
        out.contains("put other properties under `metadata`"),
        "{out}"
    );
    assert!(!out.contains("warning"), "{out}");

    // The skillpm dialect accepts what skillpm reads, and nothing else.
    let (code, out, _) = validate(&f, &["--dialect", "skillpm", arg(&dir)]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with(&format!(
        "{md}:7: error: unknown frontmatter key `homepage`"
    )));
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: tool\ndescription: d\nversion: \"1.0.0\"\nrequires: {env: [HOME]}\nalways: true\n---\n",
    )
    .expect("write");
    assert_eq!(
        validate(&f, &["--dialect", "skillpm", arg(&dir)]).0,
        Some(0)
    );
    let (code, out, _) = validate(&f, &[arg(&dir)]);
    assert_eq!(code, Some(1), "{out}");
    // An unknown dialect is a usage error.
    assert_eq!(validate(&f, &["--dialect", "sven", arg(&dir)]).0, Some(2));

    // Loading stays lenient: the skill is eligible.
    common::find(&f.status_json(), "tool", "eligible");

    let help = f.ok(&["validate", "--help"]);
    for word in [
        "--dialect",
        "agent-skills",
        "skillpm",
        "--hidden",
        "metadata.openclaw",
    ] {
        assert!(help.contains(word), "{word} missing from:\n{help}");
    }
}

#[test]
fn registry_keeps_accepting_what_it_accepted_before() {
    let mut f = Fixture::new();
    let _registry = Registry::for_fixture(&mut f); // kept alive until the end
    let dir = f.skill(
        &f.root().join("src"),
        "lenient",
        "name: lenient\ndescription: Use when: publishing\nversion: \"1.0.0\"\nhomepage: https://x\ncompatibility: \"\"\nallowed-tools:\n  - Read\nlicense: 2",
        "body\n",
    );
    assert_eq!(validate(&f, &[arg(&dir)]).0, Some(1));
    f.ok(&["publish", arg(&dir)]);
    // What the registry always refused, it still refuses.
    let bad = f.skill(
        &f.root().join("src"),
        "strict",
        "name: strict\ndescription: d\nversion: \"1.0.0\"\nmetadata:\n  nested: {a: b}",
        "",
    );
    let out = f.skillpm(&["publish", arg(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("metadata.nested"), "{}", stderr(&out));
}

// ------------------------------------------------------------ item 17

#[test]
fn unquoted_colon_fails_validate_but_still_loads() {
    let f = Fixture::new();
    let dir = f.skill(
        &f.project_root(),
        "colon",
        "name: colon\ndescription: Use when: you need it",
        "Colon body\n",
    );
    let (code, out, err) = validate(&f, &[arg(&dir)]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!(
            "{}:3: error: invalid YAML: unquoted `: `",
            md(&dir)
        )),
        "{out}"
    );
    let s = f.status_json();
    let entry = common::find(&s, "colon", "eligible");
    assert_eq!(entry["description"], "Use when: you need it");
    assert!(f.ok(&["load", "colon"]).contains("Colon body"));
}

// ------------------------------------------------------------ item 18

#[test]
fn compatibility_must_be_non_empty_and_allowed_tools_a_string() {
    let f = Fixture::new();
    let root = f.project_root();
    let dir = f.skill(
        &root,
        "shapes",
        "name: shapes\ndescription: d\ncompatibility: \"\"\nallowed-tools:\n  - Read\n  - Bash(git:*)",
        "",
    );
    let md = md(&dir);
    let (code, out, _) = validate(&f, &[arg(&dir)]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("{md}:4: error: `compatibility` is empty")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{md}:5: error: `allowed-tools` must be one space-separated string, such as `allowed-tools: Read Bash(git:*)`"
        )),
        "{out}"
    );
    let null = f.skill(
        &root,
        "null-compat",
        "name: null-compat\ndescription: d\ncompatibility:",
        "",
    );
    let (code, out, _) = validate(&f, &[arg(&null)]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(":4: error: `compatibility` must be a string"),
        "{out}"
    );
    let good = f.skill(
        &root,
        "good-shapes",
        &format!(
            "name: good-shapes\ndescription: d\ncompatibility: {}\nallowed-tools: Read Bash(git:*)",
            "c".repeat(500)
        ),
        "",
    );
    assert_eq!(validate(&f, &[arg(&good)]).0, Some(0));
    // Loading stays lenient about both.
    common::find(&f.status_json(), "shapes", "eligible");
}

// ------------------------------------------------------------ item 19

#[test]
fn yaml_1_1_booleans_are_strings_for_the_engine_and_validate() {
    let f = Fixture::new();
    let root = f.project_root();
    for word in ["yes", "no", "on", "off", "y", "n"] {
        f.skill(
            &root,
            word,
            &format!("name: {word}\ndescription: {word}"),
            "",
        );
    }
    let (code, out, err) = validate(&f, &[arg(&root)]);
    assert_eq!(code, Some(0), "{out}{err}");
    let s = f.status_json();
    for word in ["yes", "no", "on", "off", "y", "n"] {
        assert_eq!(common::find(&s, word, "eligible")["description"], word);
    }
    let prompt = f.ok(&["prompt"]);
    assert!(
        prompt.contains("<description>off</description>"),
        "{prompt}"
    );
}

// ------------------------------------------------------------ item 20

#[test]
fn a_skill_md_path_validates_that_skill() {
    let f = Fixture::new();
    let good = f.skill(f.root(), "by-file", "name: by-file\ndescription: d", "");
    assert_eq!(validate(&f, &[&md(&good)]).0, Some(0));
    let bad = f.skill(f.root(), "bad-file", "name: other\ndescription: d", "");
    let (code, out, _) = validate(&f, &[&md(&bad)]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains(&format!(
            "{}:2: error: `name` \"other\" must equal the directory name \"bad-file\"",
            md(&bad)
        )),
        "{out}"
    );
    // Relative to the working directory, and `.` inside the skill.
    let mut cmd = f.command(env!("CARGO_BIN_EXE_skillpm"));
    let out = cmd
        .current_dir(&good)
        .args(["validate", "SKILL.md"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let mut cmd = f.command(env!("CARGO_BIN_EXE_skillpm"));
    let out = cmd
        .current_dir(&good)
        .args(["validate", "."])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // Neither a skill file nor a directory: one clear error each.
    let other = f.write(f.root(), "README.md", "# hi\n");
    let (code, out, _) = validate(&f, &[arg(&other)]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("not a SKILL.md file or a directory of skills"),
        "{out}"
    );
    let (code, out, _) = validate(&f, &[arg(&f.root().join("missing"))]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("missing: error: no such file or directory"),
        "{out}"
    );
}

#[test]
fn dot_directories_are_skipped_with_a_note_unless_hidden() {
    let f = Fixture::new();
    let repo = f.root().join("openai-skills");
    f.skill(
        &repo.join("skills"),
        "plain",
        "name: plain\ndescription: d",
        "",
    );
    let curated = f.skill(
        &repo.join("skills/.curated"),
        "broken",
        "name: Broken\ndescription: d",
        "",
    );
    f.skill(
        &repo.join("skills/.system"),
        "sys",
        "name: sys\ndescription: d",
        "",
    );
    let (code, out, err) = validate(&f, &[arg(&repo)]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "note: skipped 2 skill(s) under dot-directories of {} (.curated, .system); pass --hidden to validate them",
            repo.display()
        )
    );
    let (code, out, err) = validate(&f, &[arg(&repo), "--hidden"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!("{}:2: error: `name` \"Broken\"", md(&curated))),
        "{out}"
    );
    assert!(!err.contains("note:"), "{err}");
    // Quiet drops the note.
    let (_, _, err) = validate(&f, &["-q", arg(&repo)]);
    assert!(!err.contains("note:"), "{err}");
    // Only dot-directories: nothing was checked, which is an error.
    let only = f.root().join("only-hidden");
    f.skill(&only.join(".curated"), "x", "name: x\ndescription: d", "");
    let (code, out, err) = validate(&f, &[arg(&only)]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("no SKILL.md found here or below"), "{out}");
    assert!(err.contains("skipped 1 skill(s)"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_skill_is_named_after_the_link() {
    let f = Fixture::new();
    let store = f.root().join("store");
    f.skill(&store, "v2-checkout", "name: linked\ndescription: d", "");
    let tree = f.root().join("tree");
    std::fs::create_dir_all(&tree).expect("mkdir");
    std::os::unix::fs::symlink(store.join("v2-checkout"), tree.join("linked")).expect("symlink");
    assert_eq!(validate(&f, &[arg(&tree.join("linked"))]).0, Some(0));
    assert_eq!(validate(&f, &[&md(&tree.join("linked"))]).0, Some(0));
    assert_eq!(validate(&f, &[arg(&tree)]).0, Some(0));
    // The target's own name does not count.
    let (code, out, _) = validate(&f, &[arg(&store.join("v2-checkout"))]);
    assert_eq!(code, Some(1));
    assert!(out.contains("directory name \"v2-checkout\""), "{out}");
}

// ------------------------------------------------------------ item 21

#[test]
fn size_cap_is_reported_as_skillpms_own_limit() {
    let f = Fixture::new();
    let dir = f.root().join("big");
    let body = "x".repeat(300_000);
    f.write(
        &dir,
        "SKILL.md",
        format!("---\nname: big\ndescription: d\n---\n{body}\n"),
    );
    let size = std::fs::metadata(dir.join("SKILL.md")).expect("stat").len();
    let (code, out, _) = validate(&f, &[arg(&dir)]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out.lines().next().unwrap_or(""),
        format!(
            "{}: error: SKILL.md is {size} bytes; skillpm's safety limit is 262144 bytes (not a spec rule)",
            md(&dir)
        )
    );
}

// ------------------------------------------------- the reference validator

/// A fixture: directory name, raw SKILL.md bytes, skillpm's verdict.
struct Case {
    dir: String,
    text: String,
    valid: bool,
    /// Why `skills-ref` 0.1.1 gives the opposite verdict, where it does.
    differs: Option<&'static str>,
}

fn case(dir: impl Into<String>, text: impl Into<String>, valid: bool) -> Case {
    Case {
        dir: dir.into(),
        text: text.into(),
        valid,
        differs: None,
    }
}

fn differs(dir: &'static str, text: &str, valid: bool, why: &'static str) -> Case {
    Case {
        differs: Some(why),
        ..case(dir, text, valid)
    }
}

fn fm(dir: &str, rest: &str) -> String {
    format!("---\nname: {dir}\ndescription: A skill for tests.\n{rest}---\nBody\n")
}

fn cases() -> Vec<Case> {
    vec![
        case("minimal", fm("minimal", ""), true),
        case(
            "full",
            fm(
                "full",
                "license: Apache-2.0\ncompatibility: Requires git and jq\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: example-org\n  version: \"1.0\"\n",
            ),
            true,
        ),
        case("folded", "---\nname: folded\ndescription: >-\n  Folded over\n  two lines.\n---\n", true),
        case("crlf", "---\r\nname: crlf\r\ndescription: d\r\n---\r\nbody\r\n", true),
        case("yes", "---\nname: yes\ndescription: y\n---\n", true),
        case("max-desc", format!("---\nname: max-desc\ndescription: {}\n---\n", "d".repeat(1024)), true),
        case("long-desc", format!("---\nname: long-desc\ndescription: {}\n---\n", "d".repeat(1025)), false),
        case("max-compat", fm("max-compat", &format!("compatibility: {}\n", "c".repeat(500))), true),
        case("long-compat", fm("long-compat", &format!("compatibility: {}\n", "c".repeat(501))), false),
        case("unknown-version", fm("unknown-version", "version: \"1.0.0\"\n"), false),
        case("unknown-homepage", fm("unknown-homepage", "homepage: https://example.com\n"), false),
        case("unknown-requires", fm("unknown-requires", "requires:\n  bins:\n    - git\n"), false),
        case("mismatch", fm("other-name", ""), false),
        case("upper", "---\nname: Upper\ndescription: d\n---\n", false),
        case("double--hyphen", fm("double--hyphen", ""), false),
        case("trailing-", fm("trailing-", ""), false),
        case("a".repeat(65), fm(&"a".repeat(65), ""), false),
        case("no-name", "---\ndescription: d\n---\n", false),
        case("no-description", "---\nname: no-description\n---\n", false),
        case("empty-description", "---\nname: empty-description\ndescription: \"\"\n---\n", false),
        case("colon", "---\nname: colon\ndescription: Use when: you need it\n---\n", false),
        case("duplicate", "---\nname: duplicate\ndescription: a\ndescription: b\n---\n", false),
        case("no-frontmatter", "# Just markdown\n", false),
        case("unclosed", "---\nname: unclosed\ndescription: d\n", false),
        case("list-frontmatter", "---\n- name\n---\n", false),
        // Where the specification's text is stricter than skills-ref 0.1.1:
        differs(
            "empty-compat",
            &fm("empty-compat", "compatibility: \"\"\n"),
            false,
            "the spec says 1-500 characters; skills-ref checks only the maximum",
        ),
        differs(
            "tools-list",
            &fm("tools-list", "allowed-tools:\n  - Read\n"),
            false,
            "the spec says a space-separated string; skills-ref does not check it",
        ),
        differs(
            "nested-metadata",
            &fm("nested-metadata", "metadata:\n  author:\n    name: x\n"),
            false,
            "the spec says string values; skills-ref stringifies whatever it finds",
        ),
        // Where skills-ref's strictyaml reads less than YAML:
        differs(
            "flow-metadata",
            &fm("flow-metadata", "metadata: {author: x}\n"),
            true,
            "strictyaml refuses flow mappings, which are YAML",
        ),
        differs(
            "bom",
            "\u{feff}---\nname: bom\ndescription: d\n---\n",
            true,
            "skills-ref requires `---` as the very first bytes",
        ),
    ]
}

/// How to run `skills-ref`: its console script (named `skills-ref` in the
/// repository, `agentskills` in the 0.1.1 wheel), else its module.
fn reference_cli() -> Option<Vec<String>> {
    let candidates: [&[&str]; 3] = [
        &["skills-ref"],
        &["agentskills"],
        &["python3", "-m", "skills_ref.cli"],
    ];
    candidates.into_iter().find_map(|c| {
        let out = Command::new(c[0])
            .args(&c[1..])
            .arg("--help")
            .output()
            .ok()?;
        let help = String::from_utf8_lossy(&out.stdout);
        (out.status.success() && help.contains("validate"))
            .then(|| c.iter().map(|s| s.to_string()).collect())
    })
}

fn run_reference(cli: &[String], dir: &Path) -> Output {
    Command::new(&cli[0])
        .args(&cli[1..])
        .arg("validate")
        .arg(dir)
        .output()
        .expect("run skills-ref")
}

#[test]
fn verdicts_agree_with_the_reference_validator() {
    let f = Fixture::new();
    let root = f.root().join("corpus");
    let cases = cases();
    let dirs: Vec<PathBuf> = cases
        .iter()
        .map(|c| {
            let dir = root.join(&c.dir);
            f.write(&dir, "SKILL.md", &c.text);
            dir
        })
        .collect();
    for (c, dir) in cases.iter().zip(&dirs) {
        let (code, out, err) = validate(&f, &[arg(dir)]);
        assert_eq!(
            code,
            Some(if c.valid { 0 } else { 1 }),
            "{}: {out}{err}",
            c.dir
        );
    }

    let Some(cli) = reference_cli() else {
        let why = "skills-ref is not installed (python3 -m pip install skills-ref==0.1.1)";
        common::third_party_missing(
            "SKILLPM_REQUIRE_SKILLS_REF",
            "the comparison with the reference validator",
            why,
        );
        return;
    };
    let mut disagreements = Vec::new();
    for (c, dir) in cases.iter().zip(&dirs) {
        let out = run_reference(&cli, dir);
        let reference_valid = out.status.success();
        let expected = c.valid != c.differs.is_some();
        if reference_valid != expected {
            disagreements.push(format!(
                "{}: skillpm says {}, skills-ref says {} ({}){}",
                c.dir,
                if c.valid { "valid" } else { "invalid" },
                if reference_valid { "valid" } else { "invalid" },
                c.differs.unwrap_or("expected to agree"),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
