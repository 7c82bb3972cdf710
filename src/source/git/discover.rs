//! Finding the skills of a repository for `add` without `--path`: every
//! directory holding a `SKILL.md`, but a nested skill ships with its
//! parent.

use super::export;
use super::pack::{packed_with, shown, Packed};
use crate::parallel::Workers;
use crate::project::spec::GitUrl;
use skillpm_core::archive::Limits;
use skillpm_core::name::SkillName;
use skillpm_core::skill::SkillDoc;
use std::collections::HashSet;

/// A skill found in a repository by [`super::GitSource::discover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// Its directory in the repository; `None` for the repository root.
    pub dir: Option<String>,
    /// Its path below the discovery root it sits in (`pdf`,
    /// `document-skills/pdf`), as `status` would show it.
    pub command: String,
    /// The package name: frontmatter `name`, else the directory name.
    pub name: String,
    pub description: String,
    /// Why it cannot be installed (its `SKILL.md` does not parse, or its
    /// name is not one the spec allows); `None` for a skill that can.
    pub problem: Option<String>,
}

/// Directories that hold skills in the layouts agents read, longest
/// first: a skill's command is its path below the first that matches.
const SKILL_ROOTS: [&str; 4] = [
    ".claude/skills/",
    ".agents/skills/",
    ".github/skills/",
    "skills/",
];

/// A listing of a whole repository may be larger than one skill's tree.
pub(super) fn listing_limits() -> Limits {
    Limits {
        max_entries: 200_000,
        max_path_len: 4096,
        ..Limits::default()
    }
}

/// The command a skill at `dir` gets: its path below the discovery root
/// it sits in, with a leading dot-directory (openai's `.curated/`,
/// `.system/`) dropped as well.
fn command_of(dir: &str) -> String {
    let mut rest = dir;
    for root in SKILL_ROOTS {
        if let Some(r) = dir.strip_prefix(root) {
            rest = r;
            break;
        }
    }
    match rest.split_once('/') {
        Some((first, tail)) if first.starts_with('.') && !tail.is_empty() => tail.to_string(),
        _ => rest.to_string(),
    }
}

/// Which of the directories holding a `SKILL.md` (sorted by path; the
/// root is `""`) are the skills a user can pick, by index: the root alone
/// if it is a skill; otherwise every one that is not inside another (a
/// nested skill ships with its parent).
fn top_dirs(dirs: &[&str]) -> Vec<usize> {
    if let Some(root) = dirs.iter().position(|d| d.is_empty()) {
        return vec![root];
    }
    let mut tops = Vec::new();
    let mut top_dirs: HashSet<&str> = HashSet::new();
    // Sorted by path, so a parent comes before everything below it; each
    // directory's ancestors are looked up, not every top so far.
    for (i, dir) in dirs.iter().enumerate() {
        let nested = dir
            .match_indices('/')
            .any(|(at, _)| top_dirs.contains(&dir[..at]));
        if !nested {
            top_dirs.insert(dir);
            tops.push(i);
        }
    }
    tops
}

/// The skill directory `dir` names in a listing (`None` for the root).
fn skill_dir(dir: &str) -> Option<String> {
    (!dir.is_empty()).then(|| dir.to_string())
}

/// The directories of the skills a user can pick in the shared commit
/// ([`top_dirs`]; `""` for the root), without reading any `SKILL.md`.
pub(super) fn top_skill_dirs(
    shared: &export::Shared,
    url: &GitUrl,
) -> Result<Vec<String>, crate::source::SourceError> {
    let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
    let dirs = export::skill_dirs(shared, url, &listing_limits(), max)?;
    let names: Vec<&str> = dirs.iter().map(String::as_str).collect();
    Ok(top_dirs(&names)
        .into_iter()
        .map(|i| dirs[i].clone())
        .collect())
}

/// Turns the `SKILL.md` files of a tree into the skills a user can pick
/// ([`top_dirs`]).
pub(super) fn found_skills(workers: &Workers, files: Vec<(String, Vec<u8>)>) -> Vec<FoundSkill> {
    let dirs: Vec<&str> = files.iter().map(|(d, _)| d.as_str()).collect();
    let tops: Vec<&(String, Vec<u8>)> = top_dirs(&dirs).into_iter().map(|i| &files[i]).collect();
    // A thousand frontmatters to parse: spread over the cores.
    let mut out = workers.chunked(&tops, 64, |part| {
        part.iter()
            .map(|(d, body)| match skillpm_core::skill::parse(body) {
                Ok(doc) => found(skill_dir(d), Some(&doc)),
                Err(e) => FoundSkill {
                    problem: Some(format!("SKILL.md: {}", e.detail())),
                    ..found(skill_dir(d), None)
                },
            })
            .collect()
    });
    out.sort_by(found_order);
    out
}

