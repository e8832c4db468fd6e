#!/usr/bin/env bash
# Benchmark (not a test): durable bookings/s of taxicore-server in each execution mode at each
# --durability level. wrk (scripts/bench-durable.lua) books and cancels in a loop on C
# connections; every 201 is sent only after the booking's row is committed to the ledger. After
# each run the ledger file is checked: it must hold at least as many bookings as were answered 201.
# Usage: scripts/bench-durable.sh [seconds]
#   BUILD_DIR=build  CONNECTIONS=64  DURABLE_MODES="single pool processes"  DURABILITY="normal full"
#   DATA_ROOT=/tmp (the ledgers are written there, one fresh directory per run, then removed)
#   KEYED=1: every booking carries an Idempotency-Key of its own (what the rider page sends)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
build=${BUILD_DIR:-build}
bin=$build/bin/taxicore-server
connections=${CONNECTIONS:-64}
modes=${DURABLE_MODES:-"single pool processes"}
levels=${DURABILITY:-"normal full"}
data_root=${DATA_ROOT:-/tmp}
for tool in wrk sqlite3; do
  command -v "$tool" >/dev/null || { echo "bench-durable: $tool is missing (apt-get install $tool)" >&2; exit 1; }
done
ticks=$(getconf CLK_TCK)
# CPU time of the server and its workers, in clock ticks: is a run bound by the CPU or the disk?
tree_ticks() { local t=0 p; for p in "$1" $(pgrep -P "$1" || true); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
[ -x "$bin" ] || { echo "bench-durable: $bin is missing (cmake --build $build --target taxicore-server)" >&2; exit 1; }

run_one() { # mode durability
  local mode=$1 level=$2 dir log pid url line acked rows exit_status=0 before after
  dir=$(mktemp -d "$data_root/taxicore-durable.XXXXXX")
  log="$dir/server.log"
  # Enough cars that the C open bookings never exhaust the fleet (each is cancelled at once).
  "$bin" --port 0 --mode "$mode" --durability "$level" --data-dir "$dir/data" --cars 2000 >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 150); do grep -qs '^listening on' "$log" && break; sleep 0.1; done
  url=$(awk '/^listening on/ {print $3; exit}' "$log")
  if [ -z "$url" ]; then
    echo "bench-durable: the server did not start: $(cat "$log")" >&2
    kill "$pid" 2>/dev/null || true; rm -rf "$dir"; return 1
  fi
  sleep 2 # workers up in processes mode
  timeout 30 wrk -t"$connections" -c"$connections" -d2s -s scripts/bench-durable.lua "$url" >/dev/null || true # warm-up
  before=$(tree_ticks "$pid")
  line=$(timeout $((seconds + 60)) wrk -t"$connections" -c"$connections" -d"${seconds}s" --timeout 10s \
           -s scripts/bench-durable.lua "$url" | grep '^DURABLE' || true)
  after=$(tree_ticks "$pid")
  kill -TERM "$pid"; timeout 20 tail --pid="$pid" -f /dev/null || kill -KILL "$pid"
  wait "$pid" || exit_status=$? # a graceful stop is 0; anything else is reported in the table
  rows=$(sqlite3 "$dir/data/ledger.sqlite" 'SELECT COUNT(*) FROM bookings' 2>/dev/null || echo "?")
  rm -rf "$dir"
  [ -n "$line" ] || { echo "| $mode | $level | wrk failed | | | | | | | $exit_status |"; return 0; }
  acked=$(sed -E 's/.*bookings=([0-9]+).*/\1/' <<<"$line")
  # The ledger also holds the warm-up's bookings, so it must have at least the measured ones.
  awk -v mode="$mode" -v level="$level" -v rows="$rows" -v acked="$acked" -v exit_status="$exit_status" -v cpu_s="$(awk -v t=$((after - before)) -v hz="$ticks" 'BEGIN {print t / hz}')" '{
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      printf "| %s | %s | %.0f | %.0f | %s | %s | %.0f%% | %d | %d | %s (%s) | %s |\n", mode, level,
             v["bookings"] / v["seconds"], v["cancels"] / v["seconds"], v["p50_ms"], v["p99_ms"],
             100 * cpu_s / v["seconds"],
             v["nocar"], v["failed"] + v["socket_errors"], rows, (rows != "?" && rows + 0 >= acked + 0) ? "ok" : "MISSING",
             exit_status
  }' <<<"$line"
}

echo "# Durable bookings/s: wrk -t$connections -c$connections -d${seconds}s, book + cancel per connection${KEYED:+ (every booking with an Idempotency-Key)}, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), ledger on $(df -T "$data_root" | awk 'NR==2 {print $2}') ($data_root), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "server CPU: the server's processes' CPU time over the run's duration (200% = both cores)."
echo
echo "| mode | durability | bookings/s | cancels/s | p50 ms | p99 ms | server CPU | 409 no car | errors | ledger bookings (≥ acknowledged) | server exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for mode in $modes; do
  for level in $levels; do run_one "$mode" "$level"; done
done
