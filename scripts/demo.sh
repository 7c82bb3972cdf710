#!/usr/bin/env bash
# The main job on a fresh machine, end to end:
#   build -> start a signing registry on loopback (temp data dir, its own
#   key) -> publish the example skills -> `add code-review@^1` in a new
#   project -> `install --locked` into a fresh copy -> `audit signatures`
#   -> `status` (what the agent will see).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --quiet
BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug"   # wherever cargo put it
WORK="$(mktemp -d)"
REG_PID=""
cleanup() { [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_CACHE_HOME="$WORK/cache"
mkdir -p "$HOME"

step() { printf '\n== %s\n' "$*"; }

step "a signing key for the registry (kept in $WORK/keys, never in its database)"
"$BIN/skillpm-registry" key generate --dir "$WORK/keys"
"$BIN/skillpm-registry" key list --dir "$WORK/keys"

step "start skillpm-registry on 127.0.0.1 (data: $WORK/registry)"
"$BIN/skillpm-registry" serve --data "$WORK/registry" --keys "$WORK/keys" --listen 127.0.0.1:0 >"$WORK/registry.log" 2>&1 &
REG_PID=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/registry.log" 2>/dev/null && break; sleep 0.05; done
URL="$(grep -o 'http://[0-9.:]*' "$WORK/registry.log" | head -1)"
echo "registry at $URL"
TOKEN="$("$BIN/skillpm-registry" token create --data "$WORK/registry" --user demo | awk '{print $NF}')"
export SKILLPM_REGISTRY="$URL" SKILLPM_TOKEN="$TOKEN"

step "publish the example skills (and a code-review 2.0.0 outside ^1)"
for dir in examples/packages/*/; do "$BIN/skillpm" publish "$dir"; done
mkdir -p "$WORK/cr2" && cp -r examples/packages/code-review "$WORK/cr2/"
sed -i 's/^version: "1.2.0"/version: "2.0.0"/' "$WORK/cr2/code-review/SKILL.md"
"$BIN/skillpm" publish "$WORK/cr2/code-review"
"$BIN/skillpm" search review

step "a new project: skillpm init && skillpm add code-review@^1 pdf-tools"
mkdir -p "$WORK/project" && cd "$WORK/project"
"$BIN/skillpm" init
"$BIN/skillpm" add code-review@^1 pdf-tools
echo "--- skills.toml (comments hidden)"; grep -v "^#" skills.toml | sed "/^$/d"
echo "--- skills.lock"; cat skills.lock

step "CI: install --locked into a fresh copy (same bytes on disk)"
mkdir -p "$WORK/ci" && cp skills.toml skills.lock "$WORK/ci/"
"$BIN/skillpm" -C "$WORK/ci" install --locked
diff -r .agents/skills "$WORK/ci/.agents/skills" && echo "identical trees"
cmp skills.lock "$WORK/ci/skills.lock" && echo "identical locks"
"$BIN/skillpm" -C "$WORK/ci" verify
step "every locked entry is signed by the registry's key"
"$BIN/skillpm" -C "$WORK/ci" audit signatures

step "skillpm status: what the agent will see"
"$BIN/skillpm" -C "$WORK/ci" status
step "skillpm prompt"
"$BIN/skillpm" -C "$WORK/ci" prompt
step "skillpm search --local review / prompt --query (what one message earns)"
"$BIN/skillpm" -C "$WORK/ci" search --local "review this change"
"$BIN/skillpm" -C "$WORK/ci" prompt --query "what skills do you have"

step "the registry is also an Agent Skills well-known site: add $URL --all"
mkdir -p "$WORK/wk"
curl -fsS "$URL/.well-known/agent-skills/index.json" 2>/dev/null | head -c 400 && echo || true
"$BIN/skillpm" -C "$WORK/wk" add "$URL" --all
echo "--- skills.lock"; cat "$WORK/wk/skills.lock"

step "status --agents: which agent sees which skill"
"$BIN/skillpm" -C "$WORK/ci" status --agents
