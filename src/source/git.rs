//! Git sources, through the `git` command.
//!
//! git is run without a shell, with every user value after `--` or
//! `--end-of-options`, with `GIT_ALLOW_PROTOCOL` and `protocol.allow`
//! limited to the transports the spec allowlist accepts (`file` only when
//! the user asked for a `file://` URL), and with prompts disabled. Each URL
//! gets one bare clone in the cache; a locked commit that is already there
//! needs no network at all.
//!
//! The skill tree is exported with `git archive` and unpacked by the same
//! hardened unpacker as registry tarballs (so symlinks and odd entries in a
//! repository are refused), then packed deterministically: the lock's
//! checksum is the sha256 of that pack, which makes a git skill verifiable
//! exactly like a registry one.

use super::{identify, Packed, SourceError};
use crate::cache::Cache;
use crate::spec::{GitRef, GitUrl};
use skillpm_core::archive::{self, Limits};
use skillpm_core::checksum::Checksum;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn git_cmd(url: Option<&GitUrl>) -> Command {
    let allow = match url {
        Some(u) if u.is_file() => "https:ssh:file",
        _ => "https:ssh",
    };
    let mut c = Command::new("git");
    c.env("GIT_ALLOW_PROTOCOL", allow)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .args(["-c", "protocol.allow=never"])
        .args(["-c", "protocol.https.allow=always"])
        .args(["-c", "protocol.ssh.allow=always"]);
    if url.is_some_and(GitUrl::is_file) {
        c.args(["-c", "protocol.file.allow=always"]);
    }
    c.stdin(std::process::Stdio::null());
    c
}

fn run(mut c: Command, what: &str, url: &GitUrl) -> Result<Output, SourceError> {
    let out = c
        .output()
        .map_err(|e| SourceError::Git(format!("cannot run git ({e}); is git installed?")))?;
    if out.status.success() {
        return Ok(out);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // git may echo the URL it was given; never let credentials through.
    let err = err.replace(url.as_str(), &url.redacted());
    let line = err
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("git failed");
    Err(SourceError::Git(format!(
        "git {what} {} failed: {line}",
        url.redacted()
    )))
}

/// Makes sure the bare clone of `url` exists and is up to date.
pub fn fetch(cache: &Cache, url: &GitUrl) -> Result<PathBuf, SourceError> {
    let repo = cache.git_dir(url.redacted().as_str());
    if !repo.join("HEAD").is_file() {
        std::fs::create_dir_all(&repo)
            .map_err(|e| SourceError::Io(format!("{}: {e}", repo.display())))?;
        let mut c = git_cmd(Some(url));
        c.args(["init", "--bare", "--quiet", "--"]).arg(&repo);
        run(c, "init for", url)?;
    }
    let mut c = git_cmd(Some(url));
    c.arg("--git-dir")
        .arg(&repo)
        .args(["fetch", "--quiet", "--force", "--prune", "--no-tags", "--"])
        .arg(url.as_str())
        .args([
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
            "+HEAD:refs/skillpm/HEAD",
        ]);
    run(c, "fetch from", url)?;
    Ok(repo)
}

/// Resolves `r` to a full commit id in the bare clone.
pub fn resolve_ref(repo: &Path, url: &GitUrl, r: Option<&GitRef>) -> Result<String, SourceError> {
    let candidates: Vec<String> = match r {
        None => vec!["refs/skillpm/HEAD".into()],
        Some(GitRef::Tag(t)) => vec![format!("refs/tags/{t}")],
        Some(GitRef::Branch(b)) => vec![format!("refs/heads/{b}")],
        Some(GitRef::Rev(c)) => vec![c.clone()],
        Some(GitRef::Unspecified(x)) => vec![
            format!("refs/tags/{x}"),
            format!("refs/heads/{x}"),
            x.clone(),
        ],
    };
    for cand in &candidates {
        if let Some(c) = rev_parse(repo, url, cand)? {
            return Ok(c);
        }
    }
    let shown = r
        .map(|r| r.as_str().to_string())
        .unwrap_or_else(|| "HEAD".into());
    Err(SourceError::Git(format!(
        "`{shown}` is not a tag, branch or commit of {}",
        url.redacted()
    )))
}

fn rev_parse(repo: &Path, url: &GitUrl, rev: &str) -> Result<Option<String>, SourceError> {
    let mut c = git_cmd(Some(url));
    c.arg("--git-dir")
        .arg(repo)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"));
    let out = c
        .output()
        .map_err(|e| SourceError::Git(format!("cannot run git ({e}); is git installed?")))?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && is_full_commit(&id)).then_some(id))
}

pub fn is_full_commit(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether the bare clone already holds `commit` (so `--frozen` can work).
pub fn has_commit(cache: &Cache, url: &GitUrl, commit: &str) -> bool {
    let repo = cache.git_dir(url.redacted().as_str());
    repo.join("HEAD").is_file() && rev_parse(&repo, url, commit).ok().flatten().is_some()
}

/// Exports `subpath` of `commit` and packs it.
pub fn pack_commit(
    cache: &Cache,
    url: &GitUrl,
    commit: &str,
    subpath: Option<&str>,
    limits: &Limits,
) -> Result<Packed, SourceError> {
    let repo = cache.git_dir(url.redacted().as_str());
    let treeish = match subpath {
        Some(p) if !p.is_empty() && p != "." => format!("{commit}:{}", p.trim_end_matches('/')),
        _ => commit.to_string(),
    };
    let mut c = git_cmd(Some(url));
    c.arg("--git-dir")
        .arg(&repo)
        .args(["archive", "--format=tar.gz", "--end-of-options"])
        .arg(&treeish);
    let out = run(c, "archive of", url)?;
    let tmp_parent = cache.root().join("tmp");
    std::fs::create_dir_all(&tmp_parent)
        .map_err(|e| SourceError::Io(format!("{}: {e}", tmp_parent.display())))?;
    let tree = archive::unpack_to_new_dir(&out.stdout, None, &tmp_parent, limits)?;
    let shown = format!(
        "{}@{}:{}",
        url.redacted(),
        &commit[..12.min(commit.len())],
        subpath.unwrap_or(".")
    );
    let (name, version) = identify(tree.path(), &shown)?;
    let bytes = archive::pack_dir(tree.path())?;
    Ok(Packed {
        name,
        version,
        checksum: Checksum::of_bytes(&bytes),
        bytes,
    })
}
