#!/usr/bin/env bash
# Benchmark (not a test): wrk against /hello in each in-process mode; reports req/s, p50/p99
# latency and the server's CPU time per request (user+sys of its process / requests served).
# Usage: scripts/bench-hello.sh [seconds] [connections]   — results in build/bench/hello.md
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
connections=${2:-64}
bin=build/bin/taxicore-server
out=build/bench
mkdir -p "$out"
command -v wrk >/dev/null || { echo "bench-hello: wrk is missing (make deps installs it)" >&2; exit 1; }
ticks=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_mode() {
  local mode=$1 log url pid before after requests
  log=$(mktemp)
  "$bin" --port 0 --mode "$mode" --cars 500 >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q '^listening on' "$log" && break; sleep 0.1; done
  url=$(awk '/^listening on/ {print $3; exit}' "$log")
  [ -n "$url" ] || { echo "bench-hello: server did not start: $(cat "$log")" >&2; kill "$pid"; exit 1; }
  timeout 10 wrk -t1 -c"$connections" -d2s "$url/hello" >/dev/null # warm-up
  before=$(cpu_ticks "$pid")
  timeout $((duration + 30)) wrk -t1 -c"$connections" -d"${duration}s" --latency "$url/hello" >"$out/wrk-$mode.txt"
  after=$(cpu_ticks "$pid")
  kill -TERM "$pid"; timeout 10 tail --pid="$pid" -f /dev/null || kill -KILL "$pid"
  rm -f "$log"
  requests=$(awk '/requests in/ {print $1}' "$out/wrk-$mode.txt")
  awk -v mode="$mode" -v req="$requests" -v cpu="$((after - before))" -v hz="$ticks" '
    /Requests\/sec/ {rps=$2}
    /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    END {printf "| %s | %.0f | %s | %s | %.1f |\n", mode, rps, p50, p99, cpu / hz * 1e6 / req}' "$out/wrk-$mode.txt"
}

{
  echo "# /hello, wrk -t1 -c$connections -d${duration}s, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo
  echo "| mode | req/s | p50 | p99 | server CPU µs/request |"
  echo "|---|---|---|---|---|"
  for mode in single pool; do run_mode "$mode"; done
} | tee "$out/hello.md"
