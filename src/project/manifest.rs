//! `skills.toml`: what the project asks for.
//!
//! The manifest is a checked-in file anyone can edit, so it is read with
//! spans and every rejection names the file and line. Names, git URLs, refs
//! and version requirements go through exactly the same validation as
//! command-line specs ([`crate::project::spec`]), so a manifest cannot smuggle in
//! what `skillpm add` would refuse.
//!
//! Reading ([`Manifest`]) and editing ([`ManifestEditor`]) are separate:
//! `skillpm add/remove` must keep the user's comments and layout, which only
//! a `toml_edit` document can do.

use crate::project::spec::{self, GitRef, GitUrl, SpecError, WellKnownUrl};
use semver::VersionReq;
use skillpm_core::name::{NameError, SkillName};
use skillpm_core::text::line_of;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml_edit::{Document, DocumentMut, InlineTable, Item, Key, Value};

mod audit;
mod trust;
pub use audit::{Allow, AuditPolicy, Waiver};
pub use trust::TrustPolicy;

/// The parsed, validated manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    pub skills: BTreeMap<SkillName, Dependency>,
    /// Registry name → base URL, from `[registries]`.
    pub registries: BTreeMap<String, String>,
    /// `[install] targets`; `None` means "use the built-in default".
    pub install_targets: Option<Vec<String>>,
    /// `[install] link = "copy"`: roots after the first hold copies
    /// instead of relative symlinks to the first.
    pub install_copy: bool,
    /// `[sources] github`: the base the `owner/repo` shorthand expands
    /// against; `None` means [`spec::DEFAULT_GITHUB_BASE`].
    pub github_base: Option<String>,
    /// `[audit]`: what `skillpm audit` fails on, and accepted findings.
    pub audit: AuditPolicy,
    /// `[trust]`: whose signatures git dependencies' commits must carry.
    pub trust: TrustPolicy,
}

/// One entry of `[skills]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    Registry {
        req: VersionReq,
        registry: Option<String>,
    },
    Git {
        url: GitUrl,
        reference: Option<GitRef>,
        /// Subdirectory of the repository holding the skill.
        path: Option<String>,
        /// The plugin of the repository's marketplace it was added
        /// through (`add --plugin`): the lock records that plugin's
        /// declared version.
        plugin: Option<String>,
        /// `plugin-version`: a requirement the version the plugin declares
        /// must meet (`add --plugin NAME@^6`); only with `plugin`.
        plugin_version: Option<VersionReq>,
    },
    Path {
        path: String,
    },
    /// One skill of an Agent Skills discovery index; the manifest key is
    /// the skill's `name` in the index.
    WellKnown {
        index: WellKnownUrl,
    },
}

impl Dependency {
    /// Whether `other` names the same skill as this entry: the same
    /// registry, repository and directory, local path or site. What picks
    /// a version of it (a requirement, a git ref) may differ: that is an
    /// update, not another skill.
    pub fn same_origin(&self, other: &Dependency) -> bool {
        match (self, other) {
            (
                Dependency::Registry { registry: a, .. },
                Dependency::Registry { registry: b, .. },
            ) => a == b,
            (
                Dependency::Git {
                    url: a, path: pa, ..
                },
                Dependency::Git {
                    url: b, path: pb, ..
                },
            ) => a.redacted() == b.redacted() && pa == pb,
            (Dependency::Path { path: a }, Dependency::Path { path: b }) => a == b,
            (Dependency::WellKnown { index: a }, Dependency::WellKnown { index: b }) => a == b,
            _ => false,
        }
    }

    /// Where the skill comes from, as a user would name it.
    pub fn origin(&self) -> String {
        match self {
            Dependency::Registry { registry, .. } => match registry {
                Some(r) => format!("the registry `{r}`"),
                None => "the default registry".to_string(),
            },
            Dependency::Git { url, path, .. } => match path {
                Some(p) => format!("git+{} ({p})", url.redacted()),
                None => format!("git+{}", url.redacted()),
            },
            Dependency::Path { path } => path.clone(),
            Dependency::WellKnown { index } => index.to_string(),
        }
    }
}

/// A manifest problem, located at a line of a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {kind}", file.display())]
pub struct ManifestError {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    /// Boxed: the error travels in every `Result` of the project layer,
    /// and a path is larger on Windows.
    pub kind: Box<ManifestErrorKind>,
}

