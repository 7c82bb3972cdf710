//! The index a site publishes: `index.json` parsed, each entry checked
//! (name, URL, digest, legacy file list), unusable entries skipped with
//! a reason.

use crate::project::spec::{self, WellKnownUrl};
use crate::source::chain;
use skillpm_core::checksum::Checksum;
use skillpm_core::name::SkillName;
use skillpm_core::text::sanitize;
use std::collections::HashSet;

/// Most files a legacy `files` entry may list.
const MAX_FILES: usize = 1000;

/// What a skill of an index is served as.
#[derive(Debug, Clone)]
pub enum Artifact {
    /// One file with a digest: a `SKILL.md` (type `skill-md`) or a
    /// `.tar.gz` / `.zip` of the skill directory (type `archive`). Which
    /// one is decided by the verified bytes themselves (see
    /// [`Format::sniff`]), so a lock needs no type and a server may name
    /// its URLs as it likes.
    Single { url: WellKnownUrl, digest: Checksum },
    /// Legacy: files under `dir`, each with its digest when the index
    /// gives one.
    Files {
        dir: WellKnownUrl,
        files: Vec<(String, Option<Checksum>)>,
    },
}

/// One usable skill of an index.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: SkillName,
    pub description: String,
    pub artifact: Artifact,
}

/// A fetched and checked index.
#[derive(Debug, Clone)]
pub struct Index {
    pub url: WellKnownUrl,
    /// Sorted by name, unique.
    pub skills: Vec<Listed>,
    /// Entries that could not be used, one sanitized line each.
    pub skipped: Vec<String>,
}

impl Index {
    pub fn get(&self, name: &SkillName) -> Option<&Listed> {
        self.skills.iter().find(|s| s.name == *name)
    }
}

#[derive(serde::Deserialize)]
struct RawIndex {
    #[serde(default, rename = "$schema")]
    schema: Option<String>,
    skills: Vec<RawSkill>,
}

/// The index schemas this client reads: any 0.x discovery schema (the
/// legacy v0.1.0 index has none).
fn known_schema(s: &str) -> bool {
    s.strip_prefix("https://schemas.agentskills.io/discovery/")
        .and_then(|rest| rest.split('/').next())
        .is_some_and(|v| v.starts_with("0."))
}

