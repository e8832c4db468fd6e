#!/usr/bin/env bash
# Accuracy of taxicore-bench against wrk on the same server and settings (issue 5):
#   1. req/s within +-5 % of wrk's, client CPU per request <= wrk's x 1.2 (medians of runs
#      interleaved wrk, bench, wrk, bench... so background load hits both alike);
#   2. requests the server served minus requests the tool counted stays within the connections
#      in flight at the end (a check the machine's noise cannot blur);
#   3. a 1 s SIGSTOP of the server shows in open-loop p99 (>= 500 ms), not in closed-loop p50.
# A benchmark, not a test: it prints figures and a verdict, and exits 1 if a bound is missed.
#
# Usage: scripts/bench-accuracy.sh [taxicore|nginx]   (default: taxicore if built, else nginx)
# Env:   BUILD_DIR=build ROUNDS=7 DURATION=8 CONNECTIONS=50 THREADS=1 RATE=2000 OUT=$BUILD_DIR/bench
#        PIN=1 (default with 2+ cores): server on CPU 0, clients on CPU 1, so a client that spends
#        less CPU than the other does not simply leave more of a shared core to the server.
set -euo pipefail
. "$(dirname "$(readlink -f "$0")")/reference-nginx.sh"

BUILD_DIR=${BUILD_DIR:-build}
ROUNDS=${ROUNDS:-7}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-1}
RATE=${RATE:-2000}
OUT=${OUT:-$BUILD_DIR/bench}
BENCH=$BUILD_DIR/bin/taxicore-bench
SERVER_BIN=$BUILD_DIR/bin/taxicore-server
PIN=${PIN:-$([ "$(nproc)" -ge 2 ] && echo 1 || echo 0)}
RUN_TIMEOUT=$((DURATION + 30)) # seconds: no run may hang the script
START_TIMEOUT=10

for tool in wrk jq /usr/bin/time "$BENCH"; do
  command -v "$tool" >/dev/null || { echo "bench-accuracy: $tool not found" >&2; exit 2; }
done
mkdir -p "$OUT"
WORK=$(mktemp -d)
SERVER_PIDS=()
STATUS_READING_COST=0 # requests that one reading of the server's counters adds to them

cleanup() {
  for pid in "${SERVER_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_taxicore() {
  "$SERVER_BIN" --port 0 --mode single --data-dir "$WORK/data" >"$WORK/server.out" 2>"$WORK/server.err" &
  SERVER_PIDS=($!)
  for _ in $(seq $((START_TIMEOUT * 10))); do
    URL=$(grep -om1 'http://[0-9.:]*' "$WORK/server.out" 2>/dev/null || true)
    [ -n "$URL" ] && break
    sleep 0.1
  done
  [ -n "$URL" ] || { echo "bench-accuracy: taxicore-server did not start" >&2; exit 2; }
  SERVER_NAME="taxicore-server --mode single"
}

start_nginx() {
  command -v nginx >/dev/null || { echo "bench-accuracy: nginx not installed (apt-get install -y nginx-light)" >&2; exit 2; }
  local port; port=$(free_port)
  reference_nginx_conf "$WORK/nginx" "$port"
  nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
  SERVER_PIDS=($!)
  for _ in $(seq $((START_TIMEOUT * 10))); do
    curl -sf "http://127.0.0.1:$port/hello" >/dev/null 2>&1 && break
    sleep 0.1
  done
  # SIGSTOP must reach the process that serves: nginx's worker, not only its master.
  SERVER_PIDS+=($(pgrep -P "${SERVER_PIDS[0]}" || true))
  URL="http://127.0.0.1:$port"
  SERVER_NAME="nginx, 1 worker"
  STATUS_READING_COST=1
}

# Requests to /hello the server has served so far (its own counters). nginx counts the status
# requests too: each reading adds one, so a before/after difference is one too high.
served() {
  case "$SERVER_NAME" in
    nginx*) curl -s "$URL/status" | awk 'NR == 3 {print $3}' ;;
    *) curl -s "$URL/metrics" | awk -F'} ' '/taxicore_http_requests_total\{route="GET \/hello"/ {n += $2} END {print n + 0}' ;;
  esac
}

case "${1:-auto}" in
  taxicore) start_taxicore ;;
  nginx) start_nginx ;;
  auto) if [ -x "$SERVER_BIN" ]; then start_taxicore; else start_nginx; fi ;;
  *) echo "usage: $0 [taxicore|nginx]" >&2; exit 2 ;;
esac
TARGET="$URL/hello"
CLIENT=()
if [ "$PIN" = 1 ]; then
  for pid in "${SERVER_PIDS[@]}"; do taskset -apc 0 "$pid" >/dev/null; done
  CLIENT=(taskset -c 1)
fi

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# One wrk run: prints "req_per_s cpu_us_per_request served_minus_counted".
run_wrk() {
  local before; before=$(served)
  /usr/bin/time -f "%U %S" -o "$WORK/time" timeout "$RUN_TIMEOUT" "${CLIENT[@]}" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" "$TARGET" >"$WORK/wrk.out"
  local rps requests cpu
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/wrk.out")
  requests=$(awk '/requests in/ {print $1}' "$WORK/wrk.out")
  cpu=$(awk '{print $1 + $2}' "$WORK/time")
  echo "$rps $(awk -v c="$cpu" -v n="$requests" 'BEGIN {printf "%.3f", c * 1e6 / n}') $(($(served) - before - requests - STATUS_READING_COST))"
}