/// What is wrong; the message always suggests the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestErrorKind {
    #[error("TOML syntax error: {0}")]
    Syntax(String),
    #[error("`{key}` must be {expected}")]
    WrongType { key: String, expected: &'static str },
    #[error("invalid skill name `{name}`: {source}")]
    BadName {
        name: String,
        #[source]
        source: NameError,
    },
    #[error("skill `{name}`: {source}")]
    BadSpec {
        name: String,
        #[source]
        source: SpecError,
    },
    #[error("skill `{name}`: unknown key `{key}`; expected version, registry, git, tag, branch, rev, ref, path, plugin, plugin-version or wellknown")]
    UnknownKey { name: String, key: String },
    #[error("skill `{name}`: `plugin-version` is a requirement on its `plugin`, and it has none")]
    PluginVersionWithoutPlugin { name: String },
    #[error("skill `{name}`: `{a}` and `{b}` cannot be used together; keep one")]
    Conflict {
        name: String,
        a: &'static str,
        b: &'static str,
    },
    #[error("skill `{name}` has no source; give a version (`\"^1\"`), `git = \"https://...\"` or `path = \"./dir\"`")]
    MissingSource { name: String },
    #[error("skill `{name}`: `path` is empty; give a directory like `./vendor/{name}`")]
    EmptyPath { name: String },
    #[error("skill `{name}` uses registry `{registry}`, which is not defined; add `{registry} = \"https://...\"` under [registries]")]
    UnknownRegistry { name: String, registry: String },
    #[error("more than {0} dependencies")]
    TooMany(usize),
    #[error("unknown table `{table}`; expected {expected}")]
    UnknownTable {
        table: String,
        expected: &'static str,
    },
    #[error("invalid registry name `{0}`; use letters, digits, '-' and '_'")]
    BadRegistryName(String),
    #[error("registry `{name}`: {source}")]
    BadRegistryUrl {
        name: String,
        #[source]
        source: SpecError,
    },
    #[error("[sources] github: {0}; give a base URL like \"https://github.com\"")]
    BadGitHubBase(#[source] SpecError),
    #[error("[audit] {0}")]
    Audit(String),
    #[error("[trust] {0}")]
    Trust(String),
}

/// The registry that needs no `[registries]` entry: its URL comes from the
/// user's configuration.
pub const DEFAULT_REGISTRY: &str = "default";

/// Turns a `toml_edit` parse error into one line plus its line number.
pub(crate) fn syntax_error(text: &str, e: &toml_edit::TomlError) -> (usize, String) {
    let line = e.span().map_or(1, |s| line_of(text, s.start));
    (line, skillpm_core::text::toml_message(e))
}

pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a Path,
}

impl Ctx<'_> {
    pub(super) fn err(&self, span: Option<Range<usize>>, kind: ManifestErrorKind) -> ManifestError {
        ManifestError {
            file: self.file.to_path_buf(),
            line: span.map_or(1, |s| line_of(self.text, s.start)),
            kind: Box::new(kind),
        }
    }

    /// The file's TOML document, or its syntax error at its line.
    pub(super) fn document(&self) -> Result<Document<&str>, ManifestError> {
        Document::parse(self.text).map_err(|e| {
            let (line, msg) = syntax_error(self.text, &e);
            ManifestError {
                file: self.file.to_path_buf(),
                line,
                kind: Box::new(ManifestErrorKind::Syntax(msg)),
            }
        })
    }

    /// Prefers the key's position: that is the line a person looks for.
    pub(super) fn at(&self, key: &Key, item: &Item, kind: ManifestErrorKind) -> ManifestError {
        self.err(key.span().or_else(|| item.span()), kind)
    }
}

fn wrong_type(key: String, expected: &'static str) -> ManifestErrorKind {
    ManifestErrorKind::WrongType { key, expected }
}

impl Manifest {
    /// Parses and validates `skills.toml`; `file` is only used in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Manifest, ManifestError> {
        let cx = Ctx { text, file };
        let doc = cx.document()?;
        let root = doc.as_table();
        let mut m = Manifest::default();

