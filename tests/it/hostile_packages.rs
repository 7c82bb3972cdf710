//! Hostile package archives, end to end: a mock registry serves each
//! archive with a correct checksum (so the checksum passes and the
//! unpacker and the identity check are what must refuse), and the real
//! CLI runs `skillpm add evil@1` and then `skillpm install` in a project
//! that already has a good skill installed.
//!
//! Each archive is also published to a fresh real `skillpm-registry`,
//! which must answer 400 or 413 and store nothing.
//!
//! Each case must: exit 1 with one `error:` line naming the package, leave
//! the install root, skills.toml and skills.lock byte-identical, create
//! nothing anywhere in the fixture outside the cache's tarball/index/tmp
//! areas (and leave `tmp` empty), and add no cache tree.

use crate::common;
use crate::mock;

use common::{run_refused, Fixture};
use mock::{good_package, skill_md, MockServer, RawTar};
use skillpm::source::registry::client::{RegistryClient, RegistryError};
use std::path::Path;
use tar::EntryType;

struct World {
    f: Fixture,
    _server: MockServer,
}

/// A project with `good@1.0.0` installed from a mock registry that also
/// serves `evil@1.0.0` as `evil`.
fn world(evil: Vec<u8>) -> World {
    let mut f = Fixture::new();
    let server = mock::registry(
        vec![
            ("good".into(), "1.0.0".into(), good_package("good", "1.0.0")),
            ("evil".into(), "1.0.0".into(), evil),
        ],
        |_, _| None,
    );
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f.ok(&["init"]);
    f.ok(&["add", "good@1"]);
    assert!(f.project_root().join("good/SKILL.md").is_file());
    World { f, _server: server }
}

/// Refused by the client (see [`refused_by_client`]) and by a real
/// `skillpm-registry` on publish (see [`refused_by_server`]).
fn refused(evil: Vec<u8>, mention: &[&str]) -> String {
    refused_by_server(&evil);
    refused_by_client(evil, mention)
}

/// Publishing `evil` to a fresh real registry answers 400 or 413, and the
/// server stores nothing: no blob, no scratch files, no index entry.
fn refused_by_server(evil: &[u8]) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let reg = common::Registry::start(&data);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = RegistryClient::new(&reg.url, Some(reg.token.clone())).expect("client");
    match rt.block_on(client.publish(evil.to_vec())) {
        Err(RegistryError::Status { status, .. }) if status == 400 || status == 413 => {}
        other => panic!("server did not refuse the archive: {other:?}"),
    }
    for dir in ["blobs", "tmp"] {
        let left = common::tree::entries(&data.join(dir)).expect("data dir");
        assert!(left.is_empty(), "server kept {dir}/{left:?}");
    }
    // reqwest is built without a crypto provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let index = rt
        .block_on(reqwest::get(format!("{}/index/evil", reg.url)))
        .expect("GET index");
    assert_eq!(index.status().as_u16(), 404, "refused package is indexed");
}

/// Refused by `add`, and by `install` once the manifest asks for it.
fn refused_by_client(evil: Vec<u8>, mention: &[&str]) -> String {
    let w = world(evil);
    let f = &w.f;
    let mut mention = mention.to_vec();
    mention.push("evil");
    let err = run_refused(f, &["add", "evil@1"], &mention);
    let manifest = f.project.join("skills.toml");
    // Under `[skills]`: `add` put `[registries]` after it.
    let text = std::fs::read_to_string(&manifest)
        .expect("manifest")
        .replacen("[skills]\n", "[skills]\nevil = \"^1\"\n", 1);
    assert!(text.contains("evil = \"^1\""), "{text}");
    std::fs::write(&manifest, text).expect("write manifest");
    run_refused(f, &["install"], &mention);
    // The good skill is still intact and verifies.
    f.ok(&["verify"]);
    err
}

fn base() -> RawTar {
    let mut t = RawTar::new();
    t.file("SKILL.md", skill_md("evil", "1.0.0").as_bytes());
    t
}

#[test]
fn control_good_package_installs() {
    // The harness itself: the same server and flow accept a clean package.
    let w = world(base().file("scripts/ok.sh", b"ok\n").gz());
    w.f.ok(&["add", "evil@1"]);
    assert!(w.f.project_root().join("evil/scripts/ok.sh").is_file());
    w.f.ok(&["verify"]);
}

#[test]
fn parent_dir_escapes() {
    for name in [
        "../../../escape-parent",
        "scripts/../../../../escape-nested",
        "..",
    ] {
        let err = refused(base().file(name, b"pwned\n").gz(), &[]);
        assert!(err.contains("escape") || err.contains(".."), "{err}");
    }
}

#[test]
fn absolute_path() {
    let target = format!("/tmp/skillpm-hostile-abs-{}", std::process::id());
    refused(base().file(&target, b"pwned\n").gz(), &["absolute"]);
    assert!(!Path::new(&target).exists());
}

#[test]
fn symlinks_out_and_writes_through_them() {
    // A link to a file outside.
    refused(
        base()
            .entry(b"passwd", EntryType::Symlink, b"/etc/passwd", b"")
            .gz(),
        &["symlink"],
    );
    // A directory link, then a file written "into" it.
    refused(
        base()
            .entry(b"d", EntryType::Symlink, b"../../../", b"")
            .file("d/escape-through-link", b"pwned\n")
            .gz(),
        &["symlink"],
    );
}

#[test]
fn hardlinks() {
    refused(
        base()
            .entry(b"passwd", EntryType::Link, b"/etc/passwd", b"")
            .gz(),
        &["hardlink"],
    );
    refused(
        base()
            .entry(b"copy.md", EntryType::Link, b"SKILL.md", b"")
            .gz(),
        &["hardlink"],
    );
}

