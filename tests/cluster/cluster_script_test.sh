#!/usr/bin/env bash
# cluster_script_test.sh SOURCE_DIR BUILD_DIR — the ctest test cluster_script_test
# (tests/cluster/CMakeLists.txt): scripts/cluster.sh up 2 in a state folder of its own (so it never
# meets a user's build/cluster), /hello through the printed URL answers 200, status lists 2 nodes,
# a second `up` is refused and leaves the running cluster alone, `down` leaves none of the PIDs
# alive and a second `down` is harmless. Real PostgreSQL, redis-server, nginx and taxicore-server.
set -euo pipefail

source_dir=$1
build_dir=$2
script=$source_dir/scripts/cluster.sh
export TAXICORE_BIN_DIR=$build_dir/bin
export TAXICORE_CLUSTER_TIMEOUT_S=20 # each wait of the script; the test as a whole stays < 60 s
mkdir -p "$build_dir/tests/cluster"
state=$(mktemp -d "$build_dir/tests/cluster/run.XXXXXX")
chmod 755 "$state" # as root, PostgreSQL runs as `postgres` and must reach its folder in here

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
step() { echo "--- $*"; }
pids=()
starts=() # each pid's start time: once a process is gone, the system may give its pid to another
start_time() { # PID → its start time (field 22 of /proc/PID/stat), nothing once it is gone
    local stat fields
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    read -r -a fields <<<"${stat##*) }" # the fields after the command name (which may hold spaces)
    echo "${fields[19]}"
}
still_runs() { # INDEX → whether the cluster's process pids[INDEX] (the same one, not its pid reused) runs
    local pid=${pids[$1]}
    [[ -n ${starts[$1]} && $(start_time "$pid") == "${starts[$1]}" ]] && ! grep -qs '^State:.*Z' "/proc/$pid/status"
}
cleanup() {
    "$script" down --state-dir "$state" >/dev/null 2>&1 || true
    local i
    for i in "${!pids[@]}"; do
        if still_runs "$i"; then kill -KILL "${pids[$i]}" 2>/dev/null || true; fi
    done
    rm -rf "$state"
}
trap cleanup EXIT

missing=()
command -v redis-server >/dev/null || missing+=("redis-server (apt-get install redis-server)")
[[ -x ${TAXICORE_NGINX:-/usr/sbin/nginx} ]] || command -v nginx >/dev/null || missing+=("nginx (apt-get install nginx-light)")
command -v initdb >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null ||
    missing+=("initdb (apt-get install postgresql)")
if ((${#missing[@]})); then
    if [[ -n ${TAXICORE_REQUIRE_ALL_TESTS:-} ]]; then
        echo "FAIL: missing ${missing[*]} (TAXICORE_REQUIRE_ALL_TESTS: a test may not be left out)" >&2
        exit 1
    fi
    echo "SKIP: missing ${missing[*]}"
    exit 77
fi
[[ -x $TAXICORE_BIN_DIR/taxicore-server ]] || { echo "FAIL: $TAXICORE_BIN_DIR/taxicore-server is not built" >&2; exit 1; }

http_status() { # URL-less: PORT PATH → the status code, or nothing
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
        printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3
        IFS=" " read -r _ code _ <&3 && echo "$code"
    ' "$1" "$2" 2>/dev/null || true
}

started=$SECONDS
step "up 2"
out=$("$script" up 2 --port 0 --state-dir "$state" 2>&1) || { echo "$out" >&2; fail "up 2 failed"; exit 1; }
echo "$out"
url=$(sed -n 's|^url: ||p' <<<"$out" | tail -1)
[[ $url =~ ^http://127\.0\.0\.1:([0-9]+)$ ]] || { fail "no url line in the output of up"; exit 1; }
port=${BASH_REMATCH[1]}
mapfile -t pids < <(cat "$state"/run/*.pid)
for i in "${!pids[@]}"; do starts[i]=$(start_time "${pids[$i]}"); done
((${#pids[@]} == 5)) || fail "expected 5 PID files (postgres, redis, 2 nodes, nginx), got ${#pids[@]}"

step "GET /hello through nginx"
code=$(http_status "$port" /hello)
[[ $code == 200 ]] || fail "/hello through $url answered '${code}', not 200"
# Both nodes are behind it: each answers /hello directly too.
for node in node-1 node-2; do
    node_port=$(cat "$state/run/$node.port")
    [[ $(http_status "$node_port" /hello) == 200 ]] || fail "$node on port $node_port does not answer /hello"
done

step "a booking through nginx is in the cluster's PostgreSQL"
booking=$(timeout 10 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    body="{\"rider_id\":\"script-rider\",\"pickup\":{\"lat\":57.7,\"lng\":11.97}}"
    printf "POST /api/v1/bookings HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s" "${#body}" "$body" >&3
    IFS=" " read -r _ code _ <&3 && echo "$code"
' "$port" 2>/dev/null || true)
[[ $booking == 201 ]] || fail "POST /api/v1/bookings through $url answered '${booking}', not 201"
psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1)
stored=$(timeout 10 "$psql" -h 127.0.0.1 -p "$(cat "$state/run/postgres.port")" -U taxicore -d taxicore -tAc \
    "SELECT count(*) FROM bookings WHERE rider_id = 'script-rider'" 2>&1 || true)
[[ $stored == 1 ]] || fail "the booking is not in the cluster's PostgreSQL (psql said: $stored)"

step "status"
status=$("$script" status --state-dir "$state")
echo "$status"
nodes=$(grep -cE '^node-[0-9]+ +[0-9]+ +[0-9]+ +HTTP/1\.[01] 200' <<<"$status" || true)
[[ $nodes == 2 ]] || fail "status lists $nodes healthy nodes, not 2"
grep -q "^url: $url\$" <<<"$status" || fail "status does not give the URL $url"

step "a second up is refused and leaves the cluster running"
if again=$("$script" up 2 --port 0 --state-dir "$state" 2>&1); then
    fail "a second up succeeded: $again"
fi
grep -q "already runs" <<<"$again" || fail "the refusal does not say a cluster runs: $again"
for i in "${!pids[@]}"; do still_runs "$i" || fail "pid ${pids[$i]} died after the refused up"; done
[[ $(http_status "$port" /hello) == 200 ]] || fail "/hello no longer answers after the refused up"

step "down"
"$script" down --state-dir "$state"
for i in "${!pids[@]}"; do
    if still_runs "$i"; then fail "pid ${pids[$i]} is still alive after down"; fi
done
[[ -z $(http_status "$port" /hello) ]] || fail "something still answers on $url after down"
step "down again (idempotent)"
"$script" down --state-dir "$state" || fail "a second down failed"
"$script" status --state-dir "$state" | grep -q "nothing running" || fail "status after down does not say nothing runs"

elapsed=$((SECONDS - started))
echo "took ${elapsed} s"
((elapsed < 60)) || fail "the test took ${elapsed} s (must stay under 60)"
if ((failures)); then
    echo "$failures failed"
    exit 1
fi
echo "cluster_script_test: all checks passed"
