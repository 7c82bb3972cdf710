//! `skillpm-registry`: the self-hostable registry server.
//!
//! One command runs it on files plus an embedded SQLite database
//! (`DIR/blobs/`, `DIR/registry.db`), or, for several stateless replicas,
//! on PostgreSQL (`--database postgres://...`) and S3-compatible object
//! storage (`--blobs s3://bucket/prefix`); see `config.rs` for the storage
//! choice and `routes/` for the HTTP surface.

mod audit;
mod auth;
mod config;
mod error;
mod gc;
mod keys;
mod migrate;
mod npm;
mod rescan;
mod routes;
mod search;
mod state;
mod store;
mod typosquat;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use config::StoreArgs;
use skillpm_core::archive::Limits;
use skillpm_core::protocol::valid_login;
use skillpm_serve::{conns, listen};
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
    /// Manage the keys index entries are signed with: a directory of their
    /// own (public keyring and private key files), never the database.
    #[command(subcommand)]
    Key(KeyCmd),
    /// Copy an embedded registry (SQLite + blob files) into PostgreSQL and
    /// S3-compatible storage, verifying every checksum; safe to re-run.
    Migrate {
        /// Data directory of the embedded registry.
        #[arg(long)]
        from: PathBuf,
        /// Target database, postgres://...
        #[arg(long, env = "SKILLPM_REGISTRY_DATABASE")]
        to: String,
        /// Target blob store, s3://bucket/prefix
        #[arg(long, env = "SKILLPM_REGISTRY_BLOBS")]
        blobs: String,
    },
    /// Re-scan every stored version with this build's audit rules (after
    /// the rules change) and store what they find, which `/index`, search
    /// and the well-known index then serve. Nothing is deleted: versions
    /// that now have critical findings are named, and the command exits 1
    /// so they are noticed; an owner can then yank them. Safe beside a
    /// running server.
    Rescan {
        #[command(flatten)]
        store: StoreArgs,
        /// Largest unpacked size of a stored package, in bytes (as `serve
        /// --max-unpacked`).
        #[arg(long, default_value_t = 50 * 1024 * 1024)]
        max_unpacked: u64,
        /// Most entries a stored package may have (as `serve
        /// --max-entries`).
        #[arg(long, default_value_t = 10_000)]
        max_entries: u64,
    },
    /// List blobs that no version references (left by a publish killed
    /// between storing its blob and its row), with sizes and a total;
    /// `--delete` removes them. Only blobs older than `--older-than` are
    /// considered, so a publish in flight on another replica keeps its
    /// blob. Safe beside running servers.
    Gc {
        #[command(flatten)]
        store: StoreArgs,
        /// Delete the blobs listed; without it nothing is changed.
        #[arg(long)]
        delete: bool,
        /// Grace period in seconds: younger unreferenced blobs may belong
        /// to a publish in flight and are left alone.
        #[arg(long, value_name = "SECS", default_value_t = 3600)]
        older_than: u64,
    },
}

