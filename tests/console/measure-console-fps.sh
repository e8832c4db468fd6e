#!/bin/bash
# Measures the console's map under Xvfb (Mesa llvmpipe), not a test:
#   tests/console/measure-console-fps.sh [BIN_DIR=build/bin] [CARS=10000] [SECONDS=20]
# Prints the CPU of each busy thread of taxicore and of its X server (% of one core), and its
# frames per second with the GUI thread's CPU time per second (from --report-fps).
set -euo pipefail
BIN=${1:-build/bin}; CARS=${2:-10000}; SECS=${3:-20}
OUT=$(mktemp); CONF=$(mktemp -d)  # private settings and data directory (ledger, lock)
XDG_CONFIG_HOME=$CONF XDG_DATA_HOME=$CONF/data timeout $((SECS + 40)) xvfb-run -a -s "-screen 0 1280x800x24" \
  "$BIN/taxicore" --port 0 --cars "$CARS" --report-fps --quit-after-ms $(((SECS + 6) * 1000)) >"$OUT" 2>/dev/null &
RUNNER=$!
PID=""
for _ in $(seq 100); do  # our taxicore: the one with our private settings folder
  for p in $(pgrep -x taxicore || true); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "XDG_CONFIG_HOME=$CONF"; then PID=$p; fi
  done
  [ -n "$PID" ] && break; sleep 0.1
done
[ -n "$PID" ] || { echo "taxicore did not start"; exit 1; }
sleep 5
# The X server taxicore draws to: every frame is copied into it (glXSwapBuffers under llvmpipe).
DISPLAY_NO=$(tr '\0' '\n' <"/proc/$PID/environ" | sed -n 's/^DISPLAY=//p')
XPID=$(pgrep -f "^Xvfb $DISPLAY_NO " | head -n 1 || true)
snap() {
  for t in /proc/$PID/task/*; do echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $14+$15}' "$t/stat")"; done
  [ -n "$XPID" ] && echo "x Xvfb_(X_server) $(awk '{print $14+$15}' "/proc/$XPID/stat")"
} 2>/dev/null
snap | sort >"$OUT.a"; sleep "$SECS"; snap | sort >"$OUT.b"
echo "threads of taxicore (pid $PID) and its X server over ${SECS}s, % of one core (load $(cut -d' ' -f1 /proc/loadavg)):"
join "$OUT.a" "$OUT.b" | awk -v s="$SECS" -v hz="$(getconf CLK_TCK)" \
  '{d=($5-$3)/hz/s*100; if (d>0.5) printf "  %-18s %5.1f%%\n",$2,d}'
wait $RUNNER || true
grep '^fps' "$OUT" | tail -n +3 | head -n "$SECS" |
  awk '{f+=$2; g+=$4; n++; if (min==""||$2<min) min=$2; if ($2>max) max=$2}
       END {if (n) printf "fps mean %.1f (min %d, max %d); GUI thread %.1f ms CPU per second\n", f/n, min, max, g/n}'
rm -rf "$OUT" "$OUT.a" "$OUT.b" "$CONF"
