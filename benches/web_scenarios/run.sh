#!/usr/bin/env bash
# The web as it is, scenario by scenario: Axon's MCP server against Playwright
# MCP 0.0.83 on the same pages and the same Chromium (docs/benchmarks.md,
# "Browser"). Installs @playwright/mcp into a temporary directory (npm; both
# drive Debian's /usr/bin/chromium), builds axon, runs scenarios.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/peers >/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error @playwright/mcp@0.0.83 >/dev/null)
cargo build -q -p axon-cli --release
peers/venv/bin/python benches/web_scenarios/scenarios.py "$dir/node_modules/@playwright/mcp/cli.js" "${CARGO_TARGET_DIR:-target}/release/axon"
