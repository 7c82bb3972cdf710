//! `skillpm doctor`: for each ineligible skill, what this machine lacks and
//! the ways the skill declares to get it here ([`engine::installers`]),
//! and with `--fix` running them: package managers as an argv with no
//! shell, downloads fetched, checked and unpacked by skillpm. Everything
//! lands in one user directory skillpm names (`tools_dir`), never in a
//! system path, except `apt-get`, which is offered only to root.

use crate::engine::catalog::{Catalog, SkillEntry, State};
use crate::engine::config::ConfigError;
use crate::engine::config::Environment;
use crate::engine::eligibility::{Probe, Reason};
use crate::engine::installers::{self, Archive, Fit, Offer, Step};
use crate::error::Result;
use crate::project::lockfile::LockedDownload;
use crate::project::spec::WellKnownUrl;
use crate::project::Project;
use sha2::{Digest, Sha256};
use skillpm_core::name::SkillName;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a declared download may take: far above a single tool
/// binary or its archive (a Go binary is tens of MB), and a bound on what
/// a hostile URL can make skillpm hold.
const MAX_DOWNLOAD: u64 = 256 << 20;

/// The reasons `doctor` has something to say about: the machine lacks
/// what the skill asks for.
const MACHINE_REASONS: &[&str] = &["missing-bin", "missing-env", "unsupported-os"];

/// Why `doctor` could not look or fix at all (a failed step is reported
/// in [`Fixed`], not here).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("no skill `{0}` is visible here; `skillpm status` lists the skills")]
    Unknown(String),
    #[error("no directory for tools: set SKILLPM_TOOLS_DIR or HOME")]
    NoToolsDir,
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One skill as `doctor` sees it.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    pub skill: String,
    pub path: PathBuf,
    /// Why it is not eligible; `None` when it is.
    pub reason: Option<Reason>,
    /// The binaries not on PATH.
    pub missing: Vec<String>,
    /// Of `missing`, those already in the tools directory's `bin`, which
    /// is not on PATH.
    pub off_path: Vec<String>,
    pub offers: Vec<Offer>,
    /// Which `offers` `--fix` runs: ready ones, until every missing
    /// binary is covered.
    pub chosen: Vec<usize>,
    /// The sha256 skills.lock recorded for this skill's downloads, by URL.
    pub pinned: Vec<(String, String)>,
}

/// What `doctor` found, and where `--fix` puts tools.
#[derive(Debug, Clone)]
pub struct Checkup {
    pub tools_dir: PathBuf,
    pub skills: Vec<Diagnosis>,
}

impl Checkup {
    /// Every step `--fix` would run, with its skill.
    pub fn steps(&self) -> impl Iterator<Item = (&Diagnosis, &Offer)> {
        self.skills
            .iter()
            .flat_map(|d| d.chosen.iter().map(move |&i| (d, &d.offers[i])))
    }
}

/// Where `doctor --fix` installs: `$SKILLPM_TOOLS_DIR`, else
/// `$XDG_DATA_HOME/skillpm/tools` (`~/.local/share/skillpm/tools`), on
/// Windows `%LOCALAPPDATA%\skillpm\tools`. Binaries go to its `bin`.
pub fn tools_dir(env: &Environment) -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("SKILLPM_TOOLS_DIR") {
        return Some(d);
    }
    let data = match env.os.as_str() {
        "windows" => var("LOCALAPPDATA").map(|d| d.join("skillpm")),
        _ => var("XDG_DATA_HOME")
            .or_else(|| env.home.as_ref().map(|h| h.join(".local/share")))
            .map(|d| d.join("skillpm")),
    };
    data.map(|d| d.join("tools"))
}

