#!/usr/bin/env bash
# Calls/s of the scale-out setups against the embedded default, on this
# machine, with wrk driving `POST /v1/tools/echo/call` of release `axon serve`
# processes (docs/benchmarks.md, "Cluster"):
#
#   1. one replica, SQLite (the default: durable history, no Redis): the baseline
#   2. one replica, SQLite + Redis: what the shared breaker and rate limit cost alone
#   3. one replica on PostgreSQL with `synchronous_commit = off` (set through
#      the URL's `options`) + Redis: a commit no longer waits for the WAL to
#      reach the disk, about the guarantee SQLite's WAL with
#      `synchronous = NORMAL` gives
#   4. one replica on PostgreSQL + Redis (shared breaker and rate limit)
#   5. three replicas on PostgreSQL + Redis, the load split over them
#
# The echo tool gets a breaker and a rate limit far above the load, so every
# call makes its Redis admission. Every server and wrk share the machine's cores.
#
#   bash benches/load/cluster.sh                       # 20 s each, 30 connections in all
#   SECONDS_EACH=10 CONNECTIONS=60 bash benches/load/cluster.sh
#   SERIES=6 SECONDS_EACH=2 bash benches/load/cluster.sh  # a replica's first seconds
#   AXON=/tmp/axon-before bash benches/load/cluster.sh    # another build (not rebuilt)
#
# With SERIES=N it measures instead how a replica warms up: N loads one after
# another on one replica on a fresh PostgreSQL schema, then N on a second,
# fresh process on the same (now used) schema, then N on SQLite.
#
# Environment: STORE_URL (default postgres://postgres@127.0.0.1:5432/test),
# REDIS_URL (default redis://127.0.0.1:6379/0).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
seconds=${SECONDS_EACH:-20}
connections=${CONNECTIONS:-30}
store=${STORE_URL:-postgres://postgres@127.0.0.1:5432/test}
redis=${REDIS_URL:-redis://127.0.0.1:6379/0}
schema="axon_bench_$$"
axon=${AXON:-target/release/axon}
[ -n "${AXON:-}" ] || cargo build --release -q -p axon-cli
dir=$(mktemp -d)
trap 'kill $(cat "$dir"/*.pid 2>/dev/null) 2>/dev/null || true; psql "$store" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

policy='[tools.echo.breaker]
failure_threshold = 5
[tools.echo.limits]
rate_per_sec = 1000000
'
shared=$(printf '[shared]\nredis_url = "%s"\nkey_prefix = "axon-bench-%s:"\n' "$redis" "$$")
case "$store" in *\?*) sep='&' ;; *) sep='?' ;; esac
printf '%s' "$policy" > "$dir/sqlite.toml"
printf '%s\n%s\n' "$policy" "$shared" > "$dir/sqlite-redis.toml"
printf '%s\n[store]\nurl = "%s"\nschema = "%s"\n\n%s\n' \
    "$policy" "$store" "$schema" "$shared" > "$dir/cluster.toml"
printf '%s\n[store]\nurl = "%s%soptions=-c%%20synchronous_commit%%3Doff"\nschema = "%s"\n\n%s\n' \
    "$policy" "$store" "$sep" "$schema" "$shared" > "$dir/cluster-nosync.toml"

# start NAME CONFIG: a server; prints its URL.
start() {
    AXON_STORE_PATH="$dir/$1.db" "$axon" --config "$2" serve --bind 127.0.0.1:0 \
        > "$dir/$1.out" 2> "$dir/$1.log" &
    echo $! > "$dir/$1.pid"
    for _ in $(seq 100); do grep -q listening "$dir/$1.out" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/^axon: listening on //p' "$dir/$1.out"
}

# load NAME URL...: wrk on each URL at once (the connections split over them);
# prints a table row with the summed calls/s and the worst p50/p99.
load() {
    local name=$1; shift
    local n=$# i=0
    for url in "$@"; do
        wrk -t1 -c$((connections / n)) -d"${seconds}s" --latency -s benches/load/echo.lua \
            "$url/v1/tools/echo/call" > "$dir/$name-$i.wrk" &
        i=$((i + 1))
    done
    wait
    local rps=0 calls=0 p50="" p99="" errors=0
    for f in "$dir/$name"-*.wrk; do
        rps=$(awk -v a="$rps" '/Requests\/sec/ {printf "%.0f", a + $2}' "$f")
        calls=$(awk -v a="$calls" '/requests in/ {print a + $1}' "$f")
        errors=$(awk -v a="$errors" '/Non-2xx/ {a += $NF} END {print a}' "$f")
        p50="$p50 $(awk '$1 == "50%" {print $2}' "$f")"
        p99="$p99 $(awk '$1 == "99%" {print $2}' "$f")"
    done
    printf '| %s | %s s | %s | %s | %s | %s | %s |\n' "$name" "$seconds" "$calls" "$rps" \
        "${p50# }" "${p99# }" "$errors"
}

echo "| setup | duration | calls | calls/s | p50 (per replica) | p99 (per replica) | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
if [ -n "${SERIES:-}" ]; then
    for setup in "pg-fresh:cluster" "pg-used:cluster" "sqlite:sqlite"; do
        name=${setup%%:*}
        url=$(start "$name" "$dir/${setup#*:}.toml")
        for i in $(seq "$SERIES"); do load "$name #$i" "$url"; done
        kill "$(cat "$dir/$name.pid")"
        wait "$(cat "$dir/$name.pid")" 2>/dev/null || true
    done
    exit 0
fi
# one NAME CONFIG LABEL: one replica alone, loaded, then stopped.
one() {
    local url
    url=$(start "$1" "$2")
    load "$3" "$url"
    kill "$(cat "$dir/$1.pid")"
}
one sqlite "$dir/sqlite.toml" "1 replica, SQLite"
one sqlite-redis "$dir/sqlite-redis.toml" "1 replica, SQLite + Redis"
one pg-nosync "$dir/cluster-nosync.toml" "1 replica, PostgreSQL (synchronous_commit off) + Redis"
b=$(start pg1 "$dir/cluster.toml")
load "1 replica, PostgreSQL + Redis" "$b"
c=$(start pg2 "$dir/cluster.toml")
d=$(start pg3 "$dir/cluster.toml")
load "3 replicas, PostgreSQL + Redis" "$b" "$c" "$d"
