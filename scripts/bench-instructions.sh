#!/usr/bin/env bash
# Benchmark (not a test): instructions per request, old vs new server binary, side by side in one
# run. Each binary runs in single mode under callgrind (valgrind --tool=callgrind), 500 cars,
# seed 1, a fresh data directory; for each workload a warm-up, then the counters are zeroed
# (callgrind_control -z), exactly N requests are sent on one keep-alive connection, the counters
# are dumped (callgrind_control -d) and the server's instructions (Ir) are divided by N.
# Instruction counts are stable to about 1 % from run to run on a shared VM where CPU time per
# request varies by ±20 %, and they do not depend on how loaded the machine is.
#
# Usage: scripts/bench-instructions.sh [--requests N] [--nearby N] [--bookings N] [OLD_SERVER_BIN [NEW_SERVER_BIN]]
#   OLD_SERVER_BIN  default build-old/bin/taxicore-server, e.g. main before a change:
#                     git worktree add /tmp/old REV && cmake -S /tmp/old -B build-old -G Ninja \
#                       -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-old --target taxicore-server
#   NEW_SERVER_BIN  default build/bin/taxicore-server
#   --requests N    GET /hello requests (default 8000); nearby and booking default to N/10
#   --nearby N      nearby searches (GET /api/v1/cars/nearby, 1 km, limit 20, road ETAs)
#   --bookings N    bookings, each POST /api/v1/bookings then POST .../cancel with its rider
#                   token (the pair frees the car again, so it repeats; reported per booking)
#   KEEP=1 keeps the callgrind files (their directory is printed).
#   SERVER_ARGS="..." more arguments for both servers, e.g. a cluster node's
#                   "--ledger postgresql://... --fleet redis://..." (engines the caller started).
# Counted: every thread of the server except the time-driven ones (EXCLUDE_THREADS, default
# "taxicore-sim taxicore-control": the simulator's tick every 200 ms and the worker supervisor run the
# same whether requests come or not, and under callgrind a request takes ~50x longer, so they
# would add wall-clock time, not request cost). Their Ir per second is printed below the table.
# Every answer's status is checked: a refused or failed request fails the run.
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."

hello_n=8000
nearby_n=
bookings_n=
while [ $# -gt 0 ]; do
  case $1 in
    --requests) hello_n=$2; shift 2 ;;
    --nearby) nearby_n=$2; shift 2 ;;
    --bookings) bookings_n=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "bench-instructions: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
old_bin=${1:-build-old/bin/taxicore-server}
new_bin=${2:-build/bin/taxicore-server}
for n in "$hello_n" ${nearby_n:+"$nearby_n"} ${bookings_n:+"$bookings_n"}; do
  [[ $n =~ ^[1-9][0-9]{0,6}$ ]] || { echo "bench-instructions: request counts must be positive integers" >&2; exit 2; }
done
nearby_n=${nearby_n:-$((hello_n / 10 > 20 ? hello_n / 10 : 20))}
bookings_n=${bookings_n:-$((hello_n / 10 > 20 ? hello_n / 10 : 20))}
exclude_threads=${EXCLUDE_THREADS:-"taxicore-sim taxicore-control"}
# As /proc/PID/task/*/comm shows them: at most 15 characters.
exclude_comms=$(for t in $exclude_threads; do printf '%s ' "${t:0:15}"; done)
for tool in valgrind callgrind_control python3; do
  command -v "$tool" >/dev/null || { echo "bench-instructions: $tool is missing (apt-get install valgrind python3)" >&2; exit 1; }
done
for bin in "$old_bin" "$new_bin"; do
  [ -x "$bin" ] || { echo "bench-instructions: $bin is not an executable (see --help for how to build an old one)" >&2; exit 1; }
done

# The nearby search of README / server/http/TaxiApi.cpp at the city centre; bookings pick up there.
nearby_query="lat=57.70&lng=11.97&radius_m=1000&limit=20"
# Timeouts (seconds): start under valgrind (the city loads uninstrumented), one workload's
# requests, one callgrind_control command, a graceful stop.
start_timeout=180
workload_timeout=600
control_timeout=60
stop_timeout=60

work=$(mktemp -d "${TMPDIR:-/tmp}/taxicore-ir.XXXXXX")
server_pid=
client_pid=
stop_server() {
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null || true
  timeout "$stop_timeout" tail --pid="$server_pid" -f /dev/null 2>/dev/null || kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}
