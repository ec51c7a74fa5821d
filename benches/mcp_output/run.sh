#!/usr/bin/env bash
# Bytes an agent reads from Axon's MCP server vs Playwright MCP 0.0.83 on one
# 10-action login script (docs/benchmarks.md, "MCP"). Installs
# @playwright/mcp into a temporary directory (npm; nothing is downloaded at run
# time: both drive Debian's /usr/bin/chromium), builds axon, runs compare.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/peers >/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error @playwright/mcp@0.0.83 >/dev/null)
cargo build -q -p axon-cli --release
peers/venv/bin/python benches/mcp_output/compare.py "$dir/node_modules/@playwright/mcp/cli.js" "${CARGO_TARGET_DIR:-target}/release/axon"