        if let Some((key, item)) = root.get_key_value("registries") {
            let table = item
                .as_table_like()
                .ok_or_else(|| cx.at(key, item, wrong_type("registries".into(), "a table")))?;
            for (name, _) in table.iter() {
                let Some((k, v)) = table.get_key_value(name) else {
                    continue;
                };
                if !spec::is_registry_name(name) {
                    return Err(cx.at(k, v, ManifestErrorKind::BadRegistryName(name.into())));
                }
                let url = v.as_str().ok_or_else(|| {
                    cx.at(
                        k,
                        v,
                        wrong_type(format!("registries.{name}"), "a URL string"),
                    )
                })?;
                spec::check_registry_url(url).map_err(|source| {
                    cx.at(
                        k,
                        v,
                        ManifestErrorKind::BadRegistryUrl {
                            name: name.into(),
                            source,
                        },
                    )
                })?;
                m.registries.insert(name.to_string(), url.to_string());
            }
        }

        if let Some((key, item)) = root.get_key_value("skills") {
            for (skill, dep) in parse_skill_table(&cx, "skills", key, item, &m.registries)? {
                m.skills.insert(skill, dep);
            }
        }

        if let Some((key, item)) = root.get_key_value("sources") {
            let table = item
                .as_table_like()
                .ok_or_else(|| cx.at(key, item, wrong_type("sources".into(), "a table")))?;
            if let Some((k, v)) = table.get_key_value("github") {
                let base = v.as_str().ok_or_else(|| {
                    cx.at(k, v, wrong_type("sources.github".into(), "a URL string"))
                })?;
                // The base is only usable if a repository under it is a
                // valid git URL.
                spec::GitHubShorthand::check_base(base)
                    .map_err(|e| cx.at(k, v, ManifestErrorKind::BadGitHubBase(e)))?;
                m.github_base = Some(base.to_string());
            }
        }

        if let Some((key, item)) = root.get_key_value("audit") {
            m.audit = audit::parse(&cx, key, item)?;
        }

        if let Some((key, item)) = root.get_key_value("trust") {
            m.trust = trust::parse(&cx, key, item)?;
        }

        if let Some((key, item)) = root.get_key_value("install") {
            let table = item
                .as_table_like()
                .ok_or_else(|| cx.at(key, item, wrong_type("install".into(), "a table")))?;
            if let Some((k, v)) = table.get_key_value("targets") {
                let expected = "an array of agent names or directory strings";
                let arr = v
                    .as_array()
                    .ok_or_else(|| cx.at(k, v, wrong_type("install.targets".into(), expected)))?;
                let mut targets = Vec::with_capacity(arr.len());
                for t in arr.iter() {
                    match t.as_str() {
                        Some(s) if !s.is_empty() && !s.chars().any(char::is_control) => {
                            targets.push(s.to_string())
                        }
                        _ => {
                            return Err(cx.err(
                                t.span().or_else(|| k.span()),
                                wrong_type("install.targets".into(), expected),
                            ))
                        }
                    }
                }
                m.install_targets = Some(targets);
            }
            if let Some((k, v)) = table.get_key_value("link") {
                m.install_copy = match v.as_str() {
                    Some("symlink") => false,
                    Some("copy") => true,
                    _ => {
                        return Err(cx.at(
                            k,
                            v,
                            wrong_type("install.link".into(), "\"symlink\" or \"copy\""),
                        ))
                    }
                };
            }
        }
        Ok(m)
    }
}

/// The entries of a table of skills (`[skills]` of skills.toml,
/// `[dependencies]` of a package's skill.toml): each name checked, each
/// value parsed as one source, each named registry defined.
pub(super) fn parse_skill_table(
    cx: &Ctx<'_>,
    table_name: &str,
    key: &Key,
    item: &Item,
    registries: &BTreeMap<String, String>,
) -> Result<Vec<(SkillName, Dependency)>, ManifestError> {
    let table = item
        .as_table_like()
        .ok_or_else(|| cx.at(key, item, wrong_type(table_name.into(), "a table")))?;
    let mut out = Vec::new();
    for (name, _) in table.iter() {
        let Some((k, v)) = table.get_key_value(name) else {
            continue;
        };
        let skill = SkillName::new(name).map_err(|source| {
            cx.at(
                k,
                v,
                ManifestErrorKind::BadName {
                    name: name.into(),
                    source,
                },
            )
        })?;
        let dep = parse_dependency(cx, name, k, v)?;
        if let Dependency::Registry {
            registry: Some(r), ..
        } = &dep
        {
            if r != DEFAULT_REGISTRY && !registries.contains_key(r) {
                return Err(cx.at(
                    k,
                    v,
                    ManifestErrorKind::UnknownRegistry {
                        name: name.into(),
                        registry: r.clone(),
                    },
                ));
            }
        }
        out.push((skill, dep));
    }
    Ok(out)
}

