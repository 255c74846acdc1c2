#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster and IMPRINT_TEST_POSTGRES_URL pointing at it:
#   bash scripts/with-postgres.sh swift test
# The cluster lives under /tmp (data + socket dir), listens on 127.0.0.1 with trust auth, and is
# stopped and deleted when the command ends. The port is $IMPRINT_PG_PORT if set, otherwise the
# first of 54329…54348 that no other run holds (a lock file per port) and nothing listens on, so
# concurrent runs (two worktrees, two CI jobs) do not tear down each other's cluster. Idempotent:
# a cluster left behind by an interrupted run (its lock is free) is stopped and replaced.
# initdb refuses root, so as root the server runs as the `postgres` user (created by Debian's
# postgresql package).
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 <command> [args...]" >&2
    exit 1
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Holds /tmp/imprint-pg-<port>.lock on fd `lockfd` for the rest of this script.
claim_port() {
    exec {lockfd}>"/tmp/imprint-pg-$1.lock"
    if flock -n "${lockfd}"; then return 0; fi
    exec {lockfd}>&-
    return 1
}

if [ -n "${IMPRINT_PG_PORT:-}" ]; then
    port="${IMPRINT_PG_PORT}"
    if ! claim_port "${port}"; then
        echo "error: another with-postgres run is using port ${port}" >&2
        exit 1
    fi
else
    port=""
    for candidate in $(seq 54329 54348); do
        if claim_port "${candidate}"; then
            if [ -f "/tmp/imprint-pg-${candidate}/data/postmaster.pid" ] || ! port_in_use "${candidate}"; then
                port="${candidate}"
                break
            fi
            exec {lockfd}>&-
        fi
    done
    if [ -z "${port}" ]; then
        echo "error: no free port in 54329-54348 for a throwaway PostgreSQL" >&2
        exit 1
    fi
fi
base="/tmp/imprint-pg-${port}"
data="${base}/data"
sock="${base}/sock"
log="${base}/server.log"

pgbin=""
for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "${dir}/initdb" ] && [ -x "${dir}/pg_ctl" ]; then pgbin="${dir}"; break; fi
done
if [ -z "${pgbin}" ]; then
    echo "error: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2
    exit 1
fi

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

stop_cluster() {
    if [ -f "${data}/postmaster.pid" ]; then
        as_owner "${pgbin}/pg_ctl" -D "${data}" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "${base}"
}

stop_cluster
mkdir -p "${data}" "${sock}"
if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "${base}"; fi
as_owner "${pgbin}/initdb" -D "${data}" -U postgres -A trust -E UTF8 --no-locale >/dev/null
# The server must not inherit the lock (it would outlive a run that was killed).
as_owner "${pgbin}/pg_ctl" -D "${data}" -l "${log}" -w -t 60 start {lockfd}>&- -o \
    "-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c max_connections=600 -c shared_buffers=64MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null
trap stop_cluster EXIT

export IMPRINT_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:${port}/postgres"
echo "with-postgres: PostgreSQL $("${pgbin}/postgres" --version | awk '{print $3}') at ${IMPRINT_TEST_POSTGRES_URL}" >&2

set +e
"$@"
status=$?
set -e
exit "${status}"
