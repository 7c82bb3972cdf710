//! A hostile or broken registry: a loopback mock that lies about
//! checksums, truncates, floods, trickles, redirects, returns garbage and
//! 500s. Every case must end in exit 1 with one `error:` line, nothing
//! installed, and skills.toml / skills.lock / the install root unchanged.

use crate::common;
use crate::mock;

use common::{run_refused, Fixture};
use mock::{good_package, MockServer, Reply, Req};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DL: &str = "/api/v1/skills/evil/1.0.0/download";

struct World {
    f: Fixture,
    server: MockServer,
}

/// A project with `good@1.0.0` installed; `evil@1.0.0` is indexed with the
/// checksum of a clean package, and `hostile` decides what the server
/// really does for any request it wants to intercept.
fn world(hostile: impl Fn(&Req, &str) -> Option<Reply> + Send + Sync + 'static) -> World {
    let mut f = Fixture::new();
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gate = armed.clone();
    let server = mock::registry(
        vec![
            ("good".into(), "1.0.0".into(), good_package("good", "1.0.0")),
            ("evil".into(), "1.0.0".into(), good_package("evil", "1.0.0")),
        ],
        move |req, base| {
            if gate.load(Ordering::SeqCst) {
                hostile(req, base)
            } else {
                None
            }
        },
    );
    f.extra_env
        .push(("SKILLPM_REGISTRY".into(), server.url.clone()));
    f.extra_env
        .push(("SKILLPM_HTTP_TIMEOUT".into(), "0.5".into()));
    f.ok(&["init"]);
    f.ok(&["add", "good@1"]);
    armed.store(true, Ordering::SeqCst);
    World { f, server }
}

fn host(w: &World) -> String {
    w.server.url.trim_start_matches("http://").to_string()
}

fn add_evil(w: &World, mention: &[&str]) -> String {
    run_refused(&w.f, &["add", "evil@1"], mention)
}

#[test]
fn wrong_checksum_is_fatal_and_names_both() {
    let evil = mock::RawTar::new()
        .file("SKILL.md", mock::skill_md("evil", "1.0.0").as_bytes())
        .file("payload.sh", b"rm -rf ~\n")
        .gz();
    let sent = mock::sha256(&evil);
    let indexed = mock::sha256(&good_package("evil", "1.0.0"));
    let w = world(move |req, _| (req.path == DL).then(|| mock::bytes(evil.clone())));
    let err = add_evil(&w, &["checksum mismatch", "evil@1.0.0", &sent, &indexed]);
    assert!(!err.contains("payload"), "{err}");
}

#[test]
fn truncated_body() {
    let body = good_package("evil", "1.0.0");
    let w = world(move |req, _| {
        (req.path == DL).then(|| {
            let mut raw = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len() + 5000
            )
            .into_bytes();
            raw.extend_from_slice(&body);
            Reply::Raw(raw)
        })
    });
    add_evil(&w, &["evil@1.0.0", &host(&w)]);
}

#[test]
fn body_over_the_cap_declared() {
    let w = world(|req, _| {
        (req.path == DL).then(|| {
            Reply::Raw(
                b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            )
        })
    });
    add_evil(&w, &["more than 10485760 bytes", &host(&w)]);
}

#[test]
fn body_over_the_cap_streamed_stops_reading() {
    // No Content-Length: the body just keeps coming. The client must hang
    // up near the cap, not read the 1 GiB on offer.
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let w = world(move |req, _| {
        (req.path == DL).then(|| {
            let counter = counter.clone();
            Reply::Stream {
                head: b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec(),
                chunks: Box::new((0..16 * 1024).map(move |_| {
                    counter.fetch_add(64 * 1024, Ordering::SeqCst);
                    vec![0u8; 64 * 1024]
                })),
            }
        })
    });
    add_evil(&w, &["more than 10485760 bytes", &host(&w)]);
    // Give the server thread a moment to notice the hang-up.
    std::thread::sleep(Duration::from_millis(300));
    let total = sent.load(Ordering::SeqCst);
    // Cap (10 MiB) plus socket buffers; far below the 1 GiB on offer.
    assert!(total < 64 << 20, "server managed to send {total} bytes");
}