/// The order `add` lists skills in: by command, then directory.
fn found_order(a: &FoundSkill, b: &FoundSkill) -> std::cmp::Ordering {
    a.command.cmp(&b.command).then(a.dir.cmp(&b.dir))
}

/// Every skill of the shared commit found ([`top_dirs`]) and packed, in
/// one pass, for `add --all`, which packs each of them anyway: each tree
/// is read once and its `SKILL.md` parsed once, for the listing and the
/// lock both, where listing the skills and then resolving them read and
/// parsed every `SKILL.md` twice. A skill whose `SKILL.md` does not
/// identify it is found unpacked: resolving it says why, as before.
/// `None` when a tree cannot be read whole (over a cap): the skills are
/// then found as for a pick, and that one is refused when resolved.
pub(super) fn found_packed(
    workers: &Workers,
    shared: &export::Shared,
    url: &GitUrl,
    commit: &str,
    limits: &Limits,
) -> Option<Vec<(FoundSkill, Option<Packed>)>> {
    let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
    let dirs = export::skill_dirs(shared, url, &listing_limits(), max).ok()?;
    let names: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let tops: Vec<Option<String>> = top_dirs(&names)
        .into_iter()
        .map(|i| skill_dir(&dirs[i]))
        .collect();
    let done = workers.each(&tops, 2, |dir| {
        let sub = dir.as_deref();
        let entries = export::tree(shared, url, sub, limits).ok()?;
        let tree_id = shared.tree_id(url, sub).ok()?.to_string();
        let doc = crate::source::verify::entries_doc(&entries);
        let mut found = found(dir.clone(), doc.as_ref().and_then(|d| d.as_ref().ok()));
        if let Some(Err(e)) = &doc {
            found.problem = Some(format!("SKILL.md: {}", e.detail()));
        }
        // A skill that cannot be packed here (its name comes from its
        // directory) is packed when resolved, which says why if it fails.
        let packed = packed_with(entries, doc, &shown(url, commit, sub), tree_id);
        Some((found, packed.ok()))
    });
    let mut done: Vec<(FoundSkill, Option<Packed>)> = done.into_iter().collect::<Option<_>>()?;
    done.sort_by(|a, b| found_order(&a.0, &b.0));
    Some(done)
}

