//! The rule table: every rule the audit can report, with a stable id.
//!
//! Ids are API: `skillpm audit --json`, registry responses and users'
//! ignore lists name them, so an id is never renamed or reused for another
//! meaning. Severity follows one policy: `critical` only for patterns whose
//! matches on real public skills are attacks (it blocks an install, and
//! must flag at most 1 % of them), `error` for what is very likely harmful
//! but has rare honest uses, `warning` for what deserves a look, `note`
//! for what the scan could not do.

use super::{Confidence, Rule, Severity};

const fn rule(
    id: &'static str,
    severity: Severity,
    confidence: Confidence,
    title: &'static str,
    help: &'static str,
) -> Rule {
    Rule {
        id,
        severity,
        confidence,
        title,
        help,
    }
}

use Confidence::{High, Low, Medium};
use Severity::{Critical, Error, Note, Warning};

// Hidden text.

pub const HIDDEN_TAG_CHARS: Rule = rule(
    "hidden-tag-chars",
    Critical,
    High,
    "Unicode tag characters: invisible ASCII",
    "Tag characters (U+E0000-U+E007F) are an invisible copy of ASCII: a reader sees nothing, \
     a model reads the text they spell. No skill needs them outside a flag emoji; do not \
     install, and report the skill.",
);
pub const BIDI_CONTROL: Rule = rule(
    "bidi-control",
    Error,
    High,
    "Bidirectional override or isolate",
    "Bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069) make text display in a \
     different order than it is read (\"Trojan Source\"). Look at the escaped excerpt; \
     remove them unless the text is genuinely right-to-left.",
);
pub const INVISIBLE_PAYLOAD: Rule = rule(
    "invisible-payload",
    Error,
    High,
    "A run of invisible characters that can encode a message",
    "Long runs of zero-width characters or variation selectors are a known way to smuggle \
     text past a reader (each one is a bit or a byte). The message shows what they decode to \
     when they are variation selectors; do not install unless you know why they are there.",
);
pub const INVISIBLE_CHARS: Rule = rule(
    "invisible-chars",
    Warning,
    Medium,
    "Invisible characters",
    "Zero-width spaces, soft hyphens, stray byte-order marks and similar characters are \
     usually copy-paste residue, but they hide from a reader. Remove them (the excerpt shows \
     them escaped).",
);
pub const CONTROL_CHARS: Rule = rule(
    "control-chars",
    Warning,
    Medium,
    "Terminal control characters",
    "Escape sequences, carriage returns and backspaces can rewrite what a terminal shows \
     when the file is printed, hiding the text that is really there. Remove them.",
);
pub const HTML_COMMENT_INSTRUCTIONS: Rule = rule(
    "html-comment-instructions",
    Warning,
    Medium,
    "Instructions in an HTML comment",
    "An HTML comment is invisible when the markdown is rendered, but an agent reads it. Read \
     the comment: if it tells the agent to do something the visible text does not, do not \
     install.",
);

// Remote code execution.

pub const PIPE_TO_SHELL: Rule = rule(
    "pipe-to-shell",
    Error,
    High,
    "Downloaded code piped into a shell",
    "`curl ... | sh` runs whatever the server sends at that moment, unreviewed. Check that the \
     URL is the tool's official installer; prefer a package manager or a pinned, \
     checksummed download.",
);
pub const PIPE_TO_SHELL_UNTRUSTED: Rule = rule(
    "pipe-to-shell-untrusted-host",
    Critical,
    High,
    "Code from a raw IP, plain HTTP or paste site piped into a shell",
    "The script comes from a bare IP address, over unencrypted HTTP, or from a paste or \
     file-drop site: no official installer is served that way. Do not install; report the \
     skill.",
);
pub const ENCODED_EXEC: Rule = rule(
    "encoded-exec",
    Critical,
    High,
    "Encoded data decoded straight into a shell or eval",
    "Decoding base64 or hex into `sh`, `eval` or `exec` hides the command from the reader; \
     the message shows what it decodes to when it can. Legitimate skills show their \
     commands. Do not install; report the skill.",
);
pub const DOWNLOAD_AND_RUN: Rule = rule(
    "download-and-run",
    Warning,
    Medium,
    "Downloads a file, makes it executable and runs it",
    "The skill fetches a program and runs it unreviewed. Check where it comes from and \
     whether a package manager or a checksummed release would do.",
);
pub const PREREQUISITE_BINARY: Rule = rule(
    "prerequisite-binary",
    Error,
    Medium,
    "Asks you to download and run a program before using the skill",
    "Malicious skills present their payload as a required \"prerequisite\", \"auth tool\" or \
     \"CLI\" to download and run. A skill's instructions should not need an executable from \
     a link. Do not run it unless it is a tool you already know and trust from its own \
     site.",
);
pub const PASSWORD_ARCHIVE: Rule = rule(
    "password-protected-download",
    Critical,
    High,
    "Download of a password-protected archive",
    "A password on a downloaded archive exists to keep malware scanners from looking inside. \
     Do not download it; report the skill.",
);
pub const PASTE_SITE_EXEC: Rule = rule(
    "paste-site-exec",
    Critical,
    High,
    "Tells you to run a command from a paste site",
    "Paste sites (glot.io, pastebin, rentry ...) host anonymous, changeable text; a command \
     to copy from one into a terminal is how several skill-borne stealers spread. Do not \
     run it; report the skill.",
);

