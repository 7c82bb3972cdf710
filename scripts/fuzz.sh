#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 30).
#
#   scripts/fuzz.sh            # 30 s per target (the CI pass)
#   scripts/fuzz.sh 600        # a longer local run
#   TARGETS="unpack spec" scripts/fuzz.sh 60
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) for
# -Zsanitizer; cargo-fuzz is installed if missing. Crashes land in
# fuzz/artifacts/<target>/; the script exits non-zero if any target failed.
set -euo pipefail

SECONDS_PER_TARGET="${1:-30}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT/fuzz"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz needs nightly flags; prefer a nightly toolchain, else let a
# stable one accept them via RUSTC_BOOTSTRAP.
if rustup run nightly rustc --version >/dev/null 2>&1; then
    FUZZ=(cargo +nightly fuzz)
else
    echo "fuzz.sh: no nightly toolchain; using stable with RUSTC_BOOTSTRAP=1" >&2
    export RUSTC_BOOTSTRAP=1
    FUZZ=(cargo fuzz)
fi

TARGETS="${TARGETS:-frontmatter spec lockfile manifest unpack}"

# Seed corpora: real skills, specs, a lock and a manifest, real archives.
seed() {
    local t="$1"
    local dir="corpus/$t"
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
    case "$t" in
    frontmatter)
        find "$ROOT/examples" -iname 'skill.md' -size -64k | head -50 |
            while read -r f; do cp "$f" "$dir/$(basename "$(dirname "$f")").md"; done
        ;;
    spec)
        for s in code-review code-review@^1 'pdf@~2.1' x@1.4.2 acme:pdf@1 \
            git+https://github.com/org/repo.git@v1.2.0 ./local/dir \
            git@github.com:org/repo.git file:///srv/skills.git; do
            printf '%s' "$s" >"$dir/$(printf '%s' "$s" | sha1sum | cut -c1-12)"
        done
        ;;
    lockfile)
        for f in "$ROOT"/skills.lock.example "$ROOT"/examples/*/skills.lock; do
            [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | sha1sum | cut -c1-12)"
        done
        ;;
    manifest)
        for f in "$ROOT"/examples/*/skills.toml; do
            [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | sha1sum | cut -c1-12)"
        done
        ;;
    unpack)
        local n=0
        for d in "$ROOT"/examples/packages/*/ "$ROOT"/examples/skills/*/; do
            [ -d "$d" ] || continue
            tar -C "$d" -czf "$dir/seed$n.tar.gz" . 2>/dev/null || true
            n=$((n + 1))
            [ "$n" -ge 8 ] && break
        done
        ;;
    esac
    return 0
}

status=0
for t in $TARGETS; do
    seed "$t"
    echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
    if ! "${FUZZ[@]}" run "$t" -- -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb=2048 -max_len=1048576 -timeout=10 -print_final_stats=1 \
        2>"/tmp/fuzz-$t.log"; then
        echo "!! $t FAILED; see /tmp/fuzz-$t.log and fuzz/artifacts/$t/" >&2
        tail -40 "/tmp/fuzz-$t.log" >&2
        status=1
    fi
    grep -E '^(stat::|#[0-9]+ +DONE)' "/tmp/fuzz-$t.log" || true
done
exit $status
