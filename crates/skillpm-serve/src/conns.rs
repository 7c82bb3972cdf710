//! Serving connections so that no client can hold the server hostage.
//!
//! `axum::serve` gave every accepted connection a slot until the client
//! closed it and had no timeouts: 1 000 sockets that never sent a byte
//! held every `--max-connections` slot and real requests waited ~85 s in
//! the kernel's backlog, and a client that never read its download kept
//! the response alive forever. Here:
//!
//! - **Slots are for requests.** `--max-connections` bounds requests
//!   being served (each may hold a blob file open), taken once a request
//!   head is complete and given back when its response is written. A
//!   connection that has sent no complete head holds no slot; such
//!   connections are bounded by the open-files limit instead (see
//!   `listen::max_open_connections`) and by the header timeout.
//! - **Header timeout**: a request head must arrive complete within
//!   `--header-timeout` of the connection opening, or of the first byte of
//!   the next request on a kept-alive connection (so a slow drip of header
//!   bytes does not extend it).
//! - **Idle timeout**: a kept-alive connection that sends no new request
//!   is closed after `--idle-timeout`; so is a request whose server is
//!   waiting on the client (for upload bytes, or for room to send the
//!   response) while no byte moves for that long. A download that keeps
//!   moving is never cut, and the server's own work never counts.
//! - **Eviction**: when even the open-connections bound is reached, a
//!   newcomer closes a connection that is only waiting for a request
//!   head: silent ones (not a byte yet) first, at any age, then keep-alive
//!   ones idle for [`KEEPALIVE_GRACE`], then heads arriving for [`GRACE`];
//!   within a class, from the address holding the most connections first,
//!   then oldest first. Silent ones have no grace, so eviction keeps up
//!   with any rate of new silent connections: the newest is the last to
//!   go, and an honest client sends its head the moment it connects. One
//!   with a request in
//!   flight, or with request bytes waiting unread in the kernel, is never
//!   evicted, so honest clients beyond capacity wait in the backlog rather
//!   than lose requests to a close race.
//!
//! Responses are streamed through hyper with a small buffer
//! ([`MAX_BUF`]), so a stalled client costs that buffer, not its response.
//! HTTP/1.1 only: what skillpm and reverse proxies speak to a registry,
//! and what MCP's Streamable HTTP clients speak to `skillpm mcp --http`.

use axum::Router;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

/// hyper's read and write buffer cap per connection. A request head must
/// fit (64 KiB is far above any real one); a response is handed to the
/// socket in pieces of about this size, so a client that stops reading
/// pins this much memory rather than its whole download.
const MAX_BUF: usize = 64 * 1024;

/// How long a request head must have been arriving before a newcomer may
/// evict its connection: an honest client sends its head well within
/// this.
const GRACE: Duration = Duration::from_secs(1);

/// How long a kept-alive connection must have been idle before a
/// newcomer may evict it. Longer than [`GRACE`]: closing a connection the
/// client is about to reuse loses that request (the close races the
/// request), and an honest client under load can sit between requests
/// for a while; 64 clients on two cores lost a few requests at 1 s.
const KEEPALIVE_GRACE: Duration = Duration::from_secs(10);

/// While nothing is evictable yet, how often the accept loop looks again
/// (connections age into eligibility).
const EVICT_RETRY: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The program, for the one line an accept error logs.
    pub name: &'static str,
    /// Requests served at once (`--max-connections`).
    pub max_requests: usize,
    /// Connections open at once, whatever they are doing.
    pub max_open: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// A flag value that is not a number of seconds in range.
#[derive(Debug, PartialEq)]
pub enum BadSecs {
    NotANumber(String),
    OutOfRange(String),
}

impl std::fmt::Display for BadSecs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadSecs::NotANumber(s) => write!(f, "{s:?} is not a number of seconds"),
            BadSecs::OutOfRange(s) => {
                write!(f, "{s:?} must be more than 0 and at most 86400 seconds")
            }
        }
    }
}

impl std::error::Error for BadSecs {}

