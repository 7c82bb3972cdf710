//! Plugin marketplaces, read from a repository: Claude Code's
//! `.claude-plugin/marketplace.json`, Codex's
//! `.agents/plugins/marketplace.json` and Copilot's
//! `.github/plugin/marketplace.json`, with each plugin's manifest
//! (`.claude-plugin/plugin.json`, `.codex-plugin/plugin.json`, or the Agent
//! Plugins spec's `plugin.json` at the plugin root).
//!
//! skillpm only takes a plugin's skills from it: which directories of the
//! repository they are, and the version the plugin declares. Everything
//! else a plugin carries (hooks, MCP servers, agents) stays the agent's
//! business. Every file is untrusted: each is capped before it is parsed,
//! counts are capped, unknown fields are ignored, one bad plugin entry
//! does not hide the others, and every path stays inside the repository
//! (relative, no `..`, never through a symlink).

use crate::project::lockfile::is_full_commit;
use crate::project::spec::{check_ref, check_subpath, GitRef, GitUrl};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// The largest marketplace or plugin manifest read (github's
/// awesome-copilot, 170 plugins, is 63 KB).
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The most plugins one marketplace may list.
pub const MAX_PLUGINS: usize = 5_000;
/// The most skill paths one plugin may list.
pub const MAX_PLUGIN_SKILLS: usize = 1_000;
/// The longest name, version or description kept from a manifest.
const MAX_TEXT: usize = 1_024;

/// The marketplace files, in the order their plugins are listed: when two
/// name the same plugin (obra/superpowers ships both), the first wins.
pub const MARKETPLACE_FILES: [&str; 3] = [
    ".claude-plugin/marketplace.json",
    ".agents/plugins/marketplace.json",
    ".github/plugin/marketplace.json",
];

/// A plugin's manifest below its root, first found wins.
const PLUGIN_FILES: [&str; 3] = [
    ".claude-plugin/plugin.json",
    ".codex-plugin/plugin.json",
    "plugin.json",
];

/// What a path of the commit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    File,
    Dir,
    Symlink,
}

/// One commit of a repository, as this module reads it.
pub trait Tree {
    /// What is at `path` (relative, `/`-separated; `""` is the root).
    fn kind(&self, path: &str) -> Option<PathKind>;
    /// The file at `path`, refused when over `max` bytes; `None` when
    /// there is no such file.
    fn read(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, MarketplaceError>;
}

/// Why a marketplace or plugin manifest cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarketplaceError {
    #[error("{file} is over the {max}-byte limit for a plugin manifest")]
    TooLarge { file: String, max: u64 },
    #[error("{file} is not valid JSON: {message}")]
    Json { file: String, message: String },
    #[error("{file} lists {count} plugins, over the limit of {max}")]
    TooMany {
        file: String,
        count: usize,
        max: usize,
    },
    #[error("{file} is a symlink; a manifest is only read from a plain file")]
    Symlink { file: String },
    #[error("{0}")]
    Read(String),
}

/// One marketplace file of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    /// Its path in the repository.
    pub file: &'static str,
    /// Its `name` (what `NAME@MARKETPLACE` names), if it has one.
    pub name: Option<String>,
    pub plugins: Vec<Plugin>,
}

/// A plugin a marketplace lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub name: String,
    pub description: String,
    /// The version its manifest (else its marketplace entry) declares.
    pub version: Option<semver::Version>,
    pub source: PluginSource,
    /// Its skills' directories in the repository, sorted; empty when it
    /// lives in another repository (read from there by [`held`]) or
    /// cannot be used.
    pub skills: Vec<String>,
    /// Why its skills cannot be installed from here; `None` when they can.
    pub problem: Option<String>,
}

/// Where a plugin's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A directory of this repository (`""` for its root).
    Here(String),
    /// Another git repository, at a commit (`sha`) or ref, else its
    /// default branch; checked as a git URL and ref typed in skills.toml
    /// are.
    Git {
        url: GitUrl,
        reference: Option<GitRef>,
        /// The plugin's root in that repository (`""` for its root).
        root: String,
        /// The skill paths the marketplace entry lists, relative to the
        /// plugin's root; `None`: what its manifest there says.
        listed: Option<Vec<String>>,
    },
    /// A source kind skillpm does not read (`npm`, `pip`, ...).
    Other(String),
}

