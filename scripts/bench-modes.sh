#!/usr/bin/env bash
# Benchmark (not a test): wrk against each execution mode on /hello, /fib?n=25 (c 64 and 1000)
# and a taxi call; req/s, p50/p99, timeouts, and the server's CPU time per request summed over
# the primary and its workers, plus their memory. Results: build/bench/modes.md
# Usage: scripts/bench-modes.sh [seconds]        (TAXICORE_BENCH_MODES="single pool" to narrow)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
bin=build/bin/taxicore-server
out=build/bench
mkdir -p "$out"
command -v wrk >/dev/null || { echo "bench-modes: wrk is missing (make deps installs it)" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
configs=${TAXICORE_BENCH_MODES:-"single pool processes:round-robin processes:least-loaded processes:kernel"}

tree_pids() { echo "$1"; pgrep -P "$1" || true; }
tree_ticks() { local t=0; for p in $(tree_pids "$1"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null; }
# Per worker (processes mode): "requests open_connections" lines from GET /admin/v1/workers
# (loopback needs no token by default).
worker_counts() { curl -s "$1/admin/v1/workers" | jq -r '.workers[] | "\(.requests) \(.open_connections)"' 2>/dev/null || true; }

measure() { # config url path connections
  local config=$1 url=$2 path=$3 c=$4 pid=$5 before after report
  report="$out/wrk-${config//:/-}-$(echo "$path" | tr -c 'a-z0-9' '_')-c$c.txt"
  timeout 20 wrk -t1 -c"$c" -d2s "$url$path" >/dev/null || true
  before=$(tree_ticks "$pid")
  timeout $((duration + 30)) wrk -t1 -c"$c" -d"${duration}s" --timeout 10s --latency "$url$path" >"$report"
  after=$(tree_ticks "$pid")
  awk -v cfg="$config" -v path="$path" -v c="$c" -v cpu="$((after - before))" -v hz="$ticks" '
    /requests in/ {req=$1} /Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /^ +Latency / && $2 != "Distribution" {max=$4}
    /Socket errors/ {gsub(",", ""); to=$NF}
    END {printf "| %s | %s | %s | %.0f | %s | %s | %s | %s | %.1f |\n", cfg, path, c, rps, p50, p99, max, (to == "" ? 0 : to), (req ? cpu / hz * 1e6 / req : 0)}' "$report"
}

run_config() {
  local config=$1 mode=${1%%:*} policy=round-robin log url pid
  [[ $config == *:* ]] && policy=${config#*:}
  log=$(mktemp)
  # A data directory of its own: the user's default one may be held by a running server
  # (one server per data directory) or hold bookings this run must not add to.
  data=$(mktemp -d)
  "$bin" --port 0 --mode "$mode" --policy "$policy" --cars 500 --data-dir "$data" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q '^listening on' "$log" && break; sleep 0.1; done
  url=$(awk '/^listening on/ {print $3; exit}' "$log")
  [ -n "$url" ] || { echo "bench-modes: server did not start: $(cat "$log")" >&2; kill "$pid"; exit 1; }
  sleep 2 # workers up
  measure "$config" "$url" /hello 64 "$pid"
  measure "$config" "$url" "/fib?n=25" 64 "$pid"
  # At c=1000 a processes-mode tail is per worker: which worker served how many of the requests,
  # and how many of the 1,000 connections each held halfway through.
  local before mid sampler
  before=$(worker_counts "$url")
  (sleep $((duration / 2 + 2)); worker_counts "$url" >"$out/modes-mid.txt") &
  sampler=$!
  measure "$config" "$url" "/fib?n=25" 1000 "$pid"
  wait "$sampler" || true
  mid=$(cat "$out/modes-mid.txt" 2>/dev/null || true)
  if [ -n "$before" ]; then
    paste -d' ' <(echo "$before") <(worker_counts "$url") <(echo "$mid") |
      awk -v cfg="$config" '{served = served sep ($3 - $1); held = held sep $6; sep = " : "}
        END {print cfg ": requests " served ", connections held mid-run " held}' >>"$out/modes-split.txt"
  fi
  measure "$config" "$url" "/api/v1/cars/nearby?lat=57.70&lng=11.97" 64 "$pid"
  local mem="primary $(rss_mb "$pid") MB"
  for w in $(pgrep -P "$pid" || true); do mem="$mem, worker $(rss_mb "$w") MB"; done
  echo "$config: $mem" >>"$out/modes-memory.txt"
  kill -TERM "$pid"; timeout 15 tail --pid="$pid" -f /dev/null || kill -KILL "$pid"
  rm -rf "$log" "$data"
}

: >"$out/modes-memory.txt"
: >"$out/modes-split.txt"
{
  echo "# Execution modes, wrk -t1 -d${duration}s, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo
  echo "| mode | path | conns | req/s | p50 | p99 | max | timeouts | server CPU µs/request |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for config in $configs; do run_config "$config"; done
  echo
  echo "Memory (RSS after the run):"
  sed 's/^/- /' "$out/modes-memory.txt"
  if [ -s "$out/modes-split.txt" ]; then
    echo
    echo "Per worker at /fib?n=25 c=1000 (worker 1 : worker 2 ...):"
    sed 's/^/- /' "$out/modes-split.txt"
  fi
} | tee "$out/modes.md"