// Secrets.

pub const CREDENTIAL_EXFIL: Rule = rule(
    "credential-exfil",
    Critical,
    High,
    "Reads credentials and sends data out",
    "The same file reads a credential store (SSH keys, cloud credentials, browser logins or \
     cookies, wallets, keychains) and sends data over the network: the shape of a stealer. \
     Do not install unless you have read the file and the send cannot carry the secret.",
);
pub const CREDENTIAL_READ: Rule = rule(
    "credential-read",
    Warning,
    Medium,
    "Reads a credential store",
    "Reading SSH keys, cloud credentials, browser stores, wallets or keychains is rarely \
     what a skill needs. Check why it touches them.",
);

// Agent memory and config.

pub const AGENT_CONFIG_WRITE: Rule = rule(
    "agent-config-write",
    Warning,
    Low,
    "Writes to the agent's memory or config",
    "Files such as CLAUDE.md, AGENTS.md, .claude/settings.json, .cursorrules or an MCP config \
     steer every later session. Scaffolding them for your project is legitimate; a skill \
     that changes them on its own behalf persists beyond its use. Check what it writes.",
);
pub const CONCEALMENT: Rule = rule(
    "conceal-from-user",
    Warning,
    Medium,
    "Tells the agent to hide what it does",
    "Instructions to keep something from the user (\"do not tell the user\", \"without \
     informing\", \"silently send\") have no honest use in a skill. Read the passage.",
);
pub const AGENT_CONFIG_WRITE_CONCEALED: Rule = rule(
    "agent-config-write-concealed",
    Error,
    High,
    "Writes to agent config and hides it from the user",
    "The file both changes the agent's memory or config and tells the agent to keep things \
     from the user: a persistent prompt injection. Do not install.",
);

// Things that run on their own.

pub const FRONTMATTER_HOOKS: Rule = rule(
    "frontmatter-hooks",
    Warning,
    High,
    "Hooks in the SKILL.md frontmatter",
    "Hooks run commands on agent events without being asked each time. Read every command \
     they run.",
);
pub const HOOKS_FILE: Rule = rule(
    "hooks-file",
    Warning,
    High,
    "Hook configuration",
    "A hooks file or a settings file with hooks makes commands run on agent events. Read \
     every command it runs.",
);
pub const LOAD_TIME_COMMAND: Rule = rule(
    "load-time-command",
    Warning,
    High,
    "Command that runs when the skill loads",
    "In SKILL.md, `!` followed by a command in backticks is run by Claude Code when the skill \
     loads, before anyone reads the output. Check the command.",
);
pub const INSTALL_SCRIPT: Rule = rule(
    "package-install-script",
    Warning,
    High,
    "npm install-time script",
    "`preinstall`, `install` and `postinstall` scripts run on `npm install` with your \
     privileges. Read the script, or install with `--ignore-scripts`.",
);

// Tool grants.

