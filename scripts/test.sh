#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and integration tests that drive the
# real `skillpm` and `skillpm-registry` binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked "$@"
