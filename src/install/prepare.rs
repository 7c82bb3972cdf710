//! Preparing a plan: unpack a verified tarball for every skill the plan
//! installs straight into a staging directory beside its destination —
//! from the cache, from a tarball made while resolving, or fetched from
//! its source — in parallel, while other downloads go on.

use super::{Marker, MARKER};
use crate::cache::{Cache, CacheError};
use crate::fs::write_dir::WriteDir;
use crate::parallel::{on_pool, Workers};
use crate::project::lockfile::{LockedSkill, LockedSource};
use crate::report::{Event, Reporter};
use crate::source::{check_identity, verify, Fetched, SourceError, Sources, Verified};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::archive::{self, Format, Limits, UnpackError};
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::protocol::PackageVersion;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// How many fetches run at once: git clones and well-known archives
/// (each may be large), and trees the cache holds (staged on the pool).
pub const FETCH_CONCURRENCY: usize = 16;

/// How many registry downloads are asked for at once. Their memory is
/// bounded by the registry source's download budget, not by this count,
/// so a cold install of packages of usual sizes waits for one round trip
/// rather than one per 16 packages.
const DOWNLOAD_CONCURRENCY: usize = 256;

/// A package unpacked and checked in a staging directory beside its
/// destination, its marker written: all that is left is the swap. Dropped
/// unswapped (an error elsewhere), the directory is deleted.
#[derive(Debug)]
pub struct Staged {
    pub(super) dir: tempfile::TempDir,
    /// The tree's fingerprint before the marker was added.
    pub(super) stamp: Option<String>,
    /// Whether the tarball came from the cache rather than the network or
    /// this run's packing.
    pub from_cache: bool,
    /// What the audit found in the tree, before any waiver is weighed.
    pub findings: Vec<skillpm_core::audit::Finding>,
}

impl Staged {
    /// The staged tree, for checks before it is swapped in.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Where a needed package's bytes are found before its source is asked.
enum Local {
    /// Made while resolving, this run, and hashed then: not "from cache".
    Packed(Verified),
    /// In the cache; verified before use, fetched again if it fails.
    Cached,
    /// Neither: fetched from its source.
    Absent,
}

/// Each needed skill's staged tree, and why any tarball packed on this
/// machine this run could not be cached.
#[derive(Debug, Default)]
pub struct Prepared {
    pub trees: HashMap<SkillName, Staged>,
    /// A tarball packed here that the cache could not take: it costs only
    /// a later repack, so the caller warns rather than failing the run.
    pub not_cached: Vec<CacheError>,
}

/// The tree of `s` made while resolving, this run, if it was. Keyed by the
/// checksum the tree was made with; a key that is not its tree's checksum
/// is a bug, never an install.
fn made_here<'p>(s: &LockedSkill, packed: &'p HashMap<Checksum, Verified>) -> Option<&'p Verified> {
    packed
        .get(&s.checksum)
        .filter(|v| *v.checksum() == s.checksum)
}

