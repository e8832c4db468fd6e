#!/usr/bin/env bash
# Benchmark (not a test): a cluster on this machine (scripts/cluster.sh: PostgreSQL, Redis, N nodes,
# nginx) against one embedded server, in one run.
#  - durable bookings/s through nginx, and the CPU per request of each part (nodes, PostgreSQL,
#    Redis, nginx, the whole machine): wrk with scripts/bench-durable.lua (each connection books,
#    cancels, again; every 201 is committed in PostgreSQL, whose rows are counted afterwards);
#  - nearby (1 km, 20 cars, road ETAs) requests/s and p50/p99 through nginx, and the same on the
#    embedded server directly, at saturation (wrk) and at equal offered load (taxicore-bench -R, half
#    the embedded server's saturated rate unless NEARBY_RATE), NEARBY_ROUNDS rounds (default 3);
#  - position reports/s: wrk with scripts/bench-positions.lua (device reports for random cars)
#    through nginx, then straight to the nodes (one wrk per node at once, summed);
#  - the live feed (taxicore-feed-probe fanout): FOLLOWERS WebSocket followers of FOLLOWERS/2
#    bookings, each on a node other than the booking's; the nodes' CPU while they sit idle,
#    following and (baseline) merely subscribed; then fan-out latency: cars moved through their
#    booking's node, from each report's 200 to its arrival at each follower on another node;
#  - a node kill (taxicore-feed-probe stall): riders book and cancel through nginx, the last node
#    is sent SIGKILL after KILL_AT_S seconds; the longest time without a successful answer, and
#    every acknowledged booking looked up in PostgreSQL.
# Usage: scripts/bench-cluster.sh [nodes] [seconds]    BUILD_DIR=build  CONNECTIONS=64
#        FOLLOWERS=2000  KILL_AT_S=3  NEARBY_ROUNDS=3  NEARBY_RATE=(requests/s)
#        ONLY="durable nearby positions feed kill" (the parts to run)
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-3}
seconds=${2:-10}
build=${BUILD_DIR:-build}
connections=${CONNECTIONS:-64}
followers=${FOLLOWERS:-2000}
kill_at_s=${KILL_AT_S:-3}
only=${ONLY:-durable nearby positions feed kill}
want() { [[ " $only " == *" $1 "* ]]; }
probe=$build/bin/taxicore-feed-probe
device_token=bench-cluster-device-token-$RANDOM$RANDOM
command -v wrk >/dev/null || { echo "bench-cluster: wrk is missing (apt-get install wrk)" >&2; exit 1; }
for tool in taxicore-server taxicore-bench; do
  [ -x "$build/bin/$tool" ] || { echo "bench-cluster: $build/bin/$tool is missing" >&2; exit 1; }
done
state=$(mktemp -d "${TMPDIR:-/tmp}/taxicore-bench-cluster.XXXXXX")
single_pid=
cleanup() {
  scripts/cluster.sh down --state-dir "$state" >/dev/null 2>&1 || true
  if [ -n "$single_pid" ]; then kill "$single_pid" 2>/dev/null || true; fi
  rm -rf "$state"
}
trap cleanup EXIT
# Riders all come from this machine: lift the per-client booking limit for the run.
node_flags=(--cars 2000 --demand-rate 0 --booking-burst 1000000 --booking-rate 1000000 --open-bookings-per-client 0 --device-token "$device_token")
up=$(TAXICORE_BIN_DIR="$(cd "$build" && pwd)/bin" timeout 180 scripts/cluster.sh up "$nodes" --port 0 --state-dir "$state" -- "${node_flags[@]}")
url=$(sed -n 's|^url: ||p' <<<"$up" | tail -1)
[ -n "$url" ] || { echo "bench-cluster: the cluster did not start: $up" >&2; exit 1; }
# The embedded server to compare nearby with runs only for that part: its simulator moves its
# 2,000 cars all the time, CPU the cluster's other parts would otherwise share with it.
start_single() {
  "$build/bin/taxicore-server" --port 0 --data-dir "$state/single" "${node_flags[@]}" >"$state/single.log" 2>&1 &
  single_pid=$!
  for _ in $(seq 150); do grep -qs '^listening on' "$state/single.log" && break; sleep 0.1; done
  single=$(awk '/^listening on/ {print $3; exit}' "$state/single.log")
  [ -n "$single" ] || { echo "bench-cluster: the embedded server did not start" >&2; exit 1; }
}
stop_single() {
  kill "$single_pid" 2>/dev/null || true
  timeout 10 tail --pid="$single_pid" -f /dev/null || kill -9 "$single_pid" 2>/dev/null || true
  single_pid=
}

psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1)
stored() { timeout 10 "$psql" -h 127.0.0.1 -p "$(cat "$state/run/postgres.port")" -U taxicore -d taxicore -tAc \
             "SELECT count(*) FROM bookings"; }

nearby_query="/api/v1/cars/nearby?lat=57.7000&lng=11.9700&radius_m=1000&limit=20"
# Saturation: wrk's 32 connections each send the next request when the last is answered.
# Prints "requests/s p50_ms p99_ms".
nearby_saturated() { # url
  timeout $((seconds + 60)) wrk -t2 -c32 -d"${seconds}s" --latency "$1$nearby_query" | awk '
    function ms(v) { return v ~ /us$/ ? v / 1000 : v ~ /ms$/ ? v + 0 : v * 1000 }
    /Requests\/sec/ {rps = $2} $1 == "50%" {p50 = ms($2)} $1 == "99%" {p99 = ms($2)}
    END {printf "%.0f %.2f %.2f\n", rps, p50, p99}'
}
# Equal offered load: taxicore-bench's open loop sends `rate` requests/s whatever the answers do,
# and times each from when it was due (corrected for coordinated omission), so both sides get
# the same work and the latency compares like with like. Prints "requests/s p50_ms p99_ms".
nearby_paced() { # url rate
  timeout $((seconds + 60)) "$build/bin/taxicore-bench" "$1$nearby_query" -c32 -R "$2" -d "${seconds}s" --warmup 1s 2>&1 | awk '
    function ms(v) { return v ~ /us$/ ? v / 1000 : v ~ /ms$/ ? v + 0 : v ~ /s$/ ? v * 1000 : v }
    $1 == "corrected" {p50 = ms($4); p99 = ms($6)} /^Requests\/sec/ {rps = $2}
    END {printf "%.0f %.2f %.2f\n", rps, p50, p99}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

# CPU ticks (utime + stime, /proc/PID/stat) summed over PIDs; the PIDs of a part of the cluster
# (a node with its worker processes, the postmaster with its backends, nginx with its workers);
# the machine's busy ticks (/proc/stat: user, nice, system, irq, softirq).
ticks() { local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
part_pids() {
  local p n
  case $1 in
    nodes) for n in $(seq "$nodes"); do p=$(cat "$state/run/node-$n.pid"); echo "$p"; pgrep -P "$p" || true; done ;;
    postgres|nginx) p=$(cat "$state/run/$1.pid"); echo "$p"; pgrep -P "$p" || true ;;
    redis) cat "$state/run/redis.pid" ;;
  esac
}
machine_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
parts="nodes postgres redis nginx"
cpu_mark() { local part; for part in $parts; do printf '%s ' "$(ticks $(part_pids "$part"))"; done; machine_busy; }
# µs of CPU per request of each part between two marks, and of the whole machine (wrk included).
cpu_row() { # before after requests
  awk -v before="$1" -v after="$2" -v requests="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN {
      n = split(before, b, " "); split(after, a, " "); line = "|"
      for (i = 1; i <= n; i++) line = line sprintf(" %.0f |", (a[i] - b[i]) * 1e6 / hz / requests)
      print line }'
}

echo "# Cluster: $nodes nodes + PostgreSQL + Redis + nginx on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
if want durable; then
before=$(stored)
cpu_before=$(cpu_mark)
line=$(timeout $((seconds + 60)) wrk -t"$connections" -c"$connections" -d"${seconds}s" --timeout 10s \
         -s scripts/bench-durable.lua "$url" | grep '^DURABLE' || true)
cpu_after=$(cpu_mark)
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
# Where the time goes: on one machine every part shares the same cores, so the sum per request
# is what bounds bookings/s.
requests=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["bookings"] + v["cancels"] }' <<<"$line")
echo "CPU per request (book or cancel), µs:"
echo
echo "| nodes | PostgreSQL | Redis | nginx | whole machine (wrk too) |"
echo "|---|---|---|---|---|"
cpu_row "$cpu_before" "$cpu_after" "$((requests > 0 ? requests : 1))"
echo
fi