/// A path a manifest gives: one string, or a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum Paths {
    One(String),
    Many(Vec<String>),
}

impl Paths {
    fn list(self) -> Vec<String> {
        match self {
            Paths::One(p) => vec![p],
            Paths::Many(ps) => ps,
        }
    }
}

#[derive(Deserialize)]
struct RawMarketplace {
    name: Option<String>,
    #[serde(default)]
    metadata: RawMetadata,
    /// Each entry is judged on its own, so one bad entry is reported as
    /// that plugin's problem instead of hiding the whole marketplace.
    #[serde(default)]
    plugins: Vec<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct RawMetadata {
    /// Claude Code: the directory relative plugin sources are below.
    #[serde(rename = "pluginRoot")]
    plugin_root: Option<String>,
}

#[derive(Deserialize)]
struct RawEntry {
    name: String,
    description: Option<String>,
    version: Option<String>,
    source: RawSource,
    skills: Option<Paths>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSource {
    Path(String),
    Object {
        source: String,
        repo: Option<String>,
        url: Option<String>,
        path: Option<String>,
        #[serde(rename = "ref")]
        reference: Option<String>,
        sha: Option<String>,
    },
}

#[derive(Deserialize, Default)]
struct RawPlugin {
    name: Option<String>,
    description: Option<String>,
    version: Option<String>,
    /// Relative to the plugin's root.
    skills: Option<Paths>,
    #[serde(default)]
    extensions: RawExtensions,
}

#[derive(Deserialize, Default)]
struct RawExtensions {
    #[serde(rename = "com.github.awesome-copilot", default)]
    copilot: RawCopilot,
}

/// awesome-copilot's plugins list their skills here, relative to the
/// repository root (its `materialize-plugins` copies `./skills/NAME/` from
/// the root into the plugin when it publishes).
#[derive(Deserialize, Default)]
struct RawCopilot {
    skills: Option<Paths>,
}

/// Every marketplace of `tree`, with each plugin's skills found among
/// `skill_dirs` (the directories of the commit that hold a skill, as
/// `add` lists them). A repository without one gives an empty list.
pub fn read(tree: &dyn Tree, skill_dirs: &[&str]) -> Result<Vec<Marketplace>, MarketplaceError> {
    let mut out = Vec::new();
    for file in MARKETPLACE_FILES {
        if let Some(m) = read_marketplace(tree, file, skill_dirs)? {
            out.push(m);
        }
    }
    Ok(out)
}

/// The plugin `spec` names (`NAME`, or `NAME@MARKETPLACE` as Claude Code
/// spells it): the first marketplace's that lists it.
pub fn find<'m>(markets: &'m [Marketplace], spec: &str) -> Option<&'m Plugin> {
    let (name, market) = match spec.split_once('@') {
        Some((n, m)) => (n, Some(m)),
        None => (spec, None),
    };
    markets
        .iter()
        .filter(|m| market.is_none() || m.name.as_deref() == market)
        .flat_map(|m| &m.plugins)
        .find(|p| p.name == name)
}

/// A plugin read in its own repository, which a marketplace elsewhere
/// names: the version its manifest there declares and its skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub version: Option<semver::Version>,
    /// Its skills' directories in that repository, sorted.
    pub skills: Vec<String>,
}

/// The plugin at `root` of `tree` (its manifest, and the skills `listed`
/// relative to `root`, else those its manifest lists, else those below
/// `root/skills/`), or why it cannot be installed.
pub fn held(
    tree: &dyn Tree,
    root: &str,
    listed: Option<&[String]>,
    skill_dirs: &[&str],
) -> Result<Held, String> {
    let listed = listed.map(|l| Paths::Many(l.to_vec()));
    let (manifest, skills) = skills_of(tree, root, listed, skill_dirs)?;
    if skills.is_empty() {
        return Err("it holds no skills (only agents, commands, hooks or servers)".into());
    }
    Ok(Held {
        version: manifest.and_then(|m| m.version.as_deref().and_then(version)),
        skills,
    })
}

