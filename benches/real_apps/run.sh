#!/usr/bin/env bash
# The real-app suite (benches/real_apps/suite.py): four open-source web apps,
# one scripted agent, Axon's MCP server beside Playwright MCP 0.0.83 on the
# same Chromium; docs/benchmarks.md, "Real apps", has its table.
#   benches/real_apps/run.sh            both servers, 3 runs per task
#   benches/real_apps/run.sh --act      also browser_act, one plain step at a time
#   benches/real_apps/run.sh --short    Axon's tools and browser_act, one run, debug build (CI): fails when a task fails
# Installs the apps (scripts/peers) and, for the comparison, @playwright/mcp
# into a temporary directory; builds axon in release (the comparison).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/peers >/dev/null
command -v chromium >/dev/null || { echo "real apps: chromium is required (apt-get install chromium)" >&2; exit 1; }
if [ "${1:-}" = "--short" ]; then
  # The debug build CI has already made: the same targets as .ci/run's
  # README stage (`--bins` alone resolves the dev-dependencies' features apart
  # and rebuilt half the tree, ~10 minutes of a CI run).
  cargo build -q --workspace --locked --bins --examples
  exec peers/venv/bin/python benches/real_apps/suite.py --axon "${CARGO_TARGET_DIR:-target}/debug/axon" --runs 1 --act
fi
cargo build -q -p axon-cli --release
axon="${CARGO_TARGET_DIR:-target}/release/axon"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error @playwright/mcp@0.0.83 >/dev/null)
peers/venv/bin/python benches/real_apps/suite.py --axon "$axon" --playwright "$dir/node_modules/@playwright/mcp/cli.js" "$@"
