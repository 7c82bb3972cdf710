//! Scale-out tests: several `skillpm-registry serve` replicas sharing one
//! real PostgreSQL database and one S3-compatible bucket.
//!
//! They need `SKILLPM_TEST_POSTGRES` (a postgres:// URL of a role that may
//! create databases) and `SKILLPM_TEST_S3` (`s3://bucket`) plus the usual
//! `AWS_*` variables; without them each test prints why and passes.
//! `scripts/services.sh start` starts both services locally and
//! `eval "$(scripts/services.sh env)"` sets the variables; CI also sets
//! `SKILLPM_REQUIRE_SERVICES=1` so that a missing service fails the run.
//!
//! Every test gets its own fresh database and its own key prefix.

use crate::common;

use common::{pack, Registry, BIN};
use skillpm::checksum::Checksum;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One fresh database and blob prefix on the shared services (also used
/// by `gc.rs`).
pub(crate) struct Shared {
    admin: String,
    db_name: String,
    pub(crate) database: String,
    blobs: String,
}

impl Shared {
    /// `None` (after saying why) when the services are not configured.
    pub(crate) async fn new(test: &str) -> Option<Shared> {
        let (admin, s3) = common::services(test)?;
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let db_name = format!(
            "skillpm_{test}_{}_{}_{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        );
        let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .expect("connect to SKILLPM_TEST_POSTGRES");
        tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {db_name}"))
            .await
            .expect("create test database");
        let mut url = url::Url::parse(&admin).expect("SKILLPM_TEST_POSTGRES is a URL");
        url.set_path(&format!("/{db_name}"));
        Some(Shared {
            admin,
            database: url.to_string(),
            blobs: format!("{}/{db_name}", s3.trim_end_matches('/')),
            db_name,
        })
    }

    pub(crate) fn args(&self) -> Vec<String> {
        vec![
            "--database".into(),
            self.database.clone(),
            "--blobs".into(),
            self.blobs.clone(),
        ]
    }

    pub(crate) fn token(&self, user: &str) -> String {
        common::token_in(&["--database".into(), self.database.clone().into()], user)
    }

    pub(crate) async fn drop_db(self) {
        let (client, conn) = tokio_postgres::connect(&self.admin, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        let _ = client
            .batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.db_name
            ))
            .await;
    }
}

/// Spawns every replica first and only then waits for their addresses, so
/// they run their start-up schema migrations at the same time.
fn start_replicas(n: usize, args: &[String]) -> Vec<Registry> {
    common::serve().args(args).start_many(n)
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn publish(url: &str, token: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    common::publish_raw(url, token, body).await
}

/// Index body, ETag and parsed JSON.
async fn index(url: &str, name: &str) -> (Vec<u8>, String, serde_json::Value) {
    let resp = http()
        .get(format!("{url}/index/{name}"))
        .send()
        .await
        .expect("index");
    assert_eq!(resp.status(), 200, "index {name} on {url}");
    let etag = resp.headers()["etag"].to_str().unwrap().to_string();
    let body = resp.bytes().await.unwrap().to_vec();
    let json = serde_json::from_slice(&body).unwrap();
    (body, etag, json)
}

/// How long a replica may keep serving an index another replica changed.
const PROPAGATION: Duration = Duration::from_secs(1);

/// The index of `name` on `url` once `want` holds of it. Replicas cache
/// rendered indexes, so another replica's change shows within
/// [`PROPAGATION`]; this fails if it takes longer.
async fn index_when(
    url: &str,
    name: &str,
    since: Instant,
    want: impl Fn(&serde_json::Value) -> bool,
) -> (Vec<u8>, String, serde_json::Value) {
    loop {
        let got = index(url, name).await;
        if want(&got.2) {
            return got;
        }
        assert!(
            since.elapsed() < PROPAGATION,
            "{url} still serves the old index of {name} {:?} after the change: {}",
            since.elapsed(),
            got.2
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn download(url: &str, name: &str, vers: &str) -> Vec<u8> {
    let resp = http()
        .get(format!("{url}/api/v1/skills/{name}/{vers}/download"))
        .send()
        .await
        .expect("download");
    assert_eq!(resp.status(), 200, "download {name}@{vers} from {url}");
    assert_eq!(
        resp.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    resp.bytes().await.unwrap().to_vec()
}

/// `vers -> (cksum, yanked)` of an index.
fn listed(index: &serde_json::Value) -> BTreeMap<String, (String, bool)> {
    index["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["vers"].as_str().unwrap().to_string(),
                (
                    v["cksum"].as_str().unwrap().to_string(),
                    v["yanked"].as_bool().unwrap(),
                ),
            )
        })
        .collect()
}

async fn send(req: reqwest::RequestBuilder) -> (u16, serde_json::Value) {
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test]
async fn two_replicas_share_publish_index_download_yank_search_owners() {
    let Some(shared) = Shared::new("suite").await else {
        return;
    };
    // Replica B reads its storage from a config file instead of flags.
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("registry.toml");
    std::fs::write(
        &cfg,
        format!(
            "database = {:?}\nblobs = {:?}\n",
            shared.database, shared.blobs
        ),
    )
    .unwrap();
    let mut reps = start_replicas(1, &shared.args());
    reps.extend(start_replicas(
        1,
        &["--config".to_string(), cfg.display().to_string()],
    ));
    let (a, b) = (reps[0].url.clone(), reps[1].url.clone());
    let alice = shared.token("alice");
    let bob = shared.token("bob");

    // Publish alternately; every version lands in the shared store.
    let mut sums = BTreeMap::new();
    for (i, (url, vers)) in [(&a, "1.0.0"), (&b, "1.1.0"), (&a, "1.2.0-beta.1")]
        .into_iter()
        .enumerate()
    {
        let tar = pack(
            "hello",
            vers,
            "Say hello",
            &format!("Greets people, take {i}."),
        );
        let (st, body) = publish(url, &alice, tar.clone()).await;
        assert_eq!(st, 200, "{body}");
        assert_eq!(body["cksum"], Checksum::of_bytes(&tar).to_string().as_str());
        sums.insert(vers.to_string(), Checksum::of_bytes(&tar).to_string());
    }
    let (st, _) = publish(&b, &alice, pack("world", "0.1.0", "Map the world", "")).await;
    assert_eq!(st, 200);

    // Both replicas give the same index, byte for byte, with one ETag, and
    // the ETag of one is a valid If-None-Match at the other.
    let (body_a, etag_a, json) = index(&a, "hello").await;
    let (body_b, etag_b, _) = index(&b, "hello").await;
    assert_eq!(body_a, body_b);
    assert_eq!(etag_a, etag_b);
    let resp = http()
        .get(format!("{b}/index/hello"))
        .header("If-None-Match", &etag_a)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 304);
    assert_eq!(
        resp.headers()["cache-control"],
        "public, max-age=0, must-revalidate"
    );
    let versions = listed(&json);
    assert_eq!(versions.len(), 3);
    for (i, (vers, (cksum, _))) in versions.iter().enumerate() {
        assert_eq!(&sums[vers], cksum);
        let from = if i % 2 == 0 { &a } else { &b };
        let bytes = download(from, "hello", vers).await;
        assert_eq!(&Checksum::of_bytes(&bytes).to_string(), cksum);
    }

    // Immutable across replicas: the same version again is 409 on the other.
    let (st, body) = publish(&b, &alice, pack("hello", "1.0.0", "Say hello", "other")).await;
    assert_eq!(st, 409, "{body}");
    let (st, _) = publish(&a, &alice, pack("hello", "1.0.0+build", "Say hello", "x")).await;
    assert_eq!(st, 409);

    // Yank on one, seen on the other within a second; downloads keep
    // working.
    let (st, _) = send(
        http()
            .delete(format!("{b}/api/v1/skills/hello/1.0.0/yank"))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(st, 200);
    let yanked = |j: &serde_json::Value| listed(j)["1.0.0"].1;
    let (_, etag_yanked, _) = index_when(&a, "hello", Instant::now(), yanked).await;
    assert_ne!(etag_yanked, etag_a);
    download(&a, "hello", "1.0.0").await;
    let (st, _) = send(
        http()
            .put(format!("{a}/api/v1/skills/hello/1.0.0/unyank"))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(st, 200);
    let (_, etag_back, _) = index_when(&b, "hello", Instant::now(), |j| !yanked(j)).await;
    assert_eq!(etag_back, etag_a, "same rows, same ETag");
    let (st, _) = send(
        http()
            .delete(format!("{a}/api/v1/skills/hello/9.9.9/yank"))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(st, 404);

    // Owners: bob cannot publish until alice adds him on the other replica.
    let (st, _) = publish(&a, &bob, pack("hello", "2.0.0", "Say hello", "")).await;
    assert_eq!(st, 403);
    let (st, _) = send(
        http()
            .put(format!("{b}/api/v1/skills/hello/owners"))
            .bearer_auth(&alice)
            .json(&serde_json::json!({"users": ["bob"]})),
    )
    .await;
    assert_eq!(st, 200);
    let (st, _) = publish(&a, &bob, pack("hello", "2.0.0", "Say hello", "")).await;
    assert_eq!(st, 200);
    let (st, owners) = send(http().get(format!("{a}/api/v1/skills/hello/owners"))).await;
    assert_eq!(st, 200);
    assert_eq!(
        owners["users"],
        serde_json::json!([{"login": "alice"}, {"login": "bob"}])
    );
    let (st, body) = send(
        http()
            .delete(format!("{a}/api/v1/skills/hello/owners"))
            .bearer_auth(&alice)
            .json(&serde_json::json!({"users": ["alice", "bob"]})),
    )
    .await;
    assert_eq!(st, 400, "{body}");

    // Search on either replica sees everything.
    let (st, res) = send(http().get(format!("{b}/api/v1/search?q=hello"))).await;
    assert_eq!(st, 200);
    assert_eq!(res["skills"][0]["name"], "hello");
    assert_eq!(res["skills"][0]["max_version"], "2.0.0");
    let (_, res) = send(http().get(format!("{a}/api/v1/search?q=world"))).await;
    assert_eq!(res["skills"][0]["name"], "world");
    assert_eq!(res["meta"]["total"], 1);

    // A token revoked with the CLI against PostgreSQL is refused by both.
    let out = Command::new(BIN)
        .args(["token", "revoke", "--database", &shared.database, &bob])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for url in [&a, &b] {
        let (st, _) = publish(url, &bob, pack("hello", "3.0.0", "Say hello", "")).await;
        assert_eq!(st, 401);
    }
    drop(reps);
    shared.drop_db().await;
}

/// Every replica keeps rendered indexes; a yank, an un-yank or a publish
/// made through any one of them is served by all the others within a
/// second, and by the one that made it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn index_changes_on_one_replica_reach_every_replica_within_a_second() {
    let Some(shared) = Shared::new("gens").await else {
        return;
    };
    let reps = start_replicas(3, &shared.args());
    let urls: Vec<String> = reps.iter().map(|r| r.url.clone()).collect();
    let alice = shared.token("alice");
    for vers in ["1.0.0", "1.1.0"] {
        let (st, body) = publish(&urls[0], &alice, pack("cached", vers, "Cached", "")).await;
        assert_eq!(st, 200, "{body}");
    }
    let yanked = |j: &serde_json::Value| listed(j)["1.1.0"].1;
    for round in 0..6 {
        // Warm every replica's cache with the current index.
        for u in &urls {
            for _ in 0..3 {
                index(u, "cached").await;
            }
        }
        let by = &urls[round % urls.len()];
        let yank = round % 2 == 0;
        let req = if yank {
            http().delete(format!("{by}/api/v1/skills/cached/1.1.0/yank"))
        } else {
            http().put(format!("{by}/api/v1/skills/cached/1.1.0/unyank"))
        };
        let (st, body) = send(req.bearer_auth(&alice)).await;
        assert_eq!(st, 200, "{body}");
        let changed = Instant::now();
        assert_eq!(
            yanked(&index(by, "cached").await.2),
            yank,
            "{by} serves its own change at once"
        );
        let mut etags = Vec::new();
        for u in &urls {
            let (_, etag, _) = index_when(u, "cached", changed, |j| yanked(j) == yank).await;
            etags.push(etag);
        }
        assert!(etags.windows(2).all(|w| w[0] == w[1]), "{etags:?}");
    }
    // A new version published on one replica is listed by the others too.
    let (st, _) = publish(&urls[2], &alice, pack("cached", "2.0.0", "Cached", "")).await;
    assert_eq!(st, 200);
    let published = Instant::now();
    for u in &urls {
        index_when(u, "cached", published, |j| listed(j).contains_key("2.0.0")).await;
    }
    drop(reps);
    shared.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_publish_of_one_version_on_two_replicas_has_one_winner() {
    let Some(shared) = Shared::new("race").await else {
        return;
    };
    let reps = start_replicas(2, &shared.args());
    let alice = shared.token("alice");
    for round in 0..8 {
        let vers = format!("1.0.{round}");
        // Odd rounds: identical bytes (one blob key); even: different bytes.
        let body_b = if round % 2 == 0 { "from b" } else { "same" };
        let tar_a = pack("race", &vers, "Race", "same");
        let tar_b = pack("race", &vers, "Race", body_b);
        let (ra, rb) = tokio::join!(
            publish(&reps[0].url, &alice, tar_a.clone()),
            publish(&reps[1].url, &alice, tar_b.clone())
        );
        let mut statuses = [ra.0, rb.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "round {round}: {} / {}", ra.1, rb.1);
        let winner = if ra.0 == 200 { &tar_a } else { &tar_b };
        let (_, _, json) = index_when(&reps[round % 2].url, "race", Instant::now(), |j| {
            listed(j).contains_key(&vers)
        })
        .await;
        let want = Checksum::of_bytes(winner).to_string();
        assert_eq!(listed(&json)[&vers].0, want);
        let got = download(&reps[(round + 1) % 2].url, "race", &vers).await;
        assert_eq!(Checksum::of_bytes(&got).to_string(), want);
    }
    drop(reps);
    shared.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_of_one_replica_mid_publish_leaves_both_consistent() {
    let Some(shared) = Shared::new("kill").await else {
        return;
    };
    let mut reps = start_replicas(2, &shared.args());
    let alice = shared.token("alice");
    let url_a = reps[0].url.clone();
    let url_b = reps[1].url.clone();

    // Two publishers per replica, so the kill lands with requests in flight.
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for (url, major) in [(&url_a, 1), (&url_a, 2), (&url_b, 3), (&url_b, 4)] {
        let (url, alice, acked) = (url.clone(), alice.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..15 {
                let vers = format!("{major}.0.{i}");
                let tar = pack("crash", &vers, "Crash test", &format!("v{vers}"));
                let resp = http()
                    .put(format!("{url}/api/v1/skills/new"))
                    .bearer_auth(&alice)
                    .body(tar)
                    .send()
                    .await;
                match resp {
                    Ok(r) if r.status() == 200 => acked.lock().unwrap().push(vers),
                    Ok(r) => panic!("publish {vers} on {url}: {}", r.status()),
                    // The replica was killed: stop publishing to it.
                    Err(_) => return,
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked
        .lock()
        .unwrap()
        .iter()
        .filter(|v| v.starts_with('1'))
        .count()
        < 3
    {
        assert!(Instant::now() < deadline, "replica A never published");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    reps[0].child.kill().expect("SIGKILL replica A");
    reps[0].child.wait().unwrap();
    // B keeps serving reads while its publishers finish.
    let (_, _, _) = index(&url_b, "crash").await;
    for t in tasks {
        t.await.expect("publisher task");
    }
    let acked = acked.lock().unwrap().clone();
    assert_eq!(
        acked
            .iter()
            .filter(|v| v.starts_with('3') || v.starts_with('4'))
            .count(),
        30,
        "every publish to the surviving replica succeeds"
    );

    // A fresh replica in A's place agrees with B on every byte.
    reps.extend(start_replicas(1, &shared.args()));
    let url_c = reps[2].url.clone();
    let (body_b, etag_b, json) = index(&url_b, "crash").await;
    let (body_c, etag_c, _) = index(&url_c, "crash").await;
    assert_eq!(body_b, body_c);
    assert_eq!(etag_b, etag_c);
    let versions = listed(&json);
    eprintln!(
        "sigkill test: {} publishes acknowledged in all, {} versions listed",
        acked.len(),
        versions.len()
    );
    for v in &acked {
        assert!(versions.contains_key(v), "acknowledged {v} is listed");
    }
    for (i, (vers, (cksum, _))) in versions.iter().enumerate() {
        let from = if i % 2 == 0 { &url_b } else { &url_c };
        let bytes = download(from, "crash", vers).await;
        assert_eq!(
            &Checksum::of_bytes(&bytes).to_string(),
            cksum,
            "{vers} downloads with the listed checksum"
        );
    }
    drop(reps);
    shared.drop_db().await;
}

fn run_migrate(data: &Path, shared: &Shared) -> String {
    let out = Command::new(BIN)
        .arg("migrate")
        .arg("--from")
        .arg(data)
        .args(["--to", &shared.database, "--blobs", &shared.blobs])
        .output()
        .expect("migrate");
    assert!(
        out.status.success(),
        "migrate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrate_copies_an_embedded_registry_of_200_versions() {
    let Some(shared) = Shared::new("migrate").await else {
        return;
    };
    // A real embedded registry, filled over HTTP.
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["token", "create", "--user", "alice", "--data"])
        .arg(data.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let alice = String::from_utf8(out.stdout).unwrap().trim().to_string();
    // It signs: the signatures must come along.
    let keys = data.path().join("keys");
    let out = Command::new(BIN)
        .args(["key", "generate", "--dir"])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(out.status.success());
    let keyid = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let embedded = start_replicas(
        1,
        &[
            "--data".to_string(),
            data.path().display().to_string(),
            "--keys".to_string(),
            keys.display().to_string(),
        ],
    );
    let url = embedded[0].url.clone();
    let mut names: Vec<String> = (0..20).map(|i| format!("skill-{i:02}")).collect();
    let jobs: Vec<(String, String)> = names
        .iter()
        .flat_map(|n| (0..10).map(move |v| (n.clone(), format!("1.{v}.0"))))
        .collect();
    assert_eq!(jobs.len(), 200);
    let jobs = Arc::new(Mutex::new(jobs));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (jobs, url, alice) = (jobs.clone(), url.clone(), alice.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let Some((name, vers)) = jobs.lock().unwrap().pop() else {
                    return;
                };
                let tar = pack(&name, &vers, &format!("Skill {name}"), &format!("v{vers}"));
                let (st, body) = publish(&url, &alice, tar).await;
                assert_eq!(st, 200, "{body}");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // One with a dependency, which the migrated index must keep.
    let top = common::pack_with_files(
        "top",
        &common::skill_md("top", "1.0.0", "Top", "needs skill-00"),
        &[("skill.toml", b"[dependencies]\nskill-00 = \"^1.2\"\n")],
    );
    let (st, body) = publish(&url, &alice, top).await;
    assert_eq!(st, 200, "{body}");
    names.push("top".to_string());
    let (st, _) = send(
        http()
            .delete(format!("{url}/api/v1/skills/skill-03/1.4.0/yank"))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(st, 200);
    let mut before = BTreeMap::new();
    for n in &names {
        let (body, etag, json) = index(&url, n).await;
        before.insert(n.clone(), (body, etag, listed(&json)));
    }
    drop(embedded);

    let first = run_migrate(data.path(), &shared);
    assert!(
        first.contains("migrated 201 versions of 21 skills (201 new), 201 blobs (201 uploaded)"),
        "{first}"
    );
    // Idempotent: nothing new the second time.
    let second = run_migrate(data.path(), &shared);
    assert!(
        second.contains("migrated 201 versions of 21 skills (0 new), 201 blobs (0 uploaded)"),
        "{second}"
    );

    // Two replicas on the shared store serve exactly what the embedded one
    // did (same index bytes, so same ETags), and every blob verifies.
    let reps = start_replicas(2, &shared.args());
    let mut n = 0;
    for (i, name) in names.iter().enumerate() {
        let (body, etag, versions) = &before[name];
        let (body2, etag2, _) = index(&reps[i % 2].url, name).await;
        assert_eq!(body, &body2, "{name}");
        assert_eq!(etag, &etag2);
        for (vers, (cksum, _)) in versions {
            let bytes = download(&reps[n % 2].url, name, vers).await;
            assert_eq!(&Checksum::of_bytes(&bytes).to_string(), cksum);
            n += 1;
        }
    }
    assert_eq!(n, 201);
    let (_, _, json) = index(&reps[0].url, "top").await;
    assert_eq!(
        json["versions"][0]["deps"],
        serde_json::json!([{ "name": "skill-00", "req": "^1.2" }]),
        "the dependencies came along"
    );
    assert_eq!(
        json["versions"][0]["sig"]["keyid"],
        keyid.as_str(),
        "the signatures came along (and the index bytes above are the same)"
    );
    let (_, _, json) = index(&reps[0].url, "skill-03").await;
    assert!(listed(&json)["1.4.0"].1, "the yank came along");
    // Tokens came along.
    let (st, _) = publish(&reps[1].url, &alice, pack("skill-00", "2.0.0", "Skill", "")).await;
    assert_eq!(st, 200);
    // A dependency published to the shared store reaches the other replica.
    let top2 = common::pack_with_files(
        "top",
        &common::skill_md("top", "1.1.0", "Top", "needs skill-00 2"),
        &[("skill.toml", b"[dependencies]\nskill-00 = \"^2\"\n")],
    );
    let since = Instant::now();
    let (st, body) = publish(&reps[0].url, &alice, top2).await;
    assert_eq!(st, 200, "{body}");
    let (_, _, json) = index_when(&reps[1].url, "top", since, |j| {
        j["versions"].as_array().is_some_and(|v| v.len() == 2)
    })
    .await;
    assert_eq!(
        json["versions"][1]["deps"],
        serde_json::json!([{ "name": "skill-00", "req": "^2" }])
    );

    // A corrupt source blob stops the migration before any row is written.
    let victim = before["skill-05"].2["1.0.0"].0.clone();
    let hex = victim.trim_start_matches("sha256:");
    let blob = std::fs::read_dir(data.path().join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().contains(hex))
        .expect("blob file");
    std::fs::write(&blob, b"not the tarball").unwrap();
    let fresh = Shared::new("migrate_bad").await.unwrap();
    let out = Command::new(BIN)
        .arg("migrate")
        .arg("--from")
        .arg(data.path())
        .args(["--to", &fresh.database, "--blobs", &fresh.blobs])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not match its checksum"), "{err}");
    drop(reps);
    shared.drop_db().await;
    fresh.drop_db().await;
}
