#!/usr/bin/env bash
# The comparison suite behind `make bench` (a benchmark, not a test).
# Starts taxicore-server once per configuration (single; pool; processes round-robin; processes
# kernel; workers = cores), runs every seed scenario of taxicore-bench against it, measures the
# server's CPU time per request (summed over the primary and its workers, per stage) and its RSS,
# runs the Node.js peers of bench/peers on the scenarios that apply to them when Node.js is there,
# then writes build/bench/report.md, results.csv and PNG charts (taxicore-bench-charts).
#
# Environment:
#   BUILD_DIR=build        where bin/taxicore-server, taxicore-bench, taxicore-bench-charts are
#   BENCH_QUICK=1          short stages (2 s, fewer requests): the whole suite in ~3-4 minutes
#   BENCH_CONFIGS="single pool processes:round-robin processes:kernel"   to narrow
#   BENCH_SCENARIOS="hello-c64 ab-hello loadtest-fib25 cluster-cpu taxi-mix siege-taxi autocannon-fib40"
#   BENCH_PEERS=0          skip the Node.js peers
#   BENCH_OUT=BUILD_DIR/bench   output directory
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${BUILD_DIR:-build}
bin=$build/bin
out=${BENCH_OUT:-$build/bench}
quick=${BENCH_QUICK:-0}
cores=$(nproc)
configs=${BENCH_CONFIGS:-"single pool processes:round-robin processes:kernel"}
# autocannon-fib40 stays last: the requests it leaves unfinished keep a server busy until it stops.
scenarios=${BENCH_SCENARIOS:-"hello-c64 ab-hello loadtest-fib25 cluster-cpu taxi-mix siege-taxi autocannon-fib40"}

for tool in taxicore-server taxicore-bench taxicore-bench-charts; do
  [ -x "$bin/$tool" ] || { echo "bench-suite: $bin/$tool is missing (make bench builds it; BUILD_DIR=$build)" >&2; exit 2; }