#[derive(Args)]
struct ServeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Address to listen on; port 0 picks a free port. [default: 127.0.0.1:7878]
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// URL clients reach this server at (behind a proxy); defaults to the
    /// bound address. Without it, a server bound to an unspecified address
    /// (0.0.0.0, [::]) serves no config.json, and clients use the URL they
    /// were given: the request's Host header is never trusted for URLs.
    #[arg(long)]
    public_url: Option<String>,
    /// Directory of the signing keys (`skillpm-registry key generate`):
    /// each new version is signed with its active key and config.json
    /// lists its public keys. Without it, versions are published unsigned.
    #[arg(long, value_name = "KEYDIR", env = "SKILLPM_REGISTRY_KEYS")]
    keys: Option<PathBuf>,
    /// Largest accepted upload (compressed), in bytes.
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    max_upload: u64,
    /// Largest accepted unpacked size, in bytes.
    #[arg(long, default_value_t = 50 * 1024 * 1024)]
    max_unpacked: u64,
    /// Most entries a package may have.
    #[arg(long, default_value_t = 10_000)]
    max_entries: u64,
    /// Most requests served at once (each may hold a file open); more wait
    /// for a slot. Connections that have not sent a complete request head
    /// hold none. [default: half the open-files limit, less a reserve]
    #[arg(long)]
    max_connections: Option<usize>,
    /// Seconds a client has to send a complete request head, from
    /// connecting or from the first byte of its next request.
    #[arg(long, default_value = "10", value_parser = conns::parse_secs)]
    header_timeout: std::time::Duration,
    /// Seconds a kept-alive connection may sit without a request, and a
    /// request may go without a byte moving either way (a stalled upload,
    /// a client not reading its response), before the connection closes.
    #[arg(long, default_value = "30", value_parser = conns::parse_secs)]
    idle_timeout: std::time::Duration,
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Create a token for USER and print it (only its hash is stored).
    Create {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        user: String,
    },
    /// Revoke a token.
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        token: String,
    },
    /// List tokens: user, id (a prefix of the stored hash, never the
    /// token), creation time and whether revoked.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Where the signing keys are: `--dir`, `SKILLPM_REGISTRY_KEYS`, or
/// `keys` in the config file.
#[derive(Args)]
struct KeysArgs {
    /// Directory of the signing keys: keys.json (the public keyring) and
    /// one private key file per key (PKCS#8 PEM, mode 0600).
    #[arg(
        long = "dir",
        visible_alias = "keys",
        value_name = "KEYDIR",
        env = "SKILLPM_REGISTRY_KEYS"
    )]
    dir: Option<PathBuf>,
    /// TOML config file whose `keys` names the directory (as for `serve`).
    #[arg(long, env = "SKILLPM_REGISTRY_CONFIG")]
    config: Option<PathBuf>,
}

impl KeysArgs {
    fn key_dir(&self) -> Result<keys::KeyDir> {
        let store = StoreArgs {
            config: self.config.clone(),
            ..StoreArgs::default()
        };
        key_dir(self.dir.clone(), &store)
    }
}

/// The key directory a command names, or the config file's `keys`.
fn key_dir(dir: Option<PathBuf>, store: &StoreArgs) -> Result<keys::KeyDir> {
    match dir {
        Some(d) => Ok(keys::KeyDir::new(d)),
        None => match store.resolve()?.file.keys {
            Some(d) => Ok(keys::KeyDir::new(d)),
            None => bail!("no key directory: pass --dir KEYDIR or set SKILLPM_REGISTRY_KEYS"),
        },
    }
}

#[derive(Subcommand)]
enum KeyCmd {
    /// Create the key directory (mode 0700) with a first key, the active
    /// one: its private half in KEYDIR/ID.pem (mode 0600).
    Generate {
        #[command(flatten)]
        keys: KeysArgs,
    },
    /// List the keys: id, algorithm, since when, and whether active,
    /// valid (still verifies what it signed) or revoked.
    List {
        #[command(flatten)]
        keys: KeysArgs,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Make a new key the active one; the old ones stay listed and valid
    /// for verification until revoked.
    Rotate {
        #[command(flatten)]
        keys: KeysArgs,
    },
    /// Revoke a key that is not the active one: clients refuse every entry
    /// it signed, and its private key file is deleted. Run `key resign`
    /// next so those entries are signed by a live key.
    Revoke {
        #[command(flatten)]
        keys: KeysArgs,
        /// The key's id (`key list`).
        id: String,
    },
    /// Sign every stored version that the active key has not signed:
    /// after a rotation or a revocation, or for versions published before
    /// the registry had keys. A version whose stored signature no longer
    /// verifies is reported and left alone.
    Resign {
        #[command(flatten)]
        store: StoreArgs,
        /// Directory of the signing keys.
        #[arg(
            long = "dir",
            visible_alias = "keys",
            value_name = "KEYDIR",
            env = "SKILLPM_REGISTRY_KEYS"
        )]
        dir: Option<PathBuf>,
    },
}

