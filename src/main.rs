//! The `skillpm` command line: parse arguments, call the library, print.

mod cli;

use anyhow::{Context, Result};
use clap::Parser;
use cli::args::{
    AuditCommand, AuditFormat, CacheAction, Cli, Command, CommandsCommand, OwnerAction,
    PackageCommand,
};
use cli::output::{eprint_line, note, one_line, print, write_stdout, Exit};
use cli::{progress::CliReporter, render};
use skillpm::engine::{catalog, config::Environment, load, validate};
use skillpm::ops;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let code = e.downcast_ref::<Exit>().map(|x| x.0).unwrap_or(1);
            eprint_line(&format!("error: {}", one_line(&e)));
            ExitCode::from(code)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let env = Environment::from_process(cli.project.clone()).context("cannot start")?;
    // Whatever the command, an interrupted install is settled first, so
    // it reads (and the agent sees) one whole state.
    for done in ops::recover(&env, &ops::Options::default())? {
        eprint_line(&done.to_string());
    }
    match cli.command {
        Command::Status {
            json,
            agent,
            agents,
            tools,
        } => cli::status::run(&env.with_tools(tools), json, agent.as_deref(), agents)?,
        Command::Prompt {
            budget,
            format,
            query,
            max_skills,
            json,
        } => {
            let opts = skillpm::engine::disclose::Options {
                max_skills,
                budget,
                format: format.into(),
            };
            cli::find::prompt(&env, query.as_deref(), &opts, json)?;
        }
        Command::Load { command } => {
            let cat = catalog::Catalog::build(&env)?;
            // An unknown command is a failed lookup, not bad usage: exit 1.
            print(&load::render(&cat, &command).map_err(|e| Exit(1, e.to_string()))?)?;
        }
        Command::Commands { command, json } => match command {
            None => cli::commands::list(&env, json)?,
            Some(CommandsCommand::Run { name, args }) => cli::commands::run(&env, &name, &args)?,
        },
        Command::CheckTool {
            skill,
            tool,
            mode,
            approved,
            json,
            hook,
        } => {
            let how = match (hook, json) {
                (true, _) => cli::check_tool::Answer::Hook,
                (false, true) => cli::check_tool::Answer::Json,
                (false, false) => cli::check_tool::Answer::Human,
            };
            let request = cli::check_tool::Request {
                skill: &skill,
                tool: tool.as_deref(),
                mode: mode.into(),
                approved: &approved,
            };
            return cli::check_tool::run(&env, &request, how);
        }
        Command::Doctor {
            skills,
            json,
            fix,
            yes,
            allow_unverified,
        } => {
            let request = cli::doctor::Request {
                skills: &skills,
                json,
                fix,
                yes,
                allow_unverified,
            };
            return cli::doctor::run(&env, &request);
        }
        Command::Validate {
            paths,
            dialect,
            hidden,
        } => {
            let paths = if paths.is_empty() {
                vec![env.cwd.clone()]
            } else {
                paths
            };
            let opts = validate::Options {
                dialect: dialect.into(),
                hidden,
            };
            let mut all = Vec::new();
            for path in &paths {
                let report = validate::validate_path(path, opts);
                if let Some(n) = report.hidden_note(path) {
                    note(cli.quiet, n);
                }
                if let Some(n) = report.version_note() {
                    note(cli.quiet, n);
                }
                all.extend(report.violations);
            }
            all.sort();
            all.dedup();
            let (text, errors) = render::violations(&all, cli.quiet);
            print(&text)?;
            if errors > 0 {
                eprintln!("error: {errors} violation(s) found");
                return Ok(ExitCode::from(1));
            }
        }
        Command::Mcp { http } => {
            let transport = match http {
                Some(addr) => skillpm::mcp::Transport::Http(addr),
                None => skillpm::mcp::Transport::Stdio,
            };
            let kept = skillpm::Cache::default_dir()
                .map(|d| skillpm::Cache::new(d).mcp_state(&env.project_base()));
            skillpm::mcp::run(env, transport, kept)?;
        }
        Command::Package(p) => return package_command(p, &env, cli.quiet),
        Command::Audit {
            command: None,
            paths,
            format,
            fail_on,
            allow,
            global,
        } => {
            let report = ops::audit(&env, &global_opts(global), &paths, &allow, fail_on)?;
            match format {
                AuditFormat::Human => print(&cli::audit::human(&report))?,
                AuditFormat::Json => print(&render::json(&report)?)?,
                AuditFormat::Sarif => print(&render::json(&cli::audit::sarif(&report, &env.cwd))?)?,
            }
            let failing = report.failing();
            if failing > 0 {
                eprint_line(&format!(
                    "error: {failing} finding{} at or above {} stand{}; review {}, then fix or waive (skills.toml [audit.waive])",
                    if failing == 1 { "" } else { "s" },
                    report.fail_on,
                    if failing == 1 { "s" } else { "" },
                    if failing == 1 { "it" } else { "them" },
                ));
                return Ok(ExitCode::from(1));
            }
        }
        Command::Audit {
            command: Some(AuditCommand::Signatures { global }),
            ..
        } => {
            let audit = ops::audit_signatures(&env, &global_opts(global))?;
            print(&render::signatures(&audit))?;
            if audit.failed() > 0 {
                eprintln!(
                    "error: {} skill(s) failed signature verification",
                    audit.failed()
                );
                return Ok(ExitCode::from(1));
            }
        }
        Command::Completions { shell } => write_stdout(&cli::docs::completions(shell))?,
        Command::GenerateMan { dir } => cli::docs::man_pages(&dir)?,
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
        skillpm::error::Error::Spec(_)
        | skillpm::error::Error::NotSkillDir { .. }
        | skillpm::error::Error::RegistryNotForSpec { .. } => Exit(2, e.to_string()).into(),
        e => e.into(),
    }
}

