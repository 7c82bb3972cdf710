//! Serving connections so that no client can hold the server hostage.
//!
//! `axum::serve` gave every accepted connection a slot until the client
//! closed it and had no timeouts: 1 000 sockets that never sent a byte
//! held every `--max-connections` slot and real requests waited ~85 s in
//! the kernel's backlog, and a client that never read its download kept
//! the response alive forever. Here every connection is watched:
//!
//! - **Header timeout**: a request head must arrive complete within
//!   `--header-timeout` of the connection opening, or of the first byte of
//!   the next request on a kept-alive connection (so a slow drip of header
//!   bytes does not extend it).
//! - **Idle timeout**: a kept-alive connection that sends no new request
//!   is closed after `--idle-timeout`; so is a request in flight on which
//!   no byte moved either way for that long (a stalled upload, a client
//!   that does not read its response). A download that keeps moving is
//!   never cut, and the server's own work on a request takes far less.
//! - **Eviction**: at the connection cap, a newcomer closes the connection
//!   that has waited longest for a request head (idle ones first), so only
//!   connections with a request in flight hold slots against newcomers;
//!   a newcomer waits in the backlog only while every slot serves a request.
//!
//! Responses are streamed through hyper with a small buffer
//! ([`MAX_BUF`]), so a stalled client costs that buffer, not its response.
//! HTTP/1.1 only: what skillpm and reverse proxies speak to a registry.

use axum::Router;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, Semaphore};
use tower::ServiceExt;

/// hyper's read and write buffer cap per connection. A request head must
/// fit (64 KiB is far above any real one); a response is handed to the
/// socket in pieces of about this size, so a client that stops reading
/// pins this much memory rather than its whole download.
const MAX_BUF: usize = 64 * 1024;

#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    pub header: Duration,
    pub idle: Duration,
}

/// Parses a flag value in seconds (`10`, `2.5`), greater than zero.
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "{s:?} must be more than 0 and at most 86400 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Milliseconds since the first call, offset by one so that 0 can mean
/// "not set" in the atomics below.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_millis() as u64 + 1
}

fn instant_of(ms: u64) -> tokio::time::Instant {
    static EPOCH: OnceLock<tokio::time::Instant> = OnceLock::new();
    let base = *EPOCH.get_or_init(|| tokio::time::Instant::now() - Duration::from_millis(now_ms()));
    base + Duration::from_millis(ms)
}

/// What the watchdog and the eviction policy know about one connection;
/// written by its I/O wrapper and its request guard, lock-free.
#[derive(Default)]
struct Track {
    /// Requests whose response has not been written to the end.
    in_flight: AtomicUsize,
    /// When the connection began waiting for its next request head.
    waiting_since: AtomicU64,
    /// When the first byte of that head arrived; 0 before.
    head_since: AtomicU64,
    /// Whether a request was served, which makes the wait keep-alive idle.
    served: AtomicBool,
    /// When a byte last moved either way, or a request began.
    progress: AtomicU64,
    evicted: AtomicBool,
    /// Wakes the watchdog when its deadline may have moved earlier.
    wake: Notify,
}

impl Track {
    fn new() -> Self {
        let t = Track::default();
        t.waiting_since.store(now_ms(), Ordering::Relaxed);
        t
    }

    /// When the connection is to be closed as things stand.
    fn deadline(&self, t: &Timeouts) -> u64 {
        let ms = |d: Duration| d.as_millis() as u64;
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let head = self.head_since.load(Ordering::Acquire);
            if head != 0 {
                return head + ms(t.header);
            }
            let since = self.waiting_since.load(Ordering::Acquire);
            let allowed = if self.served.load(Ordering::Acquire) {
                t.idle
            } else {
                t.header
            };
            return since + ms(allowed);
        }
        self.progress.load(Ordering::Acquire) + ms(t.idle)
    }

    /// Progress only ever moves a deadline later, so only the first byte
    /// of a head (which swaps the idle timeout for the header timeout)
    /// wakes the watchdog.
    fn note_read(&self) {
        let now = now_ms();
        self.progress.store(now, Ordering::Release);
        if self.in_flight.load(Ordering::Acquire) == 0
            && self
                .head_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            self.wake.notify_one();
        }
    }

    fn note_write(&self) {
        self.progress.store(now_ms(), Ordering::Release);
    }
}

/// Held from a request's head to the end of its response body.
struct InFlight(Arc<Track>);

impl InFlight {
    fn begin(track: Arc<Track>) -> Self {
        track.in_flight.fetch_add(1, Ordering::AcqRel);
        track.progress.store(now_ms(), Ordering::Release);
        track.wake.notify_one();
        InFlight(track)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let t = &self.0;
        t.head_since.store(0, Ordering::Release);
        t.waiting_since.store(now_ms(), Ordering::Release);
        t.served.store(true, Ordering::Release);
        t.in_flight.fetch_sub(1, Ordering::AcqRel);
        t.wake.notify_one();
    }
}

/// A response body that keeps its request counted as in flight until
/// hyper has written it to the end (or dropped it).
struct Tracked<B> {
    inner: B,
    _guard: InFlight,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, reporting every read and write to its [`Track`].
struct Watched {
    io: TcpStream,
    track: Arc<Track>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(res, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.track.note_read();
        }
        res
    }
}

