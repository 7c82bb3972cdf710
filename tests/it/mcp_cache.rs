//! `skillpm mcp` keeps each served `SKILL.md`'s parsed frontmatter in
//! skillpm's cache directory (`mcp-v1/`), keyed by the digest of the bytes
//! served, so a start over unchanged skills parses no YAML a second time.
//! What is served must never come from a stale or broken cache: a
//! `SKILL.md` rewritten with the same size and mtime is served as it now
//! is, and a corrupt cache file is ignored and written anew.

use crate::common::Fixture;
use crate::mcp::{digest, manifest, request, stdio_batch};
use serde_json::{json, Value};
use std::path::PathBuf;

/// The project's cache file, the only one in `mcp-v1/`.
fn cache_file(f: &Fixture) -> PathBuf {
    let dir = f.cache.join("skillpm/mcp-v1");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().expect("one file")
}

/// `skills/get` and `resources/read` of `a/SKILL.md`: the manifest's
/// digest, the description, and the bytes read.
fn serve(f: &Fixture) -> (String, String, String) {
    let uri = json!({"uri": "skill://a/SKILL.md"});
    let (answers, stderr) = stdio_batch(
        f,
        &[
            request(1, "skills/get", uri.clone()),
            request(2, "resources/read", uri),
        ],
    );
    let listed = manifest(&answers[&1]);
    let (digest, _) = listed.get("skill://a/SKILL.md").expect("listed").clone();
    let skill = &answers[&1]["result"]["skill"];
    let description = skill["description"]
        .as_str()
        .or_else(|| skill["frontmatter"]["description"].as_str())
        .unwrap_or_else(|| panic!("no description: {skill}\n{stderr}"))
        .to_string();
    let text = answers[&2]["result"]["contents"][0]["text"]
        .as_str()
        .expect("text")
        .to_string();
    (digest, description, text)
}

fn cached_digests(f: &Fixture) -> Vec<String> {
    let bytes = std::fs::read(cache_file(f)).expect("cache file");
    let v: Value = serde_json::from_slice(&bytes).expect("the cache file is JSON");
    v.as_object().expect("object").keys().cloned().collect()
}

#[test]
fn a_second_start_reuses_the_cache_and_never_serves_stale_frontmatter() {
    let f = Fixture::new();
    let proj = f.project_root();
    let a = f.skill(&proj, "a", "name: a\ndescription: First", "body\n");
    let md = a.join("SKILL.md");
    let first = std::fs::read(&md).expect("read");

    let (d1, desc1, _) = serve(&f);
    assert_eq!(
        (d1.as_str(), desc1.as_str()),
        (digest(&first).as_str(), "First")
    );
    assert_eq!(cached_digests(&f), [digest(&first)]);

    // Nothing changed: the cache is used as it is, not written again.
    let file = cache_file(&f);
    let stamp = std::fs::metadata(&file)
        .expect("meta")
        .modified()
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(serve(&f).1, "First");
    assert_eq!(
        std::fs::metadata(&file)
            .expect("meta")
            .modified()
            .expect("mtime"),
        stamp,
        "a warm start over unchanged skills rewrote the cache"
    );

    // Same size, same mtime, new content: served as it now is.
    let mtime = std::fs::metadata(&md)
        .expect("meta")
        .modified()
        .expect("mtime");
    let second = String::from_utf8(first.clone())
        .expect("utf-8")
        .replace("First", "Other");
    assert_eq!(second.len(), first.len());
    std::fs::write(&md, &second).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&md)
        .and_then(|file| file.set_modified(mtime))
        .expect("set mtime");
    let (d2, desc2, text2) = serve(&f);
    assert_eq!(d2, digest(second.as_bytes()));
    assert_eq!(desc2, "Other");
    assert_eq!(text2, second);
    // The cache holds what the last start served, and nothing older.
    assert_eq!(cached_digests(&f), [digest(second.as_bytes())]);
}

#[test]
fn a_corrupt_cache_file_is_ignored_and_written_anew() {
    let f = Fixture::new();
    let proj = f.project_root();
    let a = f.skill(&proj, "a", "name: a\ndescription: Kept", "body\n");
    let bytes = std::fs::read(a.join("SKILL.md")).expect("read");
    serve(&f);
    let file = cache_file(&f);
    // Cut short, then not JSON at all, then JSON of another shape, then
    // the right shape with frontmatter the file does not have.
    let wrong = json!({digest(&bytes): {"name": "a", "description": "Forged"}});
    for junk in [
        b"{\"sha256:".to_vec(),
        vec![0xff; 64],
        b"[1, 2, 3]".to_vec(),
        serde_json::to_vec(&wrong).expect("json"),
    ] {
        std::fs::write(&file, &junk).expect("corrupt");
        let (d, desc, text) = serve(&f);
        assert_eq!((d, desc), (digest(&bytes), "Kept".to_string()));
        assert_eq!(text.as_bytes(), bytes);
        assert_eq!(cached_digests(&f), [digest(&bytes)]);
    }
    // Deleting it is safe: the next start writes it again.
    std::fs::remove_file(&file).expect("remove");
    assert_eq!(serve(&f).1, "Kept");
    assert_eq!(cached_digests(&f), [digest(&bytes)]);
}
