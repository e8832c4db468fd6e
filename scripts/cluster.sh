#!/usr/bin/env bash
# A TaxiCore cluster on one machine with one command (issue 17; docs/cluster.md):
#   scripts/cluster.sh up N [--port P] [--state-dir DIR] [-- NODE-FLAGS...]
#   scripts/cluster.sh down [--state-dir DIR]
#   scripts/cluster.sh status [--state-dir DIR]
# `up` starts PostgreSQL (initdb in the state folder), redis-server, N taxicore-server nodes on free
# loopback ports (each with its own --data-dir, and --trusted-proxy 127.0.0.1/32) and nginx in
# front on port P (default 8080; 0 = a free one), all as this user's own processes (as root,
# PostgreSQL runs as the `postgres` system user: it refuses root), waits for each to answer and
# prints the URL. A second `up` while one runs is refused. `down` stops everything by PID (SIGTERM,
# then SIGKILL after a timeout) and is idempotent. `status` lists the processes, ports and health.
# State (PID files, ports, logs, data) is in DIR: --state-dir, else $TAXICORE_CLUSTER_DIR, else
# build/cluster. The nodes are build/bin/taxicore-server ($TAXICORE_BIN_DIR overrides build/bin).
# No wait is unbounded: $TAXICORE_CLUSTER_TIMEOUT_S (default 30) per service.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
timeout_s=${TAXICORE_CLUSTER_TIMEOUT_S:-30}
stop_grace_s=${TAXICORE_CLUSTER_STOP_GRACE_S:-10} # SIGTERM → SIGKILL
max_nodes=16
state=${TAXICORE_CLUSTER_DIR:-$root/build/cluster}
bin_dir=${TAXICORE_BIN_DIR:-$root/build/bin}
nginx_template=$root/deploy/nginx/taxicore.conf.in

