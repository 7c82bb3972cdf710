//! The `skillpm` command line: parse arguments, call the library, print.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use skillpm::engine::{catalog, config::Environment, load, prompt, validate};
use skillpm::ops;

mod progress;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "skillpm",
    version,
    about = "A package manager for agent skills"
)]
struct Cli {
    /// Run as if started in this project directory.
    #[arg(short = 'C', long = "project", global = true, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show every discovered skill: eligible, skipped, shadowed or invalid, and why.
    Status {
        /// Machine-readable output (a stable contract).
        #[arg(long)]
        json: bool,
    },
    /// Print the <available_skills> block an agent would see.
    Prompt {
        /// Character budget for the skill entries.
        #[arg(long, default_value_t = prompt::DEFAULT_BUDGET)]
        budget: usize,
        #[arg(long, value_enum, default_value_t = PromptFormat::Seed)]
        format: PromptFormat,
    },
    /// Print the <skill_content> block for one skill command.
    Load {
        /// The skill's command (its path below the root). Use `--` before names starting with `-`.
        command: String,
    },
    /// Check skills against the strict Agent Skills rules.
    Validate {
        /// Skill directories or trees of skills (default: the current directory).
        dirs: Vec<PathBuf>,
    },
    #[command(flatten)]
    Package(PackageCommand),
}

