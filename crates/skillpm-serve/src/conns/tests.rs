//! Tests of the connection rules: timeout parsing, deadlines by phase,
//! eviction under load, a request still in the kernel seen.

use super::*;

const HEADER: Duration = Duration::from_secs(10);
const IDLE: Duration = Duration::from_secs(30);

#[test]
fn parses_seconds() {
    assert_eq!(parse_secs("10"), Ok(Duration::from_secs(10)));
    assert_eq!(parse_secs("0.5"), Ok(Duration::from_millis(500)));
    assert!(parse_secs("0").is_err());
    assert!(parse_secs("-1").is_err());
    assert!(parse_secs("NaN").is_err());
    assert!(parse_secs("ten").is_err());
}

#[test]
fn deadlines_follow_the_connection_phase() {
    let track = Arc::new(Track::new(Weak::new(), None));
    let start = track.waiting_since.load(Ordering::Acquire);
    // A new connection gets the header timeout.
    assert_eq!(track.deadline(HEADER, IDLE), Some(start + 10_000));
    // A request in the server's hands has no deadline...
    let g = InFlight::begin(track.clone());
    assert_eq!(track.deadline(HEADER, IDLE), None);
    // ...until the server waits on the client: then the idle timeout
    // runs from the last byte moved.
    track.set_waiting(&track.write_wait, true);
    let p = track.progress.load(Ordering::Acquire);
    assert_eq!(track.deadline(HEADER, IDLE), Some(p + 30_000));
    track.note_write();
    track.set_waiting(&track.write_wait, false);
    assert_eq!(track.deadline(HEADER, IDLE), None);
    track.set_waiting(&track.body_wait, true);
    assert!(track.deadline(HEADER, IDLE).is_some());
    drop(g);
    // Kept alive: idle timeout, until a byte of the next head arrives.
    let idle_from = track.waiting_since.load(Ordering::Acquire);
    assert_eq!(track.deadline(HEADER, IDLE), Some(idle_from + 30_000));
    track.note_read();
    let head = track.head_since.load(Ordering::Acquire);
    assert_eq!(track.deadline(HEADER, IDLE), Some(head + 10_000));
}

#[test]
fn eviction_spares_requests_in_flight_and_those_on_their_way() {
    let track = || Arc::new(Track::new(Weak::new(), None));
    let now = now_ms();
    let later = now + KEEPALIVE_GRACE.as_millis() as u64;
    let busy = track();
    let _serving = InFlight::begin(busy.clone());
    assert_eq!(busy.eviction_rank(later), None);
    let silent = track();
    // Silent: evictable at any age.
    assert_eq!(silent.eviction_rank(now).map(|r| r.0), Some(0));
    let heading = track();
    heading.note_read();
    assert_eq!(heading.eviction_rank(now), None);
    assert_eq!(heading.eviction_rank(later).map(|r| r.0), Some(2));
    let kept_alive = track();
    drop(InFlight::begin(kept_alive.clone()));
    assert_eq!(kept_alive.eviction_rank(now), None);
    assert_eq!(
        kept_alive.eviction_rank(now + GRACE.as_millis() as u64),
        None
    );
    assert_eq!(kept_alive.eviction_rank(later).map(|r| r.0), Some(1));

    let live = Live::default();
    for (id, t) in [(1, &busy), (2, &heading), (3, &kept_alive), (4, &silent)] {
        live.insert(id, (*t).clone());
    }
    assert!(live.evict_one(now));
    assert!(silent.evicted.load(Ordering::Acquire));
    assert!(!live.evict_one(now), "evicted within the grace period");
    for expected in [&kept_alive, &heading] {
        assert!(live.evict_one(later));
        assert!(expected.evicted.load(Ordering::Acquire));
    }
    assert!(!live.evict_one(later), "evicted a request in flight");
    assert!(!busy.evicted.load(Ordering::Acquire));
}

/// Among silent connections, the address holding the most loses one
/// first, though another address's is older.
#[test]
fn eviction_takes_from_the_address_holding_the_most() {
    let at = |ip: [u8; 4]| {
        let peer = Some(std::net::IpAddr::from(ip));
        Arc::new(Track::new(Weak::new(), peer))
    };
    let honest = at([10, 0, 0, 1]);
    std::thread::sleep(Duration::from_millis(5));
    let flood: Vec<Arc<Track>> = (0..3).map(|_| at([10, 0, 0, 2])).collect();
    let live = Live::default();
    live.insert(0, honest.clone());
    for (i, t) in flood.iter().enumerate() {
        live.insert(i as u64 + 1, t.clone());
    }
    assert!(live.evict_one(now_ms()));
    assert!(!honest.evicted.load(Ordering::Acquire));
    let gone = flood.iter().filter(|t| t.evicted.load(Ordering::Acquire));
    assert_eq!(gone.count(), 1);
}

#[tokio::test]
async fn a_request_waiting_in_the_kernel_is_seen() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut client = TcpStream::connect(addr).await.expect("connect");
    let (server, _) = listener.accept().await.expect("accept");
    let server = Arc::new(server);
    let t = Track::new(Arc::downgrade(&server), None);
    assert!(!t.has_unread_bytes());
    tokio::io::AsyncWriteExt::write_all(&mut client, b"GET / HTTP/1.1\r\n")
        .await
        .expect("write");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !t.has_unread_bytes() {
        assert!(Instant::now() < deadline, "unread bytes never seen");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
