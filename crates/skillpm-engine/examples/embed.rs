//! Embedding skillpm's engine in an agent runtime: build a catalog from
//! skill roots, evaluate eligibility against the host (OS, binaries,
//! environment variables, tools), then search, disclose by tiers, load,
//! and run a skill command as a user types it.
//! Nothing here touches the network or installs anything.
//!
//! Run: `cargo run -p skillpm-engine --example embed` (a small generated tree), or
//! `cargo run -p skillpm-engine --example embed -- ROOT...` for your own skill roots.

use skillpm_engine::disclose::Options;
use skillpm_engine::embed::{Engine, Host};
use skillpm_engine::tools::ToolValidation;
use std::path::PathBuf;

const SKILLS: &[(&str, &str)] = &[
    (
        "pdf",
        "description: Fill PDF forms and extract text. Uses the bundled scripts.\n\
         triggers: {keywords: [pdf, form], verbs: [fill, extract], patterns: ['\\bpage \\d+']}\n\
         allowed-tools: Read Bash(python3:*)",
    ),
    (
        "code-review",
        "description: Review a diff for correctness, tests and style.\n\
         triggers: [review this change, review my pull request]\n\
         argument-hint: <rev> [--strict]\n\
         tools: [Read, Grep, {name: WebFetch, purpose: read linked issues, required: false}]",
    ),
    (
        "docker-deploy",
        "description: Deploy the service with docker compose.\n\
         requires: {bins: [docker], env: [DOCKER_TOKEN]}",
    ),
    (
        "release-notes",
        "description: Draft release notes from the git log.\n\
         tools: [Bash, {name: GitHubApi, purpose: publish the release}]\n\
         toolValidation: strict",
    ),
];

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let _tmp; // keeps the generated tree alive until the end
    let roots = if args.is_empty() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (command, frontmatter) in SKILLS {
            let d = dir.path().join(command);
            std::fs::create_dir_all(&d).expect("mkdir");
            let body = format!("# {command}\n\nInstructions for {command}.\n");
            std::fs::write(
                d.join("SKILL.md"),
                format!("---\n{frontmatter}\n---\n{body}"),
            )
            .expect("write SKILL.md");
        }
        let root = dir.path().to_path_buf();
        _tmp = dir;
        vec![root]
    } else {
        args
    };

    // The host: what is installed, which variables are set, which tools
    // the agent has. Nothing is read from this process's environment.
    let host = Host::new()
        .os("linux")
        .bins(["git", "python3", "sh"])
        .env(["HOME"])
        .tools(["Read", "Grep", "Bash"])
        .tool_validation(ToolValidation::Warn);
    let engine = Engine::from_roots(&host, &roots);

    println!("== catalog (every skill, sorted by command)");
    for s in &engine.catalog().skills {
        let why = s
            .reason
            .as_ref()
            .map(|r| format!("  ({}: {})", r.code, r.detail))
            .unwrap_or_default();
        println!("{:<16} {:<9} {}{why}", s.command, s.state.as_str(), s.brief);
        for w in &s.warnings {
            println!("{:<16} warning: {}", "", w.message);
        }
    }

    println!("\n== search \"fill the form on page 2\"");
    for h in engine.search("fill the form on page 2", 5) {
        println!(
            "{:.4}  {:<14} {:<14} [{}]",
            h.score,
            h.kind.as_str(),
            h.command,
            h.fields.join(", ")
        );
    }

    println!("\n== progressive disclosure");
    for q in [
        "what can you do?",
        "what is the weather like",
        "please review this change",
    ] {
        let d = engine.disclose(q, &Options::default());
        let first = d.text.lines().next().unwrap_or("");
        println!(
            "tier {} for {q:?}: {} line(s), first: {first}",
            d.tier.number(),
            d.text.lines().count()
        );
    }

    println!("\n== tools of code-review on this host");
    for t in engine.tools("code-review").unwrap_or_default() {
        let available = match t.available {
            Some(true) => "available",
            Some(false) => "missing",
            None => "unchecked",
        };
        let need = if t.required { "required" } else { "optional" };
        println!("{:<10} {need:<9} {available}", t.name);
    }

    println!("\n== load pdf");
    match engine.load("pdf") {
        Ok(block) => print!(
            "{}",
            block.replace(&roots[0].display().to_string(), "<root>")
        ),
        Err(e) => println!("{e}"),
    }

    println!("\n== commands, and /code-review as a user types it");
    for c in &engine.commands().commands {
        match &c.argument_hint {
            Some(hint) => println!("/{} {hint}", c.skill.command),
            None => println!("/{}", c.skill.command),
        }
    }
    match engine.invoke("/code-review HEAD~1 --strict") {
        Ok(inv) => print!(
            "{}",
            inv.text.replace(&roots[0].display().to_string(), "<root>")
        ),
        Err(e) => println!("{e}"),
    }
}
