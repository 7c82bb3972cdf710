//! Fetching into a cache repository with gitoxide's client, as cargo does
//! in its gitoxide mode: the wire protocol (v0 to v2), shallow fetches,
//! redirects and credentials are gitoxide's. What is skillpm's is what
//! to ask for ([`Want`]), whom to trust (the same TLS roots, user agent
//! and timeouts as every other client here), and the bounds on what a
//! server may send ([`Bounded`]).
//!
//! Git's configuration is honoured as `git` would honour it: the
//! system's, the user's and the environment's (`url.<base>.insteadOf`,
//! `http.proxy` and the proxy variables, `credential.helper`,
//! `http.sslCAInfo`, `http.extraHeader`). The transports stay the spec
//! allowlist's (`protocol.allow`), and nothing prompts on the terminal: a
//! private repository needs a credential helper, as in CI.

use super::{is_repo, resolving, SourceError};
use crate::project::spec::GitUrl;
use gix::remote::fetch::Shallow;
use gix::remote::Direction;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The refs a fetch of everything maps into the clone.
pub(super) const ALL_REFS: [&str; 3] = [
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+HEAD:refs/skillpm/HEAD",
];

/// What one fetch asks a server for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Want {
    /// The remote's `HEAD`, as `refs/skillpm/HEAD`, without history.
    Head,
    /// These full ref names (`refs/tags/v1`, `refs/heads/main`), those
    /// the server has, without history (`git clone --depth 1 --branch`).
    Refs(Vec<String>),
    /// One commit by its full id, without history: what a restore from
    /// the lock needs. Servers allow it for a commit a ref reaches
    /// (GitHub, GitLab, `git` 2.x with protocol v2).
    Commit(String),
    /// Every branch and tag with all their history: for a revision
    /// behind the tips (`HEAD~2`, an abbreviated id), or a server that
    /// refuses a commit asked for by id.
    Everything,
}

impl Want {
    pub(super) fn refspecs(&self) -> Vec<String> {
        match self {
            Want::Head => vec![ALL_REFS[2].to_string()],
            Want::Refs(names) => names.iter().map(|r| format!("+{r}:{r}")).collect(),
            Want::Commit(id) => vec![id.clone()],
            Want::Everything => ALL_REFS.map(String::from).to_vec(),
        }
    }
}

/// The most objects a pack may declare before it is indexed: far more
/// than a skills repository holds, and a bound on the index a hostile
/// server can make the client build, which grows with the object count
/// (SECURITY.md has the measurement).
pub(super) const MAX_PACK_OBJECTS: usize = 1_000_000;

/// The most refs a server may list: far more than any skills repository
/// has. The listing is asked for with the refs' prefixes, so an honest
/// server lists one or two.
const MAX_REFS: usize = 100_000;

/// The largest object a read of the clone allocates for.
pub(super) const MAX_OBJECT_BYTES: usize = 1 << 30;

/// Fetches `want` from `url` into the bare repository at `dir` (made when
/// missing). The caller holds the repository for the fetch
/// ([`super::fetching`]). A server that does not know a named ref is not
/// an error here: resolving it afterwards says what is missing.
pub(super) fn fetch(dir: &Path, url: &GitUrl, want: &Want) -> Result<(), SourceError> {
    // Removes the pack coming in and any ref lock when Ctrl-C arrives,
    // then dies as the process would have.
    gix::tempfile::signal::setup(Default::default());
    if !is_repo(dir) {
        init_bare(dir).map_err(|e| fetch_error(url, &e.to_string()))?;
    }
    match fetch_at(dir, url, want, Depth::One) {
        // A server without the `shallow` feature sends the history.
        Err(e) if e.to_string().contains(NO_SHALLOW) => fetch_at(dir, url, want, Depth::All),
        done => done,
    }
}

/// How gitoxide says the server cannot cut history.
const NO_SHALLOW: &str = "lack feature \"shallow\"";

/// Whether a fetch may cut history at the tips it asks for.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    One,
    All,
}