/// The version the manifest of the plugin `name` declares in `tree`, for
/// a skill at `dir` that no marketplace of `tree` lists (the plugin lives
/// in its own repository): the nearest directory at or above `dir` whose
/// plugin manifest is named `name`. `None` when none is.
pub fn declared_above(tree: &dyn Tree, dir: &str, name: &str) -> Option<semver::Version> {
    let mut at = Some(dir);
    while let Some(root) = at {
        let found = PLUGIN_FILES.iter().find_map(|file| {
            let path = match root.is_empty() {
                true => file.to_string(),
                false => format!("{root}/{file}"),
            };
            parse_file::<RawPlugin>(tree, &path).ok().flatten()
        });
        if let Some(m) = found.filter(|m| m.name.as_deref() == Some(name)) {
            return m.version.as_deref().and_then(version);
        }
        at = match root {
            "" => None,
            r => Some(r.rsplit_once('/').map_or("", |(up, _)| up)),
        };
    }
    None
}

/// The manifest at `file`, parsed; `None` when there is none.
fn parse_file<T: for<'de> Deserialize<'de>>(
    tree: &dyn Tree,
    file: &str,
) -> Result<Option<T>, MarketplaceError> {
    if has_symlink(tree, file).is_some() {
        return Err(MarketplaceError::Symlink { file: file.into() });
    }
    let Some(bytes) = tree.read(file, MAX_MANIFEST_BYTES)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| MarketplaceError::Json {
            file: file.into(),
            message: e.to_string(),
        })
}

fn read_marketplace(
    tree: &dyn Tree,
    file: &'static str,
    skill_dirs: &[&str],
) -> Result<Option<Marketplace>, MarketplaceError> {
    let Some(raw) = parse_file::<RawMarketplace>(tree, file)? else {
        return Ok(None);
    };
    if raw.plugins.len() > MAX_PLUGINS {
        return Err(MarketplaceError::TooMany {
            file: file.into(),
            count: raw.plugins.len(),
            max: MAX_PLUGINS,
        });
    }
    let root = raw.metadata.plugin_root.unwrap_or_default();
    let base = inside("", &root).map_err(|e| format!("its marketplace's `pluginRoot`: {e}"));
    let mut seen = HashSet::new();
    let mut plugins = Vec::new();
    for (i, entry) in raw.plugins.into_iter().enumerate() {
        let plugin = match serde_json::from_value::<RawEntry>(entry) {
            Ok(e) => plugin(tree, base.as_deref(), e, skill_dirs),
            Err(e) => unusable(format!("#{}", i + 1), format!("{file}: {e}")),
        };
        // Claude Code refuses a marketplace naming one plugin twice; here
        // the first stands and the next is reported.
        let plugin = match seen.insert(plugin.name.clone()) {
            true => plugin,
            false => unusable(plugin.name, format!("{file} lists this name twice")),
        };
        plugins.push(plugin);
    }
    Ok(Some(Marketplace {
        file,
        name: raw.name.map(|n| clip(&n)),
        plugins,
    }))
}

/// A plugin entry that cannot be used, shown with why.
fn unusable(name: String, problem: String) -> Plugin {
    Plugin {
        name: clip(&name),
        description: String::new(),
        version: None,
        source: PluginSource::Other(String::new()),
        skills: Vec::new(),
        problem: Some(problem),
    }
}

/// `s`, cut to [`MAX_TEXT`] characters: names and descriptions are shown
/// one per line.
fn clip(s: &str) -> String {
    s.chars().take(MAX_TEXT).collect()
}

