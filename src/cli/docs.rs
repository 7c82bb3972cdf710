//! Text made from the clap definitions alone: shell completions, man pages
//! and the book's command reference. Each comes from a crate that reads the
//! `Command` tree, so none can drift from `--help`. The reference is a
//! committed page, not a command: its tests below keep it current.

use super::args::Cli;
use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;

/// The completion script for `shell`. It holds only the definitions' own
/// names and help, so it is written to the terminal as is.
pub fn completions(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut completed(), "skillpm", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The tree that completions offer: the root rebuilt from its own flags and
/// visible commands. clap_complete offers hidden commands too (clap issue
/// 1335), and clap has no way to remove one.
fn completed() -> clap::Command {
    let cli = Cli::command();
    let visible = cli.get_subcommands().filter(|s| !s.is_hide_set()).cloned();
    clap::Command::new("skillpm")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cli.get_arguments().cloned())
        .subcommands(visible)
        .subcommand_required(true)
}

/// Writes `skillpm.1` and one page per visible command (`skillpm-add.1`,
/// `skillpm-owner-add.1`, ...) into `dir`.
pub fn man_pages(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("cannot write man pages into {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The book's command reference, relative to the package root: equal to
    /// [`reference`], and rewritten to it under `SKILLPM_BLESS=1`.
    const REFERENCE: &str = "docs/src/reference/commands.md";

    /// The page's first lines: it is generated, so edits belong in args.rs.
    const HEADER: &str = concat!(
        "<!-- Generated from src/cli/args.rs; do not edit. Regenerate with:\n",
        "     SKILLPM_BLESS=1 cargo test --bin skillpm cli::docs -->\n\n",
    );

    /// The command reference in Markdown: a `## \`skillpm CMD\`` section per
    /// visible command with its about text, usage, arguments and flags.
    fn reference() -> String {
        let options = clap_markdown::MarkdownOptions::new()
            .title("Command reference".into())
            .show_footer(false);
        let mut md = clap_markdown::help_markdown_custom::<Cli>(&options);
        // clap-markdown leaves runs of blank lines between sections.
        while md.contains("\n\n\n") {
            md = md.replace("\n\n\n", "\n\n");
        }
        format!("{HEADER}{}\n", md.trim_end())
    }

    const REGENERATE: &str =
        "regenerate it with `SKILLPM_BLESS=1 cargo test --bin skillpm cli::docs`";

    /// The committed reference, rewritten first under `SKILLPM_BLESS` (once:
    /// both tests read it, in parallel).
    fn committed() -> String {
        // A fact of the test process: the reference is rewritten once per run of the tests.
        static BLESS: std::sync::Once = std::sync::Once::new();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE);
        BLESS.call_once(|| {
            if std::env::var_os("SKILLPM_BLESS").is_some() {
                std::fs::write(&path, reference()).expect("write the command reference");
            }
        });
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {REFERENCE} ({e}): {REGENERATE}"));
        text.replace("\r\n", "\n")
    }

    #[test]
    fn completions_name_skillpm_for_every_shell() {
        for shell in Shell::value_variants() {
            let script = completions(*shell);
            assert!(script.contains("skillpm"), "{shell} script:\n{script}");
            assert!(script.contains("completions"), "{shell}: no subcommands");
            assert!(
                !script.contains("generate-man"),
                "{shell}: a hidden command"
            );
        }
    }

    #[test]
    fn command_reference_is_current() {
        let (have, want) = (committed(), reference());
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(h, w)| h != w)
                .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
            panic!(
                "{REFERENCE} differs from the definitions at line {}: {REGENERATE}",
                line + 1
            );
        }
    }

    /// Independent of clap-markdown's layout choices: every visible command
    /// has its heading, and its section names each of its flags and arguments.
    #[test]
    fn command_reference_covers_every_command_and_flag() {
        fn walk(cmd: &clap::Command, path: &str, md: &str) {
            let heading = format!("## `{path}`\n");
            let start = md
                .find(&heading)
                .unwrap_or_else(|| panic!("no `{path}` section in {REFERENCE}: {REGENERATE}"));
            let body = &md[start + heading.len()..];
            let section = &body[..body.find("\n## `").unwrap_or(body.len())];
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let mention = match (arg.get_long(), arg.get_value_names()) {
                    (Some(long), _) => format!("`--{long}"),
                    (None, Some([name, ..])) => format!("<{name}>"),
                    (None, _) => format!("<{}>", arg.get_id().as_str().to_uppercase()),
                };
                assert!(
                    section.contains(&mention),
                    "`{path}`: {} missing from {REFERENCE}: {REGENERATE}",
                    mention.trim_start_matches('`')
                );
            }
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                walk(sub, &format!("{path} {}", sub.get_name()), md);
            }
        }
        walk(&Cli::command(), "skillpm", &committed());
    }
}
