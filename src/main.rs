//! The `skillpm` command line: parse arguments, call the library, print.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use skillpm::engine::{catalog, config::Environment, load, prompt, validate};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "skillpm", version, about = "A package manager for agent skills")]
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
    // Registry and install commands are added here.
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
            let cat = build_catalog(&env)?;
            if json {
                let mut s = serde_json::to_string_pretty(&cat.to_json())?;
                s.push('\n');
                print(&s)?;
            } else {
                let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
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
            let mut all: Vec<validate::Violation> =
                dirs.iter().flat_map(|d| validate::validate_path(d)).collect();
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
        Command::Package(p) => match p {},
    }
    Ok(ExitCode::SUCCESS)
}

fn build_catalog(env: &Environment) -> Result<catalog::Catalog> {
    Ok(catalog::Catalog::build(env)?)
}
