#!/usr/bin/env bash
# `make fuzz` (and, briefly, `make test`): configure BUILD_DIR with clang and TAXICORE_FUZZ=ON,
# build only the fuzz targets, run each for SECONDS from its seed corpus fuzz/corpus/<target>/.
# Fails on any crash, leak, undefined behaviour, timeout or broken invariant; the input that
# caused it is kept in BUILD_DIR/fuzz-artifacts/<target>/ (replay: BUILD_DIR/bin/<target> FILE).
# New inputs the fuzzer finds go to BUILD_DIR/fuzz-corpus/<target>/, never into the repository.
#   usage: fuzz/run-fuzzers.sh [BUILD_DIR=build-fuzz] [SECONDS=${FUZZ_SECONDS:-60}]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
seconds=${2:-${FUZZ_SECONDS:-60}}

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON -DTAXICORE_FUZZ=ON -Wno-dev --log-level=NOTICE
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target fuzzers >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; echo "fuzz: build failed (log: $build/fuzz-build.log)" >&2; exit 1; }

# Stack traces with file:line; UBSan findings abort already (-fno-sanitize-recover).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
failed=()
for seeds in fuzz/corpus/*/; do
  target=$(basename "$seeds")
  work="$build/fuzz-corpus/$target"
  artefacts="$build/fuzz-artifacts/$target"
  log="$build/fuzz-logs/$target.log"
  mkdir -p "$work" "$artefacts" "$(dirname "$log")"
  # -timeout: one input running this long is a hang; -rss_limit_mb: a runaway allocation.
  if "$build/bin/$target" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
       -artifact_prefix="$artefacts/" "$work" "$seeds" >"$log" 2>&1; then
    echo "fuzz: $target ok, $(grep -o 'Done [0-9]* runs' "$log" | tail -1 | cut -d' ' -f2) inputs in ${seconds} s"
  else
    tail -30 "$log"
    echo "fuzz: $target FAILED (log: $log, input kept in $artefacts/)" >&2
    failed+=("$target")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failures in ${failed[*]}" >&2; exit 1; }
