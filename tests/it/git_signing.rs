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
    keygen_of(dir, name, &["-t", "ed25519"])
}

/// A new key made by `ssh-keygen KIND…` (type and size), as [`keygen`].
fn keygen_of(dir: &Path, name: &str, kind: &[&str]) -> (PathBuf, String, String) {
    let key = dir.join(name);
    let ok = Command::new("ssh-keygen")
        .args(kind)
        .args(["-q", "-N", "", "-C", name, "-f"])
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
fn rsa_and_ecdsa_signatures_verify_as_ed25519_ones_do() {
    let Some(()) = ssh_keygen() else { return };
    // The key types ssh-keygen makes besides ed25519; git signs with RSA
    // keys as rsa-sha2-512.
    for kind in [
        &["-t", "ed25519"][..],
        &["-t", "rsa", "-b", "3072"],
        &["-t", "ecdsa", "-b", "256"],
        &["-t", "ecdsa", "-b", "384"],
        &["-t", "ecdsa", "-b", "521"],
    ] {
        let f = Fixture::new();
        f.link_bin("git");
        let keys = f.root().join("keys");
        std::fs::create_dir_all(&keys).unwrap();
        let (key, public, fingerprint) = keygen_of(&keys, "carol", kind);
        let (repo, _) = make_repo(&f, Some(&key));
        trusting(&f, &format!("carol@example.com {public}\n"));
        f.ok(&args(&add_args(&repo)));
        let skills = common::lock_skills(&f.project);
        let wanted = format!("carol@example.com ({fingerprint})");
        assert_eq!(
            skills[0]["signed-by"].as_str(),
            Some(wanted.as_str()),
            "{kind:?}"
        );

        // The same signature over a changed commit does not verify: the
        // signature is checked, not only who claims to have made it.
        let f3 = Fixture::new();
        f3.link_bin("git");
        let (repo3, commit) = make_repo(&f3, Some(&key));
        let forged = forge(&repo3, &commit);
        trusting(&f3, &format!("carol@example.com {public}\n"));
        let mut add = add_args(&repo3);
        add[1] = format!("{}@{forged}", add[1]);
        refused(&f3, &args(&add), &[&fingerprint, "does not verify"]);

        // Another key of the same kind is not carol's.
        let (_, other, _) = keygen_of(&keys, "mallory", kind);
        let f2 = Fixture::new();
        f2.link_bin("git");
        let (repo2, _) = make_repo(&f2, Some(&key));
        trusting(&f2, &format!("mallory@example.com {other}\n"));
        refused(
            &f2,
            &args(&add_args(&repo2)),
            &[&fingerprint, "do not list"],
        );
    }
}

/// A commit object like `commit` with its signature kept and its message
/// changed, written into `repo`'s objects; its id.
fn forge(repo: &Path, commit: &str) -> String {
    let object = git(repo, &["cat-file", "commit", commit]);
    let changed = object.replace("\nsigned", "\nsigned, then changed");
    assert_ne!(changed, object);
    let mut child = Command::new("git")
        .args(["hash-object", "-t", "commit", "-w", "--stdin"])
        .current_dir(repo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git hash-object");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{changed}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap().trim().to_string();
    git(repo, &["tag", "forged", &id]);
    id
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