#[derive(Subcommand)]
enum PackageCommand {
    /// Create a commented skills.toml in the current (or -C) directory.
    Init,
    /// Add skills to skills.toml, resolve, install, and write the lock.
    Add {
        /// `name[@req]`, `git+URL[@ref]` or `./path`.
        #[arg(required = true)]
        specs: Vec<String>,
        /// Subdirectory of a git repository holding the skill.
        #[arg(long)]
        path: Option<String>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Remove skills from skills.toml, skills.lock and disk.
    Remove {
        #[arg(required = true)]
        names: Vec<String>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Install exactly what skills.lock records (resolving only what it lacks).
    Install {
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Re-resolve skills within their requirements.
    Update {
        names: Vec<String>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Show current, wanted and latest versions of registry skills.
    Outdated {
        #[arg(long)]
        json: bool,
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Show installed skills with versions and sources.
    List {
        #[arg(long)]
        json: bool,
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Re-hash installed skills against the lock and report modified files.
    Verify {
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Pack a skill directory into a deterministic .tar.gz.
    Pack {
        /// The skill directory (default: the current directory).
        dir: Option<PathBuf>,
        /// Output file (default: NAME-VERSION.tar.gz in the current directory).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Publish a skill directory to a registry.
    Publish {
        dir: Option<PathBuf>,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Yank a version (or un-yank it with --undo).
    Yank {
        /// NAME@VERSION
        target: String,
        #[arg(long)]
        undo: bool,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// List, add or remove the owners of a skill.
    Owner {
        #[command(subcommand)]
        action: OwnerAction,
    },
    /// Search the registry.
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Show a skill's versions, yanked state, description and requirements.
    Info {
        name: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Save a registry token (read from stdin unless --token is given).
    Login {
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Manage the download cache.
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
}

#[derive(Subcommand)]
enum OwnerAction {
    List {
        name: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    Add {
        name: String,
        user: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    Remove {
        name: String,
        user: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
}

#[derive(clap::Args)]
struct RegistryArgs {
    /// Registry URL (default: SKILLPM_REGISTRY, then [registries] default in skills.toml).
    #[arg(long)]
    registry: Option<String>,
    /// API token (default: SKILLPM_TOKEN, then the one saved by `skillpm login`).
    #[arg(long)]
    token: Option<String>,
}

#[derive(Subcommand)]
enum CacheAction {
    /// Print the cache directory.
    Dir,
    /// Delete everything in the cache.
    Clean,
}

#[derive(clap::Args)]
struct InstallFlags {
    /// Fail instead of changing skills.lock.
    #[arg(long)]
    locked: bool,
    /// Like --locked, and never use the network.
    #[arg(long)]
    frozen: bool,
    /// Use the user manifest and install into ~/.agents/skills.
    #[arg(long, short = 'g')]
    global: bool,
}

impl InstallFlags {
    fn options(&self) -> ops::Options {
        ops::Options {
            locked: self.locked,
            frozen: self.frozen,
            global: self.global,
            cache_dir: None,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum PromptFormat {
    /// <skill><command/><name/><description/></skill>
    Seed,
    /// The Agent Skills reference format: <skill><name/><description/><location/></skill>
    AgentSkills,
}

/// An error that carries its own exit code (2 = usage / unknown input).
#[derive(Debug)]
struct Exit(u8, String);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}
impl std::error::Error for Exit {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let code = e.downcast_ref::<Exit>().map(|x| x.0).unwrap_or(1);
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(code)
        }
    }
}

/// Joins an error chain into one line.
fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ").replace('\n', " ")
}

fn print(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("cannot write to stdout"),
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let env = Environment::from_process(cli.project.clone())
        .context("cannot read the current directory")?;
    match cli.command {
        Command::Status { json } => {
            let mut cat = build_catalog(&env)?;
            ops::annotate_installed(&mut cat);
            if json {
                let mut s = serde_json::to_string_pretty(&cat.to_json())?;
                s.push('\n');
                print(&s)?;
            } else {
                let color =
                    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
                print(&catalog::render_human(&cat, color))?;
            }
        }
        Command::Prompt { budget, format } => {
            let cat = build_catalog(&env)?;
            let format = match format {
                PromptFormat::Seed => prompt::Format::Seed,
                PromptFormat::AgentSkills => prompt::Format::AgentSkills,
            };
            print(&prompt::render(&cat, budget, format))?;
        }
        Command::Load { command } => {
            let cat = build_catalog(&env)?;
            let block = load::render(&cat, &command).map_err(|e| Exit(2, e.to_string()))?;
            print(&block)?;
        }
        Command::Validate { dirs } => {
            let dirs = if dirs.is_empty() {
                vec![env.cwd.clone()]
            } else {
                dirs
            };
            let mut all: Vec<validate::Violation> = dirs
                .iter()
                .flat_map(|d| validate::validate_path(d))
                .collect();
            all.sort();
            all.dedup();
            let errors = all
                .iter()
                .filter(|v| v.severity == validate::Severity::Error)
                .count();
            let mut s = String::new();
            for v in &all {
                s.push_str(&format!("{v}\n"));
            }
            if errors == 0 && !cli.quiet {
                s.push_str("ok: no errors\n");
            }
            print(&s)?;
            if errors > 0 {
                eprintln!("error: {errors} violation(s) found");
                return Ok(ExitCode::from(1));
            }
        }
        Command::Package(p) => return package_command(p, &env, cli.quiet),
    }
    Ok(ExitCode::SUCCESS)
}

fn global_opts(global: bool) -> ops::Options {
    ops::Options {
        global,
        ..ops::Options::default()
    }
}

/// Spec and argument errors exit 2, like clap's own usage errors.
fn usage_exit(e: skillpm::error::Error) -> anyhow::Error {
    match e {
        skillpm::error::Error::Spec(_) => Exit(2, e.to_string()).into(),
        e => e.into(),
    }
}

fn package_command(cmd: PackageCommand, env: &Environment, quiet: bool) -> Result<ExitCode> {
    let reporter = progress::CliReporter::new(quiet);
    let done = |summary: ops::Summary| -> Result<ExitCode> {
        if !quiet {
            eprintln!("{}", summary.line());
        }
        Ok(ExitCode::SUCCESS)
    };
    match cmd {
        PackageCommand::Init => {
            let path = ops::init(env)?;
            if !quiet {
                eprintln!("Created {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Add { specs, path, flags } => done(
            ops::add(env, &specs, path.as_deref(), &flags.options(), &reporter)
                .map_err(usage_exit)?,
        ),
        PackageCommand::Remove { names, flags } => {
            done(ops::remove(env, &names, &flags.options(), &reporter)?)
        }
        PackageCommand::Install { flags } => done(ops::install(env, &flags.options(), &reporter)?),
        PackageCommand::Update { names, flags } => {
            done(ops::update(env, &names, &flags.options(), &reporter)?)
        }
        PackageCommand::Outdated { json, global } => {
            let rows = ops::outdated(env, &global_opts(global))?;
            let header = format!(
                "{:<32} {:<12} {:<12} {:<12}\n",
                "name", "current", "wanted", "latest"
            );
            print_rows(json, &rows, Some(header), |r| {
                format!(
                    "{:<32} {:<12} {:<12} {:<12}\n",
                    r.name, r.current, r.wanted, r.latest
                )
            })
        }
        PackageCommand::List { json, global } => {
            let rows = ops::list(env, &global_opts(global))?;
            print_rows(json, &rows, None, |r| {
                format!("{} {}  {}  [{}]\n", r.name, r.version, r.source, r.state)
            })
        }
        PackageCommand::Verify { global } => {
            let issues = ops::verify(env, &global_opts(global))?;
            let mut s = String::new();
            for i in &issues {
                s.push_str(&format!("{} ({}): {}\n", i.skill, i.root, i.problem));
            }
            print(&s)?;
            if issues.is_empty() {
                if !quiet {
                    eprintln!("ok: every installed skill matches skills.lock");
                }
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: {} problem(s) found", issues.len());
                Ok(ExitCode::from(1))
            }
        }
        PackageCommand::Pack { dir, output } => {
            let dir = dir.unwrap_or_else(|| env.cwd.clone());
            let (name, version) = skillpm::source::identify(&dir, &dir.display().to_string())?;
            let out = output.unwrap_or_else(|| env.cwd.join(format!("{name}-{version}.tar.gz")));
            let checksum = skillpm::archive::pack_to_file(&dir, &out)?;
            print(&format!("{} {checksum}\n", out.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Publish { dir, reg } => {
            let dir = dir.unwrap_or_else(|| env.cwd.clone());
            let (url, token) = registry_and_token(env, reg, true)?;
            let r = block_on(skillpm::registry::publish_dir(
                &dir,
                &url,
                &token.unwrap_or_default(),
            ))??;
            if !quiet {
                eprintln!("Published {}@{} ({}) to {url}", r.name, r.vers, r.cksum);
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Yank { target, undo, reg } => {
            let (name, version) = target
                .split_once('@')
                .ok_or_else(|| Exit(2, format!("expected NAME@VERSION, got `{target}`")))?;
            let client = client(env, reg, true)?;
            block_on(client.yank(name, version, undo))??;
            if !quiet {
                eprintln!(
                    "{} {name}@{version}",
                    if undo { "Unyanked" } else { "Yanked" }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Owner { action } => {
            match action {
                OwnerAction::List { name, reg } => {
                    let owners = block_on(client(env, reg, false)?.owners(&name))??;
                    print(&owners.iter().map(|o| format!("{o}\n")).collect::<String>())?;
                }
                OwnerAction::Add { name, user, reg } => {
                    block_on(client(env, reg, true)?.add_owners(&name, &[user]))??;
                }
                OwnerAction::Remove { name, user, reg } => {
                    block_on(client(env, reg, true)?.remove_owners(&name, &[user]))??;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Search { query, limit, reg } => {
            let r = block_on(client(env, reg, false)?.search(&query, limit))??;
            let mut s = String::new();
            for h in &r.skills {
                s.push_str(&format!(
                    "{} {}  {}\n",
                    h.name,
                    h.max_version,
                    catalog::one_line(&h.description, 80)
                ));
            }
            if !quiet {
                s.push_str(&format!("({} of {} shown)\n", r.skills.len(), r.meta.total));
            }
            print(&s)?;
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Info { name, json, reg } => {
            let c = client(env, reg, false)?;
            let index = match block_on(c.index(&name, None))?? {
                skillpm::registry::IndexResponse::Fresh { index, .. } => index,
                skillpm::registry::IndexResponse::NotModified => {
                    anyhow::bail!("registry answered 304 to an unconditional request")
                }
            };
            if json {
                print(&format!("{}\n", serde_json::to_string_pretty(&index)?))?;
            } else {
                let mut s = format!("{}\n", index.name);
                if let Some(latest) = index.versions.iter().rfind(|v| !v.yanked) {
                    s.push_str(&format!(
                        "{}\n",
                        catalog::one_line(&latest.description, 200)
                    ));
                    if !latest.requires.is_empty() {
                        s.push_str(&format!(
                            "requires: {}\n",
                            serde_json::Value::Object(latest.requires.clone())
                        ));
                    }
                }
                s.push_str("versions:\n");
                for v in &index.versions {
                    let y = if v.yanked { "  (yanked)" } else { "" };
                    s.push_str(&format!("  {}  {}{y}\n", v.vers, v.cksum));
                }
                print(&s)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Login { reg } => {
            let url = registry_url(env, reg.registry)?;
            let token = match reg.token {
                Some(t) => t,
                None => {
                    let mut line = String::new();
                    std::io::stdin()
                        .read_line(&mut line)
                        .context("cannot read the token from stdin")?;
                    line.trim().to_string()
                }
            };
            if token.is_empty() {
                return Err(Exit(2, "empty token".into()).into());
            }
            let dir = env
                .config_dir
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("no config directory: set HOME"))?;
            let path = skillpm::credentials::save(dir, &url, &token)?;
            if !quiet {
                eprintln!("Saved the token for {url} in {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        PackageCommand::Cache { action } => {
            let dir = skillpm::cache::Cache::default_dir()
                .ok_or_else(|| anyhow::anyhow!("no cache directory: set XDG_CACHE_HOME or HOME"))?;
            match action {
                CacheAction::Dir => print(&format!("{}\n", dir.display()))?,
                CacheAction::Clean => {
                    let cache = skillpm::cache::Cache::new(dir);
                    let _guard = cache.lock()?;
                    cache.clean()?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints rows as pretty JSON, or one formatted line each.
fn print_rows<T: serde::Serialize>(
    json: bool,
    rows: &[T],
    header: Option<String>,
    line: impl Fn(&T) -> String,
) -> Result<ExitCode> {
    let text = if json {
        format!("{}\n", serde_json::to_string_pretty(rows)?)
    } else {
        header.into_iter().chain(rows.iter().map(line)).collect()
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs a future on a fresh single-threaded runtime.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(rt.block_on(f))
}

/// `--registry`, else `SKILLPM_REGISTRY`, else `[registries] default`.
fn registry_url(env: &Environment, explicit: Option<String>) -> Result<String> {
    if let Some(u) = explicit.filter(|u| !u.is_empty()) {
        return Ok(u.trim_end_matches('/').to_string());
    }
    let project = skillpm::project::Project::locate(env, false)?;
    let manifest = if project.manifest_path.is_file() {
        project.read_manifest()?
    } else {
        skillpm::manifest::Manifest::default()
    };
    Ok(project.registry_url(&manifest, None)?)
}

fn registry_and_token(
    env: &Environment,
    reg: RegistryArgs,
    need_token: bool,
) -> Result<(String, Option<String>)> {
    let url = registry_url(env, reg.registry)?;
    let token = match skillpm::credentials::resolve(reg.token, env.config_dir.as_deref(), &url) {
        Ok(t) => Some(t),
        Err(e) if need_token => return Err(e.into()),
        Err(_) => None,
    };
    Ok((url, token))
}

fn client(
    env: &Environment,
    reg: RegistryArgs,
    need_token: bool,
) -> Result<skillpm::registry::RegistryClient> {
    let (url, token) = registry_and_token(env, reg, need_token)?;
    Ok(skillpm::registry::RegistryClient::new(&url, token)?)
}

fn build_catalog(env: &Environment) -> Result<catalog::Catalog> {
    Ok(catalog::Catalog::build(env)?)
}