fn package_command(cmd: PackageCommand, env: &Environment, quiet: bool) -> Result<ExitCode> {
    let reporter = CliReporter::new(quiet);
    let summary = match cmd {
        PackageCommand::Init => {
            let done = ops::init(env)?;
            for (id, found) in &done.detected {
                note(quiet, format!("Detected {id} ({found} exists)"));
            }
            note(quiet, format!("Created {}", done.path.display()));
            None
        }
        PackageCommand::Import { from, flags } => {
            let done = ops::import(env, from.as_deref(), &flags.options(), &reporter)?;
            for line in &done.not_carried {
                note(quiet, format!("not carried over: {line}"));
            }
            note(
                quiet,
                format!(
                    "Imported {} skill(s) from {}",
                    done.imported.len(),
                    ops::VERCEL_LOCK
                ),
            );
            Some(done.summary)
        }
        PackageCommand::Add {
            specs,
            path,
            skills,
            plugins,
            all,
            strict,
            replace,
            registry,
            flags,
        } => {
            let selection = match (all, skills.is_empty(), plugins.is_empty()) {
                (true, _, _) => ops::Selection::All { strict },
                (false, false, _) => ops::Selection::Named(skills),
                (false, true, false) => ops::Selection::Plugins(plugins),
                (false, true, true) => ops::Selection::One,
            };
            let opts = flags.options();
            let registry = cli::args::registry_choice(registry.as_deref()).map_err(usage_exit)?;
            let request = ops::AddRequest {
                specs,
                subpath: path,
                selection,
                replace,
                registry,
            };
            let added = ops::add(env, &request, &opts, &reporter);
            if let Some(listing) = added.as_ref().err().and_then(ops::choice_listing) {
                listing.lines().for_each(eprint_line);
            }
            Some(added.map_err(usage_exit)?)
        }
        PackageCommand::Remove { names, flags } => {
            Some(ops::remove(env, &names, &flags.options(), &reporter)?)
        }
        PackageCommand::Install { flags } => Some(ops::install(env, &flags.options(), &reporter)?),
        PackageCommand::Update { names, flags } => {
            Some(ops::update(env, &names, &flags.options(), &reporter)?)
        }
        PackageCommand::Outdated { json, global } => {
            print(&render::outdated(
                json,
                &ops::outdated(env, &global_opts(global), &reporter)?,
            )?)?;
            None
        }
        PackageCommand::Tree {
            invert,
            depth,
            json,
            global,
        } => {
            let graph = ops::graph(env, &global_opts(global))?;
            let text = match json {
                true => render::json(&graph.nodes())?,
                false => render::tree(&graph.tree(invert.as_deref(), depth)?),
            };
            if text.is_empty() {
                note(quiet, "nothing is locked yet; `skillpm add` a skill first");
            }
            print(&text)?;
            None
        }
        PackageCommand::Why { name, global } => {
            let graph = ops::graph(env, &global_opts(global))?;
            print(&render::why(&graph.why(&name)?))?;
            None
        }
        PackageCommand::List { json, global } => {
            let rows = ops::list(env, &global_opts(global))?;
            print(&render::rows(json, &rows, None, |r| {
                let pulled = if r.direct { "" } else { "  (dependency)" };
                format!(
                    "{} {}  {}  [{}]{pulled}\n",
                    r.name, r.version, r.source, r.state
                )
            })?)?;
            None
        }
        PackageCommand::Verify { global } => {
            let issues = ops::verify(env, &global_opts(global))?;
            print(&render::verify(&issues))?;
            if !issues.is_empty() {
                eprintln!("error: {} problem(s) found", issues.len());
                return Ok(ExitCode::from(1));
            }
            note(quiet, "ok: every installed skill matches skills.lock");
            None
        }
        PackageCommand::Pack { dir, output } => {
            let dir = dir.unwrap_or_else(|| env.cwd.clone());
            let (name, version) = skillpm::source::identify(&dir, &dir.display().to_string())?;
            let out = output.unwrap_or_else(|| env.cwd.join(format!("{name}-{version}.tar.gz")));
            let checksum = skillpm::archive::pack_to_file(&dir, &out)?;
            print(&format!("{} {checksum}\n", out.display()))?;
            None
        }
        PackageCommand::Publish {
            dir,
            dry_run: true,
            version,
            ..
        } => {
            let dir = dir.unwrap_or_else(|| env.cwd.clone());
            let package = ops::prepare_publish(&dir, version.as_ref())?;
            let total: u64 = package.files.iter().map(|(_, n)| n).sum();
            let width = package
                .files
                .iter()
                .map(|(p, _)| p.len())
                .max()
                .unwrap_or(0);
            for (path, bytes) in &package.files {
                print(&format!("  {path:<width$}  {bytes:>9} B\n"))?;
            }
            for dep in &package.deps {
                print(&format!("  depends on {} {}\n", dep.name, dep.req))?;
            }
            let id = &package.identity;
            note(
                quiet,
                format!(
                    "Would publish {}@{}: {} files, {total} bytes ({} packed), {} {}; nothing was sent",
                    id.name,
                    id.version,
                    package.files.len(),
                    package.tarball.len(),
                    package.deps.len(),
                    match package.deps.len() {
                        1 => "dependency",
                        _ => "dependencies",
                    }
                ),
            );
            None
        }
        PackageCommand::Publish {
            dir, reg, version, ..
        } => {
            let dir = dir.unwrap_or_else(|| env.cwd.clone());
            let (url, r) = ops::publish(
                env,
                &ops::RegistryArgs::try_from(reg)?,
                &dir,
                version.as_ref(),
            )?;
            note(
                quiet,
                format!("Published {}@{} ({}) to {url}", r.name, r.vers, r.cksum),
            );
            None
        }
        PackageCommand::Yank { target, undo, reg } => {
            let (name, version) = target
                .split_once('@')
                .ok_or_else(|| Exit(2, format!("expected NAME@VERSION, got `{target}`")))?;
            ops::yank(env, &ops::RegistryArgs::try_from(reg)?, name, version, undo)?;
            let verb = if undo { "Unyanked" } else { "Yanked" };
            note(quiet, format!("{verb} {name}@{version}"));
            None
        }
        PackageCommand::Owner { action } => {
            match action {
                OwnerAction::List { name, reg } => {
                    let owners = ops::owners(env, &ops::RegistryArgs::try_from(reg)?, &name)?;
                    print(&owners.iter().map(|o| format!("{o}\n")).collect::<String>())?;
                }
                OwnerAction::Add { name, user, reg } => {
                    ops::add_owners(env, &ops::RegistryArgs::try_from(reg)?, &name, &[user])?
                }
                OwnerAction::Remove { name, user, reg } => {
                    ops::remove_owners(env, &ops::RegistryArgs::try_from(reg)?, &name, &[user])?
                }
            }
            None
        }
        PackageCommand::Search {
            query,
            limit,
            local,
            json,
            reg,
        } => {
            if local {
                cli::find::search(env, &query, limit as usize, json, quiet)?;
            } else {
                print(&render::search(
                    &ops::search(env, ops::RegistryArgs::try_from(reg)?, &query, limit)?,
                    quiet,
                ))?;
            }
            None
        }
        PackageCommand::Info { name, json, reg } => {
            print(&render::info(
                &ops::info(env, ops::RegistryArgs::try_from(reg)?, &name)?,
                json,
            )?)?;
            None
        }
        PackageCommand::Login { reg } => {
            let token = match reg.token.clone() {
                Some(t) => t,
                None => read_token()?,
            };
            if token.is_empty() {
                return Err(Exit(2, "empty token".into()).into());
            }
            let (url, path) = ops::login(env, &ops::RegistryArgs::try_from(reg)?, &token)?;
            note(
                quiet,
                format!("Saved the token for {url} in {}", path.display()),
            );
            None
        }
        PackageCommand::Cache { action } => {
            let cache = skillpm::Cache::default_dir()
                .map(skillpm::Cache::new)
                .ok_or(skillpm::error::Error::NoCacheDir)?;
            match action {
                CacheAction::Dir => print(&format!("{}\n", cache.root().display()))?,
                CacheAction::Clean => {
                    let _guard = cache.lock()?;
                    cache.clean()?;
                }
            }
            None
        }
    };
    if let Some(s) = summary {
        note(quiet, s.line());
    }
    Ok(ExitCode::SUCCESS)
}

fn read_token() -> Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the token from stdin")?;
    Ok(line.trim().to_string())
}
