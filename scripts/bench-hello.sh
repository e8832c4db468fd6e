#!/usr/bin/env bash
# Benchmark (not a test): server CPU time per GET /hello, TaxiCore's modes against nginx, in one run
# (issue 18: single ≤ 1.2× nginx, processes/single ≤ 1.1×, pool/single ≤ 1.5×). All servers run at
# once; rounds alternate between them, so a shared machine's load falls on each alike. Per round and
# server: a 1 s warm-up, then `wrk -tT -c64 -dSECONDSs` (T: --wrk-threads, default 1), and the
# utime+stime (/proc/PID/stat fields 14+15) of the server's processes (the primary, its workers;
# nginx's master and worker) over the run, divided by the requests wrk counted. Prints the median of the rounds and ratios.
#
# Usage: scripts/bench-hello.sh [--rounds N] [--seconds S] [--path P] [--wrk-threads T] [SERVER_BIN]   (default build/bin/taxicore-server)
#   --path P  another path than /hello (e.g. "/fib?n=1": a handler pool mode runs on a pool thread,
#             so pool/single is the cost of the hand-off); nginx serves only /hello and is left out
#   --wrk-threads T  wrk's threads (default 1). One thread cannot keep two worker processes busy
#             on a 2-core machine: each wakes for a few requests at a time, and processes/single
#             then measures those wake-ups (docs/benchmarks.md §20); 2 loads them as a client
#             fleet would.
#   TAXICORE_BENCH_HELLO="nginx single pool processes" narrows the servers.
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."
. "$(dirname "$self")/reference-nginx.sh"
rounds=3
seconds=5
path=/hello
wrk_threads=1
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --path) path=$2; shift 2 ;;
    --wrk-threads) wrk_threads=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "bench-hello: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
bin=${1:-build/bin/taxicore-server}
[[ $wrk_threads =~ ^[1-9][0-9]?$ ]] || { echo "bench-hello: --wrk-threads wants 1 to 99, not '$wrk_threads'" >&2; exit 2; }
servers=${TAXICORE_BENCH_HELLO:-"nginx single pool processes"}
[ "$path" = /hello ] || servers=$(tr ' ' '\n' <<<"$servers" | grep -vx nginx | tr '\n' ' ' | sed 's/ $//')
start_timeout_s=30
for tool in wrk nginx; do
  command -v "$tool" >/dev/null || { echo "bench-hello: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "bench-hello: $bin is not an executable" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-hello.XXXXXX") # not taxicore-*: test sweeps remove those
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do timeout 15 tail --pid="$p" -f /dev/null 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tree_ticks() { # pid: utime+stime of it and its children
  local t=0 p
  for p in "$1" $(pgrep -P "$1" || true); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

declare -A url pid
start_nginx() {
  local port; port=$(free_port)
  reference_nginx_conf "$work/nginx" "$port"
  nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
  pid[nginx]=$!; pids+=("$!")
  url[nginx]=http://127.0.0.1:$port
  for _ in $(seq $((start_timeout_s * 10))); do
    curl -sf "${url[nginx]}/hello" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench-hello: nginx did not start: $(cat "$work/nginx/logs/error.log")" >&2; exit 1
}
start_taxicore() { # name mode
  local name=$1 mode=$2 log=$work/$1.log
  mkdir -p "$work/$name-data"
  "$bin" --port 0 --mode "$mode" --workers 2 --threads 2 --cars 500 --data-dir "$work/$name-data" >"$log" 2>&1 &
  pid[$name]=$!; pids+=("$!")
  for _ in $(seq $((start_timeout_s * 10))); do
    url[$name]=$(awk '/^listening on/ {print $3; exit}' "$log")
    [ -n "${url[$name]}" ] && break
    sleep 0.1
  done
  [ -n "${url[$name]}" ] || { echo "bench-hello: $name did not start: $(tail -3 "$log")" >&2; exit 1; }
}
for s in $servers; do
  case $s in
    nginx) start_nginx ;;
    single|pool|processes) start_taxicore "$s" "$s" ;;
    *) echo "bench-hello: unknown server $s" >&2; exit 2 ;;
  esac
done
sleep 2 # workers up

: >"$work/results"
for round in $(seq "$rounds"); do
  for s in $servers; do
    timeout 20 wrk -t"$wrk_threads" -c64 -d1s "${url[$s]}$path" >/dev/null || true
    before=$(tree_ticks "${pid[$s]}")
    timeout $((seconds + 30)) wrk -t"$wrk_threads" -c64 -d"${seconds}s" "${url[$s]}$path" >"$work/wrk.txt"
    after=$(tree_ticks "${pid[$s]}")
    awk -v s="$s" -v r="$round" -v cpu=$((after - before)) -v hz="$ticks" '
      /requests in/ {req = $1} /Requests\/sec/ {rps = $2}
      END {printf "%s %s %.2f %.0f\n", s, r, cpu / hz * 1e6 / req, rps}' "$work/wrk.txt" >>"$work/results"
  done
done

echo "# GET $path: server CPU µs per request (wrk -t$wrk_threads -c64 -d${seconds}s, $rounds rounds alternated)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); taxicore: $bin (--cars 500, --workers 2, --threads 2); $(nginx -v 2>&1 | sed 's/.*: //') worker_processes 1"
echo
echo "| server | µs per request, each round | median | req/s (median round) | vs nginx | vs single |"
echo "|---|---|---|---|---|---|"
awk -v order="$servers" '
  { us[$1] = us[$1] (us[$1] == "" ? "" : " ") $3; n[$1]++; v[$1, n[$1]] = $3; r[$1, n[$1]] = $4 }
  function median(s,   i, j, t, a, k) {
    k = n[s]; for (i = 1; i <= k; i++) a[i] = v[s, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  function rps(s,   i, m) { m = median(s); for (i = 1; i <= n[s]; i++) if (v[s, i] == m) return r[s, i]; return "-" }
  END {
    split(order, names, " ")
    for (i = 1; names[i] != ""; i++) med[names[i]] = median(names[i])
    for (i = 1; names[i] != ""; i++) {
      s = names[i]
      printf "| %s | %s | %.1f | %s | %s | %s |\n", s, us[s], med[s], rps(s),
        ("nginx" in med && s != "nginx") ? sprintf("%.2f×", med[s] / med["nginx"]) : "",
        ("single" in med && s != "single" && s != "nginx") ? sprintf("%.2f×", med[s] / med["single"]) : ""
    }
  }' "$work/results"
echo
echo "Command: scripts/bench-hello.sh --rounds $rounds --seconds $seconds --path '$path' --wrk-threads $wrk_threads $bin"
