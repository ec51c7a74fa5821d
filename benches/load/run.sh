#!/usr/bin/env bash
# Load on `POST /v1/tools/echo/call` of a release `axon serve`, with wrk (Debian
# package `wrk`) on the same machine. Three servers in one run: history in SQLite
# committed before each call returns (the default, `durability = "sync"`), in
# SQLite queued (`durability = "async"`), and in memory (the baseline: same HTTP
# stack and pipeline, no disk). Prints throughput, latency percentiles, calls
# made, and the server's RSS before and after.
#
#   bash benches/load/run.sh                 # 60 s on each SQLite (~1 M calls), 20 s in memory
#   SECONDS_SQLITE=10 SECONDS_MEMORY=10 CONNECTIONS=64 bash benches/load/run.sh
#   AXON=/tmp/axon-before bash benches/load/run.sh   # another build (not rebuilt),
#                                                    # to compare two in one sitting
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
connections=${CONNECTIONS:-32}
axon=${AXON:-target/release/axon}
[ -n "${AXON:-}" ] || cargo build --release -q -p axon-cli
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT

measure() {
    local backend=$1 durability=$2 seconds=$3
    local name=$backend key=$backend-$durability
    [ "$backend" = sqlite ] && name="sqlite, $durability"
    printf '[history]\nbackend = "%s"\ndurability = "%s"\n' "$backend" "$durability" > "$dir/$key.toml"
    AXON_STORE_PATH="$dir/$key.db" "$axon" --config "$dir/$key.toml" \
        serve --bind 127.0.0.1:0 > "$dir/$key.out" 2>/dev/null &
    local pid=$!
    for _ in $(seq 50); do grep -q listening "$dir/$key.out" 2>/dev/null && break; sleep 0.1; done
    local url
    url=$(sed -n 's/^axon: listening on //p' "$dir/$key.out")
    local before after
    before=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    wrk -t1 -c"$connections" -d"${seconds}s" --latency -s benches/load/echo.lua \
        "$url/v1/tools/echo/call" > "$dir/$key.wrk"
    after=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    local rps p50 p99 calls
    rps=$(awk '/Requests\/sec/ {print $2}' "$dir/$key.wrk")
    p50=$(awk '$1 == "50%" {print $2}' "$dir/$key.wrk")
    p99=$(awk '$1 == "99%" {print $2}' "$dir/$key.wrk")
    calls=$(awk '/requests in/ {print $1}' "$dir/$key.wrk")
    printf '| %s | %s s | %s | %s | %s | %s | %s MiB → %s MiB |\n' "$name" "$seconds" \
        "$calls" "$rps" "$p50" "$p99" "$((before / 1024))" "$((after / 1024))"
}

echo "| history | duration | calls | calls/s | p50 | p99 | RSS before → after |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
measure sqlite sync "${SECONDS_SQLITE:-60}"
measure sqlite async "${SECONDS_SQLITE:-60}"
measure memory sync "${SECONDS_MEMORY:-20}"