fn main() {
    if let Err(e) = run() {
        eprintln!("skillpm-registry: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        match cli.cmd {
            Cmd::Serve(args) => serve(args).await,
            Cmd::Token(TokenCmd::Create { store, user }) => {
                if !valid_login(&user) {
                    bail!("invalid user name {user:?}: use 1-64 letters, digits, `-`, `_` or `.`");
                }
                let meta = store.resolve()?.open_meta().await?;
                let mut raw = [0u8; 32];
                getrandom::fill(&mut raw).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
                let token = format!("spm_{}", hex::encode(raw));
                meta.create_token(&user, &token)
                    .await
                    .context("cannot store the token")?;
                println!("{token}");
                Ok(())
            }
            Cmd::Token(TokenCmd::Revoke { store, token }) => {
                let meta = store.resolve()?.open_meta().await?;
                if !meta
                    .revoke_token(token.trim())
                    .await
                    .context("cannot revoke the token")?
                {
                    bail!("no such live token");
                }
                println!("revoked");
                Ok(())
            }
            Cmd::Token(TokenCmd::List { store, json }) => {
                let meta = store.resolve()?.open_meta().await?;
                let tokens = meta.tokens().await.context("cannot list the tokens")?;
                print!("{}", render_tokens(&tokens, json));
                Ok(())
            }
            Cmd::Key(cmd) => key_command(cmd).await,
            Cmd::Migrate { from, to, blobs } => migrate::run(&from, &to, &blobs).await,
            Cmd::Rescan {
                store,
                max_unpacked,
                max_entries,
            } => rescan(store, max_unpacked, max_entries).await,
            Cmd::Gc {
                store,
                delete,
                older_than,
            } => gc(store, delete, older_than).await,
        }
    })
}

