//! Which registry `add` points its registry entries at, and the
//! `[registries]` entry it records in skills.toml for that.

use crate::error::Result;
use crate::project::manifest::{Manifest, DEFAULT_REGISTRY};
use crate::project::spec::RegistryChoice;
use crate::project::{Project, ProjectError, RegistryFrom};
use crate::source::registry::credentials;

/// Which registry `add` writes on its registry entries, and the
/// `[registries]` entry it adds to skills.toml for that, if any.
#[derive(Debug, Default)]
pub(super) struct RegistryChoiceFor {
    /// The entries' `registry` key; `None` is the default registry.
    pub(super) key: Option<String>,
    /// `[registries] NAME = URL` to write with the entries.
    pub(super) record: Option<(String, String)>,
}

impl RegistryChoiceFor {
    /// `--registry NAME` must be listed under `[registries]` (or be
    /// `default`), as cargo's `--registry` must be configured. A
    /// `--registry URL` is recorded by the name it is listed under, else
    /// under a name made from its host, so the entry keeps naming it as
    /// cargo's `registry = "NAME"` does. Without the flag, a default
    /// registry known only from `SKILLPM_REGISTRY` becomes
    /// `[registries] default`, so a teammate without the variable
    /// resolves against the same registry.
    pub(super) fn decide(
        choice: Option<&RegistryChoice>,
        manifest: &Manifest,
        project: &Project,
    ) -> Result<RegistryChoiceFor> {
        let named = |name: &str| match name {
            DEFAULT_REGISTRY => None,
            n => Some(n.to_string()),
        };
        match choice {
            None => {
                // A malformed SKILLPM_REGISTRY is reported by the
                // resolution that needs it, not by an add of a git skill.
                let record = match project.default_registry(manifest) {
                    Ok((url, RegistryFrom::Environment))
                        if !manifest.registries.contains_key(DEFAULT_REGISTRY) =>
                    {
                        Some((DEFAULT_REGISTRY.to_string(), url))
                    }
                    _ => None,
                };
                Ok(RegistryChoiceFor { key: None, record })
            }
            Some(RegistryChoice::Name(n)) => {
                if n != DEFAULT_REGISTRY && !manifest.registries.contains_key(n) {
                    return Err(ProjectError::UnknownRegistry(n.clone()).into());
                }
                Ok(RegistryChoiceFor {
                    key: named(n),
                    record: None,
                })
            }
            Some(RegistryChoice::Url(url)) => {
                let want = credentials::registry_key(url);
                let listed = manifest
                    .registries
                    .iter()
                    .find(|(_, u)| credentials::registry_key(u) == want);
                if let Some((name, _)) = listed {
                    return Ok(RegistryChoiceFor {
                        key: named(name),
                        record: None,
                    });
                }
                let name = name_for_url(url, manifest);
                Ok(RegistryChoiceFor {
                    key: Some(name.clone()),
                    record: Some((name, url.clone())),
                })
            }
        }
    }
}

/// A `[registries]` name for `url`: its host with `-` for `.` and `:`,
/// then its port if it has one (`skills.acme.internal`,
/// `127-0-0-1-7878`), with `-2`, `-3`, ... when the name is taken by
/// another URL. Never `default`: that would make every plain entry
/// resolve there.
fn name_for_url(url: &str, manifest: &Manifest) -> String {
    let parsed = url::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or("registry");
    let mut base: String = host
        .trim_matches(['[', ']'])
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect::<String>()
        .trim_matches('-')
        .to_string();
    if base.is_empty() {
        base = "registry".into();
    }
    if let Some(port) = parsed.as_ref().and_then(url::Url::port) {
        base.push_str(&format!("-{port}"));
    }
    let taken = |n: &str| n == DEFAULT_REGISTRY || manifest.registries.contains_key(n);
    let mut name = base.clone();
    let mut n = 2;
    while taken(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    /// another URL, or `default`, gets a number instead.
    #[test]
    fn registry_names_come_from_host_and_port() {
        let mut m = Manifest::default();
        assert_eq!(
            name_for_url("https://Skills.Acme.internal/api", &m),
            "skills-acme-internal"
        );
        assert_eq!(name_for_url("http://127.0.0.1:7878", &m), "127-0-0-1-7878");
        assert_eq!(name_for_url("http://[::1]:8080", &m), "1-8080");
        assert_eq!(name_for_url("http://default", &m), "default-2");
        m.registries
            .insert("skills-acme-internal".into(), "https://x".into());
        assert_eq!(
            name_for_url("https://skills.acme.internal/other", &m),
            "skills-acme-internal-2"
        );
    }
}