run_bench() {
  local before; before=$(served)
  /usr/bin/time -f "%U %S" -o "$WORK/time" timeout "$RUN_TIMEOUT" "${CLIENT[@]}" \
    "$BENCH" -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" "$TARGET" --json "$WORK/bench.json" >/dev/null
  local rps requests cpu
  rps=$(jq '.stages[0].summary.requests_per_s' "$WORK/bench.json")
  requests=$(jq '.stages[0].summary.responses' "$WORK/bench.json")
  cpu=$(awk '{print $1 + $2}' "$WORK/time")
  echo "$rps $(awk -v c="$cpu" -v n="$requests" 'BEGIN {printf "%.3f", c * 1e6 / n}') $(($(served) - before - requests - STATUS_READING_COST))"
}

echo "== accuracy vs wrk: $SERVER_NAME at $TARGET, -t$THREADS -c$CONNECTIONS -d${DURATION}s, $ROUNDS rounds, pinned: $PIN"
: >"$WORK/wrk.rows"
: >"$WORK/bench.rows"
for round in $(seq "$ROUNDS"); do
  w=$(run_wrk); b=$(run_bench)
  echo "$w" >>"$WORK/wrk.rows"; echo "$b" >>"$WORK/bench.rows"
  echo "round $round: wrk $w | taxicore-bench $b   (req/s, client CPU us/request, served - counted)"
done
WRK_RPS=$(cut -d' ' -f1 "$WORK/wrk.rows" | median)
WRK_CPU=$(cut -d' ' -f2 "$WORK/wrk.rows" | median)
BENCH_RPS=$(cut -d' ' -f1 "$WORK/bench.rows" | median)
BENCH_CPU=$(cut -d' ' -f2 "$WORK/bench.rows" | median)
RPS_RATIO=$(awk -v a="$BENCH_RPS" -v b="$WRK_RPS" 'BEGIN {printf "%.3f", a / b}')
CPU_RATIO=$(awk -v a="$BENCH_CPU" -v b="$WRK_CPU" 'BEGIN {printf "%.3f", a / b}')
RPS_OK=$(awk -v r="$RPS_RATIO" 'BEGIN {print (r >= 0.95 && r <= 1.05) ? "yes" : "NO"}')
CPU_OK=$(awk -v r="$CPU_RATIO" 'BEGIN {print (r <= 1.2) ? "yes" : "NO"}')
absmax() { awk '{v = $1 < 0 ? -$1 : $1; if (v > m) m = v} END {print m + 0}'; }
WRK_GAP=$(cut -d' ' -f3 "$WORK/wrk.rows" | absmax)
BENCH_GAP=$(cut -d' ' -f3 "$WORK/bench.rows" | absmax)
COUNT_OK=$(awk -v g="$BENCH_GAP" -v c="$CONNECTIONS" 'BEGIN {print (g <= c) ? "yes" : "NO"}')

# The stall: the server is stopped from 2 s to 3 s of a 6 s run.
run_with_stall() {
  timeout "$RUN_TIMEOUT" "$BENCH" -t"$THREADS" -c"$CONNECTIONS" -d6s "$TARGET" "$@" --json "$WORK/stall.json" >/dev/null &
  local bench_pid=$!
  sleep 2
  kill -STOP "${SERVER_PIDS[@]}"
  sleep 1
  kill -CONT "${SERVER_PIDS[@]}"
  wait "$bench_pid"
}
run_with_stall --rate "$RATE"
OPEN_P99=$(jq '.stages[0].latency.corrected.p99_ms' "$WORK/stall.json")
OPEN_UNCORRECTED_P99=$(jq '.stages[0].latency.uncorrected.p99_ms' "$WORK/stall.json")
run_with_stall
CLOSED_P50=$(jq '.stages[0].latency.uncorrected.p50_ms' "$WORK/stall.json")
CLOSED_MAX=$(jq '.stages[0].latency.uncorrected.max_ms' "$WORK/stall.json")
STALL_OPEN_OK=$(awk -v p="$OPEN_P99" 'BEGIN {print (p >= 500) ? "yes" : "NO"}')
STALL_CLOSED_OK=$(awk -v p="$CLOSED_P50" 'BEGIN {print (p < 100) ? "yes" : "NO"}')

REPORT="$OUT/accuracy.md"
{
  echo "# taxicore-bench accuracy ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'). Server: $SERVER_NAME."
  echo "Runs: -t$THREADS -c$CONNECTIONS -d${DURATION}s on $TARGET, $ROUNDS interleaved rounds, medians; pinned (server CPU 0, client CPU 1): $PIN."
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| check | wrk | taxicore-bench | ratio | bound | ok |"
  echo "|---|---|---|---|---|---|"
  echo "| req/s | $WRK_RPS | $BENCH_RPS | $RPS_RATIO | 0.95-1.05 | $RPS_OK |"
  echo "| client CPU us/request | $WRK_CPU | $BENCH_CPU | $CPU_RATIO | <= 1.2 | $CPU_OK |"
  echo "| served - counted, worst round | $WRK_GAP | $BENCH_GAP | | <= $CONNECTIONS (in flight at the end) | $COUNT_OK |"
  echo
  echo "1 s SIGSTOP of the server in a 6 s run:"
  echo
  echo "| run | figure | value (ms) | bound | ok |"
  echo "|---|---|---|---|---|"
  echo "| open loop --rate $RATE | corrected p99 | $OPEN_P99 | >= 500 | $STALL_OPEN_OK |"
  echo "| open loop --rate $RATE | uncorrected p99 | $OPEN_UNCORRECTED_P99 | (for contrast) | |"
  echo "| closed loop | p50 | $CLOSED_P50 | < 100 | $STALL_CLOSED_OK |"
  echo "| closed loop | max | $CLOSED_MAX | (the stall) | |"
} | tee "$REPORT"
echo "report: $REPORT"
[ "$RPS_OK$CPU_OK$COUNT_OK$STALL_OPEN_OK$STALL_CLOSED_OK" = "yesyesyesyesyes" ]
