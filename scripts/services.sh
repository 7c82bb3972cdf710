#!/usr/bin/env bash
# Starts, stops and describes the shared services the registry's scale-out
# tests and benchmark run against: a private PostgreSQL (Debian's package)
# and an S3-compatible server (s3s-fs from crates.io), both on loopback,
# on private ports, with data under $SKILLPM_SERVICES_DIR.
#
#   scripts/services.sh start   # install if missing, start if not running (idempotent)
#   scripts/services.sh stop
#   scripts/services.sh env     # print the exports tests and benches use
#   eval "$(scripts/services.sh env)"
set -euo pipefail

DIR=${SKILLPM_SERVICES_DIR:-/tmp/skillpm-services}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)  # absolute: the servers run from inside it
PG_PORT=${SKILLPM_PG_PORT:-55432}
S3_PORT=${SKILLPM_S3_PORT:-59000}
S3_KEY=skillpm-test-key
S3_SECRET=skillpm-test-secret
S3_BUCKET=skillpm
S3S_VERSION=0.14.1

PG_DATA=$DIR/pg/data
PG_SOCK=$DIR/pg/sock
PG_LOG=$DIR/pg/log
# The server's TLS certificate (for DNS:localhost only, so a test can tell
# verify-ca from verify-full by connecting to 127.0.0.1) and its CA.
PG_TLS=$DIR/pg-tls
S3_ROOT=$DIR/s3
S3_PID=$DIR/s3s-fs.pid
S3_LOG=$DIR/s3s-fs.log

log() { echo "services: $*" >&2; }

pg_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
    [ -n "$d" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

# PostgreSQL refuses to run as root: as root, run its tools as `postgres`.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

apt_install() {
    if [ "$(id -u)" != 0 ]; then
        log "need root to install $*; install it and re-run"
        exit 1
    fi
    log "installing $* (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 || {
        apt-get update -q >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
    }
}

s3s_bin() {
    if command -v s3s-fs >/dev/null 2>&1; then
        command -v s3s-fs
    elif [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs" ]; then
        echo "${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs"
    fi
}

start_pg() {
    local bin
    bin=$(pg_bin) || true
    if [ -z "$bin" ]; then
        apt_install postgresql
        bin=$(pg_bin)
    fi
    mkdir -p "$DIR/pg"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$DIR/pg"; fi
    as_pg mkdir -p "$PG_SOCK"
    if [ ! -s "$PG_DATA/PG_VERSION" ]; then
        log "initdb in $PG_DATA"
        as_pg "$bin/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 >/dev/null
    fi
    if as_pg "$bin/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
        return 0
    fi
    make_pg_tls
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT (TLS offered)"
    as_pg "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start \
        -o "-p $PG_PORT -k $PG_SOCK -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c ssl=on -c ssl_cert_file=$PG_TLS/server.crt -c ssl_key_file=$PG_TLS/server.key" >/dev/null
}

# A CA and a server certificate for PostgreSQL, made once per services
# directory with openssl.
make_pg_tls() {
    [ -s "$PG_TLS/server.crt" ] && return 0
    command -v openssl >/dev/null 2>&1 || apt_install openssl
    mkdir -p "$PG_TLS"
    chmod 755 "$PG_TLS"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=skillpm test CA" \
        -keyout "$PG_TLS/ca.key" -out "$PG_TLS/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout "$PG_TLS/server.key" -out "$PG_TLS/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$PG_TLS/server.ext"
    openssl x509 -req -in "$PG_TLS/server.csr" -CA "$PG_TLS/ca.crt" -CAkey "$PG_TLS/ca.key" \
        -CAcreateserial -days 3650 -extfile "$PG_TLS/server.ext" -out "$PG_TLS/server.crt" 2>/dev/null
    chmod 600 "$PG_TLS/server.key"
    chmod 644 "$PG_TLS/ca.crt" "$PG_TLS/server.crt"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_TLS/server.key" "$PG_TLS/server.crt"; fi
}

stop_pg() {
    local bin
    bin=$(pg_bin) || return 0
    [ -s "$PG_DATA/PG_VERSION" ] || return 0
    if as_pg "$bin/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
        as_pg "$bin/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null
        log "PostgreSQL stopped"
    fi
}

start_s3() {
    local bin
    bin=$(s3s_bin)
    if [ -z "$bin" ]; then
        log "installing s3s-fs $S3S_VERSION (cargo install, about 2.5 minutes)"
        cargo install s3s-fs --version "$S3S_VERSION" --features binary --locked -q
        bin=$(s3s_bin)
    fi
    mkdir -p "$S3_ROOT/$S3_BUCKET"
    if [ -s "$S3_PID" ] && kill -0 "$(cat "$S3_PID")" 2>/dev/null && port_open "$S3_PORT"; then
        return 0
    fi
    log "starting s3s-fs on 127.0.0.1:$S3_PORT"
    # Started from inside $DIR: s3s-fs resolves every object path against
    # its working directory, so a caller's checkout deleted while the
    # server lives on would turn every request into a 500.
    (cd "$DIR" && exec nohup "$bin" --host 127.0.0.1 --port "$S3_PORT" \
        --access-key "$S3_KEY" --secret-key "$S3_SECRET" "$S3_ROOT" \
        >"$S3_LOG" 2>&1 </dev/null) &
    echo $! >"$S3_PID"
    for _ in $(seq 100); do
        port_open "$S3_PORT" && return 0
        sleep 0.1
    done
    log "s3s-fs did not start; see $S3_LOG"
    exit 1
}

stop_s3() {
    if [ -s "$S3_PID" ]; then
        local pid
        pid=$(cat "$S3_PID")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid"
            log "s3s-fs stopped"
        fi
        rm -f "$S3_PID"
    fi
}

print_env() {
    cat <<EOF
export SKILLPM_TEST_POSTGRES=postgres://postgres@127.0.0.1:$PG_PORT/postgres
export SKILLPM_TEST_POSTGRES_CA=$PG_TLS/ca.crt
export SKILLPM_TEST_S3=s3://$S3_BUCKET
export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=$S3_KEY
export AWS_SECRET_ACCESS_KEY=$S3_SECRET
export AWS_ALLOW_HTTP=true
EOF
}

case "${1:-}" in
start)
    mkdir -p "$DIR"
    chmod 755 "$DIR"
    start_pg
    start_s3
    ;;
stop)
    stop_s3
    stop_pg
    ;;
env) print_env ;;
*)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
