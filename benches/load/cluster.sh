#!/usr/bin/env bash
# Calls/s of the scale-out setups against the embedded default, on this
# machine, with wrk driving `POST /v1/tools/echo/call` of release `axon serve`
# processes (docs/benchmarks.md, "Cluster"):
#
#   1. one replica, SQLite (the default: durable history, no Redis): the baseline
#   2. one replica on PostgreSQL + Redis (shared breaker and rate limit)
#   3. three replicas on PostgreSQL + Redis, the load split over them
#
# The echo tool gets a breaker and a rate limit far above the load, so every
# call makes its Redis admission. Every server and wrk share the machine's cores.
#
#   bash benches/load/cluster.sh                       # 20 s each, 30 connections in all
#   SECONDS_EACH=10 CONNECTIONS=60 bash benches/load/cluster.sh
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
cargo build --release -q -p axon-cli
dir=$(mktemp -d)
trap 'kill $(cat "$dir"/*.pid 2>/dev/null) 2>/dev/null || true; psql "$store" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

policy='[tools.echo.breaker]
failure_threshold = 5
[tools.echo.limits]
rate_per_sec = 1000000
'
printf '%s' "$policy" > "$dir/sqlite.toml"
printf '%s\n[store]\nurl = "%s"\nschema = "%s"\n\n[shared]\nredis_url = "%s"\nkey_prefix = "axon-bench-%s:"\n' \
    "$policy" "$store" "$schema" "$redis" "$$" > "$dir/cluster.toml"

# start NAME CONFIG: a server; prints its URL.
start() {
    AXON_STORE_PATH="$dir/$1.db" target/release/axon --config "$2" serve --bind 127.0.0.1:0 \
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
a=$(start sqlite "$dir/sqlite.toml")
load "1 replica, SQLite" "$a"
kill "$(cat "$dir/sqlite.pid")"
b=$(start pg1 "$dir/cluster.toml")
load "1 replica, PostgreSQL + Redis" "$b"
c=$(start pg2 "$dir/cluster.toml")
d=$(start pg3 "$dir/cluster.toml")
load "3 replicas, PostgreSQL + Redis" "$b" "$c" "$d"
