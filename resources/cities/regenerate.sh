#!/bin/sh
# Re-creates gothenburg.taxicity from the OpenStreetMap extract of central Gothenburg that the
# npm package geojson-path-finder@2.1.0 ships as test/large-network.json (see ATTRIBUTION.md).
# Usage: resources/cities/regenerate.sh [path/to/taxicore-import-city]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
importer=${1:-$here/../../build/bin/taxicore-import-city}
[ -x "$importer" ] || { echo "regenerate.sh: importer not found: $importer (build it first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
(cd "$work" && timeout 120 npm pack --silent geojson-path-finder@2.1.0 >/dev/null)
tar -xzf "$work/geojson-path-finder-2.1.0.tgz" -C "$work" package/test/large-network.json
timeout 300 "$importer" "$work/package/test/large-network.json" "$here/gothenburg.taxicity"