fn fetch_at(dir: &Path, url: &GitUrl, want: &Want, depth: Depth) -> Result<(), SourceError> {
    let failed = |e: &dyn std::error::Error| fetch_error(url, &crate::source::chain(e));
    let threads = resolving::threads();
    let repo = open(dir, url, threads).map_err(|e| failed(&e))?;
    let remote = repo
        .remote_at(url.as_str())
        .map_err(|e| failed(&e))?
        .with_fetch_tags(gix::remote::fetch::Tags::None)
        .with_refspecs(
            want.refspecs().iter().map(gix::bstr::BStr::new),
            Direction::Fetch,
        )
        .map_err(|e| failed(&e))?;
    // The URL after `insteadOf`: its HTTP settings are the ones that
    // apply.
    let effective = remote
        .url(Direction::Fetch)
        .map(|u| u.to_bstring().to_string())
        .unwrap_or_else(|| url.as_str().to_string());
    let mut connection = remote.connect(Direction::Fetch).map_err(|e| failed(&e))?;
    let options = http_options(&repo, &effective).map_err(|e| failed(&e))?;
    if let Some(options) = options {
        connection.set_transport_options(options);
    }
    let bounded = Bounded {
        resolve: Some(Arc::new(Resolve {
            // Where gitoxide writes the pack it receives.
            pack_dir: repo.objects.store_ref().path().join("pack"),
            threads,
        })),
        ..Bounded::default()
    };
    let prepared = connection
        .prepare_fetch(bounded.clone(), Default::default())
        .map_err(|e| failed(&e))?;
    let listed = prepared.ref_map().remote_refs.len();
    if listed > MAX_REFS {
        return Err(fetch_error(
            url,
            &format!("the server listed more than {MAX_REFS} refs ({listed})"),
        ));
    }
    // A ref the server does not have: nothing to fetch, and resolving it
    // says what is missing.
    if prepared.ref_map().is_missing_required_mapping() {
        return Ok(());
    }
    // Tips the clone holds already need no pack: asking for them at a
    // depth would have the server send them again.
    let held = prepared
        .ref_map()
        .mappings
        .iter()
        .all(|m| m.remote.as_id().is_some_and(|id| repo.has_object(id)));
    let shallow = match want {
        Want::Everything if dir.join("shallow").is_file() => Shallow::undo(),
        Want::Everything => Shallow::NoChange,
        _ if held || depth == Depth::All => Shallow::NoChange,
        _ => Shallow::DepthAtRemote(NonZeroU32::MIN),
    };
    let received = prepared
        .with_shallow(shallow)
        .with_write_packed_refs_only(true)
        .receive(bounded.clone(), &bounded.stop);
    match received {
        Ok(_) => Ok(()),
        Err(e) => match bounded.over() {
            Some(reason) => Err(fetch_error(url, reason)),
            None => Err(failed(&e)),
        },
    }
}

/// The bare repository at `dir`, opened with git's configuration (the
/// system's, the user's, the environment's) beneath skillpm's own
/// settings: the transports of the spec allowlist, no prompts, no
/// reflogs, the allocation cap on every object read, and `threads`
/// resolving a received pack's deltas.
fn open(dir: &Path, url: &GitUrl, threads: usize) -> gix::Result<gix::Repository> {
    let file = if url.is_file() { "always" } else { "never" };
    let overrides = [
        "protocol.allow=never".to_string(),
        "protocol.https.allow=always".to_string(),
        "protocol.ssh.allow=always".to_string(),
        format!("protocol.file.allow={file}"),
        "gitoxide.credentials.terminalPrompt=false".to_string(),
        "core.logAllRefUpdates=false".to_string(),
        format!("gitoxide.objects.allocLimit={MAX_OBJECT_BYTES}"),
        format!("pack.threads={threads}"),
    ];
    let options = gix::open::Options::default().cli_overrides(overrides);
    gix::open_opts(dir, options)
}

