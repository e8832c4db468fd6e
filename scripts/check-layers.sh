#!/usr/bin/env bash
# check-layers.sh [SERVER_DIR]: fails when a file of a server library includes a folder its
# library does not link (docs/ARCHITECTURE.md §1). The test `layering_test` runs it, so a new include
# from a lower layer into a higher one fails `make test`, even where it would still compile.
set -euo pipefail
server=${1:-$(dirname "$0")/../server}

# Each folder and the folders it may include: itself and the libraries it links, transitively
# (the target_link_libraries lines of server/<folder>/CMakeLists.txt). Bottom to top.
declare -A may_include=(
  [region]="region"
  [city]="city"
  [control]="control region"
  [fleet]="fleet city region"
  [pricing]="pricing fleet city region"
  [ledger]="ledger"
  [metrics]="metrics fleet city region"
  [dispatch]="dispatch pricing ledger fleet city region"
  [wire]="wire city region"
  [http]="http dispatch metrics wire control ledger pricing fleet city region"
  [runtime]="runtime http dispatch metrics wire control ledger pricing fleet city region"
)

violations=0
for folder_path in "$server"/*/; do
  folder=$(basename "$folder_path")
  if [ -z "${may_include[$folder]+set}" ]; then
    echo "check-layers: server/$folder/ is not in the layer table of $0" >&2
    violations=$((violations + 1))
    continue
  fi
  # tools/ holds executables, which sit on top of every library.
  while IFS= read -r -d '' file; do
    while IFS= read -r included; do
      target=${included%%/*}
      if [ "$target" = "$included" ]; then
        echo "check-layers: ${file#"$server"/} includes \"$included\" without its folder" >&2
        violations=$((violations + 1))
      elif [ -n "${may_include[$target]+set}" ] && [[ " ${may_include[$folder]} " != *" $target "* ]]; then
        echo "check-layers: ${file#"$server"/} (layer $folder) includes \"$included\" (layer $target)" >&2
        violations=$((violations + 1))
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
  done < <(find "$folder_path" -path '*/tools' -prune -o \( -name '*.h' -o -name '*.cpp' \) -print0)
done

if [ "$violations" -ne 0 ]; then
  echo "check-layers: $violations include(s) against the layering" >&2
  exit 1
fi
echo "check-layers: every include in server/ follows the layering"
