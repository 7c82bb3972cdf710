//! skills.toml's `[trust] git-allowed-signers`: real repositories with
//! commits really signed (`git commit -S` with `gpg.format=ssh`, keys from
//! `ssh-keygen`), fetched over `file://` by the real binary. A commit
//! signed by a listed key installs and the lock records who signed it; an
//! unsigned one, one signed by another key, and one whose key the file
//! allows only for another namespace are refused with nothing written.

use crate::common;
use common::{stderr, tree, Fixture};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `ssh-keygen` on this process's PATH, or `None` (the test skips: git
/// needs it to sign with SSH keys) unless SKILLPM_REQUIRE_SSH_KEYGEN=1.
fn ssh_keygen() -> Option<()> {
    let found = Command::new("ssh-keygen").arg("-?").output().is_ok();
    if !found {
        common::third_party_missing(
            "SKILLPM_REQUIRE_SSH_KEYGEN",
            "signed-commit tests",
            "ssh-keygen is not installed (git signs with SSH keys through it)",
        );
        return None;
    }
    Some(())
}

/// A new ed25519 key at `dir/name` (and `.pub`); its public line and its
/// SHA256 fingerprint.
fn keygen(dir: &Path, name: &str) -> (PathBuf, String, String) {
    let key = dir.join(name);
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen")
        .success();
    assert!(ok, "ssh-keygen");
    let public = std::fs::read_to_string(format!("{}.pub", key.display())).expect("public key");
    let out = Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(format!("{}.pub", key.display()))
        .output()
        .expect("ssh-keygen -l");
    let fingerprint = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .expect("fingerprint")
        .to_string();
    (key, public.trim().to_string(), fingerprint)
}

use common::git_stdout as git;

/// A repository holding the skill `house-style`, committed once: signed
/// with `key` when given. Its commit id.
fn make_repo(f: &Fixture, key: Option<&Path>) -> (PathBuf, String) {
    let repo = f.root().join("repo");
    f.write(
        &repo,
        "house-style/SKILL.md",
        "---\nname: house-style\ndescription: House style rules\nversion: \"1.0.0\"\n---\nbody\n",
    );
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    match key {
        Some(k) => {
            let signing = format!("user.signingkey={}", k.display());
            git(
                &repo,
                &[
                    "-c",
                    "gpg.format=ssh",
                    "-c",
                    &signing,
                    "commit",
                    "-S",
                    "-qm",
                    "signed",
                ],
            )
        }
        None => git(&repo, &["commit", "-qm", "unsigned"]),
    };
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    (repo, commit)
}

/// A project with `[trust]` naming `allowed_signers` holding `lines`.
fn trusting(f: &Fixture, lines: &str) {
    f.ok(&["init"]);
    let manifest = f.project.join("skills.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[trust]\ngit-allowed-signers = \"allowed_signers\"\n");
    std::fs::write(&manifest, text).unwrap();
    f.write(&f.project, "allowed_signers", lines);
}

/// What a refused run must leave as it was: the project (manifest, lock,
/// installed skills).
fn project_state(f: &Fixture) -> tree::Snapshot {
    tree::snapshot(&f.project, &tree::under(&[]))
}

/// Runs `skillpm --quiet ARGS`, which must fail with one line naming
/// each of `mention`, and leave the project as it was.
fn refused(f: &Fixture, args: &[&str], mention: &[&str]) -> String {
    let before = project_state(f);
    let mut full = vec!["--quiet"];
    full.extend_from_slice(args);
    let out = f.skillpm(&full);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    for m in mention {
        assert!(err.contains(m), "stderr should mention {m:?}: {err}");
    }
    if let Some(changes) = tree::changes(&before, &project_state(f)) {
        panic!("skillpm {args:?} changed the project: {changes}");
    }
    assert!(!f.project_root().join("house-style").exists());
    err
}

fn add_args(repo: &Path) -> [String; 3] {
    [
        "add".into(),
        format!("git+file://{}", repo.display()),
        "--path=house-style".into(),
    ]
}

