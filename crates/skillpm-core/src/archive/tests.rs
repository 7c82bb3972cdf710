use super::*;
use crate::checksum::Verified;
use flate2::read::GzDecoder;
use flate2::{Compression, GzBuilder};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use tar::{Builder, EntryType, Header};

// ----- helpers ---------------------------------------------------------

fn gz(tar: Vec<u8>) -> Vec<u8> {
    let mut enc = GzBuilder::new().write(Vec::new(), Compression::fast());
    enc.write_all(&tar).unwrap();
    enc.finish().unwrap()
}

/// Appends an entry whose name bytes are written raw into the header,
/// bypassing the tar crate's own path checks.
fn raw_entry(b: &mut Builder<Vec<u8>>, name: &[u8], ty: EntryType, data: &[u8]) {
    raw_entry_link(b, name, ty, data, b"");
}

fn raw_entry_link(b: &mut Builder<Vec<u8>>, name: &[u8], ty: EntryType, data: &[u8], link: &[u8]) {
    let mut h = Header::new_gnu();
    {
        let old = h.as_old_mut();
        old.name[..name.len()].copy_from_slice(name);
        old.linkname[..link.len()].copy_from_slice(link);
    }
    h.set_entry_type(ty);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn archive(entries: &[(&[u8], EntryType, &[u8])]) -> Vec<u8> {
    let mut b = Builder::new(Vec::new());
    for (name, ty, data) in entries {
        raw_entry(&mut b, name, *ty, data);
    }
    gz(b.into_inner().unwrap())
}

fn file(name: &str) -> (&[u8], EntryType, &'static [u8]) {
    (name.as_bytes(), EntryType::Regular, b"hello\n")
}

/// Unpacks into `<root>/dest` and checks nothing appeared beside it.
fn run(bytes: &[u8], limits: &Limits) -> (Result<UnpackStats, UnpackError>, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("dest");
    let r = unpack(bytes, None, &dest, limits);
    assert_only_dest(root.path());
    (r, root)
}

fn assert_only_dest(root: &Path) {
    let names: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names.is_empty() || names == ["dest"],
        "unexpected files beside dest: {names:?}"
    );
}

fn run_err(bytes: &[u8], limits: &Limits) -> UnpackError {
    match run(bytes, limits).0 {
        Ok(stats) => panic!("expected an error, unpacked {stats:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "multi-line message: {msg}");
            e
        }
    }
}