if want nearby; then
rounds=${NEARBY_ROUNDS:-3}
echo "Nearby, 1 km, 20 cars, road ETAs: the cluster through nginx and one embedded server directly, $rounds rounds, the order swapped each round:"
echo "at saturation (wrk -t2 -c32 -d${seconds}s: each side as fast as it answers) and at equal offered load"
echo "(taxicore-bench -c32 -R RATE -d${seconds}s, open loop, latency from each request's due time)."
echo
echo "| round | measure | cluster requests/s | p50 ms | p99 ms | embedded requests/s | p50 ms | p99 ms | p99 ratio |"
echo "|---|---|---|---|---|---|---|---|---|"
start_single
ratios_saturated=()
ratios_paced=()
for round in $(seq "$rounds"); do
  for measure in saturated paced; do
    # The rate both can bear: half of what the embedded server answered at saturation.
    args=()
    [ "$measure" = paced ] && args=("${NEARBY_RATE:-$rate}")
    if (( round % 2 )); then
      c=$("nearby_$measure" "$url" "${args[@]}"); e=$("nearby_$measure" "$single" "${args[@]}")
    else
      e=$("nearby_$measure" "$single" "${args[@]}"); c=$("nearby_$measure" "$url" "${args[@]}")
    fi
    [ "$measure" = saturated ] && rate=$(awk '{printf "%d", int($1 / 2 / 500) * 500}' <<<"$e")
    ratio=$(awk -v c="$c" -v e="$e" 'BEGIN {split(c, a, " "); split(e, b, " "); printf "%.2f", (b[3] > 0 ? a[3] / b[3] : 0)}')
    label="wrk -c32"
    [ "$measure" = paced ] && label="${NEARBY_RATE:-$rate}/s"
    echo "| $round | $label | $(tr ' ' '|' <<<"$c" | sed 's/|/ | /g') | $(tr ' ' '|' <<<"$e" | sed 's/|/ | /g') | $ratio× |"
    if [ "$measure" = paced ]; then ratios_paced+=("$ratio"); else ratios_saturated+=("$ratio"); fi
  done
done
stop_single
echo
echo "Median p99 ratio, cluster / embedded: at saturation $(printf '%s\n' "${ratios_saturated[@]}" | median)×, at equal offered load $(printf '%s\n' "${ratios_paced[@]}" | median)×."
echo
fi

node_urls=()
node_pids=()
for n in $(seq "$nodes"); do
  node_urls+=("http://127.0.0.1:$(cat "$state/run/node-$n.port")")
  node_pids+=("$(cat "$state/run/node-$n.pid")")
done

positions_row() { # label, then one wrk output per line group: sums the POSITIONS lines
  awk -v label="$1" '/^POSITIONS/ {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      ok += v["ok"]; bad += v["failed"] + v["socket_errors"]; rate += v["ok"] / v["seconds"]
      if (v["p99_ms"] > p99) p99 = v["p99_ms"]; p50 = p50 (p50 == "" ? "" : " / ") v["p50_ms"]
    } END { printf "| %s | %.0f | %d | %s | %s |\n", label, rate, bad, p50, p99 }'
}
if want positions; then
echo "Position reports, device token, random cars (wrk with scripts/bench-positions.lua, ${seconds}s):"
echo
echo "| where | reports/s | not 200 | p50 ms | p99 ms |"
echo "|---|---|---|---|---|"
timeout $((seconds + 60)) wrk -t2 -c64 -d"${seconds}s" -s scripts/bench-positions.lua "$url" -- "$device_token" 2000 \
  | positions_row "through nginx (wrk -t2 -c64)"
outs=()
wrks=()
for n in $(seq "$nodes"); do
  outs+=("$state/positions-$n.out")
  timeout $((seconds + 60)) wrk -t1 -c32 -d"${seconds}s" -s scripts/bench-positions.lua "${node_urls[$((n - 1))]}" \
    -- "$device_token" 2000 >"$state/positions-$n.out" &
  wrks+=($!)
done
wait "${wrks[@]}"
cat "${outs[@]}" | positions_row "straight to the $nodes nodes at once (one wrk -t1 -c32 each, summed)"
echo
fi

if want feed; then
[ -x "$probe" ] || { echo "bench-cluster: $probe is missing (cmake --build --target taxicore-feed-probe)" >&2; exit 1; }
probe_nodes=()
for u in "${node_urls[@]}"; do probe_nodes+=(--node "$u"); done
probe_pids=()
for p in "${node_pids[@]}"; do probe_pids+=(--pid "$p"); done
per_booking=$(( nodes > 2 ? 2 : 1 ))
feed_bookings=$(( followers / per_booking ))
echo "Live feed: $followers WebSocket clients on the nodes, $feed_bookings bookings × $per_booking followers, each follower on a node other than its booking's (taxicore-feed-probe fanout):"
echo
idle() { # extra probe flags...
  timeout 300 "$probe" fanout "${probe_nodes[@]}" "${probe_pids[@]}" --device-token "$device_token" \
    --bookings "$feed_bookings" --followers-per-booking "$per_booking" --hold-s 10 --rounds 0 "$@" \
    2>"$state/probe.err" | grep '^IDLE' || { echo "bench-cluster: the feed probe failed: $(tail -3 "$state/probe.err")" >&2; exit 1; }
}
echo "| clients, 10 s idle (no car moves) | CPU of each node (% of one core) | all nodes |"
echo "|---|---|---|"
for mode in follow no-follow; do
  flags=()
  label="$followers following a booking (follow passes on change, a check every 500 ms)"
  [ "$mode" = no-follow ] && { flags=(--no-follow); label="$followers subscribed to a point only (baseline)"; }
  idle "${flags[@]}" | awk -v label="$label" '{ cpu = ""; for (i = 2; i <= NF; i++) { split($i, kv, "=");
      if (kv[1] ~ /^pid/) cpu = cpu (cpu == "" ? "" : " / ") kv[2]; if (kv[1] == "nodes_cpu_percent") all = kv[2] }
      printf "| %s | %s | %s |\n", label, cpu, all }'