fn args(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

#[test]
fn a_commit_signed_by_an_allowed_key_installs_and_the_lock_records_the_signer() {
    let Some(()) = ssh_keygen() else { return };
    let f = Fixture::new();
    f.link_bin("git");
    let keys = f.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, public, fingerprint) = keygen(&keys, "alice");
    let (repo, _) = make_repo(&f, Some(&key));
    trusting(
        &f,
        &format!("# the team\n\"alice@example.com,alice@corp\" namespaces=\"git\" {public}\n"),
    );
    f.ok(&args(&add_args(&repo)));
    assert!(f.project_root().join("house-style/SKILL.md").is_file());
    let skills = common::lock_skills(&f.project);
    assert_eq!(skills.len(), 1);
    let wanted = format!("alice@example.com,alice@corp ({fingerprint})");
    assert_eq!(skills[0]["signed-by"].as_str(), Some(wanted.as_str()));
    let lock = std::fs::read_to_string(f.project.join("skills.lock")).unwrap();

    // A restore under --locked checks it again and installs the same.
    std::fs::remove_dir_all(f.project.join(".agents")).unwrap();
    std::fs::remove_dir_all(&f.cache).unwrap();
    f.ok(&["install", "--locked"]);
    assert!(f.project_root().join("house-style/SKILL.md").is_file());
    // A run with nothing to do keeps the signer.
    f.ok(&["install"]);
    assert_eq!(
        std::fs::read_to_string(f.project.join("skills.lock")).unwrap(),
        lock
    );

    // The key's line removed (a leak, say): the next run refuses what it
    // signed, installed and locked or not.
    let (_, bob, _) = keygen(&keys, "bob");
    f.write(
        &f.project,
        "allowed_signers",
        format!("bob@example.com {bob}\n"),
    );
    let before = project_state(&f);
    let out = f.skillpm(&["--quiet", "install", "--locked"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&fingerprint) && err.contains("do not list"),
        "{err}"
    );
    assert!(tree::changes(&before, &project_state(&f)).is_none());
}

#[test]
fn an_unsigned_commit_is_refused_and_nothing_is_written() {
    let Some(()) = ssh_keygen() else { return };
    let f = Fixture::new();
    f.link_bin("git");
    let keys = f.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (_, public, _) = keygen(&keys, "alice");
    let (repo, commit) = make_repo(&f, None);
    trusting(&f, &format!("alice@example.com {public}\n"));
    refused(
        &f,
        &args(&add_args(&repo)),
        &["house-style", &commit[..12], "is not signed"],
    );
    assert!(!f.project.join("skills.lock").exists());
}

#[test]
fn a_commit_signed_by_a_key_not_listed_is_refused() {
    let Some(()) = ssh_keygen() else { return };
    let f = Fixture::new();
    f.link_bin("git");
    let keys = f.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (_, alice, _) = keygen(&keys, "alice");
    let (mallory, _, mallory_fp) = keygen(&keys, "mallory");
    let (repo, commit) = make_repo(&f, Some(&mallory));
    trusting(&f, &format!("alice@example.com {alice}\n"));
    refused(
        &f,
        &args(&add_args(&repo)),
        &["house-style", &commit[..12], &mallory_fp, "do not list"],
    );
}

#[test]
fn a_key_allowed_only_for_another_namespace_is_refused() {
    let Some(()) = ssh_keygen() else { return };
    let f = Fixture::new();
    f.link_bin("git");
    let keys = f.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, public, _) = keygen(&keys, "alice");
    let (repo, commit) = make_repo(&f, Some(&key));
    trusting(
        &f,
        &format!("alice@example.com namespaces=\"file\" {public}\n"),
    );
    refused(
        &f,
        &args(&add_args(&repo)),
        &["house-style", &commit[..12], "namespace"],
    );
}

#[test]
fn a_locked_unsigned_commit_is_refused_once_trust_is_set() {
    let Some(()) = ssh_keygen() else { return };
    let f = Fixture::new();
    f.link_bin("git");
    let keys = f.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (_, public, _) = keygen(&keys, "alice");
    let (repo, commit) = make_repo(&f, None);
    // Locked and installed before [trust] was set.
    f.ok(&["init"]);
    f.ok(&args(&add_args(&repo)));
    std::fs::remove_dir_all(f.project.join(".agents")).unwrap();
    let manifest = f.project.join("skills.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[trust]\ngit-allowed-signers = \"allowed_signers\"\n");
    std::fs::write(&manifest, text).unwrap();
    f.write(
        &f.project,
        "allowed_signers",
        format!("alice@example.com {public}\n"),
    );
    refused(
        &f,
        &["install", "--locked"],
        &["house-style", &commit[..12], "is not signed"],
    );
}

#[test]
fn a_broken_allowed_signers_file_is_refused_with_its_line() {
    let f = Fixture::new();
    f.link_bin("git");
    trusting(
        &f,
        "# ok\nalice@example.com cert-authority ssh-ed25519 AAAA\n",
    );
    let out = f.skillpm(&["--quiet", "install"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("allowed_signers: line 2: cert-authority"),
        "{err}"
    );
}