pub const ALLOWED_TOOLS_WILDCARD: Rule = rule(
    "allowed-tools-wildcard",
    Warning,
    High,
    "`allowed-tools` grants every tool",
    "A wildcard lets the skill use every tool without asking. List the tools it needs.",
);
pub const ALLOWED_TOOLS_UNUSED: Rule = rule(
    "allowed-tools-unused",
    Warning,
    Medium,
    "`allowed-tools` grants tools the instructions never need",
    "The skill pre-approves running commands or writing files, but its text never asks for \
     either. Drop the grant, or scope it (`Bash(git:*)`).",
);
pub const ALLOWED_TOOLS_UNSCOPED_BASH: Rule = rule(
    "allowed-tools-unscoped-bash",
    Note,
    High,
    "`allowed-tools` grants unscoped Bash",
    "`Bash` alone pre-approves any command. Scope it to the commands the skill runs, such as \
     `Bash(git:*) Bash(npm test:*)`.",
);

// Names.

pub const NAME_IMITATION: Rule = rule(
    "name-imitation",
    Warning,
    Medium,
    "Name imitates a well-known skill",
    "The name is one or two letters from, or a decorated copy of, a well-known skill's name. \
     Make sure this is the skill you meant, from the publisher you meant.",
);

// The walk itself.

pub const SYMLINK_ESCAPE: Rule = rule(
    "symlink-escape",
    Error,
    High,
    "Symlink pointing outside the skill",
    "An agent that reads this link reads a file outside the skill (a key, a config). Skills \
     have no need for one; remove it.",
);
pub const BUNDLED_EXECUTABLE: Rule = rule(
    "bundled-executable",
    Warning,
    Medium,
    "Compiled executable bundled in the skill",
    "A compiled program cannot be reviewed like a script. Prefer skills that ship source, or \
     check where the binary comes from.",
);
pub const FILE_TOO_LARGE: Rule = rule(
    "file-too-large",
    Note,
    High,
    "File too large to scan",
    "Files over 1 MiB are not scanned. If an agent is meant to read it, look at it yourself.",
);
pub const FILE_NOT_SCANNED: Rule = rule(
    "file-not-scanned",
    Warning,
    High,
    "File could not be scanned",
    "The file could not be read (permissions, or not a regular file), so nothing in it was \
     checked.",
);
pub const SCAN_LIMIT: Rule = rule(
    "scan-limit",
    Warning,
    High,
    "Too many files; the scan stopped",
    "The scan stops after 10 000 entries, so later files were not checked. A skill is rarely \
     that big; look at why.",
);
pub const FRONTMATTER_UNREADABLE: Rule = rule(
    "frontmatter-unreadable",
    Note,
    High,
    "SKILL.md frontmatter could not be read",
    "The hook, tool-grant and name rules need the frontmatter; fix it so they can run \
     (`skillpm validate` says what is wrong).",
);

/// Every rule, in the order `skillpm audit --rules` lists them.
pub const RULES: &[Rule] = &[
    HIDDEN_TAG_CHARS,
    BIDI_CONTROL,
    INVISIBLE_PAYLOAD,
    INVISIBLE_CHARS,
    CONTROL_CHARS,
    HTML_COMMENT_INSTRUCTIONS,
    PIPE_TO_SHELL,
    PIPE_TO_SHELL_UNTRUSTED,
    ENCODED_EXEC,
    DOWNLOAD_AND_RUN,
    PREREQUISITE_BINARY,
    PASSWORD_ARCHIVE,
    PASTE_SITE_EXEC,
    CREDENTIAL_EXFIL,
    CREDENTIAL_READ,
    AGENT_CONFIG_WRITE,
    CONCEALMENT,
    AGENT_CONFIG_WRITE_CONCEALED,
    FRONTMATTER_HOOKS,
    HOOKS_FILE,
    LOAD_TIME_COMMAND,
    INSTALL_SCRIPT,
    ALLOWED_TOOLS_WILDCARD,
    ALLOWED_TOOLS_UNUSED,
    ALLOWED_TOOLS_UNSCOPED_BASH,
    NAME_IMITATION,
    SYMLINK_ESCAPE,
    BUNDLED_EXECUTABLE,
    FILE_TOO_LARGE,
    FILE_NOT_SCANNED,
    SCAN_LIMIT,
    FRONTMATTER_UNREADABLE,
];
