#!/bin/sh
# Makes the README's screenshot of the console: usage
#   scripts/screenshot-readme.sh [BUILD_DIR] [OUT_PNG]        (defaults: build, docs/console.png)
#
# Whoever lands the last change to what the console shows (qml/, app/) runs this again and
# commits docs/console.png with it, so the README never shows an old console.
#
# It starts BUILD_DIR/bin/taxicore under xvfb-run in a real X window (Mesa's OpenGL: under Qt
# Quick's software backend the map draws nothing, see tests/console/CMakeLists.txt), with fresh
# settings and a fresh data directory, riders booking (--demand-rate) and a little HTTP traffic
# for the request counter; the console saves its own window (--screenshot) as it quits
# (--quit-after-ms). scripts/png-shrink.py then rewrites the PNG losslessly smaller. The console
# and the server in it are stopped by PID whatever happens. Needs xvfb-run, curl and python3.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/docs/console.png}

# The console's window is 1280×800 (qml/Main.qml): the screen is that size, so nothing is cut.
SCREEN=${SCREEN:-1280x800x24}
# Long enough for the map, bookings in every state and some seconds of request-rate history.
SHOT_AFTER_MS=${SHOT_AFTER_MS:-40000}
START_TIMEOUT_S=${START_TIMEOUT_S:-30}
EXIT_TIMEOUT_S=${EXIT_TIMEOUT_S:-30}
# The README stays light to load: a bigger PNG is an error (raise it here, with a reason).
MAX_PNG_BYTES=${MAX_PNG_BYTES:-409600}

for tool in xvfb-run curl python3; do
  command -v "$tool" >/dev/null || { echo "screenshot-readme: $tool is missing (apt-get install xvfb xauth curl python3)"; exit 1; }
done
console_bin=$build/bin/taxicore
[ -x "$console_bin" ] || { echo "screenshot-readme: $console_bin not built (make build)"; exit 1; }

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    sleep 2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# Qt's own window platform (xcb) and scene graph: the variables a test shell may set are dropped.
env -u QT_QPA_PLATFORM -u QT_QUICK_BACKEND XDG_CONFIG_HOME="$tmp/config" \
  xvfb-run -a -s "-screen 0 $SCREEN" "$console_bin" --host 127.0.0.1 --port 0 --data-dir "$tmp/data" \
  --demand-rate 60 --sim-speed 8 --panel bookings \
  --quit-after-ms "$SHOT_AFTER_MS" --screenshot "$tmp/console.png" >"$tmp/console.log" 2>&1 &
pid=$!

i=0
while ! grep -q '^listening on http' "$tmp/console.log" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null || [ $i -ge $((START_TIMEOUT_S * 10)) ]; then
    echo "screenshot-readme: the console did not start:"; cat "$tmp/console.log"; exit 1
  fi
  sleep 0.1; i=$((i + 1))
done
url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/console.log" | head -n 1)
echo "screenshot-readme: console at $url, screenshot in $((SHOT_AFTER_MS / 1000)) s"

# Requests for the top bar's rate: a rider page's worth of calls, a few per second.
while kill -0 "$pid" 2>/dev/null; do
  curl -s -o /dev/null --max-time 2 "$url/hello" || true
  curl -s -o /dev/null --max-time 2 "$url/api/v1/cars/nearby?lat=57.7075&lng=11.9675&radius_m=2000" || true
  sleep 0.2
done
wait "$pid" || { echo "screenshot-readme: the console failed:"; cat "$tmp/console.log"; exit 1; }
pid=""
[ -s "$tmp/console.png" ] || { echo "screenshot-readme: no screenshot was saved:"; cat "$tmp/console.log"; exit 1; }

mkdir -p "$(dirname "$out")"
python3 "$root/scripts/png-shrink.py" "$tmp/console.png" "$out"
size=$(wc -c <"$out")
if [ "$size" -gt "$MAX_PNG_BYTES" ]; then
  echo "screenshot-readme: $out is $size bytes, more than $MAX_PNG_BYTES"; exit 1
fi
echo "screenshot-readme: wrote $out ($size bytes)"
