//! Live reload: watch the discovery roots and the config files that shape
//! eligibility, debounce bursts, rebuild the catalog and the snapshot, and
//! swap the new snapshot in whole.
//!
//! A skill being rewritten is never served half-written: a rebuild starts
//! only after [`DEBOUNCE`] without events; if more events arrive while it
//! reads, or the bytes of a `SKILL.md` no longer match the catalog's read
//! (see `Snapshot::unsettled`), the result is thrown away and the tree is
//! read again once it is quiet, up to [`MAX_RETRIES`] times.
//! Only modifications count: reading files raises access events on Linux,
//! and the server's own reads must not wake it.

use super::kept::{Known, Store};
use super::resources::Snapshot;
use super::server::Shared;
use crate::engine::catalog::Catalog;
use crate::engine::config::{ConfigError, Environment};
use crate::engine::discover;
use notify::event::{EventKind, MetadataKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// Quiet time that ends a burst of events.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// Rebuilds of one burst before an unsettled snapshot is served anyway.
pub const MAX_RETRIES: usize = 5;

/// Keeps the watcher alive; dropping it stops reloading.
pub struct Reloader {
    _thread: std::thread::JoinHandle<()>,
}

/// Reloads into `shared` from now on. The watches (one inotify watch per
/// directory of every skill) are set on the reload thread while the server
/// answers, not while the first snapshot is read: the snapshot's own walk
/// would raise an event in every directory already watched. Once they are
/// set the tree is looked at once more, so a change made before its
/// directory was watched is served too. `store` holds what the first
/// build kept, and is saved if that build `read` files. `log` receives
/// one line per reload or problem.
pub fn start(
    env: Environment,
    shared: Arc<Shared>,
    store: Store,
    read: usize,
    log: fn(&str),
) -> notify::Result<Reloader> {
    let (tx, rx) = channel::<()>();
    let look_again = tx.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            if counts(&ev.kind) {
                let _ = tx.send(());
            }
        }
    })?;
    let thread = std::thread::Builder::new()
        .name("skillpm-mcp-watch".into())
        .spawn(move || {
            let mut store = store;
            store.save_after(read, log);
            let mut watched = BTreeSet::new();
            add_watches(&env, &mut watcher, &mut watched, log);
            let _ = look_again.send(());
            drop(look_again);
            reload_loop(env, shared, &mut store, watcher, watched, rx, log);
        })
        .map_err(notify::Error::io)?;
    Ok(Reloader { _thread: thread })
}

fn counts(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) => false,
    }
}

/// Watches every root that exists (recursively), and non-recursively the
/// directories whose entries decide the rest: a missing root's parent, the
/// project directory (`skills.toml`) and the user config directory.
fn add_watches(
    env: &Environment,
    w: &mut RecommendedWatcher,
    watched: &mut BTreeSet<(PathBuf, bool)>,
    log: fn(&str),
) {
    let Ok(layout) = discover::layout(env) else {
        return;
    };
    let mut want: Vec<(PathBuf, bool)> = Vec::new();
    for r in &layout.roots {
        if r.path.is_dir() {
            want.push((r.path.clone(), true));
        } else if let Some(p) = r.path.parent().filter(|p| p.is_dir()) {
            want.push((p.to_path_buf(), false));
        }
    }
    want.push((env.project_base(), false));
    if let Some(d) = env.config_dir.as_ref().filter(|d| d.is_dir()) {
        want.push((d.clone(), false));
    }
    for (path, recursive) in want {
        if watched.contains(&(path.clone(), recursive)) {
            continue;
        }
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match w.watch(&path, mode) {
            Ok(()) => {
                watched.insert((path, recursive));
            }
            // Most often the inotify watch limit: serving goes on, without
            // reloads for this directory.
            Err(e) => log(&format!("cannot watch {}: {e}", path.display())),
        }
    }
}

/// Takes every pending event; true if there was any.
fn drain(rx: &Receiver<()>) -> bool {
    let mut any = false;
    while rx.try_recv().is_ok() {
        any = true;
    }
    any
}

/// Waits until no event has arrived for [`DEBOUNCE`]; false when the
/// watcher is gone.
fn settle(rx: &Receiver<()>) -> bool {
    loop {
        match rx.recv_timeout(DEBOUNCE) {
            Ok(()) => continue,
            Err(RecvTimeoutError::Timeout) => return true,
            Err(RecvTimeoutError::Disconnected) => return false,
        }
    }
}

/// Reads the tree until two looks agree, then returns the snapshot;
/// what `store` keeps unchanged is not read, and it is left keeping what
/// this build read.
pub fn build_settled(
    env: &Environment,
    rx: Option<&Receiver<()>>,
    store: &mut Store,
) -> Result<Snapshot, ConfigError> {
    let mut tries = 0;
    loop {
        let found = Catalog::discover(env)?;
        let kept = store.kept();
        let catalog = Catalog::build_keeping(env, found, &mut kept.parses);
        let snap = Snapshot::build(catalog, &kept.files, &env.workers);
        kept.files = Known::of(&snap);
        let moved = rx.is_some_and(drain);
        if (snap.unsettled || moved) && tries < MAX_RETRIES {
            tries += 1;
            match rx {
                Some(rx) => {
                    if !settle(rx) {
                        return Ok(snap);
                    }
                }
                None => std::thread::sleep(DEBOUNCE),
            }
            continue;
        }
        return Ok(snap);
    }
}

fn reload_loop(
    env: Environment,
    shared: Arc<Shared>,
    store: &mut Store,
    mut watcher: RecommendedWatcher,
    mut watched: BTreeSet<(PathBuf, bool)>,
    rx: Receiver<()>,
    log: fn(&str),
) {
    while rx.recv().is_ok() {
        if !settle(&rx) {
            return;
        }
        let snap = match build_settled(&env, Some(&rx), store) {
            Ok(s) => s,
            Err(e) => {
                log(&format!(
                    "reload failed, still serving the previous skills: {e}"
                ));
                continue;
            }
        };
        let served = snap.skills.len();
        store.save_after(snap.read, log);
        if let Some(change) = shared.swap(snap) {
            log(&format!(
                "reloaded: {served} skill(s) served, {} resource(s) changed",
                change.uris.len()
            ));
        }
        // A root created since the last look is watched from now on.
        add_watches(&env, &mut watcher, &mut watched, log);
    }
}
