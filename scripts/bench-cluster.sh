#!/usr/bin/env bash
# Benchmark (not a test): a cluster on this machine (scripts/cluster.sh: PostgreSQL, Redis, N nodes,
# nginx) against one embedded server, in one run.
#  - durable bookings/s through nginx: wrk with scripts/bench-durable.lua (each connection books,
#    cancels, again; every 201 is committed in PostgreSQL, whose rows are counted afterwards);
#  - nearby (1 km, 20 cars, road ETAs) requests/s and p50/p99 through nginx, and the same on the
#    embedded server directly.
# Usage: scripts/bench-cluster.sh [nodes] [seconds]    BUILD_DIR=build  CONNECTIONS=64
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-3}
seconds=${2:-10}
build=${BUILD_DIR:-build}
connections=${CONNECTIONS:-64}
command -v wrk >/dev/null || { echo "bench-cluster: wrk is missing (apt-get install wrk)" >&2; exit 1; }
[ -x "$build/bin/taxicore-server" ] || { echo "bench-cluster: $build/bin/taxicore-server is missing" >&2; exit 1; }
state=$(mktemp -d "${TMPDIR:-/tmp}/taxicore-bench-cluster.XXXXXX")
single_pid=
cleanup() {
  scripts/cluster.sh down --state-dir "$state" >/dev/null 2>&1 || true
  if [ -n "$single_pid" ]; then kill "$single_pid" 2>/dev/null || true; fi
  rm -rf "$state"
}
trap cleanup EXIT
# Riders all come from this machine: lift the per-client booking limit for the run.
node_flags=(--cars 2000 --demand-rate 0 --booking-burst 1000000 --booking-rate 1000000)
up=$(timeout 180 scripts/cluster.sh up "$nodes" --port 0 --state-dir "$state" -- "${node_flags[@]}")
url=$(sed -n 's|^url: ||p' <<<"$up" | tail -1)
[ -n "$url" ] || { echo "bench-cluster: the cluster did not start: $up" >&2; exit 1; }
"$build/bin/taxicore-server" --port 0 --data-dir "$state/single" "${node_flags[@]}" >"$state/single.log" 2>&1 &
single_pid=$!
for _ in $(seq 150); do grep -qs '^listening on' "$state/single.log" && break; sleep 0.1; done
single=$(awk '/^listening on/ {print $3; exit}' "$state/single.log")
[ -n "$single" ] || { echo "bench-cluster: the embedded server did not start" >&2; exit 1; }

psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1)
stored() { timeout 10 "$psql" -h 127.0.0.1 -p "$(cat "$state/run/postgres.port")" -U taxicore -d taxicore -tAc \
             "SELECT count(*) FROM bookings"; }

nearby_row() { # label url
  local out
  out=$(timeout $((seconds + 60)) wrk -t2 -c32 -d"${seconds}s" --latency \
          "$2/api/v1/cars/nearby?lat=57.7000&lng=11.9700&radius_m=1000&limit=20")
  awk -v label="$1" '/Requests\/sec/ {rps=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2}
                     END {printf "| %s | %.0f | %s | %s |\n", label, rps, p50, p99}' <<<"$out"
}

echo "# Cluster: $nodes nodes + PostgreSQL + Redis + nginx on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
before=$(stored)
line=$(timeout $((seconds + 60)) wrk -t"$connections" -c"$connections" -d"${seconds}s" --timeout 10s \
         -s scripts/bench-durable.lua "$url" | grep '^DURABLE' || true)
after=$(stored)
[ -n "$line" ] || { echo "bench-cluster: wrk failed" >&2; exit 1; }
echo "Durable bookings through nginx (wrk -t$connections -c$connections -d${seconds}s, book + cancel):"
echo
echo "| bookings/s | cancels/s | p50 ms | p99 ms | 409 no car | errors | new rows in PostgreSQL (≥ acknowledged) |"
echo "|---|---|---|---|---|---|---|"
awk -v rows=$((after - before)) '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "| %.0f | %.0f | %s | %s | %d | %d | %d (%s) |\n", v["bookings"] / v["seconds"], v["cancels"] / v["seconds"],
           v["p50_ms"], v["p99_ms"], v["nocar"], v["failed"] + v["socket_errors"], rows,
           (rows >= v["bookings"] ? "ok" : "MISSING")
}' <<<"$line"
echo
echo "Nearby, 1 km, 20 cars, road ETAs (wrk -t2 -c32 -d${seconds}s):"
echo
echo "| where | requests/s | p50 | p99 |"
echo "|---|---|---|---|"
nearby_row "cluster through nginx ($nodes nodes)" "$url"
nearby_row "one embedded server, direct" "$single"