cleanup() {
  [ -z "$client_pid" ] || kill "$client_pid" 2>/dev/null || true
  stop_server
  if [ "${KEEP:-0}" = 1 ]; then echo "bench-instructions: files kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The client: exactly N requests of one workload on one keep-alive connection, every status
# checked (ab and wrk cannot chain a cancel to the booking it follows, nor stop at exactly N).
cat >"$work/client.py" <<'EOF'
import http.client, json, sys, time, urllib.parse
url, workload, n, query = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
u = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
connects = 0
def call(method, path, body=None, headers={}, expect=200):
    global connects
    if conn.sock is None:
        # One connection for the whole run: a reconnect would add an accept to the count.
        if connects:
            sys.exit(f"{workload}: the server closed the keep-alive connection")
        connects += 1
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    if r.status != expect:
        sys.exit(f"{workload}: {method} {path} answered {r.status} (expected {expect}): {data[:300]!r}")
    return data
q = dict(urllib.parse.parse_qsl(query))
booking = json.dumps({"rider_id": "bench-instructions", "pickup": {"lat": float(q["lat"]), "lng": float(q["lng"])}})
min_cars = None
start = time.monotonic()
for _ in range(n):
    if workload == "hello":
        call("GET", "/hello")
    elif workload == "nearby":
        cars = len(json.loads(call("GET", "/api/v1/cars/nearby?" + query))["cars"])
        min_cars = cars if min_cars is None else min(min_cars, cars)
    elif workload == "booking":
        b = json.loads(call("POST", "/api/v1/bookings", booking, {"Content-Type": "application/json"}, 201))
        call("POST", f"/api/v1/bookings/{b['booking_id']}/cancel", b"",
             {"Authorization": "Bearer " + b["rider_token"]}, 200)
    else:
        sys.exit("unknown workload " + workload)
conn.close()
print(f"ok={n} seconds={time.monotonic() - start:.1f} connects={connects} min_cars={min_cars}")
EOF

client() { # workload n > answer: in the background, so a signal to this script is handled at once
  timeout "$workload_timeout" python3 "$work/client.py" "$url" "$1" "$2" "$nearby_query" >"$work/client.out" &
  client_pid=$!
  wait "$client_pid" || { client_pid=; return 1; }
  client_pid=
  cat "$work/client.out"
}

ctl() { # callgrind_control with a timeout; it exits 0 even when it failed, its "  OK." is the answer
  if ! timeout "$control_timeout" callgrind_control "$@" >"$work/ctl.out" 2>&1 || ! grep -qx '  OK.' "$work/ctl.out"; then
    echo "bench-instructions: callgrind_control $* failed: $(cat "$work/ctl.out")" >&2; exit 1
  fi
}

start_server() { # label bin -> server_pid, url
  local label=$1 bin=$2 dir=$work/$1
  mkdir -p "$dir"
  dumps=0 # callgrind numbers the dumps of each process from 1
  server_cmd=(valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --dump-instr=no
              --callgrind-out-file="$dir/cg.%p" "$bin" --host 127.0.0.1 --port 0 --mode single
              --cars 500 --seed 1 --data-dir "$dir/data")
  local extra=()
  read -r -a extra <<<"${SERVER_ARGS:-}"
  server_cmd+=("${extra[@]}")
  # QT_HASH_SEED=0: the same QHash layouts in both binaries and every run.
  QT_HASH_SEED=0 "${server_cmd[@]}" >"$dir/stdout" 2>"$dir/stderr" &
  server_pid=$!
  url=
  for _ in $(seq $((start_timeout * 5))); do
    url=$(awk '/^listening on/ {print $3; exit}' "$dir/stdout")
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  [ -n "$url" ] || { echo "bench-instructions: $bin did not start (exited, or not listening within ${start_timeout}s): $(tail -5 "$dir/stderr")" >&2; exit 1; }
  ctl -i on "$server_pid" # instrument from here on (the start ran uninstrumented, ~10x faster)
  local shown="${server_cmd[*]}"
  echo "$label server: QT_HASH_SEED=0 ${shown//$work/\$TMP}" >>"$work/commands"
}

measure() { # label workload n -> appends "label workload n counted background_ir seconds min_cars" to results
  local label=$1 workload=$2 n=$3 dir=$work/$1 warm files f tid name ir counted=0 background=0 t0 t1 names
  warm=$((n / 10 > 10 ? n / 10 : 10))
  client "$workload" "$warm" >/dev/null ||
    { echo "bench-instructions: $label warm-up of $workload failed" >&2; exit 1; }
  ctl -z "$server_pid"
  t0=$(date +%s.%N)
  client "$workload" "$n" >"$work/answer" ||
    { echo "bench-instructions: $label $workload failed (or took over ${workload_timeout}s)" >&2; exit 1; }
  # The thread names now, in creation order (task ids ascend), which is valgrind's thread numbering.
  names=$(for t in /proc/"$server_pid"/task/*; do echo "${t##*/} $(cat "$t/comm")"; done | sort -n | awk '{print $2}')
  ctl -d "$server_pid"
  t1=$(date +%s.%N)
  dumps=$((dumps + 1))
  # The dump is written thread by thread: wait until every thread's file is there.
  for _ in $(seq $((control_timeout * 10))); do
    files=$(find "$dir" -maxdepth 1 -name "cg.$server_pid.$dumps-*" | sort)
    [ "$(wc -l <<<"$files")" = "$(wc -l <<<"$names")" ] && break
    sleep 0.1
  done
  if [ "$(wc -l <<<"$files")" != "$(wc -l <<<"$names")" ]; then
    echo "bench-instructions: $label: $(wc -l <<<"$files") thread dumps but $(wc -l <<<"$names") threads ($(tr '\n' ' ' <<<"$names"))" >&2; exit 1
  fi
  for f in $files; do
    tid=$((10#${f##*-}))
    name=$(sed -n "${tid}p" <<<"$names")
    ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
    if [[ " $exclude_comms " == *" $name "* ]]; then background=$((background + ir)); else counted=$((counted + ir)); fi
    echo "$label $workload thread $tid $name $ir" >>"$work/threads"
  done
  for name in $exclude_comms; do
    grep -qx "$name" <<<"$names" || { echo "bench-instructions: $label has no thread $name (threads: $(tr '\n' ' ' <<<"$names")); set EXCLUDE_THREADS" >&2; exit 1; }
  done
  echo "$label $workload $n $counted $background $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') $(sed -E 's/.*min_cars=([^ ]+).*/\1/' "$work/answer")" >>"$work/results"
}

: >"$work/results"; : >"$work/commands"; : >"$work/threads"
started=$(date +%s)
for label in old new; do
  bin=$old_bin; [ "$label" = new ] && bin=$new_bin
  start_server "$label" "$bin"
  measure "$label" hello "$hello_n"
  measure "$label" nearby "$nearby_n"
  measure "$label" booking "$bookings_n"
  stop_server
done

echo "# Instructions per request (callgrind Ir), single mode, 500 cars, one keep-alive connection"
echo
echo "old: $old_bin, new: $new_bin; $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), the run took $(( $(date +%s) - started )) s"
echo
echo "| workload | requests | old Ir/req | new Ir/req | new/old |"
echo "|---|---|---|---|---|"
awk '
  { key = $2; n[key] = $3; ir[$1, key] = $4 / $3; bg[$1, key] = $5 / $6; cars[$1, key] = $7 }
  END {
    split("hello nearby booking", order, " ")
    split("GET /hello|GET /api/v1/cars/nearby (1 km, limit 20, road ETAs)|booking + cancel (per booking)", title, "|")
    for (i = 1; i <= 3; i++) {
      k = order[i]
      printf "| %s | %d | %.0f | %.0f | %.3f |\n", title[i], n[k], ir["old", k], ir["new", k], ir["new", k] / ir["old", k]
    }
    printf "\nNot counted, time-driven threads (Ir per wall second): "
    for (i = 1; i <= 3; i++) printf "%s old %.2gM new %.2gM%s", order[i], bg["old", order[i]] / 1e6, bg["new", order[i]] / 1e6, (i < 3 ? "; " : "\n")
    printf "Cars in each nearby answer (fewest): old %s, new %s\n", cars["old", "nearby"], cars["new", "nearby"]
  }' "$work/results"
echo
echo "Commands:"
echo
echo '```sh'
sed 's/^/# /' "$work/commands"
echo "# per workload: a warm-up of N/10, callgrind_control -z PID, the N requests, callgrind_control -d PID"
echo "#   hello:   GET /hello"
echo "#   nearby:  GET /api/v1/cars/nearby?$nearby_query"
echo "#   booking: POST /api/v1/bookings {\"rider_id\":\"bench-instructions\",\"pickup\":{\"lat\":57.70,\"lng\":11.97}} -> 201,"
echo "#            POST /api/v1/bookings/{booking_id}/cancel with Authorization: Bearer {rider_token} -> 200"
echo "# counted threads: all but $exclude_threads"
echo "scripts/bench-instructions.sh --requests $hello_n --nearby $nearby_n --bookings $bookings_n $old_bin $new_bin"
echo '```'