#[test]
fn one_byte_per_second_times_out_naming_the_host() {
    let body = good_package("evil", "1.0.0");
    let w = world(move |req, _| {
        (req.path == DL).then(|| Reply::Trickle {
            head: format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes(),
            body: body.clone(),
            every: Duration::from_secs(1),
        })
    });
    let start = Instant::now();
    let err = add_evil(&w, &[&host(&w), "evil@1.0.0"]);
    assert!(
        err.contains("timed out") || err.contains("timeout"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn slowloris_hits_the_total_deadline() {
    // A byte every 100 ms never trips the 0.5 s read timeout; the
    // per-request deadline (10 x timeout = 5 s) must.
    let body = good_package("evil", "1.0.0");
    let w = world(move |req, _| {
        (req.path == DL).then(|| Reply::Trickle {
            head: format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len() + 1_000_000
            )
            .into_bytes(),
            body: vec![0u8; 1_000_000],
            every: Duration::from_millis(100),
        })
    });
    let start = Instant::now();
    add_evil(&w, &[&host(&w), "evil@1.0.0"]);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(15),
        "{took:?}"
    );
}

#[test]
fn redirect_to_another_host_is_refused() {
    let w = world(|req, base| {
        (req.path == DL).then(|| {
            // Same server, but reached by another host name.
            let port = base.rsplit(':').next().unwrap_or("1");
            mock::redirect(&format!("http://localhost:{port}/elsewhere/evil.tar.gz"))
        })
    });
    add_evil(&w, &["redirect", &host(&w)]);
    assert_eq!(w.server.hits("/elsewhere/evil.tar.gz"), 0);
}

#[test]
fn redirect_to_file_url_is_refused() {
    let w = world(|req, _| (req.path == DL).then(|| mock::redirect("file:///etc/passwd")));
    add_evil(&w, &["redirect", &host(&w)]);
    let w =
        world(|req, _| (req.path == "/index/evil").then(|| mock::redirect("file:///etc/passwd")));
    add_evil(&w, &["redirect", &host(&w)]);
}

#[test]
fn malformed_json_index() {
    for body in [
        &b"{\"name\": \"evil\", \"versions\": ["[..],
        b"<html>not json</html>",
        b"{\"name\":\"evil\",\"versions\":[{\"name\":\"evil\",\"vers\":\"1.0.0\",\"cksum\":\"md5:x\"}]}",
        b"{\"name\":\"other\",\"versions\":[]}",
    ] {
        let body = body.to_vec();
        let w = world(move |req, _| {
            (req.path == "/index/evil").then(|| Reply::Full {
                status: 200,
                headers: vec![],
                body: body.clone(),
            })
        });
        add_evil(&w, &[&host(&w), "evil"]);
    }
}

#[test]
fn server_errors_are_retried_a_bounded_number_of_times() {
    let w = world(|req, _| (req.path == "/index/evil").then(|| mock::status(500)));
    let start = Instant::now();
    add_evil(&w, &["500", &host(&w)]);
    assert_eq!(w.server.hits("/index/evil"), 3, "{:?}", w.server.all_hits());
    // Backoff between the tries (0.4 s + 0.8 s), but bounded.
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(1000) && took < Duration::from_secs(10),
        "{took:?}"
    );

    let w = world(|req, _| (req.path == DL).then(|| mock::status(503)));
    add_evil(&w, &["503", "evil@1.0.0"]);
    assert_eq!(w.server.hits(DL), 3);
}

#[test]
fn indexed_version_whose_download_404s() {
    let w = world(|req, _| (req.path == DL).then(|| mock::status(404)));
    add_evil(&w, &["404", "evil@1.0.0"]);
    assert_eq!(w.server.hits(DL), 1, "a 404 is final, never retried");
}

#[test]
fn credentials_in_urls_never_leak() {
    let f = Fixture::new();
    if which_git().is_some() {
        f.link_bin("git");
    }
    f.ok(&["init"]);
    let secret = "tok3n";
    for spec in [
        format!("git+https://user:{secret}@127.0.0.1:1/x.git"),
        format!("git+https://{secret}@127.0.0.1:1/x.git@v1"),
    ] {
        let out = f.skillpm(&["add", &spec]);
        let all = format!("{}{}", common::stderr(&out), common::stdout(&out));
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(!all.contains(secret), "secret leaked: {all}");
        assert_eq!(common::stderr(&out).trim_end().lines().count(), 1, "{all}");
    }
    // Nor in any file skillpm wrote (manifest, lock, cache, config).
    let snap = common::tree::snapshot(f.root(), &|_| false);
    for (path, bytes) in snap {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "secret written to {}",
            path.display()
        );
        assert!(
            !path.to_string_lossy().contains(secret),
            "{}",
            path.display()
        );
    }
    // A registry URL with credentials is refused outright.
    let mut f2 = Fixture::new();
    f2.extra_env.push((
        "SKILLPM_REGISTRY".into(),
        format!("http://user:{secret}@127.0.0.1:1"),
    ));
    f2.ok(&["init"]);
    let out = f2.skillpm(&["add", "evil@1"]);
    let all = format!("{}{}", common::stderr(&out), common::stdout(&out));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(!all.contains(secret), "secret leaked: {all}");
}

fn which_git() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
}
