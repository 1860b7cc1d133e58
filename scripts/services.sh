#!/usr/bin/env bash
# Make sure the servers the tests talk to are up: PostgreSQL on 127.0.0.1:5432 and Redis on
# 127.0.0.1:6379 (this machine kind runs both from Debian's packages). Starts whichever is down
# with the machine's own commands, then waits for it; fails loudly if one cannot be reached.
set -euo pipefail

up() {  # host port
    python3 - "$1" "$2" <<'PY'
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()
except OSError:
    sys.exit(1)
PY
}

wait_for() {  # name host port
    for _ in $(seq 1 30); do
        if up "$2" "$3"; then echo "services: $1 is up on $2:$3"; return 0; fi
        sleep 1
    done
    echo "services: $1 is not reachable on $2:$3" >&2
    return 1
}

if ! up 127.0.0.1 5432; then
    echo "services: starting PostgreSQL"
    if command -v pg_ctlcluster >/dev/null && command -v pg_lsclusters >/dev/null; then
        pg_lsclusters --no-header | while read -r ver name _; do
            pg_ctlcluster "$ver" "$name" start || true
        done
    else
        service postgresql start || true
    fi
fi
wait_for PostgreSQL 127.0.0.1 5432

if ! up 127.0.0.1 6379; then
    echo "services: starting Redis"
    service redis-server start || redis-server --daemonize yes --save '' --appendonly no || true
fi
wait_for Redis 127.0.0.1 6379
