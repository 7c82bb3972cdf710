//! Skill commands: the skills a user can invoke by name (`/deploy staging`),
//! as Claude Code's user-invocable skills are, and their instructions with
//! the arguments filled in.
//!
//! Every eligible skill is a command, named by its `command`, unless its
//! frontmatter says `user-invocable: false` (Claude Code's key: the skill
//! stays available to the model but leaves the `/` menu). A command carries
//! its description, Claude Code's `argument-hint` (shown while typing) and
//! `arguments` (names for positional arguments, a YAML list or one
//! space-separated string).
//!
//! Which definition wins is the catalog's shadowing: a project root's skill
//! over a user root's, a later root over an earlier one. The table lists
//! the definitions that lost, each with why.
//!
//! Filling follows Claude Code's substitutions, in one pass over the body
//! so that an argument is inserted as text and never read again:
//! `$ARGUMENTS` is the argument string as typed; `$ARGUMENTS[N]` and `$N`
//! are the N-th argument (zero-based, split as a shell would, quotes
//! grouping words; past the end, empty); `$name` is the argument declared
//! under that name; `${CLAUDE_SKILL_DIR}` is the skill's directory. A body
//! that uses none of the argument placeholders gets `ARGUMENTS: <string>`
//! appended when arguments were given. Nothing in the body is run
//! (`` !`cmd` `` stays text), and the result is escaped as `load` escapes
//! a body (hidden text and control characters made visible).

use crate::catalog::{Catalog, SkillEntry, State};
use crate::discover::Scope;
use serde_json::{json, Value};
use skillpm_core::text;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The longest argument string a command takes, in bytes.
pub const MAX_ARGUMENT_BYTES: usize = 16 * 1024;
/// The most arguments one argument string may split into.
pub const MAX_ARGUMENTS: usize = 64;
/// The most named arguments a skill may declare; more are ignored.
pub const MAX_DECLARED: usize = 16;
/// The longest declared argument name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest `argument-hint` shown, in characters (longer is cut).
pub const MAX_HINT_CHARS: usize = 200;
/// The largest filled-in instructions, in bytes: a body that repeats a
/// placeholder cannot turn a bounded argument into unbounded output.
pub const MAX_FILLED_BYTES: usize = 1024 * 1024;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CommandError {
    #[error("a command line starts with `/` and a command name")]
    NotACommand,
    #[error("no command `{0}`; run `skillpm commands` to list them")]
    Unknown(String),
    #[error("the arguments are {0} bytes; at most {MAX_ARGUMENT_BYTES} are accepted")]
    ArgumentsTooLong(usize),
    #[error("the arguments split into {0} words; at most {MAX_ARGUMENTS} are accepted")]
    TooManyArguments(usize),
    #[error("command `{command}` needs argument `{name}`")]
    MissingArgument { command: String, name: String },
    #[error("command `{command}` has no argument `{name}`")]
    UnknownArgument { command: String, name: String },
    #[error("an argument holds a NUL byte, which cannot be quoted")]
    Unquotable,
    #[error("the filled-in instructions would exceed {MAX_FILLED_BYTES} bytes")]
    TooLarge,
}

/// A definition of a command that another one shadows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    pub path: PathBuf,
    pub scope: Scope,
    /// Why it lost, naming the winner and both roots.
    pub why: String,
}

/// One invocable command.
#[derive(Debug, Clone)]
pub struct Command<'a> {
    pub skill: &'a SkillEntry,
    /// Claude Code's `argument-hint`, on one line.
    pub argument_hint: Option<String>,
    /// Claude Code's `arguments`: names for `$name`, in position order.
    pub arguments: Vec<String>,
    /// Whether the model may invoke it too, or only a user by name
    /// (`disable-model-invocation: true`, `user_invocable_only: true`).
    pub model_invocable: bool,
    /// Definitions of the same name in roots of lower precedence.
    pub shadowed: Vec<Shadowed>,
}

/// Every command, sorted by name.
#[derive(Debug, Clone, Default)]
pub struct CommandTable<'a> {
    pub commands: Vec<Command<'a>>,
}

/// A command line resolved: the skill and its filled-in instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub command: String,
    pub skill_md: PathBuf,
    pub text: String,
}

