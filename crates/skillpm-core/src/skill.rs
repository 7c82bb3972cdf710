//! `SKILL.md` parsing: frontmatter, body, and the facts the engine reads.
//!
//! Loading is lenient (the Agent Skills client guidance): unknown keys are
//! kept, a `name` that differs from its directory is only a warning, and the
//! most common YAML mistake in published skills — an unquoted `: ` inside a
//! value — is retried as a quoted string. What cannot be read at all (too
//! large, not UTF-8, no frontmatter, broken YAML, no description) becomes a
//! [`SkillError`] with a line number; it never aborts a scan.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The file names that make a directory a skill, preferred first.
pub const SKILL_FILES: &[&str] = &["SKILL.md", "skill.md"];

/// The `SKILL.md` (or `skill.md`) at the top of `dir`, if there is one.
pub fn find_skill_file(dir: &Path) -> Option<std::path::PathBuf> {
    SKILL_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// Largest `SKILL.md` the engine reads; bigger files are refused unread.
pub const MAX_SKILL_MD_BYTES: u64 = 256 * 1024;

/// The file the installer leaves in every skill it installed. It is
/// skillpm's bookkeeping, not part of the skill, so it lives here where
/// the engine (which must not depend on install code) can leave it out of
/// what an agent is shown.
pub const INSTALL_MARKER: &str = ".skillpm-install";

/// Why a `SKILL.md` could not be loaded. `code()` is the stable reason code
/// used by `status --json`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    #[error("SKILL.md is {size} bytes; the limit is {MAX_SKILL_MD_BYTES}")]
    TooLarge { size: u64 },
    #[error("SKILL.md is not valid UTF-8")]
    NotUtf8 { line: usize },
    #[error("SKILL.md has no frontmatter: line 1 must be `---`")]
    NoFrontmatter,
    #[error("frontmatter opened on line {line} is never closed with `---`")]
    Unterminated { line: usize },
    #[error("invalid YAML in frontmatter: {message}")]
    Yaml { line: usize, message: String },
    #[error("frontmatter must be a YAML mapping")]
    NotAMapping { line: usize },
    #[error("frontmatter has no `description`")]
    MissingDescription,
    #[error("cannot read SKILL.md: {0}")]
    Io(String),
}

impl SkillError {
    /// The machine-readable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            SkillError::TooLarge { .. } => "too-large",
            SkillError::NotUtf8 { .. } => "not-utf8",
            SkillError::MissingDescription => "missing-description",
            SkillError::Io(_) => "unreadable",
            _ => "bad-frontmatter",
        }
    }

    /// The message with its line, as `status` shows it.
    pub fn detail(&self) -> String {
        match self {
            SkillError::NotUtf8 { line }
            | SkillError::Yaml { line, .. }
            | SkillError::NotAMapping { line } => format!("line {line}: {self}"),
            _ => self.to_string(),
        }
    }

    /// The 1-based line the problem is on, when it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            SkillError::NotUtf8 { line }
            | SkillError::Unterminated { line }
            | SkillError::Yaml { line, .. }
            | SkillError::NotAMapping { line } => Some(*line),
            SkillError::NoFrontmatter => Some(1),
            _ => None,
        }
    }
}

/// A non-fatal remark about a loaded skill.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Warning {
    pub line: Option<usize>,
    pub message: String,
}

/// A parsed `SKILL.md`. Serializable, so a parse can be kept between runs
/// (`skillpm mcp` keeps its parses, by the file's fingerprint).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SkillDoc {
    /// Every frontmatter key, known or not, in file order.
    pub frontmatter: Map<String, Value>,
    /// Markdown after the closing fence, with CRLF normalised to LF.
    pub body: String,
    /// File line of each top-level key, for validation messages.
    pub key_lines: BTreeMap<String, usize>,
    pub warnings: Vec<Warning>,
    /// File lines whose unquoted `: ` the loader quoted to make the YAML
    /// parse. Loading forgives them; `validate` must not, and telling them
    /// apart from other warnings by their text would break silently.
    pub repaired_lines: Vec<usize>,
}