/// String-valued keys of a dependency table, with where each was written.
#[derive(Default)]
struct DepKeys {
    version: Option<String>,
    registry: Option<String>,
    git: Option<String>,
    path: Option<String>,
    wellknown: Option<String>,
    plugin: Option<String>,
    plugin_version: Option<String>,
    reference: Option<GitRef>,
    ref_key: Option<&'static str>,
}

fn parse_dependency(
    cx: &Ctx<'_>,
    name: &str,
    key: &Key,
    item: &Item,
) -> Result<Dependency, ManifestError> {
    let bad_spec = |source| ManifestErrorKind::BadSpec {
        name: name.into(),
        source,
    };
    if let Some(s) = item.as_str() {
        let req = spec::parse_version_req(s).map_err(|e| cx.at(key, item, bad_spec(e)))?;
        return Ok(Dependency::Registry {
            req,
            registry: None,
        });
    }
    let table = item.as_table_like().ok_or_else(|| {
        cx.at(
            key,
            item,
            wrong_type(
                format!("skills.{name}"),
                "a version string or a table like { git = \"...\" }",
            ),
        )
    })?;

    let mut d = DepKeys::default();
    for (field, _) in table.iter() {
        let Some((fk, fv)) = table.get_key_value(field) else {
            continue;
        };
        let here = |kind| cx.at(fk, fv, kind);
        let known: &'static str = match field {
            "version" => "version",
            "registry" => "registry",
            "git" => "git",
            "path" => "path",
            "wellknown" => "wellknown",
            "plugin" => "plugin",
            "plugin-version" => "plugin-version",
            "tag" => "tag",
            "branch" => "branch",
            "rev" => "rev",
            "ref" => "ref",
            _ => {
                return Err(here(ManifestErrorKind::UnknownKey {
                    name: name.into(),
                    key: field.into(),
                }))
            }
        };
        let value = fv
            .as_str()
            .ok_or_else(|| here(wrong_type(format!("skills.{name}.{field}"), "a string")))?
            .to_string();
        let slot = match known {
            "version" => &mut d.version,
            "registry" => &mut d.registry,
            "git" => &mut d.git,
            "path" => &mut d.path,
            "wellknown" => &mut d.wellknown,
            "plugin" => &mut d.plugin,
            "plugin-version" => &mut d.plugin_version,
            _ => {
                if let Some(prev) = d.ref_key {
                    return Err(here(ManifestErrorKind::Conflict {
                        name: name.into(),
                        a: prev,
                        b: known,
                    }));
                }
                spec::check_ref(&value).map_err(|e| here(bad_spec(e)))?;
                d.ref_key = Some(known);
                d.reference = Some(match known {
                    "tag" => GitRef::Tag(value),
                    "branch" => GitRef::Branch(value),
                    "rev" => GitRef::Rev(value),
                    _ => GitRef::Unspecified(value),
                });
                continue;
            }
        };
        // Validation that needs the value's own line happens here.
        match known {
            "version" | "plugin-version" => {
                spec::parse_version_req(&value).map_err(|e| here(bad_spec(e)))?;
            }
            "git" => {
                GitUrl::parse(&value).map_err(|e| here(bad_spec(e)))?;
            }
            "wellknown" => {
                WellKnownUrl::parse(&value).map_err(|e| here(bad_spec(e)))?;
            }
            "plugin" => {
                skillpm_core::name::check_name(&value).map_err(|source| {
                    here(ManifestErrorKind::BadName {
                        name: value.clone(),
                        source,
                    })
                })?;
            }
            _ => {}
        }
        *slot = Some(value);
    }

    let at = |kind| cx.at(key, item, kind);
    let conflict = |a, b| {
        at(ManifestErrorKind::Conflict {
            name: name.into(),
            a,
            b,
        })
    };
    if d.plugin.is_none() && d.plugin_version.is_some() {
        return Err(at(ManifestErrorKind::PluginVersionWithoutPlugin {
            name: name.into(),
        }));
    }
    // A plugin is one of a git repository's marketplace.
    if d.git.is_none() && d.plugin.is_some() {
        let other = [
            (d.wellknown.is_some(), "wellknown"),
            (d.path.is_some(), "path"),
            (d.registry.is_some(), "registry"),
            (d.version.is_some(), "version"),
        ]
        .into_iter()
        .find_map(|(set, k)| set.then_some(k));
        return Err(match other {
            Some(other) => conflict("plugin", other),
            None => at(ManifestErrorKind::MissingSource { name: name.into() }),
        });
    }
    if let Some(index) = d.wellknown {
        for (set, other) in [
            (d.git.is_some(), "git"),
            (d.version.is_some(), "version"),
            (d.registry.is_some(), "registry"),
            (d.path.is_some(), "path"),
        ] {
            if set {
                return Err(conflict("wellknown", other));
            }
        }
        if let Some(r) = d.ref_key {
            return Err(conflict("wellknown", r));
        }
        let index = WellKnownUrl::parse(&index).map_err(|e| at(bad_spec(e)))?;
        return Ok(Dependency::WellKnown { index });
    }
    if let Some(git) = d.git {
        if let Some(v) = d.version {
            // A semver requirement over the repository's tags.
            if let Some(r) = d.ref_key {
                return Err(conflict("version", r));
            }
            d.reference = Some(GitRef::Version(v));
        }
        if d.registry.is_some() {
            return Err(conflict("git", "registry"));
        }
        let url = GitUrl::parse(&git).map_err(|e| at(bad_spec(e)))?;
        if let Some(p) = &d.path {
            spec::check_subpath(p).map_err(|e| at(bad_spec(e)))?;
        }
        return Ok(Dependency::Git {
            url,
            reference: d.reference,
            path: d.path,
            plugin: d.plugin,
            plugin_version: d
                .plugin_version
                .map(|v| spec::parse_version_req(&v).map_err(|e| at(bad_spec(e))))
                .transpose()?,
        });
    }
    if let Some(path) = d.path {
        if d.version.is_some() {
            return Err(conflict("path", "version"));
        }
        if d.registry.is_some() {
            return Err(conflict("path", "registry"));
        }
        if let Some(r) = d.ref_key {
            return Err(conflict("path", r));
        }
        if path.is_empty() || path.chars().any(char::is_control) {
            return Err(at(ManifestErrorKind::EmptyPath { name: name.into() }));
        }
        return Ok(Dependency::Path { path });
    }
    if d.version.is_none() && d.registry.is_none() {
        return Err(at(ManifestErrorKind::MissingSource { name: name.into() }));
    }
    if let Some(r) = d.ref_key {
        return Err(conflict("version", r));
    }
    let req = match d.version {
        Some(v) => spec::parse_version_req(&v).map_err(|e| at(bad_spec(e)))?,
        None => VersionReq::STAR,
    };
    Ok(Dependency::Registry {
        req,
        registry: d.registry,
    })
}