impl<'a> CommandTable<'a> {
    /// The table from an evaluated catalog; reads no file (the bodies were
    /// parsed with the catalog).
    pub fn build(cat: &'a Catalog) -> CommandTable<'a> {
        let mut commands: Vec<Command<'a>> = Vec::new();
        // Entries are sorted by command, highest precedence first, so a
        // command's shadowed definitions follow its winner.
        let mut winner: Option<&SkillEntry> = None;
        for s in &cat.skills {
            if s.state != State::Shadowed {
                winner = Some(s);
                if let Some(c) = Command::of(s) {
                    commands.push(c);
                }
                continue;
            }
            let (Some(w), Some(c)) = (winner, commands.last_mut()) else {
                continue;
            };
            if w.command == s.command && c.skill.command == s.command {
                let root = |i: usize| {
                    cat.roots
                        .get(i)
                        .map(|r| r.path.display().to_string())
                        .unwrap_or_default()
                };
                c.shadowed.push(Shadowed {
                    path: s.path.clone(),
                    scope: s.scope,
                    why: format!(
                        "shadowed by {} in the {} root {}, which takes precedence over the {} root {}",
                        w.path.display(),
                        w.scope.as_str(),
                        root(w.root),
                        s.scope.as_str(),
                        root(s.root)
                    ),
                });
            }
        }
        CommandTable { commands }
    }

    /// The command named `name`.
    pub fn get(&self, name: &str) -> Option<&Command<'a>> {
        self.commands
            .binary_search_by(|c| c.skill.command.as_str().cmp(name))
            .ok()
            .map(|i| &self.commands[i])
    }