/// The checkup of `names` (every skill the machine makes ineligible when
/// empty), sorted by skill.
pub fn doctor(env: &Environment, names: &[String], tools_dir: &Path) -> Result<Checkup> {
    let cat = Catalog::build(env).map_err(DoctorError::from)?;
    // A lock that cannot be read pins nothing here; `--fix` reads it again
    // before it downloads.
    let lock = Project::locate(env, false)
        .ok()
        .and_then(|p| p.read_lock().ok())
        .unwrap_or_default();
    let probe = Probe::new(env);
    let root = is_root();
    let bin_dir = tools_dir.join("bin");
    let diagnose = |e: &SkillEntry| diagnose(e, &probe, &env.os, root, &bin_dir);
    let pins = |d: &mut Diagnosis| {
        if let Ok(name) = SkillName::new(&d.skill) {
            d.pinned = lock
                .downloads
                .iter()
                .filter(|p| p.skill == name)
                .map(|p| (p.url.as_str().to_string(), p.sha256.clone()))
                .collect();
        }
    };
    let diagnose = |e: &SkillEntry| {
        let mut d = diagnose(e);
        pins(&mut d);
        d
    };
    let mut skills = Vec::new();
    if names.is_empty() {
        for e in cat.skills.iter().filter(|e| lacks_something(e)) {
            skills.push(diagnose(e));
        }
    } else {
        for n in names {
            let e = cat.find(n).ok_or_else(|| DoctorError::Unknown(show(n)))?;
            skills.push(diagnose(e));
        }
    }
    skills.sort_by(|a, b| a.skill.cmp(&b.skill));
    skills.dedup_by(|a, b| a.skill == b.skill);
    Ok(Checkup {
        tools_dir: tools_dir.to_path_buf(),
        skills,
    })
}

fn lacks_something(e: &SkillEntry) -> bool {
    e.state == State::Skipped
        && e.reason
            .as_ref()
            .is_some_and(|r| MACHINE_REASONS.contains(&r.code.as_str()))
}

fn diagnose(e: &SkillEntry, probe: &Probe, os: &str, root: bool, bin_dir: &Path) -> Diagnosis {
    let reason = lacks_something(e).then(|| e.reason.clone()).flatten();
    let fm = e.doc.as_ref().map(|d| &d.frontmatter);
    let (missing, offers) = match (fm, &reason) {
        (Some(fm), Some(_)) => installers::offers(fm, &e.requirements, probe, os, root),
        _ => Default::default(),
    };
    let off_path = missing
        .iter()
        .filter(|b| bin_dir.join(b).is_file())
        .cloned()
        .collect();
    let chosen = choose(&missing, &offers);
    Diagnosis {
        skill: e.command.clone(),
        path: e.path.clone(),
        reason,
        missing,
        off_path,
        offers,
        chosen,
        pinned: Vec::new(),
    }
}

/// Ready offers in order, each taken while it adds a missing binary (an
/// offer that names none is taken only when nothing else was).
fn choose(missing: &[String], offers: &[Offer]) -> Vec<usize> {
    let mut covered: Vec<&String> = Vec::new();
    let mut chosen = Vec::new();
    for (i, o) in offers.iter().enumerate() {
        if o.fit != Fit::Ready {
            continue;
        }
        let adds: Vec<&String> = o
            .installer
            .bins
            .iter()
            .filter(|b| missing.contains(b) && !covered.contains(b))
            .collect();
        let unnamed = o.installer.bins.is_empty() && chosen.is_empty();
        if !adds.is_empty() || unnamed {
            covered.extend(adds);
            chosen.push(i);
        }
        if covered.len() == missing.len() && !chosen.is_empty() {
            break;
        }
    }
    chosen
}

#[cfg(unix)]
fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// A package manager's run: the program, its arguments, and the
/// variables that point its output at the tools directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: &'static str,
    pub args: Vec<String>,
    pub env: Vec<(&'static str, PathBuf)>,
}

impl Invocation {
    /// The command line, for showing: the arguments passed the allowlist,
    /// so only the tools directory can need quotes.
    pub fn shown(&self) -> String {
        let mut out = self.program.to_string();
        for a in &self.args {
            out.push(' ');
            match a.contains(char::is_whitespace) {
                true => out.push_str(&format!("'{a}'")),
                false => out.push_str(a),
            }
        }
        out
    }
}

