#!/usr/bin/env bash
# How late `browser_wait_for_element` returns after a page shows what it waits
# for: the page adds #result (holding the wall-clock ms it was added at) 400 ms
# after "Sign in" is clicked; the plan clicks, waits for it, then reads it.
# Lateness = when the wait call ended (its started_at + duration_ms) - when the
# page added the element. Prints each run's lateness and the median.
#   benches/waits/run.sh [AXON_BINARY] [RUNS]
set -euo pipefail
axon="$(realpath "${1:-target/release/axon}")"
runs="${2:-15}"
cd "$(dirname "$0")"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '[browser]\nallow_file_urls = true\n' > "$dir/axon.toml"
cat > "$dir/plan.yaml" <<PLAN
steps:
  - {id: open, tool: browser_navigate, params: {url: "file://$PWD/page.html"}}
  - {id: click, tool: browser_click, params: {selector: "#go"}, depends_on: [open]}
  - {id: wait, tool: browser_wait_for_element, params: {selector: "#result"}, depends_on: [click]}
  - {id: read, tool: browser_get_text, params: {selector: "#result"}, depends_on: [wait]}
PLAN
late() {
  python3 -c '
import json, sys, datetime
r = json.load(sys.stdin)
s = {x["id"]: x["result"] for x in r["steps"]}
w = s["wait"]
start = datetime.datetime.fromisoformat(w["started_at"].replace("Z", "+00:00")).timestamp() * 1000
print(round(start + w["duration_ms"] - int(s["read"]["data"]["text"])))'
}
for _ in $(seq "$runs"); do
  AXON_STORE_PATH="$dir/axon.db" "$axon" --config "$dir/axon.toml" run "$dir/plan.yaml" --json | late
done | sort -n > "$dir/late"
tr '\n' ' ' < "$dir/late"
echo
echo "median lateness: $(sed -n "$(( (runs + 1) / 2 ))p" "$dir/late") ms over $runs runs ($axon)"