/// Snapshot of a tree: path → (is_dir, contents, mode bits).
fn snapshot(dir: &Path) -> BTreeMap<String, (bool, Vec<u8>, u32)> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, (bool, Vec<u8>, u32)>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if name == ".git" {
                continue;
            }
            let rel = format!("{prefix}{name}");
            let meta = fs::symlink_metadata(e.path()).unwrap();
            #[cfg(unix)]
            let mode = {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o777
            };
            #[cfg(not(unix))]
            let mode = 0;
            if meta.is_dir() {
                out.insert(rel.clone(), (true, Vec::new(), 0));
                walk(&e.path(), &format!("{rel}/"), out);
            } else {
                out.insert(rel, (false, fs::read(e.path()).unwrap(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

fn sample_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    fs::write(p.join("SKILL.md"), "---\nname: demo\n---\nbody\n").unwrap();
    fs::create_dir_all(p.join("scripts")).unwrap();
    fs::write(p.join("scripts/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::create_dir_all(p.join("docs/nested/deep")).unwrap();
    fs::write(p.join("docs/nested/deep/a.txt"), "deep\n").unwrap();
    fs::write(p.join("docs/b-c.txt"), "dash\n").unwrap();
    fs::create_dir_all(p.join("empty")).unwrap();
    fs::create_dir_all(p.join(".git/objects")).unwrap();
    fs::write(p.join(".git/config"), "[core]\n").unwrap();
    let long = "x".repeat(150);
    fs::write(p.join(format!("docs/{long}.md")), "long name\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(p.join("scripts/run.sh"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(p.join("SKILL.md"), fs::Permissions::from_mode(0o600)).unwrap();
    }
    t
}

// ----- packing ---------------------------------------------------------

#[test]
fn pack_is_deterministic_and_round_trips() {
    let tree = sample_tree();
    let a = pack_dir(tree.path()).unwrap();
    // Touch mtimes: output must not change.
    let f = fs::File::options()
        .write(true)
        .open(tree.path().join("SKILL.md"))
        .unwrap();
    f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(12345))
        .unwrap();
    drop(f);
    let b = pack_dir(tree.path()).unwrap();
    assert_eq!(a, b, "same tree must give byte-identical archives");
    // The published form is the canonical tar, gzipped.
    let mut tar = Vec::new();
    GzDecoder::new(a.as_slice()).read_to_end(&mut tar).unwrap();
    assert_eq!(tar, tar_dir(tree.path()).unwrap());
    assert_eq!(
        tree_checksum(tree.path()).unwrap(),
        Checksum::of_bytes(&tar)
    );

    // Archive layout: sorted, relative, dirs with `/`, fixed metadata.
    let mut ar = tar::Archive::new(GzDecoder::new(a.as_slice()));
    let mut names = Vec::new();
    for e in ar.entries().unwrap() {
        let e = e.unwrap();
        let h = e.header();
        assert_eq!(h.mtime().unwrap(), 0);
        assert_eq!(h.uid().unwrap(), 0);
        assert_eq!(h.gid().unwrap(), 0);
        assert_eq!(h.username_bytes().unwrap_or(b""), b"");
        assert_eq!(h.groupname_bytes().unwrap_or(b""), b"");
        let name = String::from_utf8(e.path_bytes().into_owned()).unwrap();
        let mode = h.mode().unwrap();
        if name.ends_with('/') || name == "scripts/run.sh" {
            assert_eq!(mode, 0o755, "{name}");
        } else {
            assert_eq!(mode, 0o644, "{name}");
        }
        names.push(name);
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names
        .iter()
        .all(|n| !n.starts_with("./") && !n.starts_with(".git")));
    assert!(names.contains(&"empty/".to_string()));
    assert!(names.contains(&"docs/nested/deep/".to_string()));
    assert!(names.contains(&format!("docs/{}.md", "x".repeat(150))));

    // Unpack and compare contents and modes.
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("dest");
    let sum = Checksum::of_bytes(&a);
    let stats = unpack(&a, Some(&sum), &dest, &Limits::default()).unwrap();
    assert_only_dest(root.path());
    let got = snapshot(&dest);
    let mut want = snapshot(tree.path());
    for (name, v) in want.iter_mut() {
        if !v.0 {
            v.2 = if name == "scripts/run.sh" {
                0o755
            } else {
                0o644
            };
        }
    }
    #[cfg(not(unix))]
    for v in want.values_mut() {
        v.2 = 0;
    }
    assert_eq!(got, want);
    assert_eq!(stats.files, 5);
    assert_eq!(stats.dirs, 5);
    // Repacking the unpacked tree gives the same bytes.
    assert_eq!(pack_dir(&dest).unwrap(), a);
}

/// A tree whose files exercise every path of the compressor: empty,
/// tiny, highly repetitive and incompressible, larger than one deflate
/// block and than one gzip write.
fn compressor_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    fs::write(p.join("SKILL.md"), "---\nname: demo\ndescription: d\n---\n").unwrap();
    fs::write(p.join("empty.txt"), "").unwrap();
    fs::write(
        p.join("lorem.md"),
        "lorem ipsum dolor sit amet ".repeat(20_000),
    )
    .unwrap();
    // A fixed pseudo-random stream (xorshift): incompressible, the same on
    // every machine.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..300_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    fs::create_dir_all(p.join("data")).unwrap();
    fs::write(p.join("data/noise.bin"), noise).unwrap();
    t
}

/// The lock checksum of every git and path skill is the sha256 of its
/// canonical tar, and locks written before that hold the sha256 of the
/// tar gzipped at level 9 (still what `pack_dir` publishes): neither may
/// ever change, not with a refactor of the packer nor with an upgrade of
/// the compressor underneath it. A change here breaks existing locks.
#[test]
fn packed_bytes_never_change() {
    let tree = compressor_tree();
    assert_eq!(
        tree_checksum(tree.path()).unwrap().to_string(),
        "sha256:ce56a43f32be196c2f28a99362c0cf14dfd4cc5be78ddb336613a10f34768319"
    );
    let packed = pack_dir(tree.path()).unwrap();
    let legacy = "sha256:52cb7ea4466c5f6b728e1cd68dee7198c3fa01ee97daf79fb9a8cf42f2f5b350";
    assert_eq!(Checksum::of_bytes(&packed).to_string(), legacy);
    let tar = tar_dir(tree.path()).unwrap();
    let v = verify_tree(Verified::of(tar), &Checksum::parse(legacy).unwrap()).unwrap();
    assert_eq!(v.bytes(), packed, "an old lock gets the bytes it hashed");
}

/// A tree's tar is checked against its own checksum first, the level-9
/// form second; anything else is refused with the tar's own checksum.
#[test]
fn a_tree_verifies_in_either_form_and_nothing_else() {
    let tree = sample_tree();
    let tar = tar_dir(tree.path()).unwrap();
    let own = Checksum::of_bytes(&tar);
    let v = verify_tree(Verified::of(tar.clone()), &own).unwrap();
    assert_eq!(v.bytes(), tar);
    let other = Checksum::of_bytes(b"another tree");
    assert_eq!(verify_tree(Verified::of(tar), &other).unwrap_err(), own);
}

/// The plain tar a tree is held in unpacks through the same checks as a
/// `.tar.gz`, and its size cap is the tar's, not the compressed one.
#[test]
fn a_plain_tar_unpacks_with_the_same_checks() {
    let tree = sample_tree();
    let tar = tar_dir(tree.path()).unwrap();
    assert_eq!(Format::of_package(&tar), Format::Tar);
    let parent = tempfile::tempdir().unwrap();
    let (dir, kept) = unpack_to_new_dir_kept(&tar, parent.path(), &Limits::default()).unwrap();
    assert_eq!(tar_dir(dir.path()).unwrap(), tar);
    // What it kept is what it wrote.
    for e in &kept {
        let on_disk = dir.path().join(e.path());
        match e {
            MemEntry::Dir(_) => assert!(on_disk.is_dir(), "{}", e.path()),
            MemEntry::File { data, .. } => assert_eq!(&fs::read(&on_disk).unwrap(), data),
        }
    }
    assert!(kept.iter().any(|e| matches!(e, MemEntry::File { .. })));

    let mut b = Builder::new(Vec::new());
    raw_entry(&mut b, b"../escape", EntryType::Regular, b"x");
    let evil = b.into_inner().unwrap();
    let err = unpack_to_new_dir_kept(&evil, parent.path(), &Limits::default()).unwrap_err();
    assert!(matches!(err, UnpackError::EscapesPackage { .. }), "{err}");
    assert!(!parent.path().join("escape").exists());

    // Bigger than the compressed cap, within the tar's.
    let small = Limits {
        max_compressed: 1024,
        ..Limits::default()
    };
    assert!(unpack_to_new_dir_kept(&tar, parent.path(), &small).is_ok());
    // Refused before it is read when no tar within the limits is as big.
    fs::write(tree.path().join("big.bin"), vec![7u8; 4 << 20]).unwrap();
    let big = tar_dir(tree.path()).unwrap();
    let tight = Limits {
        max_unpacked: 1 << 20,
        max_entries: 100,
        ..small
    };
    assert!(big.len() as u64 > tight.max_tar_bytes());
    let err = unpack_to_new_dir_kept(&big, parent.path(), &tight).unwrap_err();
    assert!(matches!(err, UnpackError::TooLarge { .. }), "{err}");
}

/// The packer compresses each tar in one call on a compressor kept per
/// thread; the result must be exactly what a fresh gzip encoder fed the
/// tar stream piecemeal writes, whatever the thread packed before.
#[test]
fn packing_matches_a_fresh_streaming_gzip_encoder() {
    let reference = |packed: &[u8]| {
        let mut tar = Vec::new();
        GzDecoder::new(packed).read_to_end(&mut tar).unwrap();
        let mut enc = GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(Vec::new(), Compression::best());
        for piece in tar.chunks(512) {
            enc.write_all(piece).unwrap();
        }
        enc.finish().unwrap()
    };
    let big = compressor_tree();
    let small = sample_tree();
    // Big, small, big again on this thread: the reused compressor must
    // carry nothing from one package to the next.
    for dir in [big.path(), small.path(), big.path()] {
        let packed = pack_dir(dir).unwrap();
        assert_eq!(packed, reference(&packed), "{}", dir.display());
    }
    let path = small.path().to_path_buf();
    let on_fresh_thread = std::thread::spawn(move || pack_dir(&path).unwrap())
        .join()
        .unwrap();
    assert_eq!(on_fresh_thread, pack_dir(small.path()).unwrap());
}

#[test]
fn pack_to_file_writes_atomically() {
    let tree = sample_tree();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("demo.tar.gz");
    let sum = pack_to_file(tree.path(), &out).unwrap();
    let bytes = fs::read(&out).unwrap();
    assert_eq!(sum, Checksum::of_bytes(&bytes));
    assert_eq!(bytes, pack_dir(tree.path()).unwrap());
    let names: Vec<_> = fs::read_dir(out_dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "temp file left behind");
}

#[cfg(unix)]
#[test]
fn pack_rejects_symlinks() {
    let tree = sample_tree();
    std::os::unix::fs::symlink("/etc/passwd", tree.path().join("docs/link")).unwrap();
    match pack_dir(tree.path()) {
        Err(PackError::Symlink { path }) => assert!(path.ends_with("docs/link")),
        other => panic!("expected Symlink error, got {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn pack_rejects_bad_names() {
    let tree = tempfile::tempdir().unwrap();
    fs::write(tree.path().join("a\\b"), "x").unwrap();
    assert!(matches!(
        pack_dir(tree.path()),
        Err(PackError::BadPath { .. })
    ));
    let tree = tempfile::tempdir().unwrap();
    fs::write(tree.path().join("Readme.md"), "x").unwrap();
    fs::write(tree.path().join("README.md"), "x").unwrap();
    assert!(matches!(
        pack_dir(tree.path()),
        Err(PackError::CaseConflict { .. })
    ));
    let tree = tempfile::tempdir().unwrap();
    let deep = vec!["d"; MAX_DEPTH + 5].join("/");
    fs::create_dir_all(tree.path().join(&deep)).unwrap();
    match pack_dir(tree.path()) {
        Err(PackError::BadPath { reason, .. }) => assert!(reason.contains("deep"), "{reason}"),
        other => panic!("expected BadPath, got {other:?}"),
    }
}

// ----- hostile archives ------------------------------------------------

#[test]
fn rejects_parent_dir_escape() {
    let bytes = archive(&[file("ok.txt"), (b"../evil", EntryType::Regular, b"x")]);
    let e = run_err(&bytes, &Limits::default());
    assert!(
        matches!(&e, UnpackError::EscapesPackage { path } if path == "../evil"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "archive entry `../evil` escapes the package directory"
    );
    let bytes = archive(&[(b"a/../../evil", EntryType::Regular, b"x")]);
    assert!(matches!(
        run_err(&bytes, &Limits::default()),
        UnpackError::EscapesPackage { .. }
    ));
}

#[test]
fn rejects_absolute_paths() {
    for name in [&b"/abs"[..], b"/etc/passwd", b"C:/windows/x", b"c:evil"] {
        let bytes = archive(&[(name, EntryType::Regular, b"x")]);
        let e = run_err(&bytes, &Limits::default());
        assert!(matches!(e, UnpackError::AbsolutePath { .. }), "{e:?}");
    }
}

#[test]
fn rejects_escape_via_pax_and_gnu_long_names() {
    // PAX `path` record.
    let mut b = Builder::new(Vec::new());
    let rec = b"16 path=../evil\n";
    raw_entry(&mut b, b"PaxHeader/x", EntryType::XHeader, rec);
    raw_entry(&mut b, b"harmless", EntryType::Regular, b"x");
    let bytes = gz(b.into_inner().unwrap());
    let e = run_err(&bytes, &Limits::default());
    assert!(
        matches!(&e, UnpackError::EscapesPackage { path } if path == "../evil"),
        "{e:?}"
    );
    // GNU long name.
    let mut b = Builder::new(Vec::new());
    raw_entry(
        &mut b,
        b"././@LongLink",
        EntryType::GNULongName,
        b"../../evil\0",
    );
    raw_entry(&mut b, b"harmless", EntryType::Regular, b"x");
    let bytes = gz(b.into_inner().unwrap());
    let e = run_err(&bytes, &Limits::default());
    assert!(matches!(e, UnpackError::EscapesPackage { .. }), "{e:?}");
}

#[test]
fn rejects_links_and_special_files() {
    let cases: [(&[u8], EntryType, EntryKind); 5] = [
        (b"a/link", EntryType::Symlink, EntryKind::Symlink),
        (b"hard", EntryType::Link, EntryKind::Hardlink),
        (b"pipe", EntryType::Fifo, EntryKind::Fifo),
        (b"tty", EntryType::Char, EntryKind::CharDevice),
        (b"disk", EntryType::Block, EntryKind::BlockDevice),
    ];
    for (name, ty, kind) in cases {
        let mut b = Builder::new(Vec::new());
        raw_entry(&mut b, b"a/", EntryType::Directory, b"");
        raw_entry_link(&mut b, name, ty, b"", b"../../../../etc/passwd");
        let bytes = gz(b.into_inner().unwrap());
        let (r, root) = run(&bytes, &Limits::default());
        match r {
            Err(UnpackError::ForbiddenEntryType { path, kind: k }) => {
                assert_eq!(path.as_bytes(), name);
                assert_eq!(k, kind);
            }
            other => panic!("expected ForbiddenEntryType for {ty:?}, got {other:?}"),
        }
        // Only the directory entry got created; no link was made.
        let snap = snapshot(&root.path().join("dest"));
        assert_eq!(snap.keys().collect::<Vec<_>>(), ["a"]);
    }
    let e = run_err(
        &archive(&[(b"a/link", EntryType::Symlink, b"")]),
        &Limits::default(),
    );
    assert_eq!(
        e.to_string(),
        "archive entry `a/link` is a symlink; only regular files and directories are allowed"
    );
}

#[test]
fn rejects_sparse_entries() {
    let bytes = archive(&[(b"sparse", EntryType::GNUSparse, b"")]);
    let e = run_err(&bytes, &Limits::default());
    assert!(
        matches!(
            e,
            UnpackError::ForbiddenEntryType {
                kind: EntryKind::Sparse,
                ..
            } | UnpackError::Corrupt(_)
        ),
        "{e:?}"
    );
}

#[test]
fn rejects_duplicates_and_case_conflicts() {
    let e = run_err(
        &archive(&[file("a.txt"), file("a.txt")]),
        &Limits::default(),
    );
    assert!(
        matches!(&e, UnpackError::DuplicateEntry { path } if path == "a.txt"),
        "{e:?}"
    );
    let e = run_err(
        &archive(&[file("README.md"), file("readme.md")]),
        &Limits::default(),
    );
    assert!(
        matches!(&e, UnpackError::CaseConflict { path, other } if path == "readme.md" && other == "README.md"),
        "{e:?}"
    );
    let e = run_err(&archive(&[file("A/x"), file("a/y")]), &Limits::default());
    assert!(matches!(e, UnpackError::CaseConflict { .. }), "{e:?}");
    let e = run_err(
        &archive(&[
            (b"d/", EntryType::Directory, b""),
            (b"d/", EntryType::Directory, b""),
        ]),
        &Limits::default(),
    );
    assert!(matches!(e, UnpackError::DuplicateEntry { .. }), "{e:?}");
    // `./a` and `a` are the same path.
    let e = run_err(&archive(&[file("a"), file("./a")]), &Limits::default());
    assert!(matches!(e, UnpackError::DuplicateEntry { .. }), "{e:?}");
}

#[test]
fn rejects_file_dir_conflicts() {
    let e = run_err(&archive(&[file("a"), file("a/b")]), &Limits::default());
    assert!(
        matches!(&e, UnpackError::ParentNotDirectory { path, parent } if path == "a/b" && parent == "a"),
        "{e:?}"
    );
    let e = run_err(
        &archive(&[file("a"), (b"a/", EntryType::Directory, b"")]),
        &Limits::default(),
    );
    assert!(
        matches!(
            e,
            UnpackError::TypeConflict {
                new: "a directory",
                existing: "a file",
                ..
            }
        ),
        "{e:?}"
    );
    let e = run_err(&archive(&[file("a/b"), file("a")]), &Limits::default());
    assert!(matches!(e, UnpackError::TypeConflict { .. }), "{e:?}");
}

#[test]
fn rejects_bad_characters() {
    for (name, needle) in [
        (&b"a\\b"[..], "backslash"),
        (b"a\nb", "control"),
        (b"a\rb", "control"),
        (b"dir/x:y", "colon"),
        (b"bad\xff", "UTF-8"),
    ] {
        let e = run_err(
            &archive(&[(name, EntryType::Regular, b"x")]),
            &Limits::default(),
        );
        match &e {
            UnpackError::InvalidPath { reason, .. } => assert!(reason.contains(needle), "{e}"),
            other => panic!("expected InvalidPath for {name:?}, got {other:?}"),
        }
    }
}

#[test]
fn rejects_long_and_deep_paths() {
    let limits = Limits {
        max_path_len: 20,
        ..Limits::default()
    };
    let e = run_err(&archive(&[file("abcdefghijklmnopqrstuvwxyz")]), &limits);
    assert!(
        matches!(
            e,
            UnpackError::PathTooLong {
                len: 26,
                limit: 20,
                ..
            }
        ),
        "{e:?}"
    );
    let deep = vec!["d"; MAX_DEPTH + 1].join("/");
    let e = run_err(&archive(&[file(&deep)]), &Limits::default());
    assert!(matches!(e, UnpackError::PathTooDeep { .. }), "{e:?}");
}

#[test]
fn rejects_too_many_entries() {
    let limits = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let bytes = archive(&[file("a"), file("b"), file("c"), file("d"), file("e")]);
    let e = run_err(&bytes, &limits);
    assert!(
        matches!(e, UnpackError::TooManyEntries { limit: 3 }),
        "{e:?}"
    );
}

#[test]
fn stops_gzip_bomb_at_the_cap() {
    let zeros = vec![0u8; 20 * 1024 * 1024];
    let limits = Limits {
        max_unpacked: 1024 * 1024,
        ..Limits::default()
    };
    let bytes = archive(&[(b"bomb", EntryType::Regular, &zeros)]);
    assert!(bytes.len() < 200 * 1024);
    let start = std::time::Instant::now();
    let (r, root) = run(&bytes, &limits);
    assert!(
        matches!(r, Err(UnpackError::UnpackedTooLarge { limit: 1048576 })),
        "{r:?}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    assert!(!root.path().join("dest/bomb").exists());

    // Many files each under the cap but together over it.
    let chunk = vec![0u8; 400 * 1024];
    let bytes = archive(&[
        (b"a", EntryType::Regular, &chunk),
        (b"b", EntryType::Regular, &chunk),
        (b"c", EntryType::Regular, &chunk),
    ]);
    let (r, _root) = run(&bytes, &limits);
    assert!(
        matches!(r, Err(UnpackError::UnpackedTooLarge { .. })),
        "{r:?}"
    );

    // Payload hidden in an entry the unpacker skips (pax global header)
    // is still capped by the decompressed-stream budget.
    let limits = Limits {
        max_unpacked: 1024 * 1024,
        max_entries: 10,
        ..Limits::default()
    };
    let bytes = archive(&[(b"pax_global_header", EntryType::XGlobalHeader, &zeros)]);
    let (r, _root) = run(&bytes, &limits);
    assert!(
        matches!(r, Err(UnpackError::UnpackedTooLarge { .. })),
        "{r:?}"
    );
}

#[test]
fn rejects_oversized_compressed_input() {
    let bytes = archive(&[file("a")]);
    let limits = Limits {
        max_compressed: 10,
        ..Limits::default()
    };
    let e = run_err(&bytes, &limits);
    assert!(
        matches!(e, UnpackError::TooLarge { limit: 10, .. }),
        "{e:?}"
    );
}

#[test]
fn checksum_is_verified_first() {
    let bytes = archive(&[file("a")]);
    let wrong = Checksum::of_bytes(b"something else");
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("dest");
    let e = unpack(&bytes, Some(&wrong), &dest, &Limits::default()).unwrap_err();
    match &e {
        UnpackError::ChecksumMismatch { expected, actual } => {
            assert_eq!(*expected, wrong);
            assert_eq!(*actual, Checksum::of_bytes(&bytes));
        }
        other => panic!("expected ChecksumMismatch, got {other:?}"),
    }
    assert!(e
        .to_string()
        .starts_with("checksum mismatch: expected sha256:"));
    assert!(
        !dest.exists(),
        "dest must not be touched before verification"
    );
    // Garbage with a wrong checksum also fails on the checksum, not parsing.
    let e = unpack(b"not gzip", Some(&wrong), &dest, &Limits::default()).unwrap_err();
    assert!(matches!(e, UnpackError::ChecksumMismatch { .. }));
}

#[test]
fn rejects_garbage_and_truncation() {
    let e = run_err(b"definitely not gzip", &Limits::default());
    assert!(matches!(e, UnpackError::Corrupt(_)), "{e:?}");
    let full = archive(&[(b"a", EntryType::Regular, &[7u8; 5000][..])]);
    let tar_bytes = {
        let mut d = GzDecoder::new(full.as_slice());
        let mut v = Vec::new();
        d.read_to_end(&mut v).unwrap();
        v
    };
    let truncated = gz(tar_bytes[..1500].to_vec());
    let e = run_err(&truncated, &Limits::default());
    assert!(matches!(e, UnpackError::Corrupt(_)), "{e:?}");
}

#[test]
fn refuses_non_empty_destination() {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("dest");
    fs::create_dir(&dest).unwrap();
    fs::write(dest.join("existing"), "keep").unwrap();
    let e = unpack(&archive(&[file("a")]), None, &dest, &Limits::default()).unwrap_err();
    assert!(matches!(e, UnpackError::BadDestination { .. }), "{e:?}");
    assert_eq!(fs::read(dest.join("existing")).unwrap(), b"keep");
    assert!(!dest.join("a").exists());
}

#[test]
fn accepts_dot_prefixed_and_implied_dirs() {
    let bytes = archive(&[
        (b"./", EntryType::Directory, b""),
        (b"./x/y/z.txt", EntryType::Regular, b"z"),
        (b"x/", EntryType::Directory, b""),
    ]);
    let (r, root) = run(&bytes, &Limits::default());
    let stats = r.unwrap();
    assert_eq!(
        stats,
        UnpackStats {
            files: 1,
            dirs: 2,
            bytes: 1
        }
    );
    assert_eq!(fs::read(root.path().join("dest/x/y/z.txt")).unwrap(), b"z");
}

#[test]
fn unpack_to_new_dir_cleans_up_on_error() {
    let parent = tempfile::tempdir().unwrap();
    let bad = archive(&[file("ok"), (b"../evil", EntryType::Regular, b"x")]);
    let e = unpack_to_new_dir(&bad, None, parent.path(), &Limits::default()).unwrap_err();
    assert!(matches!(e, UnpackError::EscapesPackage { .. }));
    assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);

    let tree = sample_tree();
    let good = pack_dir(tree.path()).unwrap();
    let sum = Checksum::of_bytes(&good);
    let dir = unpack_to_new_dir(&good, Some(&sum), parent.path(), &Limits::default()).unwrap();
    assert_eq!(dir.path().parent(), Some(parent.path()));
    assert!(dir.path().join("scripts/run.sh").is_file());
    // The caller renames it into place.
    let installed = parent.path().join("demo");
    fs::rename(dir.keep(), &installed).unwrap();
    assert_eq!(pack_dir(&installed).unwrap(), good);
}

// ----- zip -------------------------------------------------------------

fn zip_of(build: impl FnOnce(&mut ::zip::ZipWriter<std::io::Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut w = ::zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    build(&mut w);
    w.finish().unwrap().into_inner()
}

fn unzip(bytes: &[u8], limits: &Limits) -> Result<UnpackStats, UnpackError> {
    let dir = tempfile::tempdir().unwrap();
    unpack_as(Format::Zip, bytes, None, &dir.path().join("out"), limits)
}

/// Two central-directory entries named `SKILL.md`: the zip reader keeps
/// the last, so without a check of its own the second would install
/// silently where a tar with the same two is refused.
#[test]
fn a_zip_with_two_entries_of_one_name_is_refused() {
    let opts = ::zip::write::SimpleFileOptions::default();
    let mut z = zip_of(|w| {
        w.start_file("SKILL.md", opts).unwrap();
        w.write_all(b"---\nname: a\n---\nfirst\n").unwrap();
        w.start_file("SKILL.mX", opts).unwrap();
        w.write_all(b"---\nname: a\n---\nsecond\n").unwrap();
    });
    // The writer refuses a duplicate name, so rename the second entry in
    // place, in its local header and its central-directory record.
    let mut renamed = 0;
    for i in 0..z.len() - 8 {
        if &z[i..i + 8] == b"SKILL.mX" {
            z[i + 7] = b'd';
            renamed += 1;
        }
    }
    assert_eq!(renamed, 2);
    let err = unzip(&z, &Limits::default()).unwrap_err();
    assert!(
        matches!(&err, UnpackError::CorruptZip(why) if why.contains("same name")),
        "{err}"
    );
}

#[test]
fn zip_goes_through_the_same_checks() {
    let opts = ::zip::write::SimpleFileOptions::default();
    let good = zip_of(|w| {
        w.add_directory("refs/", opts).unwrap();
        w.start_file("SKILL.md", opts).unwrap();
        w.write_all(b"---\nname: z\n---\n").unwrap();
        w.start_file("scripts/run.sh", opts.unix_permissions(0o755))
            .unwrap();
        w.write_all(b"echo\n").unwrap();
    });
    assert_eq!(Format::sniff(&good), Some(Format::Zip));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stats = unpack_as(Format::Zip, &good, None, &out, &Limits::default()).unwrap();
    assert_eq!(stats.files, 2);
    assert_eq!(fs::read(out.join("scripts/run.sh")).unwrap(), b"echo\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(out.join("scripts/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    let link = zip_of(|w| w.add_symlink("leak", "/etc/passwd", opts).unwrap());
    assert!(matches!(
        unzip(&link, &Limits::default()),
        Err(UnpackError::ForbiddenEntryType {
            kind: EntryKind::Symlink,
            ..
        })
    ));
    for bad in ["../up", "/abs", "a/../../b", "C:/x", "a\\b"] {
        let z = zip_of(|w| {
            w.start_file(bad, opts).unwrap();
            w.write_all(b"x").unwrap();
        });
        assert!(unzip(&z, &Limits::default()).is_err(), "{bad}");
    }
    let dup = zip_of(|w| {
        w.start_file("A.md", opts).unwrap();
        w.start_file("a.md", opts).unwrap();
    });
    assert!(matches!(
        unzip(&dup, &Limits::default()),
        Err(UnpackError::CaseConflict { .. })
    ));
    // A bomb: 4 MiB of zeros deflates to a few KiB.
    let bomb = zip_of(|w| {
        w.start_file(
            "zeros",
            opts.compression_method(::zip::CompressionMethod::Deflated),
        )
        .unwrap();
        w.write_all(&vec![0u8; 4 << 20]).unwrap();
    });
    let small = Limits {
        max_unpacked: 1 << 20,
        ..Limits::default()
    };
    assert!(matches!(
        unzip(&bomb, &small),
        Err(UnpackError::UnpackedTooLarge { .. })
    ));
    let many = Limits {
        max_entries: 1,
        ..Limits::default()
    };
    assert!(matches!(
        unzip(&good, &many),
        Err(UnpackError::TooManyEntries { .. })
    ));
    assert!(matches!(
        unzip(b"PK\x03\x04garbage", &Limits::default()),
        Err(UnpackError::CorruptZip(_))
    ));
    // The checksum comes first, whatever the format.
    let dir = tempfile::tempdir().unwrap();
    let wrong = Checksum::of_bytes(b"other");
    assert!(matches!(
        unpack_as(
            Format::Zip,
            &good,
            Some(&wrong),
            &dir.path().join("o"),
            &Limits::default()
        ),
        Err(UnpackError::ChecksumMismatch { .. })
    ));
}

/// The tar of a tree unpacked to memory is the tar of the same tree
/// unpacked to disk: what git sources rely on for their lock checksums to
/// be what a directory with those files would give.
#[test]
fn tar_entries_matches_tar_dir_of_the_unpacked_tree() {
    let sample = pack_dir(sample_tree().path()).unwrap();
    let long = format!("docs/{}/file.md", "y".repeat(120));
    let mut b = Builder::new(Vec::new());
    // Out of order, parents implied, an executable, a name too long for
    // a plain header.
    raw_entry(&mut b, b"zeta/inner/z.txt", EntryType::Regular, b"z\n");
    raw_entry(
        &mut b,
        b"SKILL.md",
        EntryType::Regular,
        b"---\nname: t\n---\n",
    );
    raw_entry(&mut b, b"a-b.txt", EntryType::Regular, b"dash\n");
    raw_entry(&mut b, b"a/", EntryType::Directory, b"");
    let mut h = Header::new_gnu();
    h.set_entry_type(EntryType::Regular);
    h.set_size(3);
    h.set_mode(0o700);
    b.append_data(&mut h, "a/run.sh", &b"hi\n"[..]).unwrap();
    let mut h = Header::new_gnu();
    h.set_entry_type(EntryType::Regular);
    h.set_size(2);
    h.set_mode(0o644);
    b.append_data(&mut h, &long, &b"l\n"[..]).unwrap();
    let odd = gz(b.into_inner().unwrap());
    for tarball in [sample, odd] {
        let limits = Limits::default();
        let parent = tempfile::tempdir().unwrap();
        let dir = unpack_to_new_dir(&tarball, None, parent.path(), &limits).unwrap();
        let from_disk = tar_dir(dir.path()).unwrap();
        let from_memory = tar_entries(unpack_to_memory(&tarball, &limits).unwrap()).unwrap();
        assert!(from_disk == from_memory, "the two tars differ");
    }
}

/// A package's own `.git`, in any case (on macOS and Windows `.GIT/config`
/// is the repository's config), is refused by every unpacker: a
/// registry tarball, a well-known archive, a git tree.
#[test]
fn a_git_directory_in_any_case_is_refused() {
    for path in [
        &b".git/config"[..],
        b"a/.GIT/config",
        b".Git/hooks/pre-commit",
    ] {
        let mut b = Builder::new(Vec::new());
        raw_entry(&mut b, b"SKILL.md", EntryType::Regular, b"---\n---\n");
        raw_entry(&mut b, path, EntryType::Regular, b"[core]\n");
        let tarball = gz(b.into_inner().unwrap());
        let limits = Limits::default();
        for err in [
            unpack_to_memory(&tarball, &limits).unwrap_err(),
            unpack_to_new_dir(&tarball, None, tempfile::tempdir().unwrap().path(), &limits)
                .unwrap_err(),
        ] {
            assert!(
                matches!(&err, UnpackError::InvalidPath { reason, .. } if reason.contains(".git")),
                "{err}"
            );
        }
        let mut t = MemoryTree::new(&limits);
        assert!(t.file(path, b"x", false).is_err());
    }
}

/// Names Windows cannot hold (device names, a trailing dot) are refused
/// under Windows' rules, on any machine, and accepted under Unix's: the
/// client applies its own platform's, the registry Windows'.
#[test]
fn each_platform_applies_its_own_name_rules() {
    use crate::platform::Platform;
    for name in [&b"scripts/aux.py"[..], b"CON", b"notes."] {
        let mut b = Builder::new(Vec::new());
        raw_entry(&mut b, b"SKILL.md", EntryType::Regular, b"---\n---\n");
        raw_entry(&mut b, name, EntryType::Regular, b"x\n");
        let tarball = gz(b.into_inner().unwrap());
        let windows = Limits {
            names: Platform::Windows,
            ..Limits::default()
        };
        let err = unpack_to_memory(&tarball, &windows).unwrap_err();
        assert!(matches!(err, UnpackError::InvalidPath { .. }), "{err}");
        let unix = Limits {
            names: Platform::Unix,
            ..Limits::default()
        };
        assert!(unpack_to_memory(&tarball, &unix).is_ok());
    }
}

/// The in-memory unpacker refuses what the one on disk refuses.
#[test]
fn unpack_to_memory_applies_the_same_checks() {
    let limits = Limits::default();
    let bad = archive(&[(b"../escape", EntryType::Regular, b"x")]);
    assert!(unpack_to_memory(&bad, &limits).is_err());
    let link = archive(&[(b"l", EntryType::Symlink, b"")]);
    assert!(matches!(
        unpack_to_memory(&link, &limits),
        Err(UnpackError::ForbiddenEntryType { .. })
    ));
    let case = archive(&[file("A.md"), file("a.md")]);
    assert!(matches!(
        unpack_to_memory(&case, &limits),
        Err(UnpackError::CaseConflict { .. })
    ));
    let small = Limits {
        max_unpacked: 3,
        ..Limits::default()
    };
    let big = archive(&[file("big.txt")]);
    assert!(matches!(
        unpack_to_memory(&big, &small),
        Err(UnpackError::UnpackedTooLarge { .. })
    ));
}

// ----- trees built in memory -------------------------------------------

/// A tree handed over entry by entry meets the same judge as a tarball:
/// escapes, symlinks, case collisions, entry count and size are refused,
/// and what passes packs exactly as the same tree on disk does.
#[test]
fn memory_trees_are_judged_like_archives() {
    let limits = Limits::default();
    let refused = |add: &dyn Fn(&mut MemoryTree) -> Result<(), UnpackError>| {
        let mut t = MemoryTree::new(&limits);
        add(&mut t).unwrap_err()
    };
    assert!(matches!(
        refused(&|t| t.file(b"../x", b"", false)),
        UnpackError::EscapesPackage { .. }
    ));
    assert!(matches!(
        refused(&|t| t.forbidden(b"link", EntryKind::Symlink)),
        UnpackError::ForbiddenEntryType { .. }
    ));
    assert!(matches!(
        refused(&|t| {
            t.file(b"A.md", b"a", false)?;
            t.file(b"a.md", b"b", false)
        }),
        UnpackError::CaseConflict { .. }
    ));
    let small = Limits {
        max_entries: 2,
        max_unpacked: 4,
        ..Limits::default()
    };
    let mut t = MemoryTree::new(&small);
    t.dir(b"d").unwrap();
    assert!(matches!(
        t.file(b"d/big", b"12345", false),
        Err(UnpackError::UnpackedTooLarge { .. })
    ));
    let mut t = MemoryTree::new(&small);
    t.dir(b"a").unwrap();
    t.dir(b"b").unwrap();
    assert!(matches!(
        t.dir(b"c"),
        Err(UnpackError::TooManyEntries { .. })
    ));

    let dir = sample_tree();
    let on_disk = pack_dir(dir.path()).unwrap();
    let unpacked = unpack_to_memory(&on_disk, &limits).unwrap();
    let mut t = MemoryTree::new(&limits);
    for e in &unpacked {
        match e {
            MemEntry::Dir(p) => t.dir(p.as_bytes()).unwrap(),
            MemEntry::File {
                path,
                data,
                executable,
            } => t.file(path.as_bytes(), data, *executable).unwrap(),
        }
    }
    assert_eq!(
        tar_entries(t.finish()).unwrap(),
        tar_dir(dir.path()).unwrap()
    );
}

/// A package's top-level file is found in a `.tar.gz` and in a plain tar,
/// not in a subdirectory, never read past its cap, and a link by that
/// name is refused rather than followed.
#[test]
fn read_top_file_finds_only_the_top_level_regular_file() {
    let limits = Limits::default();
    let entries: &[(&[u8], EntryType, &[u8])] = &[
        (b"docs/skill.toml", EntryType::Regular, b"nested"),
        (b"SKILL.md", EntryType::Regular, b"---\n"),
        (b"skill.toml", EntryType::Regular, b"[dependencies]\n"),
    ];
    let tar_gz = archive(entries);
    let mut plain = Vec::new();
    GzDecoder::new(&tar_gz[..]).read_to_end(&mut plain).unwrap();
    for bytes in [&tar_gz, &plain] {
        let got = read_top_file(bytes, "skill.toml", 64, &limits).unwrap();
        assert_eq!(got.as_deref(), Some(&b"[dependencies]\n"[..]));
        assert_eq!(
            read_top_file(bytes, "absent.toml", 64, &limits).unwrap(),
            None
        );
        assert!(matches!(
            read_top_file(bytes, "skill.toml", 4, &limits),
            Err(UnpackError::TooLarge { size: 15, limit: 4 })
        ));
    }
    let link = archive(&[(b"skill.toml", EntryType::Symlink, b"")]);
    assert!(matches!(
        read_top_file(&link, "skill.toml", 64, &limits),
        Err(UnpackError::ForbiddenEntryType { .. })
    ));
}