/// One marketplace entry, with its manifest and skills read.
fn plugin(
    tree: &dyn Tree,
    base: Result<&str, &String>,
    e: RawEntry,
    skill_dirs: &[&str],
) -> Plugin {
    let mut p = Plugin {
        name: clip(&e.name),
        description: clip(e.description.as_deref().unwrap_or_default()),
        version: e.version.as_deref().and_then(version),
        source: PluginSource::Other(String::new()),
        skills: Vec::new(),
        problem: None,
    };
    if let Err(err) = skillpm_core::name::check_name(&e.name) {
        p.problem = Some(format!("its name is not one skillpm accepts: {err}"));
        return p;
    }
    let listed = e.skills;
    p.source = match source(base, e.source, listed.as_ref()) {
        Ok(s) => s,
        Err(why) => {
            p.problem = Some(why);
            return p;
        }
    };
    let root = match &p.source {
        PluginSource::Here(root) => root.clone(),
        // Its skills are read from that repository when it is added.
        PluginSource::Git { .. } => return p,
        PluginSource::Other(kind) => {
            p.problem = Some(format!(
                "its source is a `{}` package, which skillpm does not read",
                skillpm_core::text::sanitize(kind)
            ));
            return p;
        }
    };
    match skills_of(tree, &root, listed, skill_dirs) {
        Ok((manifest, skills)) => {
            if let Some(m) = manifest {
                p.version = m.version.as_deref().and_then(version).or(p.version);
                if p.description.is_empty() {
                    p.description = clip(m.description.as_deref().unwrap_or_default());
                }
            }
            p.skills = skills;
        }
        Err(why) => p.problem = Some(why),
    }
    if p.problem.is_none() && p.skills.is_empty() {
        p.problem = Some("it holds no skills (only agents, commands, hooks or servers)".into());
    }
    p
}

/// A declared version, when it is semver (`v1.2.3` read as `1.2.3`).
fn version(s: &str) -> Option<semver::Version> {
    semver::Version::parse(s.strip_prefix('v').unwrap_or(s)).ok()
}

/// Where an entry's `source` says the plugin is; a relative path is
/// below the marketplace's `pluginRoot`. Another repository's URL, ref,
/// commit and path are checked here, as skills.toml's would be.
fn source(
    base: Result<&str, &String>,
    raw: RawSource,
    listed: Option<&Paths>,
) -> Result<PluginSource, String> {
    let here = |p: &str| inside(base.map_err(String::clone)?, p).map(PluginSource::Here);
    match raw {
        RawSource::Path(p) => here(&p),
        RawSource::Object {
            source,
            repo,
            url,
            path,
            reference,
            sha,
        } => {
            let git = |url: String| -> Result<PluginSource, String> {
                let shown = || skillpm_core::text::sanitize(&url).into_owned();
                let url = GitUrl::parse(&url)
                    .map_err(|e| format!("its repository `{}`: {e}", shown()))?;
                let reference = match (sha, reference) {
                    (Some(sha), _) if is_full_commit(&sha) => Some(GitRef::Rev(sha)),
                    (Some(sha), _) => {
                        return Err(format!(
                            "its `sha` `{}` is not a full commit id",
                            skillpm_core::text::sanitize(&sha)
                        ))
                    }
                    (None, Some(r)) => {
                        check_ref(&r).map_err(|e| format!("its `ref`: {e}"))?;
                        Some(GitRef::Unspecified(r))
                    }
                    (None, None) => None,
                };
                let listed = listed.map(|l| match l {
                    Paths::One(p) => vec![p.clone()],
                    Paths::Many(ps) => ps.clone(),
                });
                Ok(PluginSource::Git {
                    url,
                    reference,
                    root: inside("", path.as_deref().unwrap_or_default())?,
                    listed,
                })
            };
            match (source.as_str(), repo, url) {
                ("github", Some(repo), _) => git(format!("https://github.com/{repo}.git")),
                // Codex writes its own repository as `{"source": "url",
                // "url": "./"}`.
                ("url" | "git-subdir", _, Some(u)) if is_relative(&u) => here(&u),
                ("url" | "git" | "git-subdir", _, Some(u)) => git(u),
                ("github" | "url" | "git" | "git-subdir", _, _) => {
                    Err(format!("its `{source}` source names no repository"))
                }
                (other, _, _) => Ok(PluginSource::Other(clip(other))),
            }
        }
    }
}

/// Whether a source URL is a path in this repository rather than a URL.
fn is_relative(u: &str) -> bool {
    u == "." || u.starts_with("./") || !(u.contains(':') || u.starts_with('/'))
}