/// Parses a flag value in seconds (`10`, `2.5`), greater than zero.
pub fn parse_secs(s: &str) -> Result<Duration, BadSecs> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| BadSecs::NotANumber(s.to_string()))?;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(BadSecs::OutOfRange(s.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Milliseconds since the first call, offset by one so that 0 can mean
/// "not set" in the atomics below.
fn now_ms() -> u64 {
    // A process fact: the clock epoch every connection's times count from.
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_millis() as u64 + 1
}

fn instant_of(ms: u64) -> tokio::time::Instant {
    // A process fact: the same epoch, on tokio's clock.
    static EPOCH: OnceLock<tokio::time::Instant> = OnceLock::new();
    let base = *EPOCH.get_or_init(|| tokio::time::Instant::now() - Duration::from_millis(now_ms()));
    base + Duration::from_millis(ms)
}

/// What the watchdog and the eviction policy know about one connection;
/// written by its I/O wrapper and its request guard, lock-free.
#[derive(Default)]
struct Track {
    /// Requests from a complete head to the end of their response.
    in_flight: AtomicUsize,
    /// When the connection began waiting for its next request head.
    waiting_since: AtomicU64,
    /// When the first byte of that head arrived; 0 before.
    head_since: AtomicU64,
    /// Whether a request was served, which makes the wait keep-alive idle.
    served: AtomicBool,
    /// When a byte last moved, or the server began waiting on the client.
    progress: AtomicU64,
    /// The handler waits for upload bytes.
    body_wait: AtomicBool,
    /// The response waits for room in the socket.
    write_wait: AtomicBool,
    evicted: AtomicBool,
    /// Wakes the watchdog when its deadline may have moved earlier.
    wake: Notify,
    /// The socket, to see whether a request is waiting unread in the
    /// kernel before evicting.
    stream: Weak<TcpStream>,
    /// The client's address, so eviction takes from the address holding
    /// the most connections first.
    peer: Option<std::net::IpAddr>,
}

impl Track {
    fn new(stream: Weak<TcpStream>, peer: Option<std::net::IpAddr>) -> Self {
        let t = Track {
            stream,
            peer,
            ..Track::default()
        };
        t.waiting_since.store(now_ms(), Ordering::Relaxed);
        t
    }

    /// When the connection is to be closed as things stand; `None` while
    /// a request is in the server's hands.
    fn deadline(&self, header: Duration, idle: Duration) -> Option<u64> {
        let ms = |d: Duration| d.as_millis() as u64;
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let head = self.head_since.load(Ordering::Acquire);
            if head != 0 {
                return Some(head + ms(header));
            }
            let since = self.waiting_since.load(Ordering::Acquire);
            let allowed = if self.served.load(Ordering::Acquire) {
                idle
            } else {
                header
            };
            return Some(since + ms(allowed));
        }
        let on_client =
            self.body_wait.load(Ordering::Acquire) || self.write_wait.load(Ordering::Acquire);
        on_client.then(|| self.progress.load(Ordering::Acquire) + ms(idle))
    }

    /// Only the first byte of a head (which swaps the idle timeout for the
    /// header timeout) can move a deadline earlier, so only it wakes the
    /// watchdog.
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

    /// Marks the server as waiting (or no longer) on the client; a wait
    /// that begins starts the idle clock and wakes the watchdog.
    fn set_waiting(&self, flag: &AtomicBool, waiting: bool) {
        if !waiting {
            flag.store(false, Ordering::Release);
        } else if !flag.swap(true, Ordering::AcqRel) {
            self.progress.store(now_ms(), Ordering::Release);
            self.wake.notify_one();
        }
    }

    /// Whether a newcomer may close this connection now, and in which
    /// order: `(class, since)`, least first (see the module doc).
    fn eviction_rank(&self, now: u64) -> Option<(u8, u64)> {
        if self.in_flight.load(Ordering::Acquire) > 0 || self.evicted.load(Ordering::Acquire) {
            return None;
        }
        let aged =
            |since: u64, grace: Duration| now.saturating_sub(since) >= grace.as_millis() as u64;
        let head = self.head_since.load(Ordering::Acquire);
        if head != 0 {
            return aged(head, GRACE).then_some((2, head));
        }
        let since = self.waiting_since.load(Ordering::Acquire);
        if self.served.load(Ordering::Acquire) {
            return aged(since, KEEPALIVE_GRACE).then_some((1, since));
        }
        Some((0, since))
    }

    /// Bytes the client sent that hyper has not read yet: a request on
    /// its way (for a connection whose task has not run since).
    fn has_unread_bytes(&self) -> bool {
        let Some(stream) = self.stream.upgrade() else {
            return false;
        };
        let mut byte = [MaybeUninit::<u8>::uninit(); 1];
        matches!(socket2::SockRef::from(&*stream).peek(&mut byte), Ok(n) if n > 0)
    }
}

/// Held from a request's complete head to the end of its response body.
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
        t.body_wait.store(false, Ordering::Release);
        t.write_wait.store(false, Ordering::Release);
        t.in_flight.fetch_sub(1, Ordering::AcqRel);
        t.wake.notify_one();
    }
}