/// The skill at `dir`, described by its parsed `SKILL.md` (`None` when it
/// does not parse: named after its directory, undescribed).
fn found(dir: Option<String>, doc: Option<&SkillDoc>) -> FoundSkill {
    let base = dir
        .as_deref()
        .map(|d| d.rsplit('/').next().unwrap_or(d).to_string())
        .unwrap_or_default();
    let name = doc
        .and_then(|d| d.name().map(str::to_string))
        .unwrap_or(base);
    let problem = SkillName::new(&name).err().map(|e| {
        format!(
            "its name `{}` is not a valid skill name: {e}",
            name.escape_debug()
        )
    });
    FoundSkill {
        command: dir.as_deref().map(command_of).unwrap_or_default(),
        name,
        description: doc.map(|d| d.description().to_string()).unwrap_or_default(),
        dir,
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::git::pack::pack_commit;

    #[test]
    fn commands_drop_discovery_roots_and_dot_dirs() {
        assert_eq!(command_of("skills/pdf"), "pdf");
        assert_eq!(command_of(".claude/skills/a/b"), "a/b");
        assert_eq!(command_of("skills/.curated/gh-fix-ci"), "gh-fix-ci");
        assert_eq!(command_of(".curated/x"), "x");
        assert_eq!(command_of("document-skills/pdf"), "document-skills/pdf");
    }

    #[test]
    fn nested_skills_ship_with_their_parent() {
        let md = |n: &str| format!("---\nname: {n}\ndescription: d {n}\n---\n").into_bytes();
        let files = vec![
            ("skills/a".to_string(), md("a")),
            ("skills/a-b".to_string(), md("a-b")),
            ("skills/a/sub".to_string(), md("sub")),
            ("skills/a/sub/deeper".to_string(), md("deeper")),
            ("skills/b".to_string(), md("bee")),
        ];
        let found = found_skills(&Workers::new(), files);
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "a-b", "bee"]);
        let root = found_skills(
            &Workers::new(),
            vec![(String::new(), md("r")), ("x".into(), md("x"))],
        );
        assert_eq!(root.len(), 1);
        assert_eq!(root[0].dir, None);
    }

    /// A commit of a real repository, made by `git`, with `files` in it
    /// and the symlinks `links` (path, target).
    fn repository_with(
        files: &[(&str, &str)],
        links: &[(&str, &str)],
    ) -> (tempfile::TempDir, GitUrl, String) {
        let work = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = work.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for (path, target) in links {
            std::os::unix::fs::symlink(target, work.path().join(path)).unwrap();
        }
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &["commit", "-qm", "skills"],
        ] {
            export::tests::git(work.path(), args);
        }
        let commit = export::tests::head_of(work.path());
        let url = GitUrl::parse(&format!("file://{}", work.path().display())).unwrap();
        (work, url, commit)
    }

    /// `add --all` finds and packs every skill in one pass; what it finds
    /// and packs must be exactly what listing the skills and then packing
    /// each one the usual way gives, skills that cannot be packed
    /// included (found, not packed).
    #[test]
    fn finding_and_packing_in_one_pass_matches_doing_each_apart() {
        let md = |n: &str| format!("---\nname: {n}\ndescription: about {n}\n---\nbody\n");
        let (work, url, commit) = repository_with(
            &[
                ("skills/a/SKILL.md", &md("a")),
                ("skills/a/scripts/run.sh", "echo a\n"),
                ("skills/a/sub/SKILL.md", &md("nested")),
                ("skills/b/skill.md", &md("bee")),
                ("skills/c/SKILL.md", "---\ndescription: no name\n---\n"),
                ("skills/d/SKILL.md", "---\nname: [not, closed\n"),
                ("README.md", "not a skill\n"),
            ],
            &[],
        );
        let limits = Limits::default();
        let dir = work.path().join(".git");
        let shared =
            export::Shared::new(&dir, &url, &commit, &listing_limits(), &Default::default())
                .unwrap();
        let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
        let files =
            export::skill_files(&Workers::new(), &shared, &url, &listing_limits(), max).unwrap();
        let apart = found_skills(&Workers::new(), files);
        let one_pass = found_packed(&Workers::new(), &shared, &url, &commit, &limits).unwrap();
        let found: Vec<FoundSkill> = one_pass.iter().map(|(f, _)| f.clone()).collect();
        assert_eq!(found, apart);
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "bee", "c", "d"]);
        for (f, packed) in &one_pass {
            let alone = pack_commit(&shared, &url, &commit, f.dir.as_deref(), &limits);
            match (packed, alone) {
                (Some(p), Ok(a)) => {
                    assert_eq!((&p.name, &p.version), (&a.name, &a.version));
                    assert_eq!(p.tree.checksum(), a.tree.checksum());
                    assert_eq!(p.tree_id, a.tree_id);
                }
                (None, Err(_)) => {}
                (p, a) => panic!(
                    "{}: one pass {:?}, apart {:?}",
                    f.name,
                    p.is_some(),
                    a.is_ok()
                ),
            }
        }
        let packed: Vec<bool> = one_pass.iter().map(|(_, p)| p.is_some()).collect();
        assert_eq!(packed, [true, true, false, false]);
    }

    /// A tree that cannot be read whole (a symlink in it) makes the one
    /// pass give up: the skills are then listed the usual way.
    #[test]
    fn a_tree_that_cannot_be_packed_leaves_finding_to_the_listing() {
        let (work, url, commit) = repository_with(
            &[("skills/a/SKILL.md", "---\nname: a\n---\n")],
            &[("skills/a/link", "SKILL.md")],
        );
        let dir = work.path().join(".git");
        let shared =
            export::Shared::new(&dir, &url, &commit, &listing_limits(), &Default::default())
                .unwrap();
        let max = skillpm_core::skill::MAX_SKILL_MD_BYTES;
        let files =
            export::skill_files(&Workers::new(), &shared, &url, &listing_limits(), max).unwrap();
        assert_eq!(found_skills(&Workers::new(), files).len(), 1);
        assert!(
            found_packed(&Workers::new(), &shared, &url, &commit, &Limits::default()).is_none()
        );
    }
}
