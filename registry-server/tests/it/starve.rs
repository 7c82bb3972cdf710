//! Starving the registry without a token: idle and slow sockets, and
//! downloads that are never read. The real `skillpm-registry` on
//! 127.0.0.1:0, attacked over raw TCP.

use crate::common;
use common::{pack_with_files, Server};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

fn addr(s: &Server) -> String {
    s.url.trim_start_matches("http://").to_string()
}

async fn publish(s: &Server, tarball: Vec<u8>) {
    let tok = s.token("alice");
    s.client(Some(&tok))
        .publish(tarball)
        .await
        .expect("publish");
}

/// GET `path` on a connection of its own (no pooled keep-alive), timed.
async fn timed_get(s: &Server, path: &str) -> (u16, Duration) {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let t0 = Instant::now();
    let resp = tokio::time::timeout(
        Duration::from_secs(60),
        http.get(format!("{}{path}", s.url)).send(),
    )
    .await
    .unwrap_or_else(|_| panic!("{path} got no answer in 60 s"))
    .expect("request");
    (resp.status().as_u16(), t0.elapsed())
}

/// Reads until EOF or error; how many bytes came.
async fn read_to_close(sock: &mut TcpStream) -> usize {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

/// Bytes that do not compress, so the package is as large as they are.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

const HEADER_TIMEOUT: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_sockets_keep_neither_health_nor_index_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(
        tmp.path(),
        &["--max-connections", "8", "--header-timeout", "2"],
    );
    s.wait_healthy().await;
    publish(&s, common::pack("idle-check", "1.0.0", "Check", "body")).await;

    let mut idle = Vec::with_capacity(1000);
    for _ in 0..1000 {
        idle.push(TcpStream::connect(addr(&s)).await.expect("connect"));
    }
    // A few of them trickle an endless request head.
    for sock in idle.iter_mut().take(20) {
        sock.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
    }

    let (status, health) = timed_get(&s, "/health").await;
    assert_eq!(status, 200);
    let (status, index) = timed_get(&s, "/index/idle-check").await;
    assert_eq!(status, 200);
    println!(
        "with 1000 idle sockets and --max-connections 8: /health {} ms, /index {} ms",
        health.as_millis(),
        index.as_millis()
    );
    assert!(
        health < HEADER_TIMEOUT && index < HEADER_TIMEOUT,
        "idle sockets kept real requests waiting: /health {health:?}, /index {index:?}"
    );

    // Every idle socket is closed by the server (evicted, or timed out).
    let closed = tokio::time::timeout(
        HEADER_TIMEOUT * 10,
        futures_util::future::join_all(idle.iter_mut().map(read_to_close)),
    )
    .await
    .expect("idle sockets are still open long after the header timeout");
    assert_eq!(closed.len(), 1000);
}

/// A burst of silent connections past what the server may hold open, then
/// about 350 new silent ones a second from the same client, for seconds:
/// each newcomer evicts the oldest silent connection, so `/health` is
/// answered within a second all along. (When only connections silent for a
/// second could be evicted, the server drained about as many a second as
/// it may hold, and this arrival rate starved it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sustained_flood_of_silent_connections_does_not_starve_health() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server(
        common::serve()
            .data(tmp.path())
            .args(["--max-connections", "8", "--header-timeout", "10"])
            .open_files_limit(256)
            .quiet()
            .start(),
    );
    s.wait_healthy().await;
    let at = addr(&s);
    let mut held = Vec::new();
    for _ in 0..400 {
        held.push(TcpStream::connect(&at).await.expect("connect"));
    }
    let flood = {
        let at = at.clone();
        tokio::spawn(async move {
            let mut more = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_millis(3));
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end {
                tick.tick().await;
                if let Ok(Ok(c)) =
                    tokio::time::timeout(Duration::from_millis(50), TcpStream::connect(&at)).await
                {
                    more.push(c);
                }
            }
            more.len()
        })
    };
    let mut waits = Vec::new();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(900)).await;
        let (status, took) = timed_get(&s, "/health").await;
        assert_eq!(status, 200);
        waits.push(took);
    }
    let opened = flood.await.unwrap();
    println!("{opened} silent connections opened during the flood; /health took {waits:?}");
    assert!(opened > 1000, "the flood opened only {opened} connections");
    assert!(
        waits.iter().all(|w| *w < Duration::from_secs(1)),
        "/health waited {waits:?} under the flood"
    );
    drop(held);
}