/// The argv a step runs, `None` for a download (which skillpm does).
pub fn invocation(step: &Step, tools_dir: &Path) -> Option<Invocation> {
    let bin = tools_dir.join("bin");
    let dir = |p: &Path| p.to_string_lossy().into_owned();
    let (program, args, env): (_, Vec<String>, Vec<(&'static str, PathBuf)>) = match step {
        Step::Brew { name, cask } => {
            let mut a = vec!["install".to_string()];
            if *cask {
                a.push("--cask".into());
            }
            a.push(name.clone());
            ("brew", a, vec![])
        }
        // npm puts a global prefix's commands in `PREFIX/bin`, but on
        // Windows in `PREFIX` itself: there the prefix is the `bin`.
        Step::Npm { package } => (
            "npm",
            vec![
                "install".into(),
                "--global".into(),
                "--prefix".into(),
                dir(if cfg!(windows) { &bin } else { tools_dir }),
                package.clone(),
            ],
            vec![],
        ),
        Step::Go { module } => (
            "go",
            vec!["install".into(), module.clone()],
            vec![("GOBIN", bin)],
        ),
        Step::Uv { package, from } => {
            let mut a = vec!["tool".into(), "install".into()];
            if let Some(f) = from {
                a.extend(["--from".into(), f.clone()]);
            }
            a.push(package.clone());
            (
                "uv",
                a,
                vec![
                    ("UV_TOOL_BIN_DIR", bin),
                    ("UV_TOOL_DIR", tools_dir.join("uv")),
                ],
            )
        }
        Step::Cargo { krate, git } => {
            let mut a = vec!["install".into(), "--root".into(), dir(tools_dir)];
            if let Some(g) = git {
                a.extend(["--git".into(), g.clone()]);
            }
            a.extend(krate.clone());
            ("cargo", a, vec![])
        }
        Step::Apt { packages } => {
            let mut a = vec!["install".into(), "-y".into()];
            a.extend(packages.iter().cloned());
            ("apt-get", a, vec![])
        }
        Step::Download { .. } => return None,
    };
    Some(Invocation { program, args, env })
}

/// `--fix`'s choices.
#[derive(Debug, Clone, Default)]
pub struct FixOptions {
    /// Run downloads that declare no sha256 (and lock none), recording
    /// the hash they had.
    pub allow_unverified: bool,
}

/// What one step did.
#[derive(Debug, Clone)]
pub struct StepResult {
    pub skill: String,
    pub label: String,
    /// `Ok` with what was done, or why it failed or was skipped.
    pub outcome: std::result::Result<String, String>,
}

/// What `--fix` did, and each skill's state afterwards.
#[derive(Debug, Clone)]
pub struct Fixed {
    pub steps: Vec<StepResult>,
    /// The checkup after the steps, as the agent would see it with the
    /// tools directory's `bin` on PATH.
    pub after: Checkup,
    /// Whether that `bin` is on the PATH this ran with.
    pub bin_on_path: bool,
}

/// Runs every chosen step of `checkup`, then checks the skills again.
/// A step that fails is reported and the others still run.
pub fn fix(env: &Environment, checkup: &Checkup, opts: &FixOptions) -> Result<Fixed> {
    let bin = checkup.tools_dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|source| DoctorError::Io {
        path: bin.clone(),
        source,
    })?;
    let project = Project::locate(env, false).ok();
    let mut steps = Vec::new();
    for (d, offer) in checkup.steps() {
        let installers::How::Run(step) = &offer.installer.how else {
            continue;
        };
        let outcome = match step {
            Step::Download {
                url,
                sha256,
                archive,
            } => {
                let want = Want {
                    skill: &d.skill,
                    url,
                    declared: sha256.as_deref(),
                    archive: *archive,
                    bins: &offer.installer.bins,
                };
                download(&want, &bin, project.as_ref(), opts)
            }
            _ => run(step, &checkup.tools_dir, env),
        };
        steps.push(StepResult {
            skill: d.skill.clone(),
            label: offer.installer.label.clone(),
            outcome,
        });
    }
    let on_path = |p: &std::ffi::OsStr| std::env::split_paths(p).any(|d| d == bin);
    let bin_on_path = env.path_var.as_deref().is_some_and(on_path);
    let mut with_bin = env.clone();
    let mut paths = vec![bin];
    paths.extend(env.path_var.iter().flat_map(std::env::split_paths));
    with_bin.path_var = std::env::join_paths(paths).ok();
    let names: Vec<String> = checkup.skills.iter().map(|d| d.skill.clone()).collect();
    let after = doctor(&with_bin, &names, &checkup.tools_dir)?;
    Ok(Fixed {
        steps,
        after,
        bin_on_path,
    })
}