done
echo
moving=${MOVING:-10}; gap_ms=20; rounds=$(( seconds * 1000 / gap_ms ))
out=$(timeout 300 "$probe" fanout "${probe_nodes[@]}" --device-token "$device_token" --bookings "$feed_bookings" \
        --followers-per-booking "$per_booking" --moving-cars $moving --gap-ms $gap_ms --rounds $rounds 2>"$state/probe.err" \
      | grep '^FANOUT') || { echo "bench-cluster: the feed probe failed: $(tail -3 "$state/probe.err")" >&2; exit 1; }
echo "Fan-out: $moving cars moved every $gap_ms ms for ${seconds}s through their booking's node; latency from a report's 200 to the first follow message with that position (or a later one) at each of the car's followers on the other nodes:"
echo
echo "| followers | reports/s | deliveries | lost (not seen within 3 s) | p50 ms | p90 ms | p99 ms | max ms | probe CPU % |"
echo "|---|---|---|---|---|---|---|---|---|"
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v["followers"], v["reports_per_s"], v["deliveries"], v["lost"],
              v["p50_ms"], v["p90_ms"], v["p99_ms"], v["max_ms"], v["probe_cpu_percent"] }' <<<"$out"
echo
fi

if want kill; then
[ -x "$probe" ] || { echo "bench-cluster: $probe is missing (cmake --build --target taxicore-feed-probe)" >&2; exit 1; }
victim=${node_pids[$((nodes - 1))]}
baseline=$(timeout 120 "$probe" stall --url "$url" --connections 16 --seconds "$seconds" 2>"$state/probe.err" | grep '^STALL') \
  || { echo "bench-cluster: the stall probe failed: $(tail -3 "$state/probe.err")" >&2; exit 1; }
out=$(timeout 120 "$probe" stall --url "$url" --connections 16 --seconds "$seconds" --kill-pid "$victim" \
        --kill-at-s "$kill_at_s" --ids-file "$state/acknowledged.ids" 2>"$state/probe.err" | grep '^STALL') \
  || { echo "bench-cluster: the stall probe failed: $(tail -3 "$state/probe.err")" >&2; exit 1; }
acked=$(wc -l <"$state/acknowledged.ids")
found=0
if [ "$acked" -gt 0 ]; then
  found=$(timeout 30 "$psql" -h 127.0.0.1 -p "$(cat "$state/run/postgres.port")" -U taxicore -d taxicore -tAc \
            "SELECT count(*) FROM bookings WHERE id = ANY('{$(paste -sd, "$state/acknowledged.ids")}'::bigint[])")
fi
echo "Node kill: 16 riders book + cancel through nginx for ${seconds}s, node $nodes (pid $victim) gets SIGKILL at ${kill_at_s}s (taxicore-feed-probe stall):"
echo
echo "| run | longest gap with no 201/200 answer, kill to 2 s after | longest gap in the whole run | first success after the kill | answers by status | acknowledged bookings | of them in PostgreSQL |"
echo "|---|---|---|---|---|---|---|"
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "| no kill (baseline) | – | %s ms (at %s s) | – | %s | %s | – |\n", v["longest_gap_ms"], v["longest_gap_starts_s"],
           v["answers"], v["bookings_acknowledged"] }' <<<"$baseline"
awk -v acked="$acked" -v found="$found" -v at="$kill_at_s" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "| SIGKILL at %s s | %s ms | %s ms (at %s s) | %s ms | %s | %d | %d (%s) |\n", at, v["kill_gap_ms"], v["longest_gap_ms"],
           v["longest_gap_starts_s"], v["first_success_after_kill_ms"], v["answers"], acked, found,
           (found == acked ? "none lost" : "LOST " acked - found) }' <<<"$out"
fi
