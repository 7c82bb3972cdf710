//! What the agent runs (`load`, `prompt`,
//! `status`) never loops through symlinks or blocks on a special file.

use crate::common;
use common::{output_within, stderr, Fixture};
use std::os::unix::fs::symlink;
use std::process::Stdio;
use std::time::Duration;

/// Runs skillpm with stdin held open (a pipe nobody writes), so a read of
/// `/dev/stdin` would block; fails the test if it has not ended in 20 s.
fn run_with_open_stdin(f: &Fixture, args: &[&str]) -> std::process::Output {
    let mut child = f
        .command(env!("CARGO_BIN_EXE_skillpm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    output_within(child, Duration::from_secs(20), &format!("skillpm {args:?}"))
}

#[test]
fn load_visits_each_directory_once_through_symlink_loops() {
    let f = Fixture::new();
    let dir = f.skill(&f.project_root(), "loopy", "description: loops", "body");
    f.write(&dir, "references/a.md", "a");
    symlink(".", dir.join("self")).unwrap();
    symlink("..", dir.join("references/up")).unwrap();
    symlink(&dir, dir.join("references/abs")).unwrap();
    let out = run_with_open_stdin(&f, &["load", "loopy"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("references/a.md"), "{text}");
    assert!(!text.contains("more file(s)"), "{text}");
}

/// `load` lists a skill's files by the rule `skillpm mcp` serves them
/// by: a link out of the skill (`refs -> ~/.ssh`) is not the skill's, so
/// nothing it leads to is named to the agent; a link inside it still is.
#[test]
fn load_names_no_file_reached_through_a_link_out_of_the_skill() {
    let f = Fixture::new();
    let dir = f.skill(&f.project_root(), "leaky", "description: leaks", "body");
    f.write(&dir, "references/guide.md", "g");
    let ssh = f.home.join(".ssh");
    f.write(&ssh, "id_ed25519", "PRIVATE KEY");
    symlink(&ssh, dir.join("refs")).unwrap();
    symlink("references", dir.join("docs")).unwrap();
    let out = run_with_open_stdin(&f, &["load", "leaky"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("id_ed25519"), "{text}");
    assert!(text.contains("guide.md"), "{text}");
}

#[test]
fn a_skill_md_that_is_a_device_or_fifo_is_invalid_not_a_hang() {
    let f = Fixture::new();
    f.skill(&f.project_root(), "fine", "description: fine", "body");
    for (name, target) in [("stdin", "/dev/stdin"), ("zero", "/dev/zero")] {
        let d = f.project_root().join(name);
        std::fs::create_dir_all(&d).unwrap();
        symlink(target, d.join("SKILL.md")).unwrap();
    }
    let fifo = f.project_root().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(fifo.join("SKILL.md"))
        .status()
        .is_ok_and(|s| s.success());
    for args in [&["prompt"][..], &["status", "--json"], &["load", "fine"]] {
        let out = run_with_open_stdin(&f, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let status = String::from_utf8_lossy(&run_with_open_stdin(&f, &["status", "--json"]).stdout)
        .into_owned();
    assert!(status.contains("\"fine\""), "{status}");
    if ok {
        assert!(status.contains("fifo"), "{status}");
    }
}