/// Format-preserving editor used by `skillpm add/remove`.
pub struct ManifestEditor {
    doc: DocumentMut,
}

impl ManifestEditor {
    /// Parses for editing. Only the syntax and the shape of `[skills]` are
    /// checked here; use [`Manifest::parse`] for full validation.
    pub fn parse(text: &str, file: &Path) -> Result<ManifestEditor, ManifestError> {
        let doc = Document::parse(text.to_string()).map_err(|e| {
            let (line, msg) = syntax_error(text, &e);
            ManifestError {
                file: file.to_path_buf(),
                line,
                kind: Box::new(ManifestErrorKind::Syntax(msg)),
            }
        })?;
        if let Some((key, item)) = doc.as_table().get_key_value("skills") {
            if !item.is_table_like() {
                let cx = Ctx { text, file };
                return Err(cx.at(key, item, wrong_type("skills".into(), "a table")));
            }
        }
        Ok(ManifestEditor {
            doc: doc.into_mut(),
        })
    }

    /// Inserts or replaces `[skills] name`; an existing entry keeps its
    /// place and its trailing comment, a new one goes last.
    pub fn set_dependency(&mut self, name: &SkillName, dep: &Dependency) {
        let root = self.doc.as_table_mut();
        if !root.get("skills").is_some_and(Item::is_table_like) {
            root.insert("skills", Item::Table(toml_edit::Table::new()));
        }
        let Some(skills) = root.get_mut("skills").and_then(Item::as_table_like_mut) else {
            return;
        };
        let mut value = dependency_value(dep);
        match skills.get_mut(name.as_str()) {
            Some(Item::Value(old)) => {
                *value.decor_mut() = old.decor().clone();
                *old = value;
            }
            Some(other) => *other = Item::Value(value),
            None => {
                skills.insert(name.as_str(), Item::Value(value));
            }
        }
    }

