#!/usr/bin/env bash
# layering_test: the server's folders include each other only downwards (scripts/check-layers.sh).
# First proves the check can fail: a copy of server/ with one back edge planted must be refused,
# naming the file; then the real tree must pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/scripts/check-layers.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cp -r "$root/server" "$scratch/server"
echo '#include "runtime/ServerHost.h"' >> "$scratch/server/region/RegionLayout.h"
if "$check" "$scratch/server" 2> "$scratch/refused"; then
  echo "FAIL: a region header including runtime/ was accepted" >&2
  exit 1
fi
grep -q 'region/RegionLayout.h (layer region) includes "runtime/ServerHost.h"' "$scratch/refused" || {
  echo "FAIL: the refusal does not name the back edge:" >&2; cat "$scratch/refused" >&2; exit 1; }

rm -rf "$scratch/server" && cp -r "$root/server" "$scratch/server"
mkdir "$scratch/server/newfolder" && touch "$scratch/server/newfolder/Thing.h"
if "$check" "$scratch/server" 2>/dev/null; then
  echo "FAIL: a folder missing from the layer table was accepted" >&2
  exit 1
fi

"$check" "$root/server"
echo "PASS: layering_test"
