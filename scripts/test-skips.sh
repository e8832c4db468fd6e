#!/usr/bin/env bash
# test-skips.sh [BUILD_DIR] — after ctest: every test function or check that skipped in the last
# run, with the reason it gave (Qt Test "SKIP   :" lines, script tests' "SKIP: " lines). ctest
# shows a test's output only when it fails; a skip passes, so without this its reason is unseen.
set -euo pipefail
log=${1:-build}/Testing/Temporary/LastTest.log
[ -f "$log" ] || exit 0
# LastTest.log holds each test's output after a line "N/M Test: NAME".
skips=$(awk '/^[0-9]+\/[0-9]+ Test: / { test = $3 }
             /^SKIP   : / || /^SKIP: / { sub(/^SKIP( +)?: /, ""); print "  " test ": " $0 }' "$log")
[ -z "$skips" ] && exit 0
echo "Skipped in this run (the test passed without these checks):"
echo "$skips"