/// The HTTP settings git's configuration gives for `url` (proxy, CA file,
/// extra headers), with skillpm's TLS roots, user agent and timeouts put
/// into the client gitoxide builds; `None` for a URL that is not HTTP.
fn http_options(
    repo: &gix::Repository,
    url: &str,
) -> Result<Option<Box<dyn std::any::Any>>, HttpSetup> {
    use gix::protocol::transport::client::blocking_io::http;
    let Some(any) = repo
        .transport_options(url, None)
        .map_err(HttpSetup::Config)?
    else {
        return Ok(None);
    };
    let Ok(mut options) = any.downcast::<http::Options>() else {
        return Ok(None);
    };
    let tls = crate::source::http::git_tls(options.ssl_ca_info.as_deref())?;
    let proxy = match options.proxy.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => Some(reqwest::Proxy::all(p).map_err(|source| HttpSetup::Proxy {
            proxy: p.to_string(),
            source,
        })?),
        None => None,
    };
    let timeout = crate::source::http::timeout();
    let agent = concat!("skillpm/", env!("CARGO_PKG_VERSION"));
    let configure = move |builder: reqwest::blocking::ClientBuilder| {
        let builder = builder
            .tls_backend_preconfigured(tls.clone())
            .user_agent(agent)
            .connect_timeout(timeout)
            // Per read in the blocking client: a server that stops
            // sending is given up on.
            .timeout(timeout);
        Ok(match proxy.clone() {
            Some(proxy) => builder.proxy(proxy),
            None => builder,
        })
    };
    options.backend = Some(Arc::new(std::sync::Mutex::new(http::reqwest::Options {
        configure_client: Some(Box::new(configure)),
        configure_request: None,
    })));
    Ok(Some(options))
}