/// Stages every skill in `needed` inside `root` (which must exist), and
/// caches each tarball once its tree is staged and checked, so a refused
/// package leaves nothing behind that a later run could trust. Failing to
/// cache a fetched package fails the run (it would be fetched again on
/// every run); one packed here (git, path) only warns.
pub async fn prepare<'a>(
    workers: &Workers,
    cache: &Cache,
    sources: &Sources,
    root: &WriteDir,
    needed: &[&'a LockedSkill],
    packed: &HashMap<Checksum, Verified>,
    reporter: &dyn Reporter,
) -> Result<Prepared, SourceError> {
    let work: Vec<(&LockedSkill, Local)> = needed
        .iter()
        .map(|&s| {
            let local = match made_here(s, packed) {
                Some(v) => Local::Packed(v.clone()),
                None if keeps_tarball(s) && cache.has_tarball(&s.checksum, stored_form(s)) => {
                    Local::Cached
                }
                None => Local::Absent,
            };
            (s, local)
        })
        .collect();
    // Registry packages that will be downloaded: asked about yanks in one
    // query per registry, beside the downloads.
    let mut yank_queries: BTreeMap<&str, Vec<PackageVersion>> = BTreeMap::new();
    for (s, local) in &work {
        if let (Local::Absent, LockedSource::Registry { url }) = (local, &s.source) {
            yank_queries.entry(url).or_default().push(PackageVersion {
                name: s.name.clone(),
                vers: s.version.clone(),
            });
        }
    }
    // Installed from the cache, a locked version asks nothing: what the
    // cache last heard about yanks is all there is to warn with.
    for (s, local) in &work {
        if let (Local::Cached, LockedSource::Registry { url }) = (local, &s.source) {
            if sources.registry.known_yanked(url, &s.name, &s.version) {
                reporter.report(Event::Warning {
                    message: format!(
                        "{}@{} was yanked when last checked; installing it because the lock pins it",
                        s.name, s.version
                    ),
                });
            }
        }
    }
    let downloads: usize = yank_queries.values().map(Vec::len).sum();
    if downloads > 0 {
        reporter.downloads_starting(downloads);
    }
    let root: PathBuf = root.to_path_buf();
    // Each package is verified, unpacked and staged as soon as its bytes
    // are here, on the run's threads ([`crate::parallel`]), while other
    // downloads go on: the network and the disk work overlap instead of
    // taking turns.
    let (downloads_work, other_work): (Vec<_>, Vec<_>) =
        work.into_iter().partition(|(s, local)| {
            matches!(local, Local::Absent) && matches!(s.source, LockedSource::Registry { .. })
        });
    let stage_one = |(s, local): (&'a LockedSkill, Local)| {
        let root = root.clone();
        async move {
            let (locked, store) = (s.clone(), cache.clone());
            // Made on this machine, from a repository or a directory,
            // rather than downloaded: the cache only saves packing it
            // again. (Git trees are never cached: `keeps_tarball`.)
            let made_here =
                matches!(local, Local::Packed(_)) || matches!(s.source, LockedSource::Path { .. });
            // An absent tarball goes straight to its source: no trip
            // through the pool before the request starts. Hashing,
            // gunzip and file creation run on the pool.
            let local = match local {
                Local::Absent => None,
                Local::Packed(v) => Some((v, false)),
                Local::Cached => on_pool(workers, move || {
                    store
                        .read_tarball(&locked.checksum, stored_form(&locked))
                        .and_then(|b| verify(&locked, b).ok())
                })
                .await
                .map(|v| (v, true)),
            };
            let (cache, locked) = (cache.clone(), s.clone());
            // Stages the package, then caches its tarball if worth it.
            let finish = move |v: Verified, from_cache: bool| {
                let staged = stage(&root, &locked, &v, from_cache)?;
                if from_cache || !keeps_tarball(&locked) {
                    return Ok((staged, None));
                }
                if made_here {
                    return Ok((staged, cache.store_tarball(&v).err()));
                }
                cache.store_tarball(&v)?;
                Ok::<_, SourceError>((staged, None))
            };
            let staged = match local {
                Some((v, from_cache)) => on_pool(workers, move || finish(v, from_cache)).await?,
                None => {
                    let got = fetch_one(sources, s, reporter).await?;
                    let _held_until_staged = got.reservation;
                    on_pool(workers, move || finish(got.tree, got.from_cache)).await?
                }
            };
            Ok::<_, SourceError>((s.name.clone(), staged))
        }
    };
    type Done = Vec<(SkillName, (Staged, Option<CacheError>))>;
    let staging = async {
        let (mut done, others): (Done, Done) = futures_util::try_join!(
            stream::iter(downloads_work)
                .map(stage_one)
                .buffer_unordered(DOWNLOAD_CONCURRENCY)
                .try_collect(),
            stream::iter(other_work)
                .map(stage_one)
                .buffer_unordered(FETCH_CONCURRENCY)
                .try_collect(),
        )?;
        done.extend(others);
        Ok::<_, SourceError>(done)
    };
    let yank_warnings = async {
        for (url, packages) in yank_queries {
            for p in sources.registry.yanked_among(url, packages).await {
                reporter.report(Event::Warning {
                    message: format!(
                        "{}@{} is yanked; installing it because the lock pins it",
                        p.name, p.vers
                    ),
                });
            }
        }
    };
    let (done, ()) = futures_util::join!(staging, yank_warnings);
    let done = done?;
    if downloads > 0 {
        reporter.downloads_finished();
    }
    let mut prepared = Prepared::default();
    for (name, (staged, not_cached)) in done {
        prepared.trees.insert(name, staged);
        prepared.not_cached.extend(not_cached);
    }
    Ok(prepared)
}

/// Whether the tarball of `s` is worth a place in the cache. A git tree
/// is not: the cache's clone of its repository holds it already, and a
/// later run packs it from there without the network (the lock's tree id
/// says which). A second copy as a tarball was a file written per skill
/// in every cold install; without it a cold restore is faster and a warm
/// one, which packs the trees from the clone, about as fast
/// (BENCHMARKS.md).
fn keeps_tarball(s: &LockedSkill) -> bool {
    !matches!(s.source, LockedSource::Git { .. })
}

