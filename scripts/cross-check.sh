#!/usr/bin/env bash
# Checks that the workspace builds for the platforms agent users work on
# besides Linux: macOS (Intel and Apple silicon) and Windows. Runs clippy
# (which type-checks everything `cargo check` does) for each target, with
# zig as the C compiler for the crates that build C (ring, SQLite), so no
# SDK is needed. Tests run on Linux only; see docs/src/reference/platforms.md.
#
# scripts/cross-check.sh                 every foreign target
# scripts/cross-check.sh x86_64-apple-darwin
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu)
fi
# cargo-zigbuild passes zig to the build scripts as their C compiler and
# linker; both come as wheels from PyPI.
if ! command -v cargo-zigbuild >/dev/null 2>&1; then
    python3 -m pip install --quiet cargo-zigbuild==0.24.1 ziglang==0.17.1
fi
rustup target add "${targets[@]}" >/dev/null
for t in "${targets[@]}"; do
    echo "== $t"
    cargo-zigbuild clippy --workspace --locked --target "$t" -- -D warnings
done
