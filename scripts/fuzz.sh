#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 30).
#
#   scripts/fuzz.sh            # 30 s per target (the CI pass)
#   scripts/fuzz.sh 600        # a longer local run
#   TARGETS="unpack spec" scripts/fuzz.sh 60
#   FUZZ_DEV=1 scripts/fuzz.sh 20   # unoptimized build (CI's short pass:
#                                   # the optimized one took most of the run)
#
# Uses a nightly toolchain when one is installed (`rustup toolchain install
# nightly`), else the stable one with RUSTC_BOOTSTRAP=1; RUSTUP_TOOLCHAIN=...
# picks one explicitly. cargo-fuzz (crates.io) is installed if missing.
# Crashes land in fuzz/artifacts/<target>/; the script exits non-zero if
# any target failed.
set -euo pipefail

SECONDS_PER_TARGET="${1:-30}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT/fuzz"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz needs nightly flags (-Zsanitizer, -Cpasses=sancov). Use the
# toolchain named by RUSTUP_TOOLCHAIN if set, else nightly if installed,
# else the default one; a non-nightly toolchain accepts the flags through
# RUSTC_BOOTSTRAP=1.
if [ -z "${RUSTUP_TOOLCHAIN:-}" ] && command -v rustup >/dev/null 2>&1 &&
    rustup run nightly rustc --version >/dev/null 2>&1; then
    FUZZ=(cargo +nightly fuzz)
    RUSTC_VERSION="$(rustup run nightly rustc --version)"
else
    FUZZ=(cargo fuzz)
    RUSTC_VERSION="$(rustc --version)"
    case "$RUSTC_VERSION" in
    *nightly* | *-dev*) ;;
    *)
        echo "fuzz.sh: $RUSTC_VERSION is not nightly; using it with RUSTC_BOOTSTRAP=1" >&2
        export RUSTC_BOOTSTRAP=1
        ;;
    esac
fi
echo "fuzz.sh: $RUSTC_VERSION" >&2

TARGETS="${TARGETS:-frontmatter render spec lockfile manifest unpack}"

# Seed corpora: real skills, specs, a lock and a manifest, real archives.
seed() {
    local t="$1"
    local dir="corpus/$t"
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
    case "$t" in
    frontmatter | render)
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

# An unoptimized build compiles in a fraction of the time; each target
# then runs fewer inputs, which a short pass can afford.
BUILD=()
if [ -n "${FUZZ_DEV:-}" ]; then
    BUILD=(--dev)
fi

status=0
for t in $TARGETS; do
    seed "$t"
    echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
    if ! "${FUZZ[@]}" run "${BUILD[@]}" "$t" -- -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb=2048 -max_len=1048576 -timeout=10 -print_final_stats=1 \
        2>"/tmp/fuzz-$t.log"; then
        echo "!! $t FAILED; see /tmp/fuzz-$t.log and fuzz/artifacts/$t/" >&2
        tail -40 "/tmp/fuzz-$t.log" >&2
        status=1
    fi
    grep -E '^(stat::|#[0-9]+ +DONE)' "/tmp/fuzz-$t.log" || true
done
exit $status
