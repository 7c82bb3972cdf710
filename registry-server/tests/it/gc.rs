//! `skillpm-registry gc`: unreferenced blobs past the grace period are
//! listed with their sizes, deleted only with `--delete`; referenced
//! blobs and fresh orphans (a publish in flight) are never touched. On
//! files + SQLite, and on PostgreSQL + S3 when the shared services run.

use crate::common;

use common::{pack, publish_raw, token, Server, BIN};
use skillpm::checksum::Checksum;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Runs `skillpm-registry gc ARGS`; its stdout, after checking it exited 0.
fn gc(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("gc")
        .args(args)
        .output()
        .expect("run gc");
    assert!(
        out.status.success(),
        "gc {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Writes `bytes` as a blob file, as a publish killed before its row
/// would have left it, last written `age` ago.
fn blob_file(data: &Path, bytes: &[u8], age: Duration) -> Checksum {
    let sum = Checksum::of_bytes(bytes);
    let path = data.join("blobs").join(sum.hex());
    std::fs::write(&path, bytes).expect("write blob");
    age_file(&path, age);
    sum
}

fn age_file(path: &Path, age: Duration) {
    let f = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    f.set_modified(SystemTime::now() - age).expect("set mtime");
}

/// The tarball of `name@1.0.0`, after checking it is served.
async fn download(url: &str, name: &str) -> Vec<u8> {
    let resp = reqwest::get(format!("{url}/api/v1/skills/{name}/1.0.0/download"))
        .await
        .expect("download");
    assert_eq!(resp.status(), 200, "download {name}");
    resp.bytes().await.expect("body").to_vec()
}

const HOURS_2: Duration = Duration::from_secs(2 * 3600);

#[tokio::test]
async fn gc_lists_then_deletes_old_orphans_and_keeps_referenced_and_fresh_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let s = Server::start_quiet(&data, &[]);
    let tok = token(&data, "alice");
    let tarball = pack("kept", "1.0.0", "d", "kept body");
    let (status, body) = publish_raw(&s.url, &tok, tarball.clone()).await;
    assert_eq!(status, 200, "publish: {body}");
    let kept = Checksum::of_bytes(&tarball);
    // Old enough to collect if it were unreferenced.
    age_file(&data.join("blobs").join(kept.hex()), HOURS_2);
    let old = blob_file(&data, &[7u8; 1000], HOURS_2);
    let fresh = blob_file(&data, b"a publish in flight", Duration::ZERO);
    let data_arg = data.to_str().unwrap();

    let listed = gc(&["--data", data_arg]);
    assert!(
        listed.contains(&format!("{old}\t1000 bytes\n")),
        "old orphan listed with its size: {listed}"
    );
    assert!(
        !listed.contains(&kept.hex()),
        "referenced blob listed: {listed}"
    );
    assert!(
        !listed.contains(&fresh.hex()),
        "fresh orphan listed: {listed}"
    );
    assert!(
        listed.contains("1 unreferenced blob(s), 1000 bytes; run with --delete"),
        "{listed}"
    );
    assert!(
        listed.contains("3 blob(s) stored; 1 unreferenced within"),
        "{listed}"
    );
    assert!(
        data.join("blobs").join(old.hex()).is_file(),
        "dry run deleted"
    );

    let deleted = gc(&["--data", data_arg, "--delete"]);
    assert!(
        deleted.contains("deleted 1 unreferenced blob(s), 1000 bytes"),
        "{deleted}"
    );
    assert!(!data.join("blobs").join(old.hex()).exists(), "orphan kept");
    assert!(
        data.join("blobs").join(fresh.hex()).is_file(),
        "fresh orphan deleted"
    );
    assert_eq!(
        download(&s.url, "kept").await,
        tarball,
        "referenced blob served"
    );

    // The grace period is the operator's: with none, the fresh orphan goes.
    let none = gc(&["--data", data_arg, "--older-than", "0", "--delete"]);
    assert!(
        none.contains("deleted 1 unreferenced blob(s), 19 bytes"),
        "{none}"
    );
    assert!(!data.join("blobs").join(fresh.hex()).exists());
}

/// Publishing bytes whose blob is already stored (a retry after a killed
/// publish) renews it, so a collection racing the retry keeps it.
#[tokio::test]
async fn republishing_an_orphans_bytes_renews_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let s = Server::start_quiet(&data, &[]);
    let tok = token(&data, "alice");
    let tarball = pack("retried", "1.0.0", "d", "body");
    // The killed first attempt: its blob, no row.
    blob_file(&data, &tarball, HOURS_2);
    let (status, body) = publish_raw(&s.url, &tok, tarball).await;
    assert_eq!(status, 200, "publish: {body}");
    let out = gc(&["--data", data.to_str().unwrap(), "--delete"]);
    assert!(out.contains("deleted 0 unreferenced blob(s)"), "{out}");
    download(&s.url, "retried").await;
}

#[tokio::test]
async fn gc_on_postgres_and_s3_collects_a_blob_whose_row_is_gone() {
    let Some(shared) = crate::scale::Shared::new("gc").await else {
        return;
    };
    let args = shared.args();
    let s = common::serve().args(&args).start();
    let tok = shared.token("alice");
    let gone = pack("gone", "1.0.0", "d", "orphaned body");
    let kept = pack("kept", "1.0.0", "d", "kept body");
    for t in [&gone, &kept] {
        let (status, body) = publish_raw(&s.url, &tok, t.clone()).await;
        assert_eq!(status, 200, "publish: {body}");
    }
    // What a publish killed between its blob and its row leaves.
    let (client, conn) = tokio_postgres::connect(&shared.database, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute("DELETE FROM versions WHERE name = 'gone'")
        .await
        .unwrap();
    let (gone, kept) = (Checksum::of_bytes(&gone), Checksum::of_bytes(&kept));
    let store: Vec<&str> = args.iter().map(String::as_str).collect();
    let with = |extra: &[&str]| gc(&[store.as_slice(), extra].concat());

    let fresh = with(&[]);
    assert!(!fresh.contains(&gone.hex()), "fresh orphan listed: {fresh}");
    assert!(
        fresh.contains("2 blob(s) stored; 1 unreferenced within"),
        "{fresh}"
    );
    // S3 keeps times in seconds: let the orphan be at least a second old.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let listed = with(&["--older-than", "1"]);
    assert!(
        listed.contains(&gone.to_string()),
        "orphan not listed: {listed}"
    );
    assert!(
        !listed.contains(&kept.hex()),
        "referenced blob listed: {listed}"
    );
    assert_eq!(
        with(&["--older-than", "1"]),
        listed,
        "dry run changed something"
    );
    let deleted = with(&["--older-than", "1", "--delete"]);
    assert!(
        deleted.contains("deleted 1 unreferenced blob(s)"),
        "{deleted}"
    );
    let after = with(&["--older-than", "1"]);
    assert!(
        after.contains("0 unreferenced blob(s), 0 bytes (1 blob(s) stored"),
        "{after}"
    );
    download(&s.url, "kept").await;
    drop(s);
    shared.drop_db().await;
}
