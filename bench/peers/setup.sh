#!/usr/bin/env bash
# Installs the peers' dependencies exactly as locked (npm ci), when Node.js is present.
# Exit 0 with a note when it is not: the comparison suite then skips the peers.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bench/peers: Node.js not installed, peers skipped"
  exit 0
fi
npm ci --no-audit --no-fund --silent
