//! The command line's shape (clap derive): every command, flag and
//! argument with its help line.

use clap::{Parser, Subcommand, ValueEnum};
use skillpm::engine::prompt;
use skillpm::ops;
use skillpm::project::spec::RegistryChoice;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "skillpm",
    version,
    about = "A package manager for agent skills"
)]
pub struct Cli {
    /// Run as if started in this project directory.
    #[arg(short = 'C', long = "project", global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Show every discovered skill: eligible, skipped, shadowed or invalid, and why.
    Status {
        /// Machine-readable output (a stable contract).
        #[arg(long)]
        json: bool,
        /// Exactly what this agent sees: its roots, its precedence and the frontmatter
        /// keys it honours (claude-code, codex, cursor, ...).
        #[arg(long, value_name = "NAME", conflicts_with = "agents")]
        agent: Option<String>,
        /// A matrix of every skill against every known agent.
        #[arg(long)]
        agents: bool,
        /// The host's tools, comma-separated: each skill's `allowed-tools` / `tools` are
        /// checked against them under `[engine] tool_validation` (overrides `[engine] tools`).
        #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
        tools: Option<Vec<String>>,
    },
    /// Print the `<available_skills>` block an agent would see.
    Prompt {
        /// Character budget for the skill entries.
        #[arg(long, default_value_t = prompt::DEFAULT_BUDGET)]
        budget: usize,
        /// Catalogue dialect: skillpm's seed format, the Agent Skills reference format, or
        /// the skill-system format (each skill's instructions inline).
        #[arg(long, value_enum, default_value_t = PromptFormat::Seed)]
        format: PromptFormat,
        /// Disclose by tiers for this user message: nothing, a `[N skills available]`
        /// breadcrumb, the registry of brief descriptions, or the full instructions of the
        /// skills it mentions or triggers.
        #[arg(long, value_name = "TEXT")]
        query: Option<String>,
        /// With --query: full instructions for at most this many skills.
        #[arg(long, requires = "query", default_value_t = skillpm::engine::disclose::DEFAULT_MAX_SKILLS,
              value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        max_skills: usize,
        /// With --query: `{"tier", "commands", "text"}` as JSON.
        #[arg(long, requires = "query")]
        json: bool,
    },
    /// Print the `<skill_content>` block for one skill command.
    Load {
        /// The skill's command (its path below the root). Use `--` before names starting with `-`.
        command: String,
    },
    /// List the skill commands a user can invoke by name (`/deploy staging`), as Claude
    /// Code's user-invocable skills: name, argument hint, description, and the definitions
    /// a project skill shadows, with why.
    #[command(args_conflicts_with_subcommands = true)]
    Commands {
        #[command(subcommand)]
        command: Option<CommandsCommand>,
        /// Machine-readable output: `{"commands": [{"name", "skill", "path", "scope",
        /// "description", "argument_hint", "arguments", "model_invocable", "shadowed"}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Is a tool call within an active skill's `allowed-tools`? For agent hooks such as
    /// Claude Code's PreToolUse: exit 0 allows, exit 2 blocks.
    ///
    /// TOOL is written as `allowed-tools` entries are: `Read`, `Bash(git status)`,
    /// `mcp__server__tool`. Outside the allowlist the mode decides: `strict` blocks,
    /// `approval` asks (exit 2; with --hook, Claude Code asks the user), `permissive`
    /// allows with a warning on stderr.
    CheckTool {
        /// The active skill's command; an empty string means no skill is active.
        skill: String,
        /// The tool call (not with --hook, which reads it from stdin).
        #[arg(required_unless_present = "hook", conflicts_with = "hook")]
        tool: Option<String>,
        /// What a call outside the allowlist gets.
        #[arg(long, value_enum, default_value_t = CheckMode::Permissive)]
        mode: CheckMode,
        /// A call a human already approved in this session (repeatable): allowed as
        /// `dynamically_approved`. The caller keeps the session's list; skillpm keeps none.
        #[arg(long, value_name = "TOOL")]
        approved: Vec<String>,
        /// The decision as JSON: `{"decision", "reason", "tool", "mode", "skills",
        /// "matched"?, "warning"?}`.
        #[arg(long, conflicts_with = "hook")]
        json: bool,
        /// Read a Claude Code PreToolUse hook's input from stdin and answer as its hooks
        /// do: exit 2 with the reason on stderr to block, `permissionDecision: ask` to ask,
        /// nothing to leave the call to Claude Code's own permissions.
        #[arg(long)]
        hook: bool,
    },
    /// For each skill this machine makes ineligible: what is missing and the ways the
    /// skill declares to get it here (`metadata.openclaw.install`), filtered by OS and by
    /// which package managers are on PATH. With --fix, run them.
    Doctor {
        /// Skills to check (default: every skill ineligible for a missing binary,
        /// variable or OS).
        skills: Vec<String>,
        /// The report as JSON.
        #[arg(long)]
        json: bool,
        /// Run the chosen steps: package managers as an argv with no shell, into
        /// skillpm's tools directory (`$SKILLPM_TOOLS_DIR`, else
        /// `~/.local/share/skillpm/tools`); downloads fetched and checked by skillpm.
        /// Asks first unless --yes.
        #[arg(long)]
        fix: bool,
        /// Do not ask before running the steps.
        #[arg(long, short = 'y', requires = "fix")]
        yes: bool,
        /// Also run downloads that declare no sha256; the hash each had is recorded in
        /// skills.lock for a locked skill, so the next machine gets the same bytes or stops.
        #[arg(long, requires = "fix")]
        allow_unverified: bool,
    },
    /// Check skills against the Agent Skills specification (agentskills.io), as its
    /// reference validator `skills-ref` does: every violation, with file and line.
    Validate {
        /// SKILL.md files, skill directories, or trees of skills (default: the current directory).
        paths: Vec<PathBuf>,
        /// Which top-level frontmatter keys are allowed.
        #[arg(long, value_enum, default_value_t = ValidateDialect::AgentSkills)]
        dialect: ValidateDialect,
        /// Also validate skills under dot-directories (`.curated/`, `.system/`), which are
        /// skipped by default as discovery skips them.
        #[arg(long)]
        hidden: bool,
    },
    /// Serve the eligible skills to agents over MCP (stdio by default), with the
    /// Skills extension, plain skill:// resources and list/search/load tools.
    Mcp {
        /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8765).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    #[command(flatten)]
    Package(PackageCommand),
    /// Check skills for what could harm whoever installs them: hidden text,
    /// remote code run blind, credential theft, writes to agent config.
    ///
    /// Scans every file of each skill with the rules the registry also runs
    /// at publish; findings skills.toml's [audit.waive] accepts are shown
    /// with their reason and do not count. `audit signatures` verifies
    /// registry signatures instead.
    #[command(args_conflicts_with_subcommands = true)]
    Audit {
        #[command(subcommand)]
        command: Option<AuditCommand>,
        /// Skill directories, or directories holding skills (default: every
        /// skill the project's lock installs).
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = AuditFormat::Human)]
        format: AuditFormat,
        /// Exit 1 when a finding at or above this severity stands: note,
        /// warning, error or critical (default: skills.toml's [audit]
        /// fail-on, else error).
        #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
        fail_on: Option<skillpm::audit::Severity>,
        /// Accept RULE's findings in SKILL this once (RULE@SKILL; repeatable).
        #[arg(long, value_name = "RULE@SKILL", value_parser = parse_allow)]
        allow: Vec<skillpm::project::manifest::Allow>,
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Print a shell's completion script on stdout.
    ///
    /// Save it where the shell loads completions, e.g.
    /// `skillpm completions bash > ~/.local/share/bash-completion/completions/skillpm`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write one man page per command (`skillpm.1`, `skillpm-add.1`, ...) into DIR.
    // Hidden from help and from completions: man pages are a packager's
    // build step, not a command for daily use. The book's reference comes
    // from the same definitions (`cli::docs`).
    #[command(hide = true)]
    GenerateMan {
        /// The directory to write the pages into (created if missing).
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum PackageCommand {
    /// Create a commented skills.toml in the current (or -C) directory.
    Init,
    /// Take over a project managed by vercel's `skills` CLI: its skills-lock.json
    /// becomes skills.toml and skills.lock (same sources, pinned to full commits).
    Import {
        /// The lock to read (default: skills-lock.json in the project).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Add skills to skills.toml, resolve, install, and write the lock.
    Add {
        /// `name[@req]`, `git+URL[@ref]`, `owner/repo[/path][@ref]`,
        /// `https://site` (its Agent Skills index) or `./path`.
        #[arg(required = true)]
        specs: Vec<String>,
        /// Subdirectory of a git repository holding the skill.
        #[arg(long)]
        path: Option<String>,
        /// From a repository or index holding several skills, add these
        /// (by name or command).
        #[arg(long = "skill", value_name = "NAME", num_args = 1.., conflicts_with = "all")]
        skills: Vec<String>,
        /// From a git repository with a plugin marketplace (Claude Code,
        /// Codex, Copilot), add the skills of these plugins, each as its own
        /// entry: `NAME` or `NAME@MARKETPLACE`, with `@REQ` for a
        /// requirement on the version the plugin declares (`NAME@^6`; what
        /// follows `@` is a requirement when it starts with a digit or one
        /// of `^~<>=*`).
        #[arg(long = "plugin", value_name = "NAME", num_args = 1.., conflicts_with_all = ["all", "skills", "path"])]
        plugins: Vec<String>,
        /// From a repository or index holding several skills, add all.
        /// Skills that cannot be installed (an invalid name or SKILL.md,
        /// two of one name) are skipped, each with a warning.
        #[arg(long)]
        all: bool,
        /// With --all, fail if any skill of the repository cannot be
        /// installed, instead of skipping it.
        #[arg(long, requires = "all")]
        strict: bool,
        /// Take skills skills.toml already has from another source (another
        /// repository, directory, registry or site) from this one instead.
        #[arg(long)]
        replace: bool,
        /// Registry for `name[@req]` specs: a URL, or a name under [registries] in
        /// skills.toml. Recorded in skills.toml (a new URL under [registries], named
        /// after its host), so the skills resolve there again without the flag.
        #[arg(long, value_name = "NAME|URL")]
        registry: Option<String>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Remove skills from skills.toml, skills.lock and disk.
    Remove {
        /// Names of skills in skills.toml.
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
        /// Only these skills (default: every skill in skills.toml).
        names: Vec<String>,
        #[command(flatten)]
        flags: InstallFlags,
    },
    /// Show what `update` would change: current, wanted and latest versions,
    /// the skills others pull in included.
    Outdated {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Show the dependency graph: skills.toml's skills and what they pull in.
    Tree {
        /// Show the skills that depend on NAME, up to skills.toml.
        #[arg(long, value_name = "NAME")]
        invert: Option<String>,
        /// At most this many levels below the first.
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
        /// Machine-readable output: every skill with its edges both ways.
        #[arg(long)]
        json: bool,
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Show why a skill is installed: each chain from skills.toml to it.
    Why {
        /// The skill.
        name: String,
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Show installed skills with versions and sources.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
    /// Re-hash installed skills against the lock and report modified files.
    Verify {
        /// Use the user manifest (~/.agents/skills) instead of the project's.
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
        /// The skill directory (default: the current directory).
        dir: Option<PathBuf>,
        /// Run every check the registry runs and list what would be
        /// uploaded, with sizes; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// The version to publish, for a SKILL.md that declares none
        /// (it is not edited; the index records the version). Must equal
        /// a version the SKILL.md declares.
        #[arg(long, value_name = "SEMVER")]
        version: Option<semver::Version>,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Yank a version (or un-yank it with --undo).
    Yank {
        /// NAME@VERSION
        target: String,
        /// Un-yank instead: make the version installable by new resolutions again.
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
        /// Words to look for in names, descriptions and tags.
        query: String,
        /// At most this many results.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Search the skills this project's agent sees (ranked: name mentions, trigger
        /// phrases, keywords, patterns, then TF-IDF), not the registry.
        #[arg(long)]
        local: bool,
        /// With --local: machine-readable output.
        #[arg(long, requires = "local")]
        json: bool,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Show a skill's versions, yanked state, description and requirements.
    Info {
        /// The skill's name.
        name: String,
        /// Machine-readable output (the registry's index entry).
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
pub enum CommandsCommand {
    /// Print a command's instructions with ARGS filled in as Claude Code fills them
    /// (`$ARGUMENTS`, `$0`, `$ARGUMENTS[1]`, `$name`; else `ARGUMENTS: …` appended).
    Run {
        /// The command's name (its skill's command). Use `--` before names starting with `-`.
        name: String,
        /// The arguments, as typed after `/NAME`; each stays one argument.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Verify every locked registry skill's index entry against its
    /// registry's signing keys (as `npm audit signatures` does): one line
    /// per skill, then a summary; exit 1 if any fails.
    Signatures {
        /// Use the user manifest (~/.agents/skills) instead of the project's.
        #[arg(long, short = 'g')]
        global: bool,
    },
}

#[derive(Subcommand)]
pub enum OwnerAction {
    /// Print the owners of a skill.
    List {
        /// The skill's name.
        name: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Add an owner (needs a token of a current owner).
    Add {
        /// The skill's name.
        name: String,
        /// The registry login to add.
        user: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
    /// Remove an owner (the last owner cannot be removed).
    Remove {
        /// The skill's name.
        name: String,
        /// The registry login to remove.
        user: String,
        #[command(flatten)]
        reg: RegistryArgs,
    },
}

#[derive(clap::Args)]
pub struct RegistryArgs {
    /// Registry URL, or a name under [registries] in skills.toml (default: SKILLPM_REGISTRY,
    /// then [registries] default).
    // A String here, parsed by `RegistryChoice` after clap: clap's own
    // "invalid value" message would echo a URL's password.
    #[arg(long, value_name = "NAME|URL")]
    pub registry: Option<String>,
    /// API token (default: SKILLPM_TOKEN, then the one saved by `skillpm login`).
    #[arg(long)]
    pub token: Option<String>,
}

impl TryFrom<RegistryArgs> for ops::RegistryArgs {
    type Error = skillpm::error::Error;
    fn try_from(a: RegistryArgs) -> Result<Self, Self::Error> {
        Ok(ops::RegistryArgs {
            registry: registry_choice(a.registry.as_deref())?,
            token: a.token,
        })
    }
}

/// `--registry` as a URL or a registry name; an empty value is no choice.
pub fn registry_choice(s: Option<&str>) -> Result<Option<RegistryChoice>, skillpm::error::Error> {
    Ok(s.filter(|s| !s.is_empty())
        .map(RegistryChoice::parse)
        .transpose()?)
}

#[derive(Subcommand)]
pub enum CacheAction {
    /// Print the cache directory.
    Dir,
    /// Delete everything in the cache.
    Clean,
}

#[derive(clap::Args)]
pub struct InstallFlags {
    /// Fail instead of changing skills.lock.
    #[arg(long)]
    pub locked: bool,
    /// Like --locked, and never use the network.
    #[arg(long)]
    pub frozen: bool,
    /// Use the user manifest and install into ~/.agents/skills.
    #[arg(long, short = 'g')]
    pub global: bool,
    /// Install despite RULE's critical audit findings in SKILL, after you
    /// reviewed them (RULE@SKILL; repeatable).
    #[arg(long, value_name = "RULE@SKILL", value_parser = parse_allow)]
    pub allow: Vec<skillpm::project::manifest::Allow>,
}

impl InstallFlags {
    pub fn options(&self) -> ops::Options {
        ops::Options {
            locked: self.locked,
            frozen: self.frozen,
            global: self.global,
            cache_dir: None,
            allow: self.allow.clone(),
        }
    }
}

fn parse_allow(s: &str) -> Result<skillpm::project::manifest::Allow, String> {
    skillpm::project::manifest::Allow::parse(s)
}

fn parse_severity(s: &str) -> Result<skillpm::audit::Severity, String> {
    s.parse()
        .map_err(|_| format!("`{s}` is not a severity; use note, warning, error or critical"))
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    /// One line per finding, then a summary.
    Human,
    /// Every skill with its findings, as JSON.
    Json,
    /// SARIF 2.1.0, for code scanning tools.
    Sarif,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ValidateDialect {
    /// Only the specification's keys: name, description, license, compatibility, metadata,
    /// allowed-tools. Anything else belongs under `metadata`.
    AgentSkills,
    /// Also the keys skillpm reads: version, requires, os, conflicts, always,
    /// user_invocable_only, triggers, agent blocks such as `sven: {requires_bins}`, and
    /// `metadata.openclaw` maps.
    Skillpm,
}

impl From<ValidateDialect> for skillpm::engine::validate::Dialect {
    fn from(d: ValidateDialect) -> Self {
        match d {
            ValidateDialect::AgentSkills => Self::AgentSkills,
            ValidateDialect::Skillpm => Self::Skillpm,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PromptFormat {
    /// `<skill><command/><name/><description/></skill>`
    Seed,
    /// The Agent Skills reference format: `<skill><name/><description/><location/></skill>`
    AgentSkills,
    /// Every skill with its instructions inline:
    /// `<skills><skill id name><triggers/><instructions/></skill></skills>`
    SkillSystem,
}

impl From<PromptFormat> for prompt::Format {
    fn from(f: PromptFormat) -> Self {
        match f {
            PromptFormat::Seed => Self::Seed,
            PromptFormat::AgentSkills => Self::AgentSkills,
            PromptFormat::SkillSystem => Self::SkillSystem,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CheckMode {
    /// Block calls outside the allowlist.
    Strict,
    /// Ask a human about calls outside the allowlist.
    Approval,
    /// Allow calls outside the allowlist, with a warning.
    Permissive,
}

impl From<CheckMode> for skillpm::engine::authorize::Mode {
    fn from(m: CheckMode) -> Self {
        match m {
            CheckMode::Strict => Self::Strict,
            CheckMode::Approval => Self::Approval,
            CheckMode::Permissive => Self::Permissive,
        }
    }
}
