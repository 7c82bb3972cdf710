//! SIGKILL the registry mid-publish, over and over, on one data dir.
//!
//! Each run starts `skillpm-registry serve` on the same data directory,
//! streams publishes from several concurrent clients (small packages and
//! 256 KiB incompressible ones, so kills land in body reads, unpacking,
//! blob writes and commits), SIGKILLs the server at a seeded random
//! moment, restarts it and checks:
//!
//! - the staging dir `DATA/tmp` is empty after the restart;
//! - every listed version downloads and matches its checksum, and every
//!   publish the client saw acknowledged is listed with its checksum;
//! - every file under `DATA/blobs` hashes to its own name (no torn blob);
//! - a blob no listed version references (an orphan: stored, then killed
//!   before its row committed) is not served by any URL: its version's
//!   download answers 404 and no path addresses blobs by hash;
//! - publishing such a version again works and serves the right bytes.
//!
//! `SKILLPM_KILL_SEED=<n>` replays a given sequence of kill moments.

use crate::common;
use common::seeded::{noise, Lcg};
use common::tree::entries;
use common::{pack_with_files, skill_md, Server};
use skillpm::checksum::Checksum;
use skillpm::source::registry::client::{IndexResponse, RegistryClient};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RUNS: u64 = 24;
const PUBLISHERS: usize = 4;
/// Kills land 0 to this many milliseconds after the publishes start.
const WINDOW_MS: u64 = 400;
const BIG: usize = 256 * 1024;

#[derive(Clone, Debug)]
struct Attempt {
    name: String,
    vers: String,
    cksum: Checksum,
    bytes: Arc<Vec<u8>>,
}

fn package(run: u64, publisher: usize, i: u32) -> Attempt {
    let name = format!("crash-{run}-{publisher}");
    let vers = format!("1.{i}.0");
    let md = skill_md(&name, &vers, "d", &format!("run {run}, publish {i}"));
    let big;
    let files: Vec<(&str, &[u8])> = if i % 3 == 2 {
        big = noise(run << 40 | (publisher as u64) << 32 | u64::from(i), BIG);
        vec![("assets/blob.bin", &big[..])]
    } else {
        Vec::new()
    };
    let bytes = pack_with_files(&name, &md, &files);
    Attempt {
        name,
        cksum: Checksum::of_bytes(&bytes),
        vers,
        bytes: Arc::new(bytes),
    }
}

/// `name`'s listed versions: version -> checksum (empty if unknown).
async fn listed(c: &RegistryClient, name: &str) -> BTreeMap<String, Checksum> {
    match c.index(name, None).await {
        Ok(IndexResponse::Fresh { index, .. }) => index
            .versions
            .iter()
            .map(|v| (v.vers.to_string(), v.cksum))
            .collect(),
        Ok(IndexResponse::NotModified) => panic!("304 without If-None-Match"),
        Err(e) if e.is_not_found() => BTreeMap::new(),
        Err(e) => panic!("index of {name}: {e}"),
    }
}

/// Blob files under DATA/blobs: checksum -> bytes.
fn blob_files(data: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(data.join("blobs"))
        .expect("read blobs dir")
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read blob"),
            )
        })
        .collect()
}