/// Keys the Agent Skills specification and the known agent dialects define;
/// anything else is kept but reported as unknown.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "version",
    "license",
    "compatibility",
    "allowed-tools",
    "metadata",
    "triggers",
    "brief_description",
    "tools",
    "toolValidation",
    "requires",
    "conflicts",
    "always",
    "user_invocable_only",
    "user-invocable",
    "disable-model-invocation",
    "homepage",
];

impl SkillDoc {
    fn str_key(&self, key: &str) -> Option<&str> {
        self.frontmatter.get(key).and_then(Value::as_str)
    }

    /// The declared `name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.str_key("name")
    }

    /// The description; guaranteed non-empty by [`parse`].
    pub fn description(&self) -> &str {
        self.str_key("description").unwrap_or_default()
    }

    /// `version` from the top level, else from `metadata.version`, which
    /// several collections use instead.
    pub fn version(&self) -> Option<String> {
        let v = self
            .frontmatter
            .get("version")
            .or_else(|| self.frontmatter.get("metadata")?.get("version"))?;
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// Reads and parses `path`, refusing oversized files before reading them.
pub fn read(path: &Path) -> Result<SkillDoc, SkillError> {
    parse(&read_bytes(path)?)
}

/// The bytes of the `SKILL.md` at `path`, refused before they are read
/// past [`MAX_SKILL_MD_BYTES`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, SkillError> {
    // Read one byte past the limit so an oversized file is detected even if
    // it grows between a stat and the read; never block on a FIFO or device.
    let file = crate::bounded::open_regular(path).map_err(|e| SkillError::Io(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_MD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkillError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        let size = std::fs::metadata(path)
            .map(|m| m.len())
            .unwrap_or(bytes.len() as u64);
        return Err(SkillError::TooLarge { size });
    }
    Ok(bytes)
}

/// Parses the bytes of a `SKILL.md`.
pub fn parse(bytes: &[u8]) -> Result<SkillDoc, SkillError> {
    let doc = parse_frontmatter(bytes)?;
    match doc.frontmatter.get("description") {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(doc),
        _ => Err(SkillError::MissingDescription),
    }
}

/// Parses a `SKILL.md` as [`parse`] does, but without requiring a
/// `description`: the audit reads `hooks`, `allowed-tools` and `name` from
/// a file that would not load, since another agent may load it anyway.
pub fn parse_frontmatter(bytes: &[u8]) -> Result<SkillDoc, SkillError> {
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        return Err(SkillError::TooLarge {
            size: bytes.len() as u64,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| SkillError::NotUtf8 {
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (fm, fm_first_line, body) = split_frontmatter(text)?;
    let mut warnings = Vec::new();
    let mut repaired_lines = Vec::new();
    let frontmatter = match parse_yaml(&fm) {
        Ok(v) => v,
        Err(first) => {
            // Retry the most common mistake: `key: text: more text`.
            let (fixed, fixed_lines) = quote_colon_values(&fm);
            match (fixed_lines.is_empty(), parse_yaml(&fixed)) {
                (false, Ok(v)) => {
                    for l in fixed_lines {
                        repaired_lines.push(fm_first_line + l);
                        warnings.push(Warning {
                            line: Some(fm_first_line + l),
                            message: "unquoted `: ` in a value; read it as a quoted string"
                                .to_string(),
                        });
                    }
                    v
                }
                _ => return Err(first.at(fm_first_line)),
            }
        }
    };
    let frontmatter = match frontmatter {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => {
            return Err(SkillError::NotAMapping {
                line: fm_first_line,
            })
        }
    };
    let key_lines = top_level_key_lines(&fm, fm_first_line);
    for key in frontmatter.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) && !is_tool_block(&frontmatter, key) {
            warnings.push(Warning {
                line: key_lines.get(key).copied(),
                message: format!("unknown frontmatter key `{key}` (kept)"),
            });
        }
    }
    Ok(SkillDoc {
        frontmatter,
        body,
        key_lines,
        warnings,
        repaired_lines,
    })
}

/// A top-level map such as `sven: {requires_bins: [...]}` is an agent's own
/// block, not an unknown key.
pub(crate) fn is_tool_block(fm: &Map<String, Value>, key: &str) -> bool {
    fm.get(key).and_then(Value::as_object).is_some_and(|m| {
        m.keys().any(|k| {
            matches!(
                k.as_str(),
                "requires_bins" | "requires_env" | "always" | "user_invocable_only"
            )
        })
    })
}

/// A YAML failure, with its line relative to the frontmatter.
struct YamlFailure {
    line: usize,
    message: String,
}

impl YamlFailure {
    fn at(self, fm_first_line: usize) -> SkillError {
        SkillError::Yaml {
            line: fm_first_line + self.line.saturating_sub(1),
            message: self.message,
        }
    }
}

fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    // A frontmatter is a few dozen keys; these bounds reject alias bombs and
    // pathological nesting in microseconds instead of after gigabytes.
    budget.max_events = 100_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_depth = 64;
    budget.max_nodes = 100_000;
    budget.max_recorded_anchor_events = 100_000;
    budget.max_recorded_anchor_bytes = 1 << 20;
    budget.max_total_scalar_bytes = MAX_SKILL_MD_BYTES as usize;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    // YAML 1.2 core schema, as the specification's own parsers read it: only
    // `true`/`false` are booleans, so `description: yes` or `name: no` stay
    // the strings their authors wrote instead of vanishing into a bool.
    options.strict_booleans = true;
    options.with_snippet = false;
    options
}

/// A small YAML document from a package (APM's `apm.yml`), read with the
/// frontmatter's bounds: `Err((line, message))` when it does not parse.
pub fn parse_yaml_document(text: &str) -> Result<Value, (usize, String)> {
    parse_yaml(text).map_err(|f| (f.line, f.message))
}

fn parse_yaml(fm: &str) -> Result<Value, YamlFailure> {
    if fm.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_saphyr::from_str_with_options::<Value>(fm, yaml_options()).map_err(|e| {
        let line = e.location().map(|l| l.line() as usize).unwrap_or(1).max(1);
        let message = e.to_string();
        let message = message.lines().next().unwrap_or("").trim();
        // The parser appends a position relative to the frontmatter; the
        // caller reports the file line instead.
        let message = match message.rfind(" at line ") {
            Some(i) => &message[..i],
            None => message,
        }
        .to_string();
        YamlFailure { line, message }
    })
}

/// Splits off the frontmatter. Returns it (LF line endings), the file line
/// of its first line, and the body.
fn split_frontmatter(text: &str) -> Result<(String, usize, String), SkillError> {
    let mut lines = text.split('\n');
    match lines.next() {
        Some(first) if first.trim_end_matches('\r').trim_end() == "---" => {}
        _ => return Err(SkillError::NoFrontmatter),
    }
    let mut fm = String::new();
    let mut closed = false;
    let mut consumed = first_line_len(text);
    for line in lines.by_ref() {
        consumed += line.len() + 1;
        let l = line.trim_end_matches('\r');
        if l.trim_end() == "---" {
            closed = true;
            break;
        }
        fm.push_str(l);
        fm.push('\n');
    }
    if !closed {
        return Err(SkillError::Unterminated { line: 1 });
    }
    let rest = text.get(consumed.min(text.len())..).unwrap_or("");
    let body = rest.replace("\r\n", "\n");
    Ok((fm, 2, body))
}

fn first_line_len(text: &str) -> usize {
    text.find('\n').map(|i| i + 1).unwrap_or(text.len())
}

/// Quotes values of top-level `key: value` lines whose value contains `: `
/// and is not already quoted or a flow/block construct. Returns the new text
/// and the 0-based frontmatter lines it changed.
fn quote_colon_values(fm: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(fm.len() + 16);
    let mut changed = Vec::new();
    for (i, line) in fm.lines().enumerate() {
        if let Some((key, value)) = split_top_level_key(line) {
            let v = value.trim();
            let plain = !v.is_empty()
                && !v.starts_with(['"', '\'', '[', '{', '|', '>', '&', '*', '!', '#']);
            if plain && v.contains(": ") {
                out.push_str(key);
                out.push_str(": ");
                out.push_str(&Value::String(v.to_string()).to_string());
                out.push('\n');
                changed.push(i);
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, changed)
}

/// `key: value` at column 0, with a simple unquoted key.
fn split_top_level_key(line: &str) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t', '#', '-', '"', '\'']) {
        return None;
    }
    let idx = line.find(':')?;
    let key = &line[..idx];
    if key.is_empty() || key.contains(' ') {
        return None;
    }
    Some((key, &line[idx + 1..]))
}

fn top_level_key_lines(fm: &str, fm_first_line: usize) -> BTreeMap<String, usize> {
    let mut map = BTreeMap::new();
    for (i, line) in fm.lines().enumerate() {
        if let Some((key, _)) = split_top_level_key(line) {
            let key = key.trim_matches(['"', '\'']).to_string();
            map.entry(key).or_insert(fm_first_line + i);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_basic_with_bom_and_crlf() {
        let doc =
            parse(b"\xEF\xBB\xBF---\r\nname: a\r\ndescription: Does A\r\n---\r\nBody\r\nline2\r\n")
                .unwrap();
        assert_eq!(doc.name(), Some("a"));
        assert_eq!(doc.description(), "Does A");
        assert_eq!(doc.body, "Body\nline2\n");
        assert_eq!(doc.key_lines.get("description"), Some(&3));
    }

    #[test]
    fn retries_unquoted_colon() {
        let doc = parse(b"---\nname: a\ndescription: Use when: you need it\n---\n").unwrap();
        assert_eq!(doc.description(), "Use when: you need it");
        assert_eq!(doc.warnings.len(), 1);
        assert_eq!(doc.warnings[0].line, Some(3));
        assert_eq!(doc.repaired_lines, [3]);
    }

    #[test]
    fn yaml_1_1_booleans_are_strings() {
        for word in ["y", "n", "yes", "no", "on", "off", "Yes", "OFF"] {
            let doc = parse(format!("---\nname: {word}\ndescription: {word}\n---\n").as_bytes())
                .unwrap_or_else(|e| panic!("{word}: {e}"));
            assert_eq!(doc.description(), word);
            assert_eq!(doc.name(), Some(word));
        }
        let doc = parse(b"---\ndescription: d\nalways: true\n---\n").unwrap();
        assert_eq!(doc.frontmatter["always"], Value::Bool(true));
    }

    #[test]
    fn keeps_unknown_keys_and_nested_metadata() {
        let doc = parse(
            b"---\nname: a\ndescription: d\nhomepage: https://x\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"git\"]}}}\n---\n",
        )
        .unwrap();
        assert!(doc.frontmatter.contains_key("homepage"));
        assert_eq!(
            doc.frontmatter["metadata"]["openclaw"]["requires"]["bins"][0],
            "git"
        );
    }

    #[test]
    fn reports_errors_with_codes_and_lines() {
        assert_eq!(parse(b"no fm").unwrap_err().code(), "bad-frontmatter");
        assert_eq!(
            parse(b"---\nname: a\n").unwrap_err(),
            SkillError::Unterminated { line: 1 }
        );
        assert_eq!(
            parse(b"---\nname: a\n---\n").unwrap_err(),
            SkillError::MissingDescription
        );
        let e = parse(b"---\nname: a\ndescription: [unclosed\n---\n").unwrap_err();
        assert_eq!(e.code(), "bad-frontmatter");
        assert!(e.line().unwrap() >= 3, "{e}");
        let e = parse(b"---\ndescription: \xff\xfe\n---\n").unwrap_err();
        assert_eq!(e, SkillError::NotUtf8 { line: 2 });
        let big = vec![b'a'; MAX_SKILL_MD_BYTES as usize + 1];
        assert_eq!(parse(&big).unwrap_err().code(), "too-large");
    }

    #[test]
    fn rejects_alias_bomb_quickly() {
        let mut y = String::from(
            "---\ndescription: d\na: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n",
        );
        let mut prev = 'a';
        for c in 'b'..='k' {
            y.push_str(&format!(
                "{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
            prev = c;
        }
        y.push_str("---\n");
        let e = parse(y.as_bytes()).unwrap_err();
        assert_eq!(e.code(), "bad-frontmatter");
    }
}
