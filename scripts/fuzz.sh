#!/usr/bin/env bash
# Fuzzes a running imprint-server (Delivery Service and zone service) from its own OpenAPI
# description with schemathesis and fails
# on any 5xx (check not_a_server_error). Every request carries a fresh did:key JWT
# (scripts/fuzz/imprint_auth.py).
#   bash scripts/fuzz.sh               # SQLite in a temporary directory
#   bash scripts/fuzz.sh --postgres    # a throwaway PostgreSQL cluster (scripts/with-postgres.sh)
# Further arguments go to `schemathesis run` (e.g. --include-operation-id getMessages).
# Environment: FUZZ_MAX_EXAMPLES (default 100 per operation), FUZZ_SEED.
set -euo pipefail
cd "$(dirname "$0")/.."

store=sqlite
if [ "${1:-}" = "--postgres" ]; then
    store=postgres
    shift
    if [ -z "${IMPRINT_TEST_POSTGRES_URL:-}" ]; then
        exec bash scripts/with-postgres.sh bash scripts/fuzz.sh --postgres "$@"
    fi
fi

venv=.venv-tools
if [ ! -x "${venv}/bin/schemathesis" ] || ! "${venv}/bin/python" -c "import cryptography" 2>/dev/null; then
    python3 -m venv "${venv}"
    "${venv}/bin/pip" install -q "schemathesis>=4,<5" cryptography
fi

swift build --product imprint-server
binary="$(swift build --show-bin-path)/imprint-server"

port="$("${venv}/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
workdir="$(mktemp -d /tmp/imprint-fuzz.XXXXXX)"
db="sqlite:${workdir}/delivery.sqlite"
if [ "${store}" = "postgres" ]; then db="${IMPRINT_TEST_POSTGRES_URL}"; fi
export IMPRINT_SERVICE_DID="did:web:fuzz.test"

LOG_LEVEL=warning "${binary}" --port "${port}" --db "${db}" --data "${workdir}" --service-did "${IMPRINT_SERVICE_DID}" 2>"${workdir}/server.log" &
server_pid=$!
cleanup() {
    kill -TERM "${server_pid}" 2>/dev/null || true
    wait "${server_pid}" 2>/dev/null || true
    rm -rf "${workdir}"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:${port}/xrpc/_health" >/dev/null 2>&1; then break; fi
    sleep 0.1
done

seed_args=()
if [ -n "${FUZZ_SEED:-}" ]; then seed_args=(--seed "${FUZZ_SEED}"); fi

set +e
SCHEMATHESIS_HOOKS=imprint_auth PYTHONPATH=scripts/fuzz "${venv}/bin/schemathesis" run \
    "http://127.0.0.1:${port}/openapi.json" \
    --checks not_a_server_error \
    --max-examples "${FUZZ_MAX_EXAMPLES:-100}" \
    --generation-allow-x00 true \
    --suppress-health-check all \
    --workers 4 \
    --generation-database none \
    --no-color --report junit --report-junit-path "${workdir}/junit.xml" "${seed_args[@]}" "$@"
status=$?
set -e
# Exit 1 on a check failure (a 5xx) or an unhandled server error. Schemathesis also exits 1
# when the tool itself crashes while generating cases (seen: Hypothesis' "AST constructor
# recursion depth mismatch" on Python 3.11, on a different operation each run); that is
# reported separately with exit 3 so it is not mistaken for a server failure.
failures=0
errors=0
if [ -f "${workdir}/junit.xml" ]; then
    failures="$( (grep -o "<failure" "${workdir}/junit.xml" || true) | wc -l)"
    errors="$( (grep -o "<error" "${workdir}/junit.xml" || true) | wc -l)"
fi
if grep -q "unhandled error" "${workdir}/server.log"; then
    echo "fuzz: the server logged unhandled errors:" >&2
    grep "unhandled error" "${workdir}/server.log" | head -20 >&2
    exit 1
fi
if [ "${failures}" -gt 0 ]; then
    echo "fuzz: ${failures} failing case(s)" >&2
    exit 1
fi
if [ "${status}" -ne 0 ] && [ "${errors}" -gt 0 ]; then
    echo "fuzz: no server failure, but schemathesis errored on ${errors} operation(s); rerun (another seed) to cover them" >&2
    exit 3
fi
exit "${status}"