async fn serve(args: ServeArgs) -> Result<()> {
    let cfg = args.store.resolve()?;
    let public_url = match args.public_url.or_else(|| cfg.file.public_url.clone()) {
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
    let listen = args
        .listen
        .or(cfg.file.listen)
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7878)));
    let keys = match args.keys.or_else(|| cfg.file.keys.clone()) {
        Some(dir) => Some(std::sync::Arc::new(keys::Keys::open(keys::KeyDir::new(
            dir,
        ))?)),
        None => None,
    };
    let meta = cfg.open_meta().await?;
    let (blobs, scratch) = cfg.open_blobs().await?;
    eprintln!(
        "skillpm-registry: metadata in {}, blobs in {}",
        meta.describe(),
        blobs.describe()
    );
    let listener = listen::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let base_url =
        public_url.or_else(|| (!addr.ip().is_unspecified()).then(|| format!("http://{addr}")));
    if base_url.is_none() && keys.is_some() {
        bail!(
            "--keys needs config.json to publish the public keys, and a server bound to {addr} serves none: pass --public-url"
        );
    }
    if let Some(k) = &keys {
        let loaded = k.current();
        eprintln!(
            "skillpm-registry: signing with key {}",
            loaded.active.as_ref().map_or("-", |a| a.id.as_str())
        );
    }
    if base_url.is_none() {
        eprintln!(
            "skillpm-registry: listening on {addr} without --public-url: config.json is not served, so clients use the URL they were given"
        );
    }
    let app = routes::router(state::Inner {
        db: meta,
        blobs,
        scratch: scratch.path().to_path_buf(),
        limits: Limits {
            max_compressed: args.max_upload,
            max_unpacked: args.max_unpacked,
            max_entries: args.max_entries,
            names: skillpm_core::platform::Platform::Windows,
            ..Limits::default()
        },
        max_upload: args.max_upload,
        base_url,
        checksums: Default::default(),
        npm: Default::default(),
        keys,
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://{addr}")?;
    out.flush()?;
    drop(out);
    let max_connections = args
        .max_connections
        .unwrap_or_else(listen::default_max_connections);
    let limits = conns::Limits {
        name: "skillpm-registry",
        max_requests: max_connections,
        max_open: listen::max_open_connections(max_connections),
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
    };
    conns::serve(listener, app, limits, shutdown_signal()).await;
    drop(scratch);
    eprintln!("skillpm-registry: shut down");
    Ok(())
}

async fn rescan(store: StoreArgs, max_unpacked: u64, max_entries: u64) -> Result<()> {
    let cfg = store.resolve()?;
    let meta = cfg.open_meta().await?;
    let blobs = cfg.open_blob_store().await?;
    let scratch = tempfile::Builder::new()
        .prefix("skillpm-rescan-")
        .tempdir()
        .context("cannot create a scratch dir")?;
    let limits = Limits {
        // Stored blobs passed `serve --max-upload` when published.
        max_compressed: u64::MAX,
        max_unpacked,
        max_entries,
        names: skillpm_core::platform::Platform::Windows,
        ..Limits::default()
    };
    let report = rescan::run(meta.as_ref(), blobs.as_ref(), scratch.path(), &limits).await?;
    let clean = |s: &str| skillpm_core::text::sanitize(s).into_owned();
    for (what, why) in &report.failed {
        eprintln!(
            "skillpm-registry: not scanned: {}: {}",
            clean(what),
            clean(why)
        );
    }
    for (what, record) in &report.critical {
        println!("{}: {}", clean(what), record.counts.phrase());
        for f in record.findings.iter().filter(|f| f.severity == "critical") {
            println!(
                "  {} at {}:{}: {}",
                clean(&f.rule),
                clean(&f.file),
                f.line,
                clean(&f.message)
            );
        }
    }
    println!(
        "rescanned {} version(s) of {} skill(s): {} record(s) updated, {} with critical findings",
        report.scanned,
        report.skills,
        report.updated,
        report.critical.len()
    );
    if !report.critical.is_empty() {
        bail!(
            "{} version(s) have critical findings (named above) and are still served; an owner can yank each with `skillpm yank NAME@VERSION`",
            report.critical.len()
        );
    }
    if !report.failed.is_empty() {
        bail!(
            "{} version(s) could not be scanned (named above)",
            report.failed.len()
        );
    }
    Ok(())
}

async fn gc(store: StoreArgs, delete: bool, older_than: u64) -> Result<()> {
    let cfg = store.resolve()?;
    let meta = cfg.open_meta().await?;
    let blobs = cfg.open_blob_store().await?;
    let grace = std::time::Duration::from_secs(older_than);
    let report = gc::run(meta.as_ref(), blobs.as_ref(), grace, delete).await?;
    print!("{}", render_gc(&report, delete, older_than));
    Ok(())
}

/// The `gc` output: one line per unreferenced blob (checksum, size,
/// whether deleted), then a summary.
fn render_gc(report: &gc::Report, delete: bool, older_than: u64) -> String {
    let mut out = String::new();
    for b in &report.orphans {
        let kept = delete && !report.deleted.contains(&b.sum);
        let note = if kept {
            "\tkept (stored again meanwhile)"
        } else {
            ""
        };
        out.push_str(&format!("{}\t{} bytes{note}\n", b.sum, b.size));
    }
    let n = report.orphans.len();
    let bytes = report.orphan_bytes();
    if delete {
        let freed: u64 = report
            .orphans
            .iter()
            .filter(|b| report.deleted.contains(&b.sum))
            .map(|b| b.size)
            .sum();
        out.push_str(&format!(
            "deleted {} unreferenced blob(s), {freed} bytes",
            report.deleted.len()
        ));
    } else {
        out.push_str(&format!("{n} unreferenced blob(s), {bytes} bytes"));
        if n > 0 {
            out.push_str("; run with --delete to remove them");
        }
    }
    out.push_str(&format!(
        " ({} blob(s) stored; {} unreferenced within the last {older_than} s left alone)\n",
        report.stored, report.recent
    ));
    out
}

async fn key_command(cmd: KeyCmd) -> Result<()> {
    match cmd {
        KeyCmd::Generate { keys } => {
            let dir = keys.key_dir()?;
            let id = dir.generate()?;
            println!("{id}");
            eprintln!(
                "skillpm-registry: key {id} is the active signing key; serve with --keys {}",
                dir.path().display()
            );
        }
        KeyCmd::List { keys, json } => {
            let dir = keys.key_dir()?;
            let file = dir.read()?.unwrap_or_default();
            print!("{}", render_keys(&file, json));
        }
        KeyCmd::Rotate { keys } => {
            let (old, new) = keys.key_dir()?.rotate()?;
            println!("{new}");
            if let Some(old) = old {
                eprintln!(
                    "skillpm-registry: key {new} signs from now on; {old} stays valid for what it signed until revoked"
                );
            }
        }
        KeyCmd::Revoke { keys, id } => {
            keys.key_dir()?.revoke(id.trim())?;
            println!("revoked");
            eprintln!(
                "skillpm-registry: clients now refuse what {} signed; run `skillpm-registry key resign` to sign it with the active key",
                id.trim()
            );
        }
        KeyCmd::Resign { store, dir } => {
            let dir = key_dir(dir, &store)?;
            let meta = store.resolve()?.open_meta().await?;
            let report = keys::resign(meta.as_ref(), &dir).await?;
            for (what, why) in &report.refused {
                eprintln!("skillpm-registry: not re-signed: {what}: {why}");
            }
            println!(
                "re-signed {} version(s) with key {}; {} already signed by it",
                report.signed, report.keyid, report.kept
            );
            if !report.refused.is_empty() {
                bail!(
                    "{} version(s) left as they were (named above)",
                    report.refused.len()
                );
            }
        }
    }
    Ok(())
}

/// The `key list` output.
fn render_keys(file: &keys::KeyringFile, json: bool) -> String {
    let mut out = String::new();
    if !json {
        out.push_str("ID\tALGORITHM\tVALID FROM\tSTATUS\n");
    }
    for k in &file.keys {
        let active = file.active.as_deref() == Some(k.id.as_str());
        let status = match (&k.revoked, active) {
            (Some(t), _) => format!("revoked {t}"),
            (None, true) => "active".to_string(),
            (None, false) => "valid".to_string(),
        };
        let since = k.valid_from.clone().unwrap_or_else(|| "-".into());
        if json {
            let v = serde_json::json!({
                "id": k.id, "algorithm": k.algorithm, "key": k.key,
                "valid_from": k.valid_from, "revoked": k.revoked, "active": active,
            });
            out.push_str(&v.to_string());
        } else {
            out.push_str(&format!("{}\t{}\t{since}\t{status}", k.id, k.algorithm));
        }
        out.push('\n');
    }
    out
}

/// The `token list` output. Ids are the first 16 hex digits of the
/// stored sha256: enough to tell tokens apart, useless to authenticate.
fn render_tokens(tokens: &[store::TokenRow], json: bool) -> String {
    let time = |t: i64| {
        time::OffsetDateTime::from_unix_timestamp(t)
            .ok()
            .and_then(|d| {
                d.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_else(|| t.to_string())
    };
    let mut out = String::new();
    if !json {
        out.push_str("USER\tID\tCREATED\tREVOKED\n");
    }
    for t in tokens {
        let id = t.hash.get(..16).unwrap_or(&t.hash);
        let revoked = t.revoked.map(time);
        if json {
            let v = serde_json::json!({
                "user": t.user, "id": id, "created": time(t.created), "revoked": revoked,
            });
            out.push_str(&v.to_string());
        } else {
            let revoked = revoked.unwrap_or_else(|| "-".into());
            out.push_str(&format!("{}\t{id}\t{}\t{revoked}", t.user, time(t.created)));
        }
        out.push('\n');
    }
    out
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
