#!/usr/bin/env bash
# The main job on a fresh machine: build skillpm and show what an agent sees
# in the bundled demo project (eligible, skipped, shadowed, invalid skills).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --quiet
SKILLPM="$PWD/target/debug/skillpm"
DEMO_HOME="$(mktemp -d)"
trap 'rm -rf "$DEMO_HOME"' EXIT
export HOME="$DEMO_HOME" XDG_CONFIG_HOME="$DEMO_HOME/.config"
echo "== skillpm status (examples/demo-project)"
"$SKILLPM" -C examples/demo-project status
echo
echo "== skillpm prompt"
"$SKILLPM" -C examples/demo-project prompt
