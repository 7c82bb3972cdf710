//! A TCP listener that serves at most N connections at once.
//!
//! Every open connection holds a file descriptor, and a request in flight
//! briefly opens more (a blob file, scratch files while unpacking an
//! upload, SQLite's temp files). Without a cap, enough concurrent clients
//! exhaust the process's open-files limit and requests fail with "Too many
//! open files": with the common soft limit of 1024, 64 clients each
//! downloading 16 tarballs at once got 500s on downloads. With the cap,
//! connections beyond it wait in the kernel's listen backlog (made longer
//! than the usual 1024, see [`bind`]) until one closes, so clients see
//! latency instead of errors.
//!
//! An idle keep-alive connection keeps its slot until the client closes it
//! (the server has no idle timeout); skillpm clients close theirs when
//! they exit. `--max-connections` overrides the default.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections the kernel may queue for us while we are at the cap (it
/// caps this at `net.core.somaxconn`, 4096 on current Linux). Past it, new
/// connections are dropped or reset, so it is larger than the usual 1024.
const BACKLOG: u32 = 4096;

/// Binds a listening socket like `TcpListener::bind`, with a longer
/// backlog.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// File descriptors kept free for everything but connections (standard
/// streams, the runtime, SQLite, the listener).
const RESERVED_FDS: usize = 64;

/// The default cap: half of what the open-files limit leaves after
/// [`RESERVED_FDS`], so that every connection can have one more file open
/// while it is served.
pub fn default_max_connections() -> usize {
    let limit = open_files_limit().unwrap_or(1024);
    (limit.saturating_sub(RESERVED_FDS) / 2).clamp(16, 65_536)
}

/// The soft `RLIMIT_NOFILE` of this process, read from `/proc/self/limits`
/// (Linux); `None` where that is not available.
fn open_files_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    parse_open_files_limit(&text)
}

fn parse_open_files_limit(limits: &str) -> Option<usize> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    // "Max open files            1024                 524288               files"
    match line.split_whitespace().nth(3)? {
        "unlimited" => Some(usize::MAX),
        soft => soft.parse().ok(),
    }
}

pub struct Limited {
    inner: TcpListener,
    permits: Arc<Semaphore>,
}

impl Limited {
    pub fn new(inner: TcpListener, max_connections: usize) -> Self {
        Limited {
            inner,
            permits: Arc::new(Semaphore::new(
                max_connections.clamp(1, Semaphore::MAX_PERMITS),
            )),
        }
    }
}

impl axum::serve::Listener for Limited {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Conn, SocketAddr) {
        // Wait for a free slot before accepting, so the waiting happens in
        // the kernel's backlog rather than in open descriptors.
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            // The semaphore is never closed.
            return std::future::pending().await;
        };
        // axum's own accept loop, which retries (and backs off) on errors.
        let (io, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        (
            Conn {
                io,
                _permit: permit,
            },
            addr,
        )
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connection holding its slot until it is dropped.
pub struct Conn {
    io: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_soft_open_files_limit() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max processes             95389                95389                processes \n\
                    Max open files            1024                 524288               files     \n";
        assert_eq!(parse_open_files_limit(text), Some(1024));
        assert_eq!(
            parse_open_files_limit(
                "Max open files            unlimited            unlimited            files\n"
            ),
            Some(usize::MAX)
        );
        assert_eq!(parse_open_files_limit("nothing here"), None);
    }

    #[tokio::test]
    async fn connections_past_the_cap_wait_until_one_closes() {
        use axum::serve::Listener;
        let inner = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = inner.local_addr().expect("addr");
        let mut l = Limited::new(inner, 1);
        let _c1 = TcpStream::connect(addr).await.expect("connect");
        let _c2 = TcpStream::connect(addr).await.expect("connect");
        let (first, _) = l.accept().await;
        let second = tokio::time::timeout(std::time::Duration::from_millis(200), l.accept()).await;
        assert!(
            second.is_err(),
            "a second connection was accepted past the cap"
        );
        drop(first);
        tokio::time::timeout(std::time::Duration::from_secs(10), l.accept())
            .await
            .expect("accepted once the first closed");
    }
}
