//! Microsoft APM's `apm.yml`, as far as a skill's dependencies go: the
//! strings of `dependencies.apm`, each a git repository (`owner/repo`,
//! `host/owner/repo`, an `https://` URL, with a sub-path and `#ref`) or a
//! sibling (`./dir`, `../dir`). Everything else in the file (`mcp`
//! servers, scripts, `devDependencies`, object-form entries) is APM's
//! own and left alone; an entry that names no repository is an error.
//! A dependency's name is the last part of its path, else its repository:
//! APM's entries carry none, and the fetched skill must have it.

use super::{PackageManifest, PackageManifestError, MAX_DEPENDENCIES};
use crate::project::manifest::Dependency;
use crate::project::spec::{check_subpath, GitHubShorthand, GitRef, GitUrl};
use serde_json::Value;
use skillpm_core::name::SkillName;

pub(super) fn read(
    text: &str,
    file: &str,
    github_base: &str,
) -> Result<PackageManifest, PackageManifestError> {
    let err = |line: usize, message: String| PackageManifestError::Apm {
        file: file.to_string(),
        line,
        message,
    };
    let doc = skillpm_core::skill::parse_yaml_document(text).map_err(|(l, m)| err(l, m))?;
    let entries = doc
        .get("dependencies")
        .and_then(|d| d.get("apm"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if entries.len() > MAX_DEPENDENCIES {
        return Err(err(1, format!("more than {MAX_DEPENDENCIES} dependencies")));
    }
    let mut out = PackageManifest::default();
    for e in entries {
        let Some(s) = e.as_str() else {
            continue;
        };
        let line = text
            .lines()
            .position(|l| l.contains(s))
            .map_or(1, |i| i + 1);
        let dep = entry(s, github_base).map_err(|why| err(line, format!("`{s}`: {why}")))?;
        out.dependencies.push(dep);
    }
    Ok(out)
}

/// One `dependencies.apm` string as a named dependency.
fn entry(s: &str, github_base: &str) -> Result<(SkillName, Dependency), String> {
    let (body, reference) = match s.split_once('#') {
        Some((b, r)) if !r.is_empty() => (b, Some(GitRef::Unspecified(r.to_string()))),
        _ => (s, None),
    };
    let name_of = |last: &str| {
        let last = last.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let last = last.strip_suffix(".git").unwrap_or(last);
        SkillName::new(last).map_err(|e| format!("`{last}` is not a skill name: {e}"))
    };
    if body.starts_with("./") || body.starts_with("../") {
        return Ok((
            name_of(body)?,
            Dependency::Path {
                path: body.to_string(),
            },
        ));
    }
    let (url, path) = match body.strip_prefix("https://") {
        // `https://host/owner/repo.git` alone: a sub-path needs the
        // shorthand form, whose parts APM and skillpm read alike.
        Some(_) => (GitUrl::parse(body).map_err(|e| e.to_string())?, None),
        None => {
            let mut parts = body.splitn(2, '/');
            let first = parts.next().unwrap_or("");
            let (base, rest) = match first.contains('.') {
                true => (format!("https://{first}"), parts.next().unwrap_or("")),
                false => (github_base.to_string(), body),
            };
            let sh = GitHubShorthand::parse(rest).map_err(|e| e.to_string())?;
            if let Some(p) = &sh.path {
                check_subpath(p).map_err(|e| e.to_string())?;
            }
            (sh.url(&base).map_err(|e| e.to_string())?, sh.path)
        }
    };
    let name = match &path {
        Some(p) => name_of(p)?,
        None => name_of(url.redacted().as_str())?,
    };
    Ok((
        name,
        Dependency::Git {
            url,
            reference,
            path,
            plugin: None,
            plugin_version: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apm_entries_become_named_git_and_sibling_dependencies() {
        let text = "name: review\nversion: 1.0.0\ndependencies:\n  apm:\n    \
                    - microsoft/apm-sample-package#v1.0.0\n    \
                    - github/awesome-copilot/skills/review-and-refactor\n    \
                    - gitlab.com/acme/coding-standards\n    \
                    - https://git.example.com/acme/lint-rules.git\n    \
                    - ../helper\n    \
                    - { git: https://example.com/x.git }\n  \
                    mcp:\n    - io.github.github/github-mcp-server\n";
        let m = read(text, "apm.yml", "https://github.com").unwrap();
        let shown: Vec<String> = m
            .dependencies
            .iter()
            .map(|(n, d)| format!("{n} {}", d.origin()))
            .collect();
        assert_eq!(
            shown,
            [
                "apm-sample-package git+https://github.com/microsoft/apm-sample-package.git",
                "review-and-refactor git+https://github.com/github/awesome-copilot.git (skills/review-and-refactor)",
                "coding-standards git+https://gitlab.com/acme/coding-standards.git",
                "lint-rules git+https://git.example.com/acme/lint-rules.git",
                "helper ../helper",
            ]
        );
        assert!(matches!(
            &m.dependencies[0].1,
            Dependency::Git { reference: Some(GitRef::Unspecified(r)), .. } if r == "v1.0.0"
        ));
    }

    #[test]
    fn an_entry_that_names_no_repository_is_refused_with_its_line() {
        let text = "dependencies:\n  apm:\n    - just-a-name\n";
        let e = read(text, "apm.yml", "https://github.com").unwrap_err();
        assert!(e.to_string().starts_with("apm.yml:3: `just-a-name`"), "{e}");
        let e = read("dependencies: [", "apm.yml", "https://github.com").unwrap_err();
        assert!(e.to_string().starts_with("apm.yml:"), "{e}");
    }
}
