#!/usr/bin/env bash
# check-layers.sh [SERVER_DIR]: fails when a file of a server library includes a folder its
# library does not link (docs/ARCHITECTURE.md §1). The test `layering_test` runs it, so a new include
# from a lower layer into a higher one fails `make test`, even where it would still compile.
set -euo pipefail
server=${1:-$(dirname "$0")/../server}

# Each folder and the folders it may include: itself and the libraries it links, transitively,
# read from the target_link_libraries(taxicore_<folder> ...) line of server/<folder>/CMakeLists.txt,
# so the rule is the link graph itself and cannot drift from it.
declare -A links=()
for cmake_file in "$server"/*/CMakeLists.txt; do
  folder=$(basename "$(dirname "$cmake_file")")
  line=$(grep -h "target_link_libraries(taxicore_$folder " "$cmake_file" || true)
  [ -n "$line" ] || continue
  deps=""
  for target in $(grep -o 'taxicore_[a-z_]*' <<<"${line#*(taxicore_"$folder" }"); do
    dep=${target#taxicore_}
    [ -d "$server/$dep" ] && deps+=" $dep"
  done
  links[$folder]=$deps
done
declare -A may_include=()
for folder in "${!links[@]}"; do
  reach=" $folder "
  pending=${links[$folder]}
  while [ -n "${pending// /}" ]; do
    next=""
    for dep in $pending; do
      [[ "$reach" == *" $dep "* ]] && continue
      reach+="$dep "
      next+=" ${links[$dep]-}"
    done
    pending=$next
  done
  may_include[$folder]=$reach
done

violations=0
for folder_path in "$server"/*/; do
  folder=$(basename "$folder_path")
  if [ -z "${may_include[$folder]+set}" ]; then
    echo "check-layers: server/$folder/ is no library: no target_link_libraries(taxicore_$folder ...) in its CMakeLists.txt" >&2
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