impl Watched {
    fn noted(&self, res: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if matches!(res, Poll::Ready(Ok(n)) if n > 0) {
            self.track.note_write();
        }
        res
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.io).poll_write(cx, buf);
        self.noted(res)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.noted(res)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Every open connection, for eviction.
#[derive(Default)]
struct Live(Mutex<HashMap<u64, Arc<Track>>>);

impl Live {
    fn insert(&self, id: u64, t: Arc<Track>) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(id, t);
        }
    }

    fn remove(&self, id: u64) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(&id);
        }
    }

    /// Closes the connection that has waited longest for a request head,
    /// preferring those that have sent nothing of one. Returns false when
    /// every connection has a request in flight.
    fn evict_one(&self) -> bool {
        let Ok(m) = self.0.lock() else {
            return false;
        };
        let victim = m
            .values()
            .filter(|t| {
                t.in_flight.load(Ordering::Acquire) == 0 && !t.evicted.load(Ordering::Acquire)
            })
            .min_by_key(|t| {
                (
                    t.head_since.load(Ordering::Acquire) != 0,
                    t.waiting_since.load(Ordering::Acquire),
                )
            });
        match victim {
            Some(t) => {
                t.evicted.store(true, Ordering::Release);
                t.wake.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Accepts and serves connections until `shutdown` resolves, then stops
/// accepting, lets requests in flight finish (the idle timeout still
/// bounds a stalled one) and returns once every connection has closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    max_connections: usize,
    timeouts: Timeouts,
    shutdown: impl Future<Output = ()>,
) {
    let cap = max_connections.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let slots = Arc::new(Semaphore::new(cap));
    let live = Arc::new(Live::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                live.evict_one();
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    _ = &mut shutdown => break,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let (id, track) = (next_id, Arc::new(Track::new()));
        live.insert(id, track.clone());
        let (app, live, stop) = (app.clone(), live.clone(), stop_rx.clone());
        tokio::spawn(async move {
            connection(stream, app, track, timeouts, stop).await;
            live.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let _ = slots.acquire_many(cap as u32).await;
}

/// Per-connection accept errors (the peer already reset) are nothing to
/// wait for; running out of descriptors or memory is, briefly.
async fn accept_error(e: io::Error) {
    use io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    eprintln!("skillpm-registry: accept: {e}");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// Serves one connection under its watchdog.
async fn connection(
    stream: TcpStream,
    app: Router,
    track: Arc<Track>,
    timeouts: Timeouts,
    mut stop: watch::Receiver<bool>,
) {
    let svc_track = track.clone();
    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let guard = InFlight::begin(svc_track.clone());
        let app = app.clone();
        async move {
            let resp = app.oneshot(req).await?;
            Ok::<_, std::convert::Infallible>(resp.map(|inner| Tracked {
                inner,
                _guard: guard,
            }))
        }
    });
    let io = TokioIo::new(Watched {
        io: stream,
        track: track.clone(),
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .max_buf_size(MAX_BUF)
        .header_read_timeout(None)
        .serve_connection(io, svc);
    tokio::pin!(conn);
    let mut stopping = false;
    loop {
        if track.evicted.load(Ordering::Acquire) {
            return;
        }
        let deadline = track.deadline(&timeouts);
        if now_ms() >= deadline {
            return;
        }
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = tokio::time::sleep_until(instant_of(deadline)) => {}
            _ = track.wake.notified() => {}
            _ = stop.changed(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(30),
    };

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
        let t = Track::new();
        let start = t.waiting_since.load(Ordering::Acquire);
        // A new connection gets the header timeout.
        assert_eq!(t.deadline(&T), start + 10_000);
        // A request in flight: the idle timeout from the last byte moved.
        let g = InFlight::begin(Arc::new(Track::new()));
        g.0.note_write();
        let p = g.0.progress.load(Ordering::Acquire);
        assert_eq!(g.0.deadline(&T), p + 30_000);
        let track = g.0.clone();
        drop(g);
        // Kept alive: idle timeout, until a byte of the next head arrives.
        let idle_from = track.waiting_since.load(Ordering::Acquire);
        assert_eq!(track.deadline(&T), idle_from + 30_000);
        track.note_read();
        let head = track.head_since.load(Ordering::Acquire);
        assert_eq!(track.deadline(&T), head + 10_000);
    }

    #[test]
    fn eviction_spares_requests_in_flight_and_prefers_silent_connections() {
        let live = Live::default();
        let busy = Arc::new(Track::new());
        let _g = InFlight::begin(busy.clone());
        live.insert(1, busy.clone());
        assert!(
            !live.evict_one(),
            "a connection serving a request was evicted"
        );
        let talking = Arc::new(Track::new());
        talking.note_read();
        live.insert(2, talking.clone());
        let silent = Arc::new(Track::new());
        live.insert(3, silent.clone());
        assert!(live.evict_one());
        assert!(silent.evicted.load(Ordering::Acquire));
        assert!(!talking.evicted.load(Ordering::Acquire));
        assert!(live.evict_one());
        assert!(talking.evicted.load(Ordering::Acquire));
        assert!(!busy.evicted.load(Ordering::Acquire));
        assert!(!live.evict_one());
    }
}
