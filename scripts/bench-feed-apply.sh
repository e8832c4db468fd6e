#!/usr/bin/env bash
# Benchmark (not a test): what a cluster node spends applying the other nodes' changes (the Redis
# feed, server/cluster/ClusterFleet::apply), old vs new server binary, in one run on one feed.
# scripts/cluster.sh starts PostgreSQL, Redis and one leading node (--cars CARS, no demand: its
# simulator moves every car five times a second); then two observer nodes, OLD and NEW, subscribe
# to the same feed under callgrind for SECONDS and are stopped. Printed per binary: the messages
# it applied, instructions (Ir) per message of ClusterFleet::apply (decoding included) and of the
# decoding alone (decodeFleetMessage), and the node's whole Ir over the run (start-up included).
# Instruction counts do not depend on how loaded the machine is; both observers read the same
# messages, so the counts per message compare.
#
# Usage: scripts/bench-feed-apply.sh [--cars N] [--seconds S] OLD_SERVER_BIN [NEW_SERVER_BIN]
#   --cars N      cars of the fleet (default 2000)
#   --seconds S   how long the observers run under callgrind (default 60)
#   NEW_SERVER_BIN default build/bin/taxicore-server
#   KEEP=1 keeps the callgrind files (their directory is printed).
set -euo pipefail
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."

cars=2000
seconds=60
while [ $# -gt 0 ]; do
  case $1 in
    --cars) cars=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "bench-feed-apply: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
old=${1:?"bench-feed-apply: OLD_SERVER_BIN is missing (see --help)"}
new=${2:-build/bin/taxicore-server}
for tool in valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "bench-feed-apply: $tool is missing (apt-get install valgrind)" >&2; exit 1; }
done
for bin in "$old" "$new"; do
  [ -x "$bin" ] || { echo "bench-feed-apply: $bin is not an executable" >&2; exit 1; }
done

state=$(mktemp -d "${TMPDIR:-/tmp}/taxicore-bench-feed.XXXXXX")
observers=()
cleanup() {
  local pid
  for pid in "${observers[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  scripts/cluster.sh down --state-dir "$state/cluster" >/dev/null 2>&1 || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept: $state"; else rm -rf "$state"; fi
}
trap cleanup EXIT

timeout 180 scripts/cluster.sh up 1 --port 0 --state-dir "$state/cluster" -- --cars "$cars" --demand-rate 0 >/dev/null
ledger="postgresql://taxicore@127.0.0.1:$(cat "$state/cluster/run/postgres.port")/taxicore"
fleet="redis://127.0.0.1:$(cat "$state/cluster/run/redis.port")"

for label in old new; do
  bin=$old
  [ "$label" = new ] && bin=$new
  # SIGINT after the run: callgrind writes its file as the server shuts down.
  timeout -s INT "$seconds" valgrind --tool=callgrind --callgrind-out-file="$state/$label.cg" "$bin" --port 0 \
    --data-dir "$state/$label" --ledger "$ledger" --fleet "$fleet" --cars "$cars" --demand-rate 0 \
    >"$state/$label.log" 2>&1 &
  observers+=($!)
done
for pid in "${observers[@]}"; do wait "$pid" || true; done
observers=()

# A function's inclusive Ir (its line in the function list), and how often it was called (the
# "=> ... (Nx)" lines under its callers' source; decodeFleetMessage's caller is apply, one call each).
inclusive() { # file function
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v fn="$2" '!index($0, "=>") && index($0, fn) && $2 ~ /^\(/ && !found { gsub(",", "", $1); print $1; found = 1 }'
}
calls() { # file function
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v fn="$2" '
    index($0, "=>") && index($0, fn) { n = $0; sub(/.*\(/, "", n); sub(/x\).*/, "", n); gsub(",", "", n); calls += n }
    END { print calls + 0 }'
}
echo "# Feed apply: 1 leading node, $cars cars, two observers under callgrind for ${seconds} s; $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| binary | messages applied | Ir per message, apply | Ir per message, decoding | node Ir over the run |"
echo "|---|---|---|---|---|"
for label in old new; do
  file=$state/$label.cg
  [ -s "$file" ] || { echo "bench-feed-apply: no callgrind file for $label (see $state/$label.log)" >&2; KEEP=1; exit 1; }
  applied=$(calls "$file" "decodeFleetMessage(QByteArray const&)")
  apply_ir=$(inclusive "$file" "ClusterFleet::apply(QByteArray const&)")
  decode_ir=$(inclusive "$file" "decodeFleetMessage(QByteArray const&)")
  total=$(callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ && !found {gsub(",", "", $1); print $1; found = 1}')
  [ "$applied" -gt 0 ] || { echo "bench-feed-apply: $label applied no message (see $state/$label.log)" >&2; KEEP=1; exit 1; }
  bin=$old
  [ "$label" = new ] && bin=$new
  printf '| %s (%s) | %d | %d | %d | %d |\n' "$label" "$bin" "$applied" $((apply_ir / applied)) \
    $((decode_ir / applied)) "$total"
done