#[derive(serde::Deserialize)]
struct RawSkill {
    #[serde(default)]
    name: serde_json::Value,
    #[serde(default)]
    description: serde_json::Value,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    files: Option<Vec<RawFile>>,
    #[serde(default)]
    package: Option<RawPackage>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RawFile {
    Path(String),
    WithDigest {
        path: String,
        #[serde(default)]
        digest: Option<String>,
    },
}

#[derive(serde::Deserialize)]
struct RawPackage {
    url: String,
    digest: String,
}

/// Why an index document is refused as a whole.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("not a skills index")]
    NotAnIndex(#[source] serde_json::Error),
    /// The schema, sanitized.
    #[error("unsupported index schema {0:?}; upgrade skillpm")]
    Schema(String),
}

/// Why one entry of an index is skipped; every text from the index is
/// sanitized.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("no `{0}`")]
    Missing(&'static str),
    #[error("invalid name")]
    Name(#[source] skillpm_core::name::NameError),
    #[error("url {0:?}")]
    Url(String, #[source] url::ParseError),
    #[error(transparent)]
    Refused(#[from] crate::project::spec::SpecError),
    #[error("bad digest")]
    Digest(#[source] skillpm_core::checksum::ChecksumError),
    #[error("unknown type {0:?}")]
    Kind(String),
    #[error("neither `type` and `url` nor `files`")]
    Shape,
    #[error("more than {MAX_FILES} files")]
    TooManyFiles,
    #[error("unsafe file path {0:?}")]
    UnsafePath(String),
    #[error("`files` has no SKILL.md")]
    NoSkillMd,
}

/// Parses an index body fetched from `url`; bad entries are skipped with
/// a reason, a bad document is an error.
pub fn parse_index(url: &WellKnownUrl, body: &[u8]) -> Result<Index, IndexError> {
    let raw: RawIndex = serde_json::from_slice(body).map_err(IndexError::NotAnIndex)?;
    if let Some(schema) = raw.schema.as_deref().filter(|s| !known_schema(s)) {
        return Err(IndexError::Schema(sanitize(schema).into_owned()));
    }
    let mut skills: Vec<Listed> = Vec::new();
    let mut skipped = Vec::new();
    // Names seen so far: a duplicate is found in one lookup, not by
    // comparing every entry with every earlier one (quadratic in a
    // hostile index's length).
    let mut names: HashSet<SkillName> = HashSet::new();
    for entry in raw.skills {
        let shown = entry
            .name
            .as_str()
            .map(|n| sanitize(n).chars().take(64).collect::<String>())
            .unwrap_or_else(|| "(no name)".into());
        match listed(url, entry) {
            Ok(l) if !names.insert(l.name.clone()) => {
                skipped.push(format!("{shown}: listed more than once"))
            }
            Ok(l) => skills.push(l),
            Err(why) => skipped.push(format!("{shown}: {}", chain(&why))),
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Index {
        url: url.clone(),
        skills,
        skipped,
    })
}

/// Resolves `rel` against `base` (RFC 3986) and checks the result may be
/// fetched coming from `base`.
pub(super) fn join(base: &WellKnownUrl, rel: &str) -> Result<WellKnownUrl, EntryError> {
    let u = base
        .as_url()
        .join(rel)
        .map_err(|e| EntryError::Url(sanitize(rel).into_owned(), e))?;
    Ok(base.allows(u)?)
}

fn digest(s: Option<&str>) -> Result<Checksum, EntryError> {
    let s = s.ok_or(EntryError::Missing("digest"))?;
    Checksum::parse(s).map_err(EntryError::Digest)
}

fn listed(index: &WellKnownUrl, e: RawSkill) -> Result<Listed, EntryError> {
    let raw_name = e.name.as_str().ok_or(EntryError::Missing("name"))?;
    let name = SkillName::new(raw_name).map_err(EntryError::Name)?;
    let description = e.description.as_str().unwrap_or("").to_string();
    let artifact = match (e.kind.as_deref(), &e.url, &e.package, &e.files) {
        (Some("skill-md" | "archive"), Some(u), _, _) => Artifact::Single {
            url: join(index, u)?,
            digest: digest(e.digest.as_deref())?,
        },
        (Some("skill-md" | "archive"), None, _, _) => return Err(EntryError::Missing("url")),
        (Some(other), _, _, _) => return Err(EntryError::Kind(sanitize(other).into_owned())),
        (None, _, Some(p), _) => Artifact::Single {
            url: join(index, &p.url)?,
            digest: digest(Some(&p.digest))?,
        },
        (None, _, None, Some(files)) => files_artifact(index, &name, files)?,
        (None, _, None, None) => return Err(EntryError::Shape),
    };
    Ok(Listed {
        name,
        description,
        artifact,
    })
}

fn files_artifact(
    index: &WellKnownUrl,
    name: &SkillName,
    files: &[RawFile],
) -> Result<Artifact, EntryError> {
    if files.len() > MAX_FILES {
        return Err(EntryError::TooManyFiles);
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let (path, d) = match f {
            RawFile::Path(p) => (p.as_str(), None),
            RawFile::WithDigest { path, digest: d } => (path.as_str(), d.as_deref()),
        };
        // The RFC's path rules: relative, '/'-separated, printable ASCII
        // without `\ ? # [ ]`, no `..`.
        let printable = path
            .chars()
            .all(|c| (' '..='~').contains(&c) && !"\\?#[]".contains(c));
        if !printable || spec::check_subpath(path).is_err() || path.split('/').any(str::is_empty) {
            return Err(EntryError::UnsafePath(sanitize(path).into_owned()));
        }
        let d = d.map(|d| digest(Some(d))).transpose()?;
        out.push((path.to_string(), d));
    }
    if !out.iter().any(|(p, _)| p == "SKILL.md" || p == "skill.md") {
        return Err(EntryError::NoSkillMd);
    }
    Ok(Artifact::Files {
        dir: join(index, &format!("{name}/"))?,
        files: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(n: usize) -> Vec<u8> {
        let entries: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"name":"s{i}","type":"skill-md","url":"s{i}/SKILL.md","digest":"sha256:{}"}}"#,
                    "0".repeat(64)
                )
            })
            .collect();
        format!(r#"{{"skills":[{}]}}"#, entries.join(",")).into_bytes()
    }

    /// A hostile index may list as many entries as its size cap allows:
    /// the work grows with their number, not with its square. Four times
    /// the entries cost about four times as long; comparing each with
    /// every earlier one cost sixteen.
    #[test]
    fn parsing_an_index_is_linear_in_its_entries() {
        let url = WellKnownUrl::parse("https://skills.example/.well-known/agent-skills/index.json")
            .unwrap();
        let (small, large) = (index_of(4_000), index_of(16_000));
        let time = |body: &[u8]| {
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let ix = parse_index(&url, body).unwrap();
                    assert!(ix.skipped.is_empty());
                    start.elapsed()
                })
                .min()
                .unwrap()
        };
        let ratio = time(&large).as_secs_f64() / time(&small).as_secs_f64();
        assert!(
            ratio < 9.0,
            "16 000 entries took {ratio:.1}x as long as 4 000"
        );
        let dup = br#"{"skills":[{"name":"a","type":"skill-md","url":"a/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"},{"name":"a","type":"skill-md","url":"b/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}"#;
        let ix = parse_index(&url, dup).unwrap();
        assert_eq!(ix.skills.len(), 1);
        assert_eq!(ix.skipped, ["a: listed more than once"]);
    }
}