/// Runs a package manager's step, its output on stderr (stdout is the
/// report's), and says how it ended.
fn run(step: &Step, tools_dir: &Path, env: &Environment) -> std::result::Result<String, String> {
    let inv = invocation(step, tools_dir).ok_or("not a package manager step")?;
    let program = match &env.path_var {
        Some(p) => which::which_in(inv.program, Some(p), &env.cwd),
        None => which::which(inv.program),
    }
    .map_err(|_| format!("`{}` is not on PATH", inv.program))?;
    let status = std::process::Command::new(program)
        .args(&inv.args)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| format!("{} could not start: {e}", inv.program))?;
    match status.success() {
        true => Ok(format!("ran {}", inv.shown())),
        false => Err(format!("{} failed ({status})", inv.shown())),
    }
}

/// A declared download, as `fix` runs it.
struct Want<'a> {
    skill: &'a str,
    url: &'a str,
    declared: Option<&'a str>,
    archive: Option<Archive>,
    bins: &'a [String],
}

/// Fetches, checks and places a declared download. The hash it must
/// have is the one it declares, else the one skills.lock recorded for a
/// locked skill; with neither it runs only under `--allow-unverified`,
/// and the hash it had is recorded for a locked skill.
fn download(
    want: &Want,
    bin: &Path,
    project: Option<&Project>,
    opts: &FixOptions,
) -> std::result::Result<String, String> {
    let url = WellKnownUrl::parse(want.url).map_err(|e| e.to_string())?;
    let name = SkillName::new(want.skill).ok();
    let lock = project.and_then(|p| p.read_lock().ok());
    let locked = match (&lock, &name) {
        (Some(l), Some(n)) if l.get(n).is_some() => Some(l.download(n, url.as_str()).cloned()),
        _ => None,
    };
    let pinned = locked.clone().flatten().map(|d| d.sha256);
    let expected = match (want.declared, pinned.as_deref()) {
        (Some(d), Some(p)) if d != p => {
            return Err(format!(
                "declares sha256 {d} but skills.lock recorded {p}; the skill changed what it \
                 downloads: check it, then remove the [[download]] entry"
            ))
        }
        (Some(d), _) => Some(d.to_string()),
        (None, p) => p.map(str::to_string),
    };
    if expected.is_none() && !opts.allow_unverified {
        return Err(format!(
            "{} declares no sha256; run with --allow-unverified to fetch it anyway (its hash is \
             then recorded in skills.lock)",
            show(url.as_str())
        ));
    }
    let bytes = fetch(&url)?;
    let got = hex::encode(Sha256::digest(&bytes));
    if let Some(e) = &expected {
        if *e != got {
            return Err(format!(
                "{} has sha256 {got}, not the {e} expected; nothing was installed",
                show(url.as_str())
            ));
        }
    }
    let placed = place(&bytes, want.archive, want.bins, bin)?;
    if let (Some(project), Some(name), Some(None)) = (project, name, locked) {
        record(project, name, url, got.clone())?;
    }
    Ok(format!(
        "downloaded {} (sha256 {}) to {}",
        show(want.url),
        &got[..12],
        placed.join(", ")
    ))
}

