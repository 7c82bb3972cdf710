#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and integration tests that drive the
# real `skillpm` and `skillpm-registry` binaries — including the scale-out
# tests against a real PostgreSQL and a real S3-compatible server, which
# scripts/services.sh installs (first run only) and starts on loopback.
#
# SKILLPM_SKIP_SERVICES=1 scripts/test.sh   runs without them (the scale-out
#                                           tests then print why and pass).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SKILLPM_SKIP_SERVICES:-}" ]; then
    scripts/services.sh start
    eval "$(scripts/services.sh env)"
    export SKILLPM_REQUIRE_SERVICES=1
fi
cargo test --workspace --locked "$@"
