//! `skillpm-registry`: the self-hostable registry server.
//!
//! One command runs it on files plus an embedded SQLite database
//! (`DIR/blobs/`, `DIR/registry.db`); see `api.rs` for the HTTP surface.

mod api;
mod blobs;
mod db;
mod error;
mod publish;
mod search;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use skillpm::package::Limits;
use skillpm::registry::protocol::valid_login;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "skillpm-registry",
    version,
    about = "Self-hostable registry server for skillpm"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the registry over HTTP.
    Serve(ServeArgs),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCmd),
}

#[derive(Args)]
struct ServeArgs {
    /// Data directory (blobs and the SQLite database).
    #[arg(long, default_value = "./registry-data")]
    data: PathBuf,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// URL clients reach this server at (behind a proxy); defaults to the
    /// bound address.
    #[arg(long)]
    public_url: Option<String>,
    /// Largest accepted upload (compressed), in bytes.
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    max_upload: u64,
    /// Largest accepted unpacked size, in bytes.
    #[arg(long, default_value_t = 50 * 1024 * 1024)]
    max_unpacked: u64,
    /// Most entries a package may have.
    #[arg(long, default_value_t = 10_000)]
    max_entries: u64,
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Create a token for USER and print it (only its hash is stored).
    Create {
        #[arg(long, default_value = "./registry-data")]
        data: PathBuf,
        #[arg(long)]
        user: String,
    },
    /// Revoke a token.
    Revoke {
        #[arg(long, default_value = "./registry-data")]
        data: PathBuf,
        token: String,
    },
}

fn main() {
    if let Err(e) = run() {
        eprintln!("skillpm-registry: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Serve(args) => serve(args),
        Cmd::Token(TokenCmd::Create { data, user }) => {
            if !valid_login(&user) {
                bail!("invalid user name {user:?}: use 1-64 letters, digits, `-`, `_` or `.`");
            }
            let conn = open_db(&data)?;
            let mut raw = [0u8; 32];
            getrandom::fill(&mut raw).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
            let token = format!("spm_{}", hex::encode(raw));
            db::create_token(&conn, &user, &token).context("cannot store the token")?;
            println!("{token}");
            Ok(())
        }
        Cmd::Token(TokenCmd::Revoke { data, token }) => {
            let conn = open_db(&data)?;
            if !db::revoke_token(&conn, token.trim()).context("cannot revoke the token")? {
                bail!("no such live token");
            }
            println!("revoked");
            Ok(())
        }
    }
}

fn open_db(data: &std::path::Path) -> Result<rusqlite::Connection> {
    std::fs::create_dir_all(data).with_context(|| format!("cannot create {}", data.display()))?;
    let path = data.join("registry.db");
    db::open(&path).with_context(|| format!("cannot open {}", path.display()))
}

fn serve(args: ServeArgs) -> Result<()> {
    let conn = open_db(&args.data)?;
    let blobs = blobs::Blobs::open(&args.data)
        .with_context(|| format!("cannot create blob dirs in {}", args.data.display()))?;
    blobs.clean_tmp().context("cannot clean the tmp dir")?;
    let public_url = match args.public_url {
        Some(u) => {
            let parsed =
                url::Url::parse(&u).with_context(|| format!("invalid --public-url {u:?}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                bail!("--public-url must be http:// or https://");
            }
            Some(u.trim_end_matches('/').to_string())
        }
        None => None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        let base_url =
            public_url.or_else(|| (!addr.ip().is_unspecified()).then(|| format!("http://{addr}")));
        let app = api::router(api::Inner {
            db: db::Db::new(conn),
            blobs,
            limits: Limits {
                max_compressed: args.max_upload,
                max_unpacked: args.max_unpacked,
                max_entries: args.max_entries,
                ..Limits::default()
            },
            max_upload: args.max_upload,
            base_url,
        });
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}")?;
        out.flush()?;
        drop(out);
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .context("server error")?;
        eprintln!("skillpm-registry: shut down");
        Ok(())
    })
}

/// Resolves on SIGINT or SIGTERM; axum then stops accepting and lets
/// in-flight requests finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