/// A response body that keeps its request in flight, and its slot taken,
/// until hyper has written it to the end (or dropped it).
struct Tracked<B> {
    inner: B,
    _slot: Option<OwnedSemaphorePermit>,
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

/// A request body that tells its [`Track`] when the handler waits for
/// upload bytes.
struct Upload {
    inner: Incoming,
    track: Arc<Track>,
}

impl Body for Upload {
    type Data = bytes::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<bytes::Bytes>, hyper::Error>>> {
        let me = self.get_mut();
        let res = Pin::new(&mut me.inner).poll_frame(cx);
        me.track.set_waiting(&me.track.body_wait, res.is_pending());
        res
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, reporting every read and write to its [`Track`]. Shared
/// (through `&TcpStream`'s readiness API) so eviction can peek at it.
struct Watched {
    io: Arc<TcpStream>,
    track: Arc<Track>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.io.poll_read_ready(cx))?;
            match self.io.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    if n > 0 {
                        self.track.note_read();
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl Watched {
    /// Waits for the socket to take bytes, then writes with `write`.
    fn poll_write_with(
        &self,
        cx: &mut Context<'_>,
        write: impl Fn(&TcpStream) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        let t = &self.track;
        loop {
            if self.io.poll_write_ready(cx)?.is_pending() {
                t.set_waiting(&t.write_wait, true);
                return Poll::Pending;
            }
            match write(&self.io) {
                Ok(n) => {
                    t.note_write();
                    t.set_waiting(&t.write_wait, false);
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |io| io.try_write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |io| io.try_write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(socket2::SockRef::from(&*self.io).shutdown(std::net::Shutdown::Write))
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

    /// Closes the first connection evictable at `now` in eviction order
    /// (see the module doc). Returns false when there is none.
    fn evict_one(&self, now: u64) -> bool {
        let Ok(m) = self.0.lock() else {
            return false;
        };
        let mut held: HashMap<Option<std::net::IpAddr>, usize> = HashMap::new();
        for t in m.values() {
            *held.entry(t.peer).or_default() += 1;
        }
        let mut ranked: Vec<((u8, u64), &Arc<Track>)> = m
            .values()
            .filter_map(|t| Some((t.eviction_rank(now)?, t)))
            .collect();
        ranked.sort_unstable_by_key(|((class, since), t)| {
            (*class, std::cmp::Reverse(held[&t.peer]), *since)
        });
        let victim = ranked
            .into_iter()
            .map(|(_, t)| t)
            .find(|t| !t.has_unread_bytes());
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
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let bound = |n: usize| n.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let max_open = bound(limits.max_open);
    let open = Arc::new(Semaphore::new(max_open));
    let slots = Arc::new(Semaphore::new(bound(limits.max_requests)));
    let live = Arc::new(Live::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    let mut next_id = 0u64;
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, addr)) => (s, addr.ip()),
                Err(e) => {
                    accept_error(limits.name, e).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let permit = loop {
            if let Ok(p) = open.clone().try_acquire_owned() {
                break Some(p);
            }
            live.evict_one(now_ms());
            tokio::select! {
                p = open.clone().acquire_owned() => break p.ok(),
                _ = tokio::time::sleep(EVICT_RETRY) => {}
                _ = &mut shutdown => break None,
            }
        };
        let Some(permit) = permit else {
            break;
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        let stream = Arc::new(stream);
        next_id += 1;
        let track = Track::new(Arc::downgrade(&stream), Some(peer));
        let (id, track) = (next_id, Arc::new(track));
        live.insert(id, track.clone());
        let conn = Conn {
            app: app.clone(),
            slots: slots.clone(),
            limits,
        };
        let (live, stop) = (live.clone(), stop_rx.clone());
        tokio::spawn(async move {
            conn.serve(stream, track, stop).await;
            live.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let _ = open.acquire_many(max_open as u32).await;
}

/// Per-connection accept errors (the peer already reset) are nothing to
/// wait for; running out of descriptors or memory is, briefly.
async fn accept_error(name: &str, e: io::Error) {
    use io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    eprintln!("{name}: accept: {e}");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// What serving one connection needs.
struct Conn {
    app: Router,
    slots: Arc<Semaphore>,
    limits: Limits,
}

impl Conn {
    /// Serves one connection under its watchdog.
    async fn serve(
        self,
        stream: Arc<TcpStream>,
        track: Arc<Track>,
        mut stop: watch::Receiver<bool>,
    ) {
        let Conn { app, slots, limits } = self;
        let svc_track = track.clone();
        let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let guard = InFlight::begin(svc_track.clone());
            let (app, slots, track) = (app.clone(), slots.clone(), svc_track.clone());
            async move {
                // Waiting for a slot is the server's doing: no deadline runs.
                let slot = slots.acquire_owned().await.ok();
                let req = req.map(|inner| axum::body::Body::new(Upload { inner, track }));
                let resp = app.oneshot(req).await?;
                Ok::<_, std::convert::Infallible>(resp.map(|inner| Tracked {
                    inner,
                    _slot: slot,
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
            let deadline = track.deadline(limits.header_timeout, limits.idle_timeout);
            if deadline.is_some_and(|d| now_ms() >= d) {
                return;
            }
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(instant_of(d)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = sleep => {}
                _ = track.wake.notified() => {}
                _ = stop.changed(), if !stopping => {
                    stopping = true;
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
