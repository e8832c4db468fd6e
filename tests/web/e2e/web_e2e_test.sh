#!/bin/sh
# End-to-end test of the rider page: usage  web_e2e_test.sh TAXICORE_SERVER ARTIFACT_DIR
# Installs playwright-core from the lockfile when missing (never a browser: the system's
# Chromium is used), starts two servers on 127.0.0.1 port 0 (a normal one at 30× simulation
# speed, one with no cars), runs the browser tests (rider-page: the page's journeys;
# feed-recovery: the feed calling a booking unknown, a refused feed) each under an overall
# timeout, and stops the servers by PID whatever happens.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
server_bin=${1:?usage: web_e2e_test.sh TAXICORE_SERVER ARTIFACT_DIR}
artifacts=${2:?usage: web_e2e_test.sh TAXICORE_SERVER ARTIFACT_DIR}
mkdir -p "$artifacts"
rm -f "$artifacts"/*.png "$artifacts"/*.log "$artifacts"/*report.json

if [ ! -f "$here/node_modules/playwright-core/package.json" ]; then
  echo "installing playwright-core from package-lock.json"
  (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 120 npm ci --no-audit --no-fund --loglevel=error) || {
    echo "FAIL: npm ci did not complete (offline? see above)"; exit 1; }
fi

pids=""
# Each server its own data directory: one server owns a directory (DATA_DIR/server.lock).
data=$(mktemp -d)
cleanup() {
  for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $pids; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$data"
}
trap cleanup EXIT INT TERM

# start_server NAME ARGS... → sets $url and $pid; the first stdout line is "listening on URL"
start_server() {
  name=$1; shift
  out="$artifacts/server-$name.log"
  "$server_bin" --host 127.0.0.1 --port 0 --data-dir "$data/$name" "$@" >"$out" 2>&1 &
  pid=$!
  pids="$pids $pid"
  i=0
  while ! grep -q '^listening on http' "$out" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 100 ]; then
      echo "FAIL: taxicore-server ($name) did not start:"; cat "$out"; exit 1
    fi
    sleep 0.1; i=$((i + 1))
  done
  url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$out" | head -n 1)
}

# The operator's token: the test cancels a booking as the operator (riders own their bookings).
admin_token=e2e-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
start_server main --sim-speed 30 --seed 7 --admin-token "$admin_token"
main_url=$url
start_server nocars --cars 0
nocars_url=$url
nocars_pid=$pid

# Both browser tests run, whatever the first one's verdict; either failing fails the test.
verdict=0
timeout -k 5 170 node "$here/rider-page.test.mjs" \
  --url "$main_url" --nocars-url "$nocars_url" --nocars-pid "$nocars_pid" --artifacts "$artifacts" \
  --admin-token "$admin_token" || verdict=1
timeout -k 5 130 node "$here/feed-recovery.test.mjs" \
  --url "$main_url" --admin-token "$admin_token" --artifacts "$artifacts" || verdict=1
exit $verdict