done
mkdir -p "$out/runs"
rm -rf "$out/runs"; mkdir -p "$out/runs"; rm -f "$out"/*.png "$out/results.csv" "$out/report.md"
manifest=$out/runs/manifest.tsv
meta=$out/runs/meta.txt
: >"$manifest"
suite_started=$(date +%s)
started_pids=()

log() { echo "bench-suite [$(( $(date +%s) - suite_started ))s]: $*" >&2; }

# ---- process tree measurements ------------------------------------------------------------
tree_pids() { echo "$1"; pgrep -P "$1" 2>/dev/null || true; }
# CPU time in ns (user + system, clock-tick resolution) of the process and its children; the
# per-process figure includes threads that have exited (a per-thread sum would lose them).
tick_ns=$((1000000000 / $(getconf CLK_TCK)))
tree_cpu_ns() {
  local total=0 p v
  for p in $(tree_pids "$1"); do
    v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null)
    total=$((total + ${v:-0} * tick_ns))
  done
  echo "$total"
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# ---- servers ------------------------------------------------------------------------------
server_pid=
server_url=
start_server() { # name logfile command...
  local name=$1 logfile=$2
  shift 2
  "$@" >"$logfile" 2>&1 &
  server_pid=$!
  started_pids+=("$server_pid")
  server_url=
  for _ in $(seq 150); do
    server_url=$(awk '/^listening on/ {print $3; exit}' "$logfile")
    [ -n "$server_url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$server_url" ]; then
    log "$name did not start: $(head -c 400 "$logfile")"
    stop_server
    return 1
  fi
  sleep 2 # workers up, city loaded
  log "$name on $server_url (pid $server_pid)"
}
stop_server() {
  [ -n "$server_pid" ] || return 0
  local pid=$server_pid children
  children=$(pgrep -P "$pid" 2>/dev/null || true)
  kill -TERM "$pid" 2>/dev/null
  timeout 6 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  for c in $children; do # workers die with their primary; make sure
    kill -0 "$c" 2>/dev/null && { kill -TERM "$c" 2>/dev/null; sleep 0.5; kill -KILL "$c" 2>/dev/null; }
  done
  server_pid=
}
cleanup() {
  stop_server
  for p in "${started_pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---- one scenario -------------------------------------------------------------------------
# Quick mode: every timed stage 2 s, request-count scenarios smaller (cluster-cpu: 40 requests), autocannon-fib40 5 s.
scenario_args() { # name -> url suffix and flags
  local d=${1}
  case $d in
    hello-c64) # wrk-like keep-alive /hello (issue 3's CPU-per-request target)
      if [ "$quick" = 1 ]; then echo "/hello -c 64 -d 2s"; else echo "/hello -c 64 -d 10s"; fi ;;
    ab-hello|siege-taxi) echo " --scenario $d" ;;
    cluster-cpu)
      if [ "$quick" = 1 ]; then echo " --scenario $d -n 40"; else echo " --scenario $d"; fi ;;
    autocannon-fib40)
      if [ "$quick" = 1 ]; then echo " --scenario $d -d 5s"; else echo " --scenario $d"; fi ;;
    *) if [ "$quick" = 1 ]; then echo " --scenario $d -d 2s"; else echo " --scenario $d"; fi ;;
  esac
}

run_scenario() { # config kind scenario
  local config=$1 kind=$2 scenario=$3 args suffix tag json cpulog rc primary workers wmax w r
  args=$(scenario_args "$scenario")
  suffix=${args%% *}
  args=${args#* }
  tag="${config//[:\/]/-}_$scenario"
  json=$out/runs/$tag.json
  cpulog=$out/runs/$tag.cpu
  # Each stage line and per-second progress line samples the server's CPU: a stage's CPU is
  # from its stage line to its last progress line (its measured window, warm-up excluded).
  # shellcheck disable=SC2086
  timeout -k 5 600 "$bin/taxicore-bench" "$server_url$suffix" $args --json "$json" --progress \
      2>"$out/runs/$tag.txt" |
    while IFS= read -r line; do
      case $line in
        *'"type":"stage"}') echo "stage $(tree_cpu_ns "$server_pid")" ;;
        *'"type":"progress"}') echo "progress $(tree_cpu_ns "$server_pid")" ;;
      esac
    done >"$cpulog"
  rc=${PIPESTATUS[0]}
  primary=$(rss_kb "$server_pid")
  workers=0 wmax=0
  for w in $(pgrep -P "$server_pid" 2>/dev/null || true); do
    r=$(rss_kb "$w"); workers=$((workers + 1)); [ "${r:-0}" -gt "$wmax" ] && wmax=$r
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$config" "$kind" "$scenario" "runs/$tag.json" \
    "runs/$tag.cpu" "$primary" "$wmax" "$workers" "$rc" >>"$manifest"
  log "$config $scenario: exit $rc, $(grep -m1 -o 'Requests/sec: *[0-9.]*\|[0-9.]* req/s' "$out/runs/$tag.txt" | head -1)"
}

# ---- the run ------------------------------------------------------------------------------
{
  echo "started_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "quick=$quick"
  echo "cores=$cores"
} >"$meta"

for config in $configs; do
  mode=${config%%:*} policy=round-robin
  [[ $config == *:* ]] && policy=${config#*:}
  start_server "$config" "$out/runs/server-${config//:/-}.log" \
    "$bin/taxicore-server" --port 0 --host 127.0.0.1 --mode "$mode" --policy "$policy" \
    --workers "$cores" --threads "$cores" --cars 500 --data-dir "$out/runs/data-${config//:/-}" || continue
  for scenario in $scenarios; do run_scenario "$config" taxicore "$scenario"; done
  stop_server
done

# Node.js peers: the seed servers on the scenarios that apply to them (hello, fib, cpu).
peers_note=
if [ "${BENCH_PEERS:-1}" = 0 ]; then
  peers_note="Node.js peers skipped (BENCH_PEERS=0)."
elif ! command -v node >/dev/null; then
  peers_note="Node.js is not installed: peers skipped."
elif ! timeout -k 5 180 bench/peers/setup.sh >"$out/runs/peers-setup.log" 2>&1; then
  peers_note="bench/peers/setup.sh (npm ci) failed or timed out: peers skipped ($(tail -c 300 "$out/runs/peers-setup.log" | tr '\n' ' '))."
else
  peers_note="Node.js $(node --version) peers from bench/peers, run in the same session."
  peer_hello="hello-c64 ab-hello"
  peer_express="hello-c64 ab-hello loadtest-fib25 cluster-cpu autocannon-fib40"
  for peer in "node-http:bench/peers/hello-http.js::$peer_hello" \
              "express:bench/peers/express-app.js::$peer_express" \
              "express-cluster-$cores:bench/peers/express-app.js:--cluster $cores:$peer_express"; do
    IFS=: read -r name script extra list <<<"$peer"
    want=
    for s in $list; do [[ " $scenarios " == *" $s "* ]] && want="$want $s"; done
    [ -n "$want" ] || continue
    # shellcheck disable=SC2086
    start_server "$name" "$out/runs/server-$name.log" node "$script" --port 0 $extra || continue
    for scenario in $want; do run_scenario "$name" node "$scenario"; done
    stop_server
  done
fi

{
  echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "finished_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "duration_s=$(( $(date +%s) - suite_started ))"
  echo "peers_note=$peers_note"
} >>"$meta"

QT_QPA_PLATFORM=offscreen timeout -k 5 120 "$bin/taxicore-bench-charts" --runs "$manifest" --meta "$meta" --out "$out" ||
  { log "taxicore-bench-charts failed"; exit 1; }
log "report: $out/report.md, $out/results.csv, $out/requests-per-second.png, $out/latency.png"