#[tokio::test]
async fn a_slow_request_head_is_cut_at_the_header_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(tmp.path(), &["--header-timeout", "2"]);
    s.wait_healthy().await;
    let mut sock = TcpStream::connect(addr(&s)).await.expect("connect");
    let t0 = Instant::now();
    // One header byte every 200 ms: progress, but never a whole head.
    let drip = async {
        sock.write_all(b"GET /health HTTP/1.1\r\n").await?;
        loop {
            sock.write_all(b"X").await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    };
    let res = tokio::time::timeout(HEADER_TIMEOUT * 10, drip).await;
    assert!(
        res.is_ok(),
        "a dripping request head was still accepted after {:?}",
        t0.elapsed()
    );
}

/// Opens a connection that asks for `path` and reads only the response
/// head. `tiny_window` keeps the receive buffer at 4 KiB, so a body the
/// client does not read cannot hide in the kernel.
async fn download_head(addr: &str, path: &str, tiny_window: bool) -> TcpStream {
    let sock = TcpSocket::new_v4().expect("socket");
    if tiny_window {
        sock.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    }
    let mut stream = sock
        .connect(addr.parse().expect("addr"))
        .await
        .expect("connect");
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).await.expect("read head");
        assert!(n == 1, "closed before the response head");
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// The package these tests download: about 9.5 MB that does not compress.
async fn publish_big(s: &Server) -> usize {
    let tarball = pack_with_files(
        "big",
        &common::skill_md("big", "1.0.0", "Big", "Large assets."),
        &[("assets/blob.bin", &noise(9_500_000))],
    );
    let len = tarball.len();
    assert!(len > 9_400_000, "{len}");
    publish(s, tarball).await;
    len
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_non_reading_downloads_do_not_buffer_the_blob() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(
        tmp.path(),
        &["--max-connections", "400", "--idle-timeout", "120"],
    );
    s.wait_healthy().await;
    publish_big(&s).await;
    let before = vm_rss_kib(s.child.id());
    let a = addr(&s);
    let clients = futures_util::future::join_all(
        (0..300).map(|_| download_head(&a, "/api/v1/skills/big/1.0.0/download", true)),
    )
    .await;
    // Let every response run into its stalled socket.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = vm_rss_kib(s.child.id());
    println!(
        "registry VmRSS: {} MB before, {} MB with 300 stalled 9.5 MB downloads",
        before / 1024,
        during / 1024
    );
    assert!(
        during < 200 * 1024,
        "the server holds {} MB for 300 stalled downloads",
        during / 1024
    );
    drop(clients);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_dropped_and_frees_its_slot() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(
        tmp.path(),
        &["--max-connections", "4", "--idle-timeout", "2"],
    );
    s.wait_healthy().await;
    let len = publish_big(&s).await;
    let a = addr(&s);
    let mut stalled = futures_util::future::join_all(
        (0..4).map(|_| download_head(&a, "/api/v1/skills/big/1.0.0/download", true)),
    )
    .await;
    // Every slot serves a stalled download, so /health gets one only once
    // the idle timeout has dropped them.
    let (status, _) = tokio::time::timeout(Duration::from_secs(30), timed_get(&s, "/health"))
        .await
        .expect("stalled downloads kept their slots");
    assert_eq!(status, 200);
    // One freed slot is enough for /health; the other stalled downloads
    // stalled at about the same moment but their timers may fire a little
    // later on a loaded machine, and reading one that is still open would
    // un-stall it. Two more idle timeouts leave none of them open.
    tokio::time::sleep(Duration::from_secs(4)).await;
    for sock in &mut stalled {
        let got = tokio::time::timeout(Duration::from_secs(30), read_to_close(sock))
            .await
            .expect("the server never closed a stalled download");
        assert!(
            got < len,
            "the stalled download was not cut ({got} of {len} bytes)"
        );
    }
}

#[tokio::test]
async fn a_download_that_keeps_moving_outlives_the_idle_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_quiet(tmp.path(), &["--idle-timeout", "1"]);
    s.wait_healthy().await;
    let len = publish_big(&s).await;
    let mut sock = download_head(&addr(&s), "/api/v1/skills/big/1.0.0/download", false).await;
    // Slower than the idle timeout overall, never idle that long.
    let mut buf = vec![0u8; 512 * 1024];
    let mut got = 0;
    let t0 = Instant::now();
    while got < len {
        match sock.read(&mut buf).await.expect("read") {
            0 => break,
            n => got += n,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(t0.elapsed() > Duration::from_secs(1));
    assert_eq!(got, len, "a moving download was cut");
}
