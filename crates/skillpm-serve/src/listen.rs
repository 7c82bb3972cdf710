//! The listening socket and the default connection cap.
//!
//! Every open connection holds a file descriptor, and a request in flight
//! briefly opens more (a blob file, scratch files while unpacking an
//! upload, SQLite's temp files). Without a cap, enough concurrent clients
//! exhaust the process's open-files limit and requests fail with "Too many
//! open files": with the common soft limit of 1024, 64 clients each
//! downloading 16 tarballs at once got 500s on downloads. With the cap,
//! requests beyond it wait for a slot, and connections beyond what the
//! limit leaves wait in the kernel's listen backlog (made longer than the
//! usual 1024, see [`bind`]) unless idle ones can be evicted (see
//! `conns.rs`). `--max-connections` overrides the default.

use std::io;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpSocket};

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

/// Connections open at once when `max_requests` of them may each hold
/// one more file: what the open-files limit leaves after the reserve and
/// those files, at least `max_requests`. Connections without a request in
/// flight (idle, or still sending a head) live in this room, so a small
/// `--max-connections` does not leave them queued in the backlog.
pub fn max_open_connections(max_requests: usize) -> usize {
    let limit = open_files_limit().unwrap_or(1024);
    limit
        .saturating_sub(RESERVED_FDS)
        .saturating_sub(max_requests)
        .clamp(max_requests.max(16), 65_536.max(max_requests))
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
}