async fn status(http: &reqwest::Client, url: &str) -> u16 {
    http.get(url).send().await.expect("GET").status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_publish_loses_nothing_acknowledged_and_serves_no_orphans() {
    let started = Instant::now();
    let seed: u64 = std::env::var("SKILLPM_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = Lcg(seed);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let http = reqwest::Client::new();
    let mut token = None;
    let mut names: Vec<String> = Vec::new();
    let mut acked_all: Vec<Attempt> = Vec::new();
    let mut attempts_all: BTreeMap<String, Attempt> = BTreeMap::new();
    let mut orphans_seen = BTreeSet::new();
    let (mut attempted, mut unacked_listed, mut tmp_left, mut republished) = (0, 0, 0, 0);

    for run in 0..RUNS {
        let mut s = Server::start_quiet(&data, &[]);
        let tok = token.get_or_insert_with(|| s.token("alice")).clone();
        let attempts = Arc::new(Mutex::new(Vec::<Attempt>::new()));
        let acked = Arc::new(Mutex::new(Vec::<Attempt>::new()));
        let mut tasks = Vec::new();
        for p in 0..PUBLISHERS {
            names.push(format!("crash-{run}-{p}"));
            let (attempts, acked) = (attempts.clone(), acked.clone());
            let c = s.client(Some(&tok));
            tasks.push(tokio::spawn(async move {
                for i in 0..1000u32 {
                    let a = tokio::task::spawn_blocking(move || package(run, p, i))
                        .await
                        .expect("pack");
                    attempts.lock().expect("lock").push(a.clone());
                    match c.publish(a.bytes.to_vec()).await {
                        Ok(r) => {
                            assert_eq!(r.cksum, a.cksum, "{}@{}", a.name, a.vers);
                            acked.lock().expect("lock").push(a);
                        }
                        // The server is gone.
                        Err(_) => return,
                    }
                }
                panic!("the server was never killed");
            }));
        }
        let delay = Duration::from_millis(rng.next() % WINDOW_MS);
        tokio::time::sleep(delay).await;
        s.kill();
        for t in tasks {
            t.await.expect("publisher");
        }
        drop(s);
        let attempts = attempts.lock().expect("lock").clone();
        let acked = acked.lock().expect("lock").clone();
        attempted += attempts.len();
        attempts_all.extend(attempts.iter().map(|a| (a.cksum.hex(), a.clone())));
        tmp_left += entries(&data.join("tmp")).expect("read tmp").len();

        // Restart on the same data.
        let s = Server::start_quiet(&data, &[]);
        s.wait_healthy().await;
        let left = entries(&data.join("tmp")).expect("read tmp");
        assert!(
            left.is_empty(),
            "run {run} (seed {seed}): tmp/ not cleaned on restart: {left:?}"
        );
        let c = s.client(None);

        // Every listed version of this run downloads and matches.
        let mut referenced = BTreeSet::new();
        let mut listed_now = BTreeMap::new();
        for name in &names {
            let l = listed(&c, name).await;
            referenced.extend(l.values().map(|c| c.hex()));
            listed_now.insert(name.clone(), l);
        }
        for name in &names[names.len() - PUBLISHERS..] {
            for (vers, sum) in &listed_now[name] {
                let bytes = c
                    .download(name, vers, 1 << 20)
                    .await
                    .unwrap_or_else(|e| panic!("run {run} (seed {seed}): {name}@{vers}: {e}"));
                assert_eq!(
                    Checksum::of_bytes(&bytes),
                    *sum,
                    "run {run} (seed {seed}): {name}@{vers} does not match its checksum"
                );
            }
        }
        // Nothing acknowledged is lost, in this run or any before.
        acked_all.extend(acked.iter().cloned());
        for a in &acked_all {
            assert_eq!(
                listed_now[&a.name].get(&a.vers),
                Some(&a.cksum),
                "run {run} (seed {seed}): acknowledged {}@{} is not listed",
                a.name,
                a.vers
            );
        }
        unacked_listed += attempts
            .iter()
            .filter(|a| listed_now[&a.name].contains_key(&a.vers))
            .count()
            - acked.len();

        // Blobs: none torn; orphans are unlisted attempts and unreachable.
        let blobs = blob_files(&data);
        let mut orphan_attempts = Vec::new();
        for (hex, bytes) in &blobs {
            assert_eq!(
                Checksum::of_bytes(bytes).hex(),
                *hex,
                "run {run} (seed {seed}): blob {hex} does not hold the bytes it is named after"
            );
            if referenced.contains(hex) {
                continue;
            }
            orphans_seen.insert(hex.clone());
            let a = attempts_all.get(hex).unwrap_or_else(|| {
                panic!("run {run} (seed {seed}): orphan blob {hex} is from no publish attempt")
            });
            assert!(!listed_now[&a.name].contains_key(&a.vers));
            for path in [
                format!("/api/v1/skills/{}/{}/download", a.name, a.vers),
                format!("/blobs/{hex}"),
                format!("/api/v1/blobs/{hex}"),
                format!("/{hex}"),
                format!("/index/{hex}"),
                format!("/api/v1/skills/{}/{hex}/download", a.name),
            ] {
                let st = status(&http, &format!("{}{path}", s.url)).await;
                assert!(
                    st == 404 || st == 400,
                    "run {run} (seed {seed}): orphan blob {hex} reachable? GET {path} -> {st}"
                );
            }
            orphan_attempts.push(a.clone());
        }
        // Unlisted attempts never download.
        for a in &attempts {
            if !listed_now[&a.name].contains_key(&a.vers) {
                let url = format!("{}/api/v1/skills/{}/{}/download", s.url, a.name, a.vers);
                assert_eq!(status(&http, &url).await, 404, "run {run}: {url}");
            }
        }
        // An orphan's version can be published again and then serves the
        // right bytes (the stored blob is reused, so it must be whole).
        if let Some(a) = orphan_attempts.first() {
            let r = s
                .client(Some(&tok))
                .publish(a.bytes.to_vec())
                .await
                .expect("republish an orphaned version");
            assert_eq!(r.cksum, a.cksum);
            let bytes = c
                .download(&a.name, &a.vers, 1 << 20)
                .await
                .expect("download");
            assert_eq!(Checksum::of_bytes(&bytes), a.cksum);
            acked_all.push(a.clone());
            republished += 1;
        }
    }

    // Finally, everything ever listed still downloads and matches.
    let s = Server::start_quiet(&data, &[]);
    s.wait_healthy().await;
    let c = s.client(None);
    let mut total = 0;
    for name in &names {
        for (vers, sum) in listed(&c, name).await {
            let bytes = c.download(name, &vers, 1 << 20).await.expect("download");
            assert_eq!(Checksum::of_bytes(&bytes), sum, "{name}@{vers}");
            total += 1;
        }
    }
    eprintln!(
        "{RUNS} SIGKILLs (seed {seed}): {attempted} publishes attempted, {} acknowledged, \
         {unacked_listed} committed but unacknowledged, {total} listed at the end; \
         {} orphan blobs seen (never served, {republished} republished), \
         {tmp_left} tmp/ leftovers cleaned on restart; {:.1}s",
        acked_all.len() - republished,
        orphans_seen.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        acked_all.len() > RUNS as usize,
        "too few publishes got through"
    );
    assert!(
        attempted > acked_all.len() - republished,
        "no kill landed mid-publish"
    );
}