fn fetch(url: &WellKnownUrl) -> std::result::Result<Vec<u8>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let shown = show(url.as_str());
    rt.block_on(async {
        let client = crate::source::http::untrusted(!url.is_local())
            .map_err(|e| e.to_string())?
            .build()
            .map_err(|e| e.to_string())?;
        let failed = |e: reqwest::Error| format!("{shown}: {}", crate::source::chain(&e));
        let resp = client
            .get(url.as_url().clone())
            .send()
            .await
            .map_err(failed)?;
        if !resp.status().is_success() {
            return Err(format!("{shown}: HTTP {}", resp.status()));
        }
        crate::source::http::read_capped(resp, MAX_DOWNLOAD)
            .await
            .map_err(failed)?
            .ok_or_else(|| format!("{shown} is larger than {MAX_DOWNLOAD} bytes"))
    })
}

/// Writes the binaries into `bin`, each whole or not at all, executable:
/// the file itself, or from a tar.gz the regular files whose name is a
/// declared binary (wherever they sit in it; nothing else is unpacked).
fn place(
    bytes: &[u8],
    archive: Option<Archive>,
    bins: &[String],
    bin: &Path,
) -> std::result::Result<Vec<String>, String> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    match archive {
        None => files.push((bins[0].clone(), bytes.to_vec())),
        Some(Archive::TarGz) => {
            let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
            let entries = tar.entries().map_err(|e| format!("not a tar.gz: {e}"))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("not a tar.gz: {e}"))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let path = entry.path().map_err(|e| e.to_string())?;
                let Some(file) = path
                    .file_name()
                    .and_then(|f| f.to_str())
                    .map(str::to_string)
                else {
                    continue;
                };
                if !bins.contains(&file) || files.iter().any(|(f, _)| *f == file) {
                    continue;
                }
                let mut data = Vec::new();
                entry
                    .take(MAX_DOWNLOAD + 1)
                    .read_to_end(&mut data)
                    .map_err(|e| format!("not a tar.gz: {e}"))?;
                if data.len() as u64 > MAX_DOWNLOAD {
                    return Err(format!("{file} unpacks to more than {MAX_DOWNLOAD} bytes"));
                }
                files.push((file, data));
            }
            if let Some(absent) = bins.iter().find(|b| !files.iter().any(|(f, _)| f == *b)) {
                return Err(format!("the archive holds no file named {absent}"));
            }
        }
    }
    let mut placed = Vec::new();
    for (file, data) in files {
        let target = bin.join(&file);
        write_executable(&target, &data).map_err(|e| format!("{}: {e}", target.display()))?;
        placed.push(target.display().to_string());
    }
    Ok(placed)
}

/// Writes `data` to `target` through a temporary file in its directory,
/// so an interrupted write leaves the old file or none.
fn write_executable(target: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(data)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Records a first download of a locked skill's tool in skills.lock.
fn record(
    project: &Project,
    skill: SkillName,
    url: WellKnownUrl,
    sha256: String,
) -> std::result::Result<(), String> {
    // Concurrent skillpm runs on the project wait for each other, and the
    // lock is read again under the guard, so what they wrote is kept.
    let cache = crate::cache::Cache::default_dir().map(crate::cache::Cache::new);
    let _guard = cache
        .map(|c| project.lock(&c))
        .transpose()
        .map_err(|e| e.to_string())?;
    let mut lock = project.read_lock().map_err(|e| e.to_string())?;
    if lock.get(&skill).is_none() {
        // Removed meanwhile: nothing to pin it to.
        return Ok(());
    }
    lock.record_download(LockedDownload { skill, url, sha256 });
    crate::fs::write_atomic(&project.lock_path, &lock.to_toml_string())
        .map_err(|e| format!("could not record the download in skills.lock: {e}"))
}

fn show(s: &str) -> String {
    skillpm_core::text::sanitize(s).into_owned()
}
