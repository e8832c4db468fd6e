#!/usr/bin/env bash
# `make test-asan`: build the `asan` preset (build-asan: Debug, ASan + UBSan, a UBSan finding
# aborts) and run the whole ctest suite under it. Findings in third-party libraries (Mesa,
# fontconfig, Qt's own caches) are suppressed by the files next to this script; ours never are.
#   JOBS=N (default: cores) for the build and for ctest; extra arguments go to ctest (-R, -L, ...)
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/scripts/sanitizers
jobs=${JOBS:-$(nproc)}
start=$(date +%s)

cmake --preset asan -Wno-dev --log-level=NOTICE
cmake --build --preset asan -j "$jobs"

# Child processes (taxicore-server, its workers) inherit these too.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:verify_asan_link_order=0"
# Mesa unloads its DRI driver before LeakSanitizer runs, so the driver's own leaks (console
# tests under xvfb-run) show as "<unknown module>" and no suppression can name them. Loaded up
# front, it stays mapped and lsan.supp's swrast_dri.so entry applies (hence verify_asan_link_order=0).
mesa_driver=/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so
[ -f "$mesa_driver" ] && export LD_PRELOAD="$mesa_driver${LD_PRELOAD:+:$LD_PRELOAD}"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="suppressions=$here/ubsan.supp:print_stacktrace=1:halt_on_error=1"
status=0
ctest --preset asan -j "$jobs" "$@" || status=$?
"$here/../test-skips.sh" build-asan
echo "test-asan: $( [ $status -eq 0 ] && echo passed || echo FAILED ) in $(( $(date +%s) - start )) s (build + ctest)"
exit $status