    /// Sets `[registries] name = url`, creating the table when missing;
    /// the rest of the file, comments included, is kept as written.
    pub fn set_registry(&mut self, name: &str, url: &str) {
        let root = self.doc.as_table_mut();
        if !root.get("registries").is_some_and(Item::is_table_like) {
            root.insert("registries", Item::Table(toml_edit::Table::new()));
        }
        if let Some(t) = root.get_mut("registries").and_then(Item::as_table_like_mut) {
            t.insert(name, toml_edit::value(url));
        }
    }

    /// Removes `[skills] name`; returns whether it was there.
    pub fn remove_dependency(&mut self, name: &SkillName) -> bool {
        self.doc
            .as_table_mut()
            .get_mut("skills")
            .and_then(Item::as_table_like_mut)
            .is_some_and(|t| t.remove(name.as_str()).is_some())
    }
}

impl fmt::Display for ManifestEditor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.doc, f)
    }
}

/// The TOML value for a dependency. Git URLs are written as given (the
/// user typed them, and git needs any credentials to fetch).
fn dependency_value(dep: &Dependency) -> Value {
    let mut t = InlineTable::new();
    match dep {
        Dependency::Registry {
            req,
            registry: None,
        } => return Value::from(req.to_string()),
        Dependency::Registry {
            req,
            registry: Some(r),
        } => {
            t.insert("version", Value::from(req.to_string()));
            t.insert("registry", Value::from(r.as_str()));
        }
        Dependency::Git {
            url,
            reference,
            path,
            plugin,
            plugin_version,
        } => {
            t.insert("git", Value::from(url.as_str()));
            if let Some(r) = reference {
                t.insert(r.key(), Value::from(r.as_str()));
            }
            if let Some(p) = path {
                t.insert("path", Value::from(p.as_str()));
            }
            if let Some(p) = plugin {
                t.insert("plugin", Value::from(p.as_str()));
            }
            if let Some(v) = plugin_version {
                t.insert("plugin-version", Value::from(v.to_string()));
            }
        }
        Dependency::Path { path } => {
            t.insert("path", Value::from(path.as_str()));
        }
        Dependency::WellKnown { index } => {
            t.insert("wellknown", Value::from(index.as_str()));
        }
    }
    t.fmt();
    Value::InlineTable(t)
}

/// Starter `skills.toml` written by `skillpm init`.
pub fn init_template() -> &'static str {
    r#"# Skills this project uses. `skillpm add <spec>` edits this file and keeps
# your comments; `skillpm install` resolves it into skills.lock.

[skills]
# From the default registry, with a Cargo-style version requirement:
# code-review = "^1"
# From a named registry (defined under [registries] below):
# pdf = { version = "~2.1", registry = "acme" }
# From git (at most one of tag / branch / rev; `path` is the skill's
# directory inside the repository):
# house-style = { git = "https://github.com/acme/skills.git", tag = "v1.4.0", path = "house-style" }
# From a local directory:
# local-thing = { path = "./vendor/local-thing" }
# From a site's Agent Skills discovery index (`skillpm add https://site`):
# docs-helper = { wellknown = "https://docs.example.com/.well-known/agent-skills/index.json" }

# [registries]
# acme = "https://skills.acme.internal"

# [sources]
# Base of the `owner/repo` shorthand (GitHub Enterprise, a mirror):
# github = "https://github.com"

# [install]
# Directories skills are installed into:
# targets = [".agents/skills", ".claude/skills"]

# [trust]
# Git dependencies' commits must be signed by a key listed in this file
# (git's allowed_signers format, relative to this directory):
# git-allowed-signers = ".skillpm/allowed_signers"
"#
}

#[cfg(test)]
mod tests;