die() {
    echo "cluster.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# --- small tools ------------------------------------------------------------------------------

# A loopback port nothing listens on (checked by connecting; the kernel's range is avoided).
free_port() {
    local port tries
    for tries in $(seq 1 200); do
        port=$((20000 + RANDOM % 12000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    die "no free loopback port found"
}

# The status line of GET PATH on 127.0.0.1:PORT ("HTTP/1.1 200 OK"), empty when no answer in 2 s.
http_status_line() {
    local port=$1 path=$2
    timeout 2 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
        printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3
        IFS= read -r line <&3 && printf "%s\n" "${line%$'"'"'\r'"'"'}"
    ' "$port" "$path" 2>/dev/null || true
}

# Waits until COMMAND... succeeds, at most $timeout_s, while process PID lives; false on timeout
# or when PID ended (a program that failed at start is not waited for).
wait_for() {
    local pid=$1 deadline=$((SECONDS + timeout_s))
    shift
    until "$@"; do
        ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
}

alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null && ! grep -qs '^State:.*Z' "/proc/$1/status"; }

# The PID recorded for NAME when that process still runs the expected program (a PID file left
# by a crash may name a PID the system gave to something else since: that one is never signalled).
live_pid() {
    local name=$1 pid
    pid=$(cat "$state/run/$name.pid" 2>/dev/null) || return 1
    alive "$pid" || return 1
    local want
    want=$(cat "$state/run/$name.exe" 2>/dev/null) || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$want" || return 1
    echo "$pid"
}

record() { # NAME PID PORT PROGRAM-PATTERN
    echo "$2" >"$state/run/$1.pid"
    echo "$3" >"$state/run/$1.port"
    echo "$4" >"$state/run/$1.exe"
}

stop_one() {
    local name=$1 pid
    if pid=$(live_pid "$name"); then
        kill -TERM "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + stop_grace_s))
        while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
        if alive "$pid"; then
            echo "cluster.sh: $name (pid $pid) did not stop in ${stop_grace_s} s: SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
            wait_for_exit "$pid"
        fi
        echo "stopped $name (pid $pid)"
    fi
    rm -f "$state/run/$name.pid" "$state/run/$name.port" "$state/run/$name.exe"
}

wait_for_exit() {
    local deadline=$((SECONDS + stop_grace_s))
    while alive "$1" && ((SECONDS < deadline)); do sleep 0.1; done
}

node_names() {
    local f
    for f in "$state"/run/node-*.pid; do
        [[ -e $f ]] && basename "$f" .pid
    done | sort -t- -k2 -n
}

# --- PostgreSQL -------------------------------------------------------------------------------

pg_bin() {
    local dir
    # The folder of the real initdb (PATH may hold only symlinks to some of the programs).
    if command -v initdb >/dev/null; then
        dir=$(dirname "$(readlink -f "$(command -v initdb)")")
        [[ -x $dir/postgres && -x $dir/psql && -x $dir/createdb ]] && {
            echo "$dir"
            return 0
        }
    fi
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [[ -x $dir/initdb && -x $dir/postgres && -x $dir/psql && -x $dir/createdb ]] && {
            echo "$dir"
            return 0
        }
    done
    return 1
}

# Runs a PostgreSQL program as the user that owns the data: `postgres` when we are root.
as_pg() {
    if ((EUID == 0)); then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start_postgres() {
    local bin port data
    bin=$(pg_bin) || die "PostgreSQL not found in PATH or /usr/lib/postgresql/*/bin (apt-get install postgresql, or scripts/install-deps.sh)"
    port=$(free_port)
    data=$state/postgres
    if ((EUID == 0)); then
        id postgres >/dev/null 2>&1 || die "running as root needs the postgres system user (apt-get install postgresql)"
        mkdir -p "$data"
        # The postgres user must reach the folder: a tree under a mode-700 home (/root/...) it
        # cannot, so the data then goes to a private folder under /tmp instead.
        if ! chown postgres: "$data" 2>/dev/null || ! runuser -u postgres -- test -w "$data"; then
            data=$(mktemp -d /tmp/taxicore-cluster-pg.XXXXXX)
            chown postgres: "$data"
            echo "cluster.sh: postgres cannot reach $state; its data is in $data instead"
        fi
    fi
    echo "$data" >"$state/run/postgres.data"
    if [[ ! -s $data/PG_VERSION ]]; then
        as_pg "$bin/initdb" -D "$data" -U taxicore --auth=trust --encoding=UTF8 --no-instructions \
            >"$state/logs/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$state/logs/initdb.log")"
    fi
    rm -f "$data/postmaster.pid"
    # TCP on loopback only, no Unix socket (its default folder is root's), its own port. The tcp_*
    # settings end a silent node's session (a partition) within seconds, so the leader lock moves:
    # the values server/cluster/LeaderLease.h requires (docs/cluster.md, "Partitions").
    as_pg "$bin/postgres" -D "$data" -p "$port" -c listen_addresses=127.0.0.1 -c unix_socket_directories= \
        -c logging_collector=off -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=1 \
        -c tcp_keepalives_count=3 -c tcp_user_timeout=6000 >>"$state/logs/postgres.log" 2>&1 &
    local starter=$!
    # The postmaster writes its PID and, once it accepts connections, "ready" into postmaster.pid
    # (as root, $! is runuser's PID, which ends when postgres does; the postmaster's is the one kept).
    pg_ready() { [[ -r $data/postmaster.pid ]] && sed -n 8p "$data/postmaster.pid" | grep -q ready; }
    wait_for "$starter" pg_ready || die "PostgreSQL did not get ready (it exited, or ${timeout_s} s passed): $(tail -5 "$state/logs/postgres.log")"
    record postgres "$(head -1 "$data/postmaster.pid")" "$port" postgres
    if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U taxicore -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'taxicore'" 2>/dev/null | grep -q 1; then
        as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U taxicore taxicore >>"$state/logs/postgres.log" 2>&1 ||
            die "createdb taxicore failed: $(tail -5 "$state/logs/postgres.log")"
    fi
    echo "postgres    pid $(live_pid postgres)  postgresql://taxicore@127.0.0.1:$port/taxicore"
}

# --- Redis ------------------------------------------------------------------------------------

redis_pong() {
    timeout 2 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
        printf "PING\r\n" >&3
        IFS= read -r line <&3 && [[ $line == +PONG* ]]
    ' "$1" 2>/dev/null
}

start_redis() {
    local program port
    program=$(command -v redis-server || true)
    [[ -n $program ]] || die "redis-server not found (apt-get install redis-server, or scripts/install-deps.sh)"
    port=$(free_port)
    mkdir -p "$state/redis"
    "$program" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
        --dir "$state/redis" >>"$state/logs/redis.log" 2>&1 &
    record redis $! "$port" redis-server
    wait_for "$(cat "$state/run/redis.pid")" redis_pong "$port" || die "redis-server did not answer PING (it exited, or ${timeout_s} s passed): $(tail -5 "$state/logs/redis.log")"
    echo "redis       pid $(live_pid redis)  redis://127.0.0.1:$port"
}

# --- nodes ------------------------------------------------------------------------------------

node_listening() { grep -qs '^listening on ' "$1"; }

start_node() {
    local i=$1 server=$bin_dir/taxicore-server log=$state/logs/node-$i.log port
    shift
    : >"$log"
    "$server" --port 0 --data-dir "$state/node-$i" --trusted-proxy 127.0.0.1/32 "$@" >"$log" 2>&1 &
    local pid=$!
    record "node-$i" "$pid" 0 taxicore-server
    wait_for "$pid" node_listening "$log" || die "node $i did not start (it exited, or ${timeout_s} s passed): $(tail -5 "$log")"
    port=$(sed -n 's|^listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)
    record "node-$i" "$pid" "$port" taxicore-server
    echo "node-$i      pid $pid  http://127.0.0.1:$port"
}

# --- nginx ------------------------------------------------------------------------------------

start_nginx() {
    local port=$1 program prefix=$state/nginx servers="" name
    program=${TAXICORE_NGINX:-}
    [[ -n $program ]] || program=$( [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx || command -v nginx || true)
    [[ -n $program ]] || die "nginx not found (apt-get install nginx-light, or scripts/install-deps.sh)"
    if [[ $port == 0 ]]; then
        port=$(free_port)
    elif (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        die "port $port is in use: pass --port P (0 picks a free one)"
    fi
    mkdir -p "$prefix/logs" "$prefix/temp"
    for name in $(node_names); do
        servers+="        server 127.0.0.1:$(cat "$state/run/$name.port") max_fails=1 fail_timeout=5s;"$'\n'
    done
    local conf
    conf=$(<"$nginx_template")
    conf=${conf//@LISTEN@/127.0.0.1:$port}
    conf=${conf//@UPSTREAM_SERVERS@/${servers%$'\n'}}
    printf '%s\n' "$conf" >"$prefix/taxicore.conf"
    "$program" -p "$prefix" -c "$prefix/taxicore.conf" -e "$prefix/logs/error.log" \
        >>"$state/logs/nginx.log" 2>&1 &
    record nginx $! "$port" nginx
    nginx_answers() { [[ -n $(http_status_line "$port" /hello) ]]; }
    wait_for "$(cat "$state/run/nginx.pid")" nginx_answers || die "nginx did not answer on port $port (it exited, or ${timeout_s} s passed): $(tail -5 "$prefix/logs/error.log" 2>/dev/null)"
    echo "nginx       pid $(live_pid nginx)  http://127.0.0.1:$port"
}

# --- verbs ------------------------------------------------------------------------------------

cmd_down() {
    local name any=0
    [[ -d $state/run ]] || {
        echo "nothing running (no $state/run)"
        return 0
    }
    for name in nginx $(node_names) redis postgres; do
        [[ -e $state/run/$name.pid ]] || continue
        any=1
        stop_one "$name"
    done
    local data
    data=$(cat "$state/run/postgres.data" 2>/dev/null || true)
    if [[ $data == /tmp/taxicore-cluster-pg.* ]]; then
        rm -rf "$data" # the throwaway fallback folder, not the state folder's data
    fi
    rm -f "$state/run/postgres.data"
    ((any)) || echo "nothing running"
}

cmd_status() {
    local name pid port health running=0
    printf '%-10s %-8s %-6s %s\n' NAME PID PORT HEALTH
    for name in postgres redis $(node_names) nginx; do
        [[ -e $state/run/$name.pid ]] || continue
        port=$(cat "$state/run/$name.port" 2>/dev/null || echo -)
        if pid=$(live_pid "$name"); then
            running=$((running + 1))
            case $name in
            node-* | nginx) health=$(http_status_line "$port" /healthz) ;;
            redis) redis_pong "$port" && health=PONG || health="no answer" ;;
            postgres) health=$(sed -n 8p "$(cat "$state/run/postgres.data")/postmaster.pid" 2>/dev/null | tr -d ' ') ;;
            esac
        else
            pid=$(cat "$state/run/$name.pid")
            health="not running"
        fi
        printf '%-10s %-8s %-6s %s\n' "$name" "$pid" "$port" "${health:-no answer}"
    done
    if [[ -e $state/run/nginx.port ]]; then
        echo "url: http://127.0.0.1:$(cat "$state/run/nginx.port")"
    fi
    ((running > 0)) || echo "nothing running"
}

cmd_up() {
    local count=$1 port=$2
    shift 2
    [[ $count =~ ^[0-9]+$ ]] && ((count >= 1 && count <= max_nodes)) || die "up N: N must be 1 to $max_nodes, not \"$count\""
    [[ $port =~ ^[0-9]+$ ]] && ((port <= 65535)) || die "--port must be 0 to 65535, not \"$port\""
    [[ -x $bin_dir/taxicore-server ]] || die "$bin_dir/taxicore-server not found: build first (make, or cmake --build --preset default)"
    local name
    for name in postgres redis nginx $(node_names); do
        if live_pid "$name" >/dev/null; then
            die "a cluster already runs in $state ($name is up): scripts/cluster.sh status, or down first"
        fi
    done
    rm -rf "$state/run"
    mkdir -p "$state/run" "$state/logs"
    # Anything that fails from here stops what was started.
    trap 'echo "cluster.sh: up failed; stopping what started" >&2; cmd_down >/dev/null 2>&1 || true' EXIT
    start_postgres
    start_redis
    # One truth (PostgreSQL: bookings, the car claims, booking ids, the leader lock) and one feed
    # (Redis) for every node; each keeps its copy of the fleet in its own shared memory.
    local node_flags=(--ledger "postgresql://taxicore@127.0.0.1:$(cat "$state/run/postgres.port")/taxicore"
                      --fleet "redis://127.0.0.1:$(cat "$state/run/redis.port")")
    local i
    for ((i = 1; i <= count; i++)); do
        start_node "$i" "${node_flags[@]}" "$@"
    done
    start_nginx "$port"
    trap - EXIT
    echo "nodes: ledger in PostgreSQL, fleet feed in Redis"
    echo "state: $state"
    echo "url: http://127.0.0.1:$(cat "$state/run/nginx.port")"
}

main() {
    local verb=${1:-}
    [[ -n $verb ]] || usage
    shift
    local count="" port=8080 extra=()
    if [[ $verb == up ]]; then
        count=${1:-}
        [[ -n $count ]] || usage
        shift
    fi
    while (($#)); do
        case $1 in
        --port)
            port=${2:-}
            shift 2 || usage
            ;;
        --state-dir)
            state=${2:-}
            shift 2 || usage
            ;;
        --)
            shift
            extra=("$@")
            break
            ;;
        *) usage ;;
        esac
    done
    [[ $state == /* ]] || state=$PWD/$state
    case $verb in
    up) cmd_up "$count" "$port" "${extra[@]}" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *) usage ;;
    esac
}

main "$@"