/// `rel` below `root`, as a normalized path of the repository (`""` for
/// its root), or why it would leave the repository.
fn inside(root: &str, rel: &str) -> Result<String, String> {
    let show = || skillpm_core::text::sanitize(rel).into_owned();
    if rel.starts_with('/') || rel.contains(':') {
        return Err(format!("the path `{}` is not relative", show()));
    }
    let joined: Vec<&str> = root
        .split('/')
        .chain(rel.split('/'))
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let joined = joined.join("/");
    if joined.is_empty() {
        return Ok(joined);
    }
    check_subpath(&joined).map_err(|e| format!("the path `{}`: {e}", show()))?;
    Ok(joined)
}

/// The first symlink on the way to `path` (itself included), if any.
fn has_symlink(tree: &dyn Tree, path: &str) -> Option<String> {
    let mut at = 0;
    loop {
        let end = path[at..].find('/').map(|i| at + i).unwrap_or(path.len());
        if tree.kind(&path[..end]) == Some(PathKind::Symlink) {
            return Some(path[..end].to_string());
        }
        if end == path.len() {
            return None;
        }
        at = end + 1;
    }
}

/// The plugin manifest at `root` (if any) and the skill directories the
/// plugin holds: the paths its marketplace entry or manifest lists, else
/// every skill below `root/skills/`.
fn skills_of(
    tree: &dyn Tree,
    root: &str,
    listed: Option<Paths>,
    skill_dirs: &[&str],
) -> Result<(Option<RawPlugin>, Vec<String>), String> {
    if !root.is_empty() {
        if let Some(link) = has_symlink(tree, root) {
            return Err(format!("its directory goes through the symlink `{link}`"));
        }
        if tree.kind(root) != Some(PathKind::Dir) {
            return Err(format!("there is no directory `{root}` here"));
        }
    }
    let mut manifest = None;
    for file in PLUGIN_FILES {
        let path = match root.is_empty() {
            true => file.to_string(),
            false => format!("{root}/{file}"),
        };
        if let Some(m) = parse_file::<RawPlugin>(tree, &path).map_err(|e| e.to_string())? {
            manifest = Some(m);
            break;
        }
    }
    let mut own = manifest.as_mut().and_then(|m| m.skills.take());
    let copilot = manifest
        .as_mut()
        .and_then(|m| m.extensions.copilot.skills.take());
    let (paths, below) = match (listed.or(own.take()), copilot) {
        (Some(p), _) => (p.list(), root),
        (None, Some(p)) => (p.list(), ""),
        // Its own `skills/` directory, which a plugin of agents, hooks or
        // commands alone does not have: it then holds no skills.
        (None, None) => {
            let dir = inside(root, "skills")?;
            if let Some(link) = has_symlink(tree, &dir) {
                return Err(format!("its skills go through the symlink `{link}`"));
            }
            let held = skills_at(&dir, skill_dirs);
            return Ok((manifest, held.into_iter().map(str::to_string).collect()));
        }
    };
    if paths.len() > MAX_PLUGIN_SKILLS {
        return Err(format!(
            "it lists {} skill paths, over the limit of {MAX_PLUGIN_SKILLS}",
            paths.len()
        ));
    }
    let mut dirs = BTreeMap::new();
    for p in &paths {
        let dir = inside(below, p)?;
        if let Some(link) = has_symlink(tree, &dir) {
            return Err(format!(
                "the path `{dir}` goes through the symlink `{link}`"
            ));
        }
        let held = skills_at(&dir, skill_dirs);
        if held.is_empty() {
            return Err(format!("there is no skill at `{dir}`"));
        }
        dirs.extend(held.into_iter().map(|d| (d.to_string(), ())));
    }
    Ok((manifest, dirs.into_keys().collect()))
}