/// The form a package of `s`'s source is most likely stored in: a
/// registry's as downloaded, a tree made here as its canonical tar (one
/// locked before trees were locked by their tar is stored gzipped).
fn stored_form(s: &LockedSkill) -> Format {
    match s.source {
        LockedSource::Registry { .. } => Format::TarGz,
        _ => Format::Tar,
    }
}

/// Fetches one package; registry downloads are reported.
async fn fetch_one(
    sources: &Sources,
    s: &LockedSkill,
    reporter: &dyn Reporter,
) -> Result<Fetched, SourceError> {
    let LockedSource::Registry { .. } = &s.source else {
        return sources.fetch(s).await;
    };
    reporter.report(Event::Downloading {
        name: s.name.to_string(),
        version: s.version.to_string(),
    });
    let tarball = sources.fetch(s).await?;
    reporter.report(Event::Downloaded {
        name: s.name.to_string(),
        bytes: tarball.tree.bytes().len() as u64,
    });
    Ok(tarball)
}

/// Unpacks a verified tarball into a fresh staging directory in `root`
/// (the hardened unpacker, default limits), refuses a registry package
/// whose `SKILL.md` is not the package the lock names, and writes the
/// marker.
fn stage(
    root: &Path,
    s: &LockedSkill,
    v: &Verified,
    from_cache: bool,
) -> Result<Staged, SourceError> {
    let (dir, entries) = archive::unpack_to_new_dir_kept(v.bytes(), root, &Limits::default())
        .map_err(|source| {
            let package = format!("{}@{}", s.name, s.version);
            // Writing failed: not the package's fault, so not a refusal.
            match source {
                UnpackError::Io { .. } | UnpackError::BadDestination { .. } => {
                    SourceError::Staging { package, source }
                }
                source => SourceError::Refused { package, source },
            }
        })?;
    check_identity(s, &entries)?;
    // The audit scans the tree here, on the pool and while other packages
    // still download, rather than after every tree is staged; the gate
    // (`ops::audit::gate`) then only weighs the findings. It scans the
    // bytes the unpacker kept, so nothing just written is read again
    // (BENCHMARKS.md, audit.py).
    let findings =
        skillpm_core::audit::scan_entries(&entries, &skillpm_core::audit::Context::WELL_KNOWN);
    // Taken before the marker exists, and unchanged by the rename into
    // place (renaming a directory does not touch its files). The fresh
    // directory holds what the unpacker created and nothing else; a
    // package's own file named like the marker is left out, as `of_tree`
    // leaves it out.
    let paths: Vec<&str> = entries
        .iter()
        .map(|e| e.path())
        .filter(|p| *p != MARKER)
        .collect();
    let stamp = crate::fs::fingerprint::of_paths(dir.path(), &paths);
    let marker = Marker {
        name: s.name.to_string(),
        version: s.version.to_string(),
        checksum: s.checksum,
    };
    let mpath = dir.path().join(MARKER);
    std::fs::write(&mpath, marker.render()).map_err(crate::fs::fs_err("write", &mpath))?;
    Ok(Staged {
        dir,
        stamp,
        from_cache,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillpm_core::checksum::Checksum;

    fn locked(bytes: &[u8]) -> LockedSkill {
        LockedSkill {
            name: "demo".parse().unwrap(),
            version: "1.0.0".parse().unwrap(),
            source: LockedSource::Path {
                path: "./demo".into(),
            },
            checksum: Checksum::of_bytes(bytes),
            path: None,
            tree: None,
            dependencies: Vec::new(),
            signed_by: None,
            plugin: None,
        }
    }

    /// A disk that cannot take the tree is reported as such, not as a
    /// package refused for its contents.
    #[test]
    fn a_write_failure_is_not_a_refusal() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(
            src.path().join("SKILL.md"),
            "---\nname: demo\ndescription: d\n---\n",
        )
        .unwrap();
        let bytes = archive::pack_dir(src.path()).unwrap();
        let s = locked(&bytes);
        let v = verify(&s, bytes).unwrap();
        let not_a_dir = src.path().join("SKILL.md");
        let err = stage(&not_a_dir, &s, &v, false).unwrap_err().to_string();
        assert!(err.starts_with("cannot install demo@1.0.0: "), "{err}");
        assert!(!err.contains("refusing"), "{err}");
    }
}