/// Why git's HTTP settings could not be applied.
#[derive(Debug, thiserror::Error)]
enum HttpSetup {
    #[error("reading git's HTTP settings")]
    Config(#[source] gix::Error),
    #[error(transparent)]
    Tls(#[from] crate::source::tls::TlsError),
    #[error("http.proxy {proxy:?}")]
    Proxy {
        proxy: String,
        #[source]
        source: reqwest::Error,
    },
}

/// The least a bare repository needs, without the sample hooks and the
/// description a full `init` writes. `HEAD` comes last, so an init cut
/// short is simply done again ([`is_repo`]).
pub(super) fn init_bare(dir: &Path) -> std::io::Result<()> {
    for sub in ["objects/pack", "refs"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
    )?;
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n")
}

fn fetch_error(url: &GitUrl, detail: &str) -> SourceError {
    super::objects::error("fetch from", url, crate::source::one_line(detail))
}

/// The progress gitoxide reports a fetch through, used as a bound: a
/// pack that declares more than [`MAX_PACK_OBJECTS`] objects stops the
/// fetch before its index is built, one that has sent (or inflates to)
/// more than [`MAX_PACK_BYTES`] stops it where it is, and one whose
/// deltas may take more memory to resolve than
/// [`resolving::MAX_RESOLVE_BYTES`] stops it before they are resolved.
/// Every child shares the flag and the reason.
#[derive(Clone, Default)]
struct Bounded {
    stop: Arc<AtomicBool>,
    /// Why the fetch was stopped, for the error.
    reason: Arc<OnceLock<String>>,
    /// Whether this child counts bytes.
    bytes: bool,
    /// Which step of gitoxide's this child reports.
    id: gix::progress::Id,
    /// What the step that resolves deltas checks first.
    resolve: Option<Arc<Resolve>>,
    step: gix::progress::StepShared,
}

/// Where the pack comes in, and how many threads resolve its deltas.
struct Resolve {
    pack_dir: PathBuf,
    threads: usize,
}

/// Whether `id` is the step of gitoxide's index-pack that resolves
/// deltas: it starts once the whole pack is on disk (flushed, mapped),
/// and before any delta is resolved.
fn is_resolving(id: gix::progress::Id) -> bool {
    id == gix::progress::Id::from(gix::odb::pack::index::write::ProgressId::ResolveObjects)
}

/// The most bytes a pack may take, on the wire or inflated: far beyond a
/// skills repository, and a bound on the disk a server can fill.
const MAX_PACK_BYTES: usize = 2 << 30;

impl Bounded {
    fn over(&self) -> Option<&String> {
        self.reason.get()
    }

    fn refuse(&self, reason: String) {
        let _ = self.reason.set(reason);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn counted(&self, now: usize) {
        if self.bytes && now > MAX_PACK_BYTES {
            self.refuse(format!("the server sent more than {MAX_PACK_BYTES} bytes"));
        }
    }
}

impl gix::progress::Count for Bounded {
    fn set(&self, step: usize) {
        self.step.store(step, Ordering::Relaxed);
        self.counted(step);
    }
    fn step(&self) -> usize {
        self.step.load(Ordering::Relaxed)
    }
    fn inc_by(&self, step: usize) {
        let now = self.step.fetch_add(step, Ordering::Relaxed) + step;
        self.counted(now);
    }
    fn counter(&self) -> gix::progress::StepShared {
        self.step.clone()
    }
}

impl gix::progress::Progress for Bounded {
    fn init(&mut self, max: Option<usize>, unit: Option<gix::progress::Unit>) {
        let unit = unit.map(|u| format!("{u:?}"));
        self.bytes = unit == gix::progress::bytes().map(|u| format!("{u:?}"));
        // The indexing step counts objects, from the pack's header.
        let objects = unit.is_some_and(|u| u.contains("\"objects\""));
        if let Some(n) = max.filter(|&n| objects && n > MAX_PACK_OBJECTS) {
            self.refuse(format!(
                "the server sent a pack of {n} objects, more than the {MAX_PACK_OBJECTS} a \
                 skills repository may hold"
            ));
        }
        if let Some(resolve) = self.resolve.as_ref().filter(|_| is_resolving(self.id)) {
            if let Err(e) = resolving::check(&resolve.pack_dir, resolve.threads) {
                self.refuse(crate::source::chain(&e));
            }
        }
    }
    fn set_name(&mut self, _: String) {}
    fn name(&self) -> Option<String> {
        None
    }
    fn id(&self) -> gix::progress::Id {
        *b"skpm"
    }
    fn message(&self, _: gix::progress::MessageLevel, _: String) {}
}

impl gix::NestedProgress for Bounded {
    type SubProgress = Bounded;
    fn add_child(&mut self, name: impl Into<String>) -> Bounded {
        self.add_child_with_id(name, gix::progress::UNKNOWN)
    }
    fn add_child_with_id(&mut self, _: impl Into<String>, id: gix::progress::Id) -> Bounded {
        Bounded {
            step: Default::default(),
            bytes: false,
            id,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gix::progress::{Count, Progress};

    /// A child counting bytes (as the pack's reader does) stops the fetch
    /// past the cap; one counting anything else does not.
    #[test]
    fn bytes_past_the_cap_stop_the_fetch() {
        let mut root = Bounded::default();
        let mut objects = gix::NestedProgress::add_child(&mut root, "objects");
        objects.init(Some(10), gix::progress::count("objects"));
        objects.inc_by(MAX_PACK_BYTES + 1);
        assert!(!root.stop.load(Ordering::Relaxed));
        let mut read = gix::NestedProgress::add_child(&mut root, "read");
        read.init(None, gix::progress::bytes());
        read.inc_by(MAX_PACK_BYTES);
        assert!(!root.stop.load(Ordering::Relaxed));
        read.inc_by(1);
        assert!(root.stop.load(Ordering::Relaxed));
        assert!(root.over().is_some_and(|r| r.contains("bytes")));
    }

    /// The step that resolves deltas checks the received pack first, and
    /// one it cannot find is not resolved; other steps check nothing.
    #[test]
    fn resolving_starts_with_a_check_of_the_received_pack() {
        use gix::odb::pack::index::write::ProgressId;
        let empty = tempfile::tempdir().unwrap();
        let mut root = Bounded {
            resolve: Some(Arc::new(Resolve {
                pack_dir: empty.path().to_path_buf(),
                threads: 1,
            })),
            ..Bounded::default()
        };
        let mut decoding =
            gix::NestedProgress::add_child_with_id(&mut root, "", ProgressId::DecodedBytes.into());
        decoding.init(None, gix::progress::bytes());
        assert!(root.over().is_none());
        let mut resolving = gix::NestedProgress::add_child_with_id(
            &mut root,
            "",
            ProgressId::ResolveObjects.into(),
        );
        resolving.init(Some(1), gix::progress::count("objects"));
        assert!(root.stop.load(Ordering::Relaxed));
        assert!(root.over().is_some_and(|r| r.contains("was not found")));
    }

    #[test]
    fn a_pack_declaring_too_many_objects_stops_the_fetch() {
        let mut root = Bounded::default();
        let mut index = gix::NestedProgress::add_child(&mut root, "index");
        index.init(Some(MAX_PACK_OBJECTS), gix::progress::count("objects"));
        assert!(root.over().is_none());
        index.init(Some(MAX_PACK_OBJECTS + 1), gix::progress::count("objects"));
        assert!(root.stop.load(Ordering::Relaxed));
    }
}
