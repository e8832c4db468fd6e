#!/usr/bin/env bash
# /hello latency while 10,000 idle keep-alive connections are held open (C10K), per mode.
#
#   scripts/bench-c10k.sh [BUILD_DIR]            # default build/; needs wrk and python3
#   HOLD=10000 DURATION=10s CONNECTIONS=64 MODES="single processes" WORKERS=2 scripts/bench-c10k.sh
#   EVENT_LOOPS="qt epoll" scripts/bench-c10k.sh  # each mode once per --event-loop, in one run
#
# For each mode: start taxicore-server on a free port (idle timeout long enough to keep the held
# connections), measure /hello with wrk alone (baseline), then have a small holder open HOLD
# connections (each makes one real GET /hello and keeps its connection), measure again while they
# are held, and check the holder still has them all. Prints one table line per mode and run,
# with the server's CPU time per request (its processes' utime + stime over the wrk run).
set -euo pipefail

BUILD_DIR=${1:-build}
HOLD=${HOLD:-10000}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
MODES=${MODES:-single processes}
WORKERS=${WORKERS:-2}
EVENT_LOOPS=${EVENT_LOOPS:-default} # "default": no --event-loop flag, the server's default
SERVER="$BUILD_DIR/bin/taxicore-server"

[[ -x "$SERVER" ]] || { echo "bench-c10k: $SERVER not found (build it: cmake --build $BUILD_DIR --target taxicore-server)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "bench-c10k: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench-c10k: python3 is not installed" >&2; exit 2; }
# The holder and the server each need HOLD descriptors and some; the server raises its own limit.
ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < HOLD + 300 )); then
    echo "bench-c10k: the open-file limit is $(ulimit -n); holding $HOLD connections needs $((HOLD + 300))" >&2
    exit 2
fi

WORK=$(mktemp -d)
SERVER_PID=""
HOLDER_PID=""
cleanup() {
    [[ -n "$HOLDER_PID" ]] && kill "$HOLDER_PID" 2>/dev/null || true
    [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# The holder: non-blocking sockets on one epoll set, 256 connecting at a time; prints "held N"
# once all have had their answer, then holds them until SIGTERM.
cat >"$WORK/holder.py" <<'PY'
import os, selectors, signal, socket, sys, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
request = b"GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode()
sel = selectors.DefaultSelector()
held, started, deadline = [], 0, time.time() + 120
while len(held) < count:
    while started < count and started - len(held) < 256:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((host, port))
        sel.register(s, selectors.EVENT_WRITE, [b"", False])
        started += 1
    for key, events in sel.select(0.05):
        s, state = key.fileobj, key.data
        if not state[1]:
            error = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if error:
                sys.exit("holder: connect failed: " + os.strerror(error))
            s.send(request)
            state[1] = True
            sel.modify(s, selectors.EVENT_READ, state)
            continue
        data = s.recv(4096)
        if not data:
            sys.exit("holder: the server closed a connection before answering")
        state[0] += data
        if state[0].startswith(b"HTTP/1.1 200") and state[0].endswith(b"Hello World\n"):
            sel.unregister(s)
            held.append(s)
    if time.time() > deadline:
        sys.exit("holder: only %d of %d connections after 120 s" % (len(held), count))
print("held %d" % len(held), flush=True)
time.sleep(3600)  # until SIGTERM
PY

# CPU time (utime + stime, clock ticks) of the server and its worker processes: a figure per
# request that other load on a shared machine hardly moves, unlike req/s.
server_cpu_ticks() {
    local total=0 pid
    for pid in "$SERVER_PID" $(pgrep -P "$SERVER_PID" || true); do
        [[ -r /proc/$pid/stat ]] || continue
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

# wrk's latency distribution → "p50 p99 req/s cpu_us_per_request" (milliseconds, microseconds).
measure() {
    local before after
    before=$(server_cpu_ticks)
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$1" >"$WORK/wrk.txt"
    after=$(server_cpu_ticks)
    python3 - "$WORK/wrk.txt" "$((after - before))" "$(getconf CLK_TCK)" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(label):
    m = re.search(r"^\s*%s\s+([\d.]+)(us|ms|s)\b" % re.escape(label), text, re.M)
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
rps = re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)
requests = int(re.search(r"(\d+) requests in", text).group(1))
cpu_us = int(sys.argv[2]) * 1e6 / int(sys.argv[3]) / max(1, requests)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", text)
print("%.2f %.2f %s %.1f %s" % (ms("50%"), ms("99%"), rps, cpu_us, "errors:" + errors.group(0).replace(" ", "_") if errors else "ok"))
PY
}

printf '%-10s %-8s %-8s %8s %9s %9s %10s %11s %s\n' mode loop held held_ok p50_ms p99_ms req_per_s cpu_us_req wrk
for LOOP in $EVENT_LOOPS; do
for MODE in $MODES; do
    LOOP_ARGS=()
    [[ "$LOOP" == default ]] || LOOP_ARGS=(--event-loop "$LOOP")
    rm -rf "$WORK/data-$MODE"
    "$SERVER" --port 0 --mode "$MODE" --workers "$WORKERS" --cars 100 --idle-timeout-ms 600000 "${LOOP_ARGS[@]}" \
        --data-dir "$WORK/data-$MODE" >"$WORK/server.out" 2>"$WORK/server.err" &
    SERVER_PID=$!
    for _ in $(seq 100); do grep -q '^listening on ' "$WORK/server.out" && break; sleep 0.1; done
    URL=$(sed -n 's/^listening on //p' "$WORK/server.out" | head -1)
    [[ -n "$URL" ]] || { echo "bench-c10k: the server did not start:" >&2; cat "$WORK/server.err" >&2; exit 1; }
    PORT=${URL##*:}

    read -r P50 P99 RPS CPU NOTE < <(measure "$URL/hello")
    printf '%-10s %-8s %-8s %8s %9s %9s %10s %11s %s\n' "$MODE" "$LOOP" 0 - "$P50" "$P99" "$RPS" "$CPU" "$NOTE"

    python3 "$WORK/holder.py" 127.0.0.1 "$PORT" "$HOLD" >"$WORK/holder.out" 2>&1 &
    HOLDER_PID=$!
    until grep -qs '^held ' "$WORK/holder.out"; do
        kill -0 "$HOLDER_PID" 2>/dev/null || { echo "bench-c10k: holder failed:" >&2; cat "$WORK/holder.out" >&2; exit 1; }
        sleep 0.2
    done
    read -r P50 P99 RPS CPU NOTE < <(measure "$URL/hello")
    # Every held connection must still be open after the measurement: none may have been dropped.
    OPEN=$(ss -Htn state established "( dport = :$PORT )" | wc -l)
    printf '%-10s %-8s %-8s %8s %9s %9s %10s %11s %s\n' "$MODE" "$LOOP" "$HOLD" "$OPEN" "$P50" "$P99" "$RPS" "$CPU" "$NOTE"

    kill "$HOLDER_PID"; wait "$HOLDER_PID" 2>/dev/null || true; HOLDER_PID=""
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
done
done
