//! Reading the bare clone in this process (gitoxide): refs, commits, trees
//! and blobs, without a `git` process per question.
//!
//! The clone is opened isolated (its own configuration only, nothing from
//! the user, the system or the environment), and only read: no hook,
//! filter or attribute of the repository or the user is ever consulted.

use super::SourceError;
use crate::project::spec::GitUrl;
use gix::ObjectId;
use std::path::Path;

/// The bare clone at `dir`, for reading on any thread.
pub(super) fn open(dir: &Path, url: &GitUrl) -> Result<gix::ThreadSafeRepository, SourceError> {
    gix::ThreadSafeRepository::open_opts(dir, options())
        .map_err(|e| error("opening the clone of", url, e))
}

/// Every open of a clone: isolated (no system, user or environment
/// configuration), no reflogs, the allocation cap of a fetch on every
/// object read, and a capped cache of delta bases per handle.
fn options() -> gix::open::Options {
    gix::open::Options::isolated().cli_overrides([
        // No reflogs: the cache clone has no use for its refs' history.
        "core.logAllRefUpdates=false".to_string(),
        format!(
            "gitoxide.objects.allocLimit={}",
            super::remote::MAX_OBJECT_BYTES
        ),
        format!("gitoxide.core.defaultPackCacheMemoryLimit={PACK_CACHE_BYTES}"),
    ])
}

/// What each handle's cache of delta bases may hold. A server packs the
/// like files of a repository's skills (every `SKILL.md`, say) as deltas
/// in chains up to 50 long, and without the cache each file read
/// resolved its whole chain again: listing and packing a 100-skill
/// `add` took 0.94x the time with it. gitoxide's default cap is 96 MB a
/// handle, and a run has a handle per thread.
const PACK_CACHE_BYTES: u64 = 16 << 20;

/// An error about reading the clone of `url`.
pub(super) fn error(what: &'static str, url: &GitUrl, e: impl std::fmt::Display) -> SourceError {
    SourceError::Git {
        what,
        url: url.redacted(),
        detail: e.to_string().replace(url.as_str(), &url.redacted()),
    }
}

/// The commit `rev` names, as `git rev-parse --verify rev^{commit}` would
/// give it for the forms skillpm asks about: a ref (full, or short as git
/// expands it), or a commit id or unique prefix of one. Anything else
/// (`HEAD~2`, `main@{1}`) is `None`, and the caller asks `git`.
pub(super) fn commit_of(repo: &gix::Repository, rev: &str) -> Option<String> {
    // Like git: a name that is a ref is that ref (unless it is a whole
    // object id), else a hex prefix is looked up among the objects.
    let by_ref = || {
        let r = repo.try_find_reference(rev).ok()??;
        Some(r.into_fully_peeled_id().ok()?.detach())
    };
    let by_prefix = || match repo.objects.lookup_prefix(hex_prefix(rev)?, None) {
        Ok(Some(Ok(id))) => Some(id),
        _ => None,
    };
    let id = if rev.len() == 40 {
        by_prefix().or_else(by_ref)
    } else {
        by_ref().or_else(by_prefix)
    }?;
    let commit = repo
        .find_object(id)
        .ok()?
        .peel_to_kind(gix::object::Kind::Commit)
        .ok()?;
    Some(commit.id.to_string())
}

/// `rev` as an object id prefix, when it can only be one: 4 to 40 lower
/// case hex digits.
fn hex_prefix(rev: &str) -> Option<gix::hash::Prefix> {
    let hex = (4..=40).contains(&rev.len())
        && rev.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !hex {
        return None;
    }
    gix::hash::Prefix::from_hex(rev).ok()
}

/// The tree of `commit`, when the clone holds that commit.
pub(super) fn tree_of(repo: &gix::Repository, commit: &str) -> Option<ObjectId> {
    let id = ObjectId::from_hex(commit.as_bytes()).ok()?;
    repo.find_commit(id)
        .ok()?
        .tree_id()
        .ok()
        .map(|t| t.detach())
}

/// The names of the clone's tags (`v1.2.0`, not `refs/tags/v1.2.0`).
pub(super) fn tags(repo: &gix::Repository) -> Vec<String> {
    let Ok(refs) = repo.references() else {
        return Vec::new();
    };
    let Ok(tags) = refs.tags() else {
        return Vec::new();
    };
    tags.filter_map(Result::ok)
        .map(|r| r.name().shorten().to_string())
        .collect()
}

/// The raw bytes of `commit` (without git's `commit <size>` prefix), for
/// checking its signature; `None` when the clone does not hold it.
pub(super) fn commit_data(repo: &gix::Repository, commit: &str) -> Option<Vec<u8>> {
    let id = ObjectId::from_hex(commit.as_bytes()).ok()?;
    let object = repo.find_object(id).ok()?;
    (object.kind == gix::object::Kind::Commit).then(|| object.data.clone())
}