/// The skills at `dir`: the one it is, or every one below it (a plugin's
/// `skills/` directory, or a listed path that groups several).
fn skills_at<'a>(dir: &str, skill_dirs: &[&'a str]) -> Vec<&'a str> {
    if let Some(d) = skill_dirs.iter().find(|d| **d == dir) {
        return vec![d];
    }
    let prefix = format!("{dir}/");
    skill_dirs
        .iter()
        .filter(|d| dir.is_empty() || d.starts_with(&prefix))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A commit as a map of path → what is there.
    #[derive(Default)]
    struct Files(HashMap<String, (PathKind, Vec<u8>)>);

    impl Files {
        fn file(mut self, path: &str, body: &str) -> Self {
            let mut at = 0;
            while let Some(i) = path[at..].find('/') {
                let dir = &path[..at + i];
                self.0.insert(dir.into(), (PathKind::Dir, Vec::new()));
                at += i + 1;
            }
            self.0
                .insert(path.into(), (PathKind::File, body.as_bytes().to_vec()));
            self
        }
        fn link(mut self, path: &str) -> Self {
            self.0.insert(path.into(), (PathKind::Symlink, Vec::new()));
            self
        }
    }

    impl Tree for Files {
        fn kind(&self, path: &str) -> Option<PathKind> {
            self.0.get(path).map(|f| f.0)
        }
        fn read(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, MarketplaceError> {
            match self.0.get(path) {
                Some((PathKind::File, b)) if b.len() as u64 > max => {
                    Err(MarketplaceError::TooLarge {
                        file: path.into(),
                        max,
                    })
                }
                Some((PathKind::File, b)) => Ok(Some(b.clone())),
                _ => Ok(None),
            }
        }
    }

    fn only(tree: &Files, dirs: &[&str]) -> Vec<Plugin> {
        let mut m = read(tree, dirs).unwrap();
        assert_eq!(m.len(), 1);
        m.remove(0).plugins
    }

    #[test]
    fn listed_skills_relative_to_the_plugin_root() {
        let tree = Files::default()
            .file(
                ".claude-plugin/marketplace.json",
                r#"{"name":"m","owner":{"name":"x"},"plugins":[
                  {"name":"docs","source":"./","strict":false,"description":"D",
                   "skills":["./skills/b","./skills/a/"]},
                  {"name":"all","source":"./"},
                  {"name":"agents-only","source":"./agents"}]}"#,
            )
            .file("skills/a/SKILL.md", "")
            .file("skills/b/SKILL.md", "")
            .file(
                "agents/plugin.json",
                r#"{"name":"agents-only","agents":["./a.md"]}"#,
            );
        let p = only(&tree, &["skills/a", "skills/b", "skills/c"]);
        assert!(p[2]
            .problem
            .as_deref()
            .unwrap()
            .starts_with("it holds no skills"));
        assert_eq!(p[0].skills, ["skills/a", "skills/b"]);
        assert_eq!(p[0].description, "D");
        assert_eq!(p[1].skills, ["skills/a", "skills/b", "skills/c"]);
    }

    #[test]
    fn plugin_manifests_give_versions_and_copilot_paths_are_from_the_root() {
        let tree = Files::default()
            .file(
                ".github/plugin/marketplace.json",
                r#"{"name":"c","plugins":[{"name":"p","source":"plugins/p","version":"0.1.0"},
                  {"name":"ext","source":{"source":"github","repo":"o/r","ref":"v1"}}]}"#,
            )
            .file(
                "plugins/p/plugin.json",
                r#"{"name":"p","version":"1.2.0","extensions":{"com.github.awesome-copilot":
                   {"skills":["./skills/x/"],"agents":["./a.md"]}}}"#,
            )
            .file("skills/x/SKILL.md", "");
        let p = only(&tree, &["skills/x"]);
        assert_eq!(p[0].skills, ["skills/x"]);
        assert_eq!(p[0].version, Some(semver::Version::new(1, 2, 0)));
        assert!(
            matches!(&p[1].source, PluginSource::Git { url, reference: Some(r), .. }
            if url.redacted() == "https://github.com/o/r.git" && r.as_str() == "v1")
        );
        assert_eq!(p[1].problem, None);
    }

    /// Another repository's URL, ref, commit and path are checked as
    /// skills.toml's are: a bad one is that plugin's problem.
    #[test]
    fn other_repositories_are_checked_like_skills_toml() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let tree = Files::default().file(
            ".claude-plugin/marketplace.json",
            &format!(
                r#"{{"plugins":[
              {{"name":"ok","source":{{"source":"url","url":"https://h/r.git","sha":"{sha}","ref":"x"}}}},
              {{"name":"ext","source":{{"source":"url","url":"ext::sh -c x"}}}},
              {{"name":"dash","source":{{"source":"git","url":"https://h/r.git","ref":"--upload-pack=x"}}}},
              {{"name":"short","source":{{"source":"github","repo":"o/r","sha":"abc"}}}},
              {{"name":"up","source":{{"source":"git-subdir","url":"https://h/r.git","path":"../x"}}}}]}}"#
            ),
        );
        let p = only(&tree, &[]);
        assert!(
            matches!(&p[0].source, PluginSource::Git { reference: Some(GitRef::Rev(r)), .. } if r == sha),
            "{:?}",
            p[0]
        );
        let why: Vec<&str> = p[1..]
            .iter()
            .map(|p| p.problem.as_deref().unwrap())
            .collect();
        assert!(why[0].starts_with("its repository"), "{}", why[0]);
        assert!(why[1].starts_with("its `ref`"), "{}", why[1]);
        assert!(why[2].contains("not a full commit"), "{}", why[2]);
        assert!(why[3].contains("`..`"), "{}", why[3]);
    }

    #[test]
    fn a_plugin_in_its_own_repository_is_found_by_its_manifest() {
        let tree = Files::default()
            .file(
                "plugins/p/.claude-plugin/plugin.json",
                r#"{"name":"p","version":"2.1.0"}"#,
            )
            .file("plugins/p/skills/a/SKILL.md", "")
            .file("plugin.json", r#"{"name":"other","version":"9.0.0"}"#);
        let held = held(&tree, "plugins/p", None, &["plugins/p/skills/a", "x"]).unwrap();
        assert_eq!(held.skills, ["plugins/p/skills/a"]);
        assert_eq!(held.version, Some(semver::Version::new(2, 1, 0)));
        let v = |dir, name| declared_above(&tree, dir, name);
        assert_eq!(
            v("plugins/p/skills/a", "p"),
            Some(semver::Version::new(2, 1, 0))
        );
        assert_eq!(
            v("plugins/p/skills/a", "other"),
            Some(semver::Version::new(9, 0, 0))
        );
        assert_eq!(v("plugins/p/skills/a", "none"), None);
    }

    #[test]
    fn paths_leaving_the_repository_are_refused() {
        let tree = Files::default()
            .file(
                ".claude-plugin/marketplace.json",
                r#"{"plugins":[{"name":"up","source":"../x"},
                  {"name":"abs","source":"/etc"},
                  {"name":"deep","source":"./","skills":["./skills/../../x"]},
                  {"name":"link","source":"./plugins/l"},
                  {"name":"bad name!","source":"./"},
                  {"name":7}]}"#,
            )
            .file("skills/a/SKILL.md", "")
            .link("plugins/l");
        let p = only(&tree, &["skills/a"]);
        let why: Vec<&str> = p.iter().map(|p| p.problem.as_deref().unwrap()).collect();
        assert!(why[0].contains("`..`"), "{}", why[0]);
        assert!(why[1].contains("not relative"), "{}", why[1]);
        assert!(why[2].contains("`..`"), "{}", why[2]);
        assert!(why[3].contains("symlink `plugins/l`"), "{}", why[3]);
        assert!(why[4].contains("name"), "{}", why[4]);
        assert!(why[5].contains("invalid type"), "{}", why[5]);
    }

    #[test]
    fn bad_json_and_oversized_files_fail_whole() {
        let tree = Files::default().file(".claude-plugin/marketplace.json", "{\"plugins\": [");
        let err = read(&tree, &[]).unwrap_err().to_string();
        assert!(err.starts_with(".claude-plugin/marketplace.json is not valid JSON"));
        let big = format!("{{\"x\":\"{}\"}}", "a".repeat(MAX_MANIFEST_BYTES as usize));
        let tree = Files::default().file(".github/plugin/marketplace.json", &big);
        assert!(matches!(
            read(&tree, &[]),
            Err(MarketplaceError::TooLarge { .. })
        ));
    }
}
