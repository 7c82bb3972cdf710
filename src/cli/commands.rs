//! `skillpm commands` and `skillpm commands run`: the skill commands a
//! user can invoke by name, and one command's filled-in instructions.

use super::output::{print, Exit};
use super::render;
use anyhow::Result;
use skillpm::engine::catalog::{one_line, Catalog};
use skillpm::engine::commands::CommandTable;
use skillpm::engine::config::Environment;

/// Prints the table: one line per command (`/name hint  description`),
/// then the definitions it shadows and why.
pub fn list(env: &Environment, json: bool) -> Result<()> {
    let cat = Catalog::build(env)?;
    let table = CommandTable::build(&cat);
    if json {
        return print(&render::json(&table.to_json())?);
    }
    if table.commands.is_empty() {
        return print("No skill commands: no eligible skill is user-invocable.\n");
    }
    let heads: Vec<String> = table
        .commands
        .iter()
        .map(|c| match &c.argument_hint {
            Some(h) => format!("/{} {h}", c.skill.command),
            None => format!("/{}", c.skill.command),
        })
        .collect();
    let width = heads
        .iter()
        .map(|h| h.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut out = String::new();
    for (c, head) in table.commands.iter().zip(&heads) {
        let description = one_line(&c.skill.description, 72);
        out.push_str(&format!("{head:<width$}  {description}\n"));
        for s in &c.shadowed {
            out.push_str(&format!(
                "{:<width$}    {}: {}\n",
                "",
                s.path.display(),
                s.why
            ));
        }
    }
    print(&out)
}

/// Prints command `name`'s instructions with `args` filled in.
pub fn run(env: &Environment, name: &str, args: &[String]) -> Result<()> {
    let cat = Catalog::build(env)?;
    let table = CommandTable::build(&cat);
    // An unknown command is a failed lookup (exit 1, as `load`); bad
    // arguments are bad usage (exit 2).
    let command = table.require(name).map_err(|e| Exit(1, e.to_string()))?;
    let inv = command
        .fill_argv(args)
        .map_err(|e| Exit(2, e.to_string()))?;
    print(&inv.text)?;
    if !inv.text.ends_with('\n') {
        print("\n")?;
    }
    Ok(())
}