    /// Resolves `/name args…` to the skill and its filled-in instructions.
    pub fn invoke(&self, line: &str) -> Result<Invocation, CommandError> {
        let rest = line.trim_start().strip_prefix('/').unwrap_or("");
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(CommandError::NotACommand);
        }
        self.require(name)?.fill(args.trim())
    }

    /// The command named `name`, or the error that says there is none.
    pub fn require(&self, name: &str) -> Result<&Command<'a>, CommandError> {
        self.get(name)
            .ok_or_else(|| CommandError::Unknown(shown(name)))
    }

    /// The table as `skillpm commands --json` prints it.
    pub fn to_json(&self) -> Value {
        let commands: Vec<Value> = self
            .commands
            .iter()
            .map(|c| {
                json!({
                    "name": c.skill.command,
                    "skill": c.skill.name,
                    "path": c.skill.path,
                    "scope": c.skill.scope.as_str(),
                    "description": c.skill.description,
                    "argument_hint": c.argument_hint,
                    "arguments": c.arguments,
                    "model_invocable": c.model_invocable,
                    "shadowed": c.shadowed.iter().map(|s| json!({
                        "path": s.path,
                        "scope": s.scope.as_str(),
                        "why": s.why,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "commands": commands })
    }
}

/// A name from the caller, shown in an error in part only.
fn shown(name: &str) -> String {
    let cut: String = name.chars().take(64).collect();
    if cut.len() < name.len() {
        format!("{cut}...")
    } else {
        cut
    }
}

impl<'a> Command<'a> {
    /// `s` as a command, or `None` when it is not one (not eligible, or
    /// `user-invocable: false`).
    fn of(s: &'a SkillEntry) -> Option<Command<'a>> {
        let doc = s.doc.as_ref().filter(|_| s.state == State::Eligible)?;
        let fm = &doc.frontmatter;
        if crate::eligibility::is_false(fm.get("user-invocable")) {
            return None;
        }
        let argument_hint = fm
            .get("argument-hint")
            .and_then(Value::as_str)
            .map(|h| crate::catalog::one_line(h, MAX_HINT_CHARS))
            .filter(|h| !h.is_empty());
        Some(Command {
            skill: s,
            argument_hint,
            arguments: declared(fm.get("arguments")),
            model_invocable: !s.requirements.user_invocable_only
                && !crate::eligibility::is_true(fm.get("disable-model-invocation")),
            shadowed: Vec::new(),
        })
    }

    /// The instructions with `args` (the string as typed after the name).
    pub fn fill(&self, args: &str) -> Result<Invocation, CommandError> {
        if args.len() > MAX_ARGUMENT_BYTES {
            return Err(CommandError::ArgumentsTooLong(args.len()));
        }
        // Unbalanced quotes: split on whitespace rather than refuse, as
        // the words are still what the user meant.
        let words = shlex::split(args)
            .unwrap_or_else(|| args.split_whitespace().map(String::from).collect());
        if words.len() > MAX_ARGUMENTS {
            return Err(CommandError::TooManyArguments(words.len()));
        }
        self.fill_words(args, &words)
    }

    /// The instructions with `argv` (arguments already split, as a shell
    /// passes them): joined with shell quoting, so each stays one
    /// argument and `$ARGUMENTS` reads as the user would have typed it.
    pub fn fill_argv(&self, argv: &[String]) -> Result<Invocation, CommandError> {
        let line = shlex::try_join(argv.iter().map(String::as_str))
            .map_err(|_| CommandError::Unquotable)?;
        self.fill(&line)
    }

    /// The instructions with named arguments (an MCP `prompts/get`): each
    /// declared name is required; a command that declares none takes one
    /// optional `arguments`, the string as typed.
    pub fn fill_named(&self, given: &BTreeMap<String, String>) -> Result<Invocation, CommandError> {
        let unknown = |name: &String| CommandError::UnknownArgument {
            command: self.skill.command.clone(),
            name: shown(name),
        };
        if self.arguments.is_empty() {
            if let Some(name) = given.keys().find(|k| *k != RAW_ARGUMENT) {
                return Err(unknown(name));
            }
            return self.fill(given.get(RAW_ARGUMENT).map_or("", |s| s.trim()));
        }
        if let Some(name) = given.keys().find(|k| !self.arguments.contains(k)) {
            return Err(unknown(name));
        }
        let mut words = Vec::with_capacity(self.arguments.len());
        for name in &self.arguments {
            match given.get(name) {
                Some(v) => words.push(v.clone()),
                None => {
                    return Err(CommandError::MissingArgument {
                        command: self.skill.command.clone(),
                        name: name.clone(),
                    })
                }
            }
        }
        let raw =
            shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "));
        if raw.len() > MAX_ARGUMENT_BYTES {
            return Err(CommandError::ArgumentsTooLong(raw.len()));
        }
        self.fill_words(&raw, &words)
    }

    fn fill_words(&self, raw: &str, words: &[String]) -> Result<Invocation, CommandError> {
        let body = self.skill.doc.as_ref().map_or("", |d| d.body.as_str());
        let dir = self.skill.path.display().to_string();
        let mut out = format!("Base directory for this skill: {dir}\n\n");
        let used = substitute(body, &mut out, raw, words, &self.arguments, &dir)?;
        if !used && !raw.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("\nARGUMENTS: ");
            out.push_str(raw);
            out.push('\n');
        }
        if out.len() > MAX_FILLED_BYTES {
            return Err(CommandError::TooLarge);
        }
        Ok(Invocation {
            command: self.skill.command.clone(),
            skill_md: self.skill.skill_md.clone(),
            text: text::sanitize(&out).into_owned(),
        })
    }
}

/// The argument name a command without declared arguments takes over MCP.
pub const RAW_ARGUMENT: &str = "arguments";

/// The declared argument names: a list, or one space-separated string;
/// names that `$name` could not reach are dropped.
fn declared(v: Option<&Value>) -> Vec<String> {
    let names: Vec<&str> = match v {
        Some(Value::String(s)) => s.split_whitespace().collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let ok = n.chars().count() <= MAX_NAME_CHARS
            && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && n != "ARGUMENTS";
        if ok && !out.iter().any(|o| o == n) && out.len() < MAX_DECLARED {
            out.push(n.to_string());
        }
    }
    out
}

/// Appends `body` to `out` with every placeholder replaced, in one pass;
/// returns whether an argument placeholder occurred.
fn substitute(
    body: &str,
    out: &mut String,
    raw: &str,
    words: &[String],
    names: &[String],
    dir: &str,
) -> Result<bool, CommandError> {
    let word = |i: Option<usize>| i.and_then(|i| words.get(i)).map_or("", String::as_str);
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        if out.len() > MAX_FILLED_BYTES {
            return Err(CommandError::TooLarge);
        }
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let ident = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .len();
        let (value, len): (&str, usize) = if digits > 0 {
            used = true;
            (word(after[..digits].parse().ok()), digits)
        } else if after.starts_with("{CLAUDE_SKILL_DIR}") {
            (dir, "{CLAUDE_SKILL_DIR}".len())
        } else if &after[..ident] == "ARGUMENTS" {
            used = true;
            match indexed(&after[ident..]) {
                Some((i, n)) => (word(i), ident + n),
                None => (raw, ident),
            }
        } else if let Some(i) = names.iter().position(|n| *n == after[..ident]) {
            used = true;
            (word(Some(i)), ident)
        } else {
            ("$", 0)
        };
        if len == 0 {
            out.push('$');
        } else {
            out.push_str(value);
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(used)
}

/// `[N]` at the start of `s`: the index (`None` when too large to be
/// one) and how many bytes it spans.
fn indexed(s: &str) -> Option<(Option<usize>, usize)> {
    let inner = s.strip_prefix('[')?;
    let digits = inner.len() - inner.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0 && inner[digits..].starts_with(']'))
        .then(|| (inner[..digits].parse().ok(), digits + 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::catalog;

    #[test]
    fn substitutions_follow_claude_code() {
        let (_d, cat) = catalog(&[(
            "migrate",
            "Migrate.",
            "arguments: [component, from, to]\nargument-hint: <component> <from> <to>",
            "Move $component from $1 to $ARGUMENTS[2]; all: $ARGUMENTS; missing: [$7]; cost $5.00 $$ ${CLAUDE_SKILL_DIR}/x $nope",
        )]);
        let t = CommandTable::build(&cat);
        let c = t.get("migrate").unwrap();
        assert_eq!(c.argument_hint.as_deref(), Some("<component> <from> <to>"));
        let inv = t.invoke("/migrate \"my widget\" React Vue").unwrap();
        let dir = c.skill.path.display().to_string();
        assert_eq!(
            inv.text,
            format!(
                "Base directory for this skill: {dir}\n\nMove my widget from React to Vue; all: \"my widget\" React Vue; missing: []; cost .00 $$ {dir}/x $nope"
            )
        );
    }

    #[test]
    fn arguments_are_appended_when_the_body_has_no_placeholder_and_are_text_only() {
        let (_d, cat) = catalog(&[
            ("plain", "Plain.", "", "Do it.\n"),
            ("echo", "Echo.", "", "Said: $ARGUMENTS\n"),
        ]);
        let t = CommandTable::build(&cat);
        let plain = t.invoke("/plain fix the $1 bug").unwrap().text;
        assert!(
            plain.ends_with("Do it.\n\nARGUMENTS: fix the $1 bug\n"),
            "{plain}"
        );
        assert!(t.invoke("/plain").unwrap().text.ends_with("Do it.\n"));
        // An argument that looks like a placeholder stays as typed, and
        // hidden characters are made visible.
        let echo = t
            .invoke("/echo $ARGUMENTS \u{1b}[2J \u{e0041}")
            .unwrap()
            .text;
        assert!(
            echo.ends_with("Said: $ARGUMENTS \\x1b[2J \\u{e0041}\n"),
            "{echo}"
        );
    }

    #[test]
    fn bounds_and_errors() {
        let many = "$ARGUMENTS".repeat(2000);
        let (_d, cat) = catalog(&[
            ("many", "M.", "", &many),
            ("named", "N.", "arguments: \"a b -c a\"", "$a/$b"),
            ("hidden", "H.", "user-invocable: false", "x"),
            ("quoted", "Q.", "user-invocable: \"no\"", "x"),
        ]);
        let t = CommandTable::build(&cat);
        assert!(t.get("hidden").is_none() && t.get("quoted").is_none());
        assert_eq!(t.get("named").unwrap().arguments, ["a", "b"]);
        assert_eq!(t.invoke("nope"), Err(CommandError::NotACommand));
        assert_eq!(t.invoke("/zzz"), Err(CommandError::Unknown("zzz".into())));
        let long = format!("/many {}", "x".repeat(MAX_ARGUMENT_BYTES + 1));
        assert!(matches!(
            t.invoke(&long),
            Err(CommandError::ArgumentsTooLong(_))
        ));
        let words = format!("/many {}", "a ".repeat(MAX_ARGUMENTS + 1));
        assert!(matches!(
            t.invoke(&words),
            Err(CommandError::TooManyArguments(65))
        ));
        let big = format!("/many {}", "x".repeat(1000));
        assert_eq!(t.invoke(&big), Err(CommandError::TooLarge));
        let named = t.get("named").unwrap();
        let map = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let filled = named.fill_named(&map(&[("a", "x y"), ("b", "z")])).unwrap();
        assert!(filled.text.ends_with("x y/z"), "{}", filled.text);
        assert!(matches!(
            named.fill_named(&map(&[("a", "x")])),
            Err(CommandError::MissingArgument { .. })
        ));
        assert!(matches!(
            named.fill_named(&map(&[("a", "x"), ("b", "y"), ("c", "z")])),
            Err(CommandError::UnknownArgument { .. })
        ));
    }

    #[test]
    fn a_later_root_shadows_and_says_why() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        for (root, body) in [(&user, "user"), (&project, "project")] {
            let d = root.path().join("deploy");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("SKILL.md"),
                format!("---\ndescription: {body}\n---\n{body}\n"),
            )
            .unwrap();
        }
        let roots = [user.path().to_path_buf(), project.path().to_path_buf()];
        let cat = Catalog::from_roots(
            &crate::config::Environment::isolated(),
            &roots,
            Default::default(),
        );
        let t = CommandTable::build(&cat);
        let c = t.get("deploy").unwrap();
        assert_eq!(c.skill.description, "project");
        assert_eq!(c.shadowed.len(), 1);
        assert_eq!(c.shadowed[0].path, user.path().join("deploy"));
        assert!(
            c.shadowed[0].why.contains("takes precedence"),
            "{}",
            c.shadowed[0].why
        );
    }
}
