//! Lays out the functions a typical run executes side by side in the
//! release `skillpm` binary. The linker otherwise scatters them over its
//! 13 MB of code: a 10-skill `add` faulted in about 120 separate 64 KB
//! stretches of it and left 12.7 MB mapped for the exit to unmap. With
//! the list (`build/hot-functions.txt`, about 2 300 functions, written by
//! `scripts/hot-functions.py` from runs of the common commands) the same
//! run takes about 100 fewer page faults, leaves 9 MB mapped and spends
//! 0.7 ms less CPU (README, Benchmarks).
//!
//! The list names functions by their mangled symbols, which change with
//! the compiler and the dependencies; names the build no longer has are
//! skipped, so a stale list costs only the gain. Only where the linker
//! is LLD, the default for this target since Rust 1.90, and not one the
//! user chose: the GNU linkers do not take the option.

use std::path::Path;
use std::process::Command;

const LIST: &str = "build/hot-functions.txt";

fn main() {
    println!("cargo:rerun-if-changed={LIST}");
    println!("cargo:rerun-if-changed=build.rs");
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let list = Path::new(&dir).join(LIST);
    // `-Wl,` splits its argument at commas: a path with one would hand
    // the linker pieces of it.
    let list = list.to_string_lossy();
    if !list.contains(',') && Path::new(&*list).is_file() && links_with_lld() {
        println!("cargo:rustc-link-arg-bin=skillpm=-Wl,--symbol-ordering-file={list}");
        println!("cargo:rustc-link-arg-bin=skillpm=-Wl,--no-warn-symbol-ordering");
    }
}

/// A release build for x86_64 Linux (GNU) by rustc 1.90 or newer, with
/// no linker set for it: rustc's own LLD links it. Any flag that names a
/// linker or its flavour (`-Clinker=`, `-Clinker-flavor`,
/// `-Clink-self-contained`, `-fuse-ld=`) may swap in a GNU linker, which
/// would fail on the option, so any of them leaves the list out.
fn links_with_lld() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("RUSTC_LINKER").is_some()
        || ["linker", "link-self-contained", "fuse-ld"]
            .iter()
            .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .lines()
        .find_map(|l| l.strip_prefix("release: 1."))
        .and_then(|rest| rest.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