#[test]
fn devices_and_fifos() {
    for (ty, word) in [
        (EntryType::Char, "device"),
        (EntryType::Block, "device"),
        (EntryType::Fifo, "fifo"),
    ] {
        refused(base().entry(b"dev", ty, b"", b"").gz(), &[word]);
    }
}

#[test]
fn pax_and_gnu_long_names_disagreeing_with_ustar_name() {
    // The ustar name looks harmless; the extended name escapes.
    refused(
        base()
            .pax_path(b"../../../escape-pax")
            .file("innocent.md", b"pwned\n")
            .gz(),
        &[],
    );
    refused(
        base()
            .gnu_long_name(b"../../../escape-gnu")
            .file("innocent.md", b"pwned\n")
            .gz(),
        &[],
    );
    // An extended name that turns a second entry into a duplicate of
    // SKILL.md (replacing the frontmatter the first one declared).
    refused(
        base()
            .pax_path(b"SKILL.md")
            .file("notes.md", skill_md("other", "6.6.6").as_bytes())
            .gz(),
        &["more than once"],
    );
}

#[test]
fn duplicate_entries() {
    refused(
        base()
            .file("SKILL.md", skill_md("evil", "1.0.0").as_bytes())
            .gz(),
        &["more than once"],
    );
}

/// A package carrying its own `.git` (in any case): `git status` inside
/// the installed skill would run its `core.fsmonitor`. Refused by the
/// registry at publish and by the client, which used to install it hidden
/// from `status` and `load` and called it verified.
#[test]
fn a_git_directory_in_any_case() {
    for dir in [".git", ".GIT", "scripts/.Git"] {
        refused(
            base()
                .file(
                    &format!("{dir}/config"),
                    b"[core]\n\tfsmonitor = touch /tmp/pwned\n",
                )
                .gz(),
            &["`.git`"],
        );
    }
}

#[test]
fn case_only_duplicates() {
    refused(
        base()
            .file("scripts/run.sh", b"a\n")
            .file("scripts/RUN.sh", b"b\n")
            .gz(),
        &["case"],
    );
}

#[test]
fn newline_backslash_and_nul_in_names() {
    for name in [
        &b"evil\nname.md"[..],
        b"..\\..\\..\\escape-backslash",
        b"bell\x07.md",
        b"esc\x1b[31m.md",
    ] {
        let err = refused(base().entry(name, EntryType::Regular, b"", b"x").gz(), &[]);
        // The name is escaped: the message stays one printable line.
        assert!(
            !err.trim_end().contains('\x1b') && !err.trim_end().contains('\x07'),
            "{err:?}"
        );
    }
    // NUL can only arrive through an extended (PAX) name.
    refused(
        base()
            .pax_path(b"ok\0/../../../escape-nul")
            .file("ok.md", b"x")
            .gz(),
        &[],
    );
}

#[test]
fn hundred_thousand_entries() {
    let mut t = base();
    for i in 0..100_000u32 {
        t.entry(format!("f/{i}").as_bytes(), EntryType::Regular, b"", b"");
    }
    let bytes = mock::gz_fast(&t.finish());
    let start = std::time::Instant::now();
    refused(bytes, &["entries"]);
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
}

#[test]
fn gzip_bomb_stops_at_the_cap() {
    let bytes = mock::zero_bomb(
        &skill_md("evil", "1.0.0"),
        "bomb.bin",
        1 << 30, // 1 GiB of zeros
    );
    assert!(
        bytes.len() < 2 * 1024 * 1024,
        "bomb is {} bytes",
        bytes.len()
    );
    let start = std::time::Instant::now();
    refused(bytes, &["limit"]);
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    // The same bomb spread over many files under the per-file size, so
    // only the running total can stop it.
    let many = mock::zero_bomb_files(&skill_md("evil", "1.0.0"), 40, 30 << 20);
    refused(many, &["limit"]);
}

#[test]
fn oversized_skill_md() {
    let mut md = skill_md("evil", "1.0.0");
    md.push_str(&"x".repeat(300 * 1024));
    refused(
        RawTar::new().file("SKILL.md", md.as_bytes()).gz(),
        &["SKILL.md"],
    );
}

#[test]
fn no_skill_md() {
    refused(
        RawTar::new().file("README.md", b"# nothing here\n").gz(),
        &["no SKILL.md"],
    );
    // Only nested deeper is not enough either.
    refused(
        RawTar::new()
            .file("sub/SKILL.md", skill_md("evil", "1.0.0").as_bytes())
            .gz(),
        &["no SKILL.md"],
    );
}

#[test]
fn skill_md_name_or_version_differs_from_index() {
    // A publisher may publish `good` or 9.9.9 — only the client knows what
    // the index claimed, so only the client can refuse these two.
    refused_by_client(
        RawTar::new()
            .file("SKILL.md", skill_md("good", "1.0.0").as_bytes())
            .gz(),
        &["`good`"],
    );
    refused_by_client(
        RawTar::new()
            .file("SKILL.md", skill_md("evil", "9.9.9").as_bytes())
            .gz(),
        &["9.9.9"],
    );
    // No version at all: the server refuses it unless the publisher names
    // one (`publish --version`); a client installs it under the version
    // the index gives, as such a publish records it.
    refused_by_server(
        &RawTar::new()
            .file(
                "SKILL.md",
                b"---\nname: evil\ndescription: no version\n---\n",
            )
            .gz(),
    );
}
