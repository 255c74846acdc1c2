#!/usr/bin/env bash
# Runs a build or test command with a deadline; a run that outlives it is reported, then stopped:
#   bash scripts/test-watchdog.sh <seconds> swift test --skip-build
# The command's output reaches the console without its progress lines (below). When the
# deadline passes, this prints every thread's stack of each test process (gdb, when
# installed) and the tests that started and have not ended (from Swift Testing's and XCTest's
# own lines), and exits 124 after stopping the command. A hang then fails the run within the deadline and names where it hung, where
# CI's own limit would end the job with no more than "timed out". Processes the command
# leaves running in its process group are named and stopped when it ends.
set -uo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 <seconds> <command> [args...]" >&2
    exit 2
fi
limit="$1"
shift
here="$(cd "$(dirname "$0")" && pwd)"

log="$(mktemp /tmp/imprint-test-log.XXXXXX)"
trap 'rm -f "$log"' EXIT

# The console gets what matters: every line but build progress ("[12/345] Compiling ...") and
# the lines of tests that started and passed (Swift Testing prints two or three per test, some
# 2,000 in all), which only the full log keeps; IMPRINT_TEST_VERBOSE=1 shows them too. Failures,
# issues, seeds, suites and the run's summary pass. The slowest tests are listed at the end.
if [ -n "${IMPRINT_TEST_VERBOSE:-}" ]; then
    console() { cat; }
else
    console() {
        awk '!/^\[[0-9]+\/[0-9]+\] / && !/^◇ Test .* started\.$/ \
             && !(/^✔ Test .* passed after [0-9.]+ seconds\.$/ && !/^✔ Test run with /) { print; fflush() }'
    }
fi

# The command writes into fd 3: a pipe to the full log and the console, drained before this
# script's own last lines, so that they come last.
exec 3> >(tee "$log" | console)
console_pid=$!
# Waits (at most 10 s: a process that left the group may hold the pipe) for the console to
# print what the command wrote.
drain() {
    exec 3>&-
    for _ in $(seq 1 100); do
        kill -0 "$console_pid" 2>/dev/null || return 0
        sleep 0.1
    done
}

# setsid: the command and everything it starts form one process group, stopped together.
setsid "$@" >&3 2>&3 &
pid=$!

waited=0
while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
        # The threads first and the tests last, so that the end of the output names them.
        threads="$(mktemp /tmp/imprint-test-threads.XXXXXX)"
        if command -v gdb >/dev/null 2>&1; then
            for test_pid in $(pgrep -g "$pid" || true); do
                case "$(readlink "/proc/${test_pid}/exe" 2>/dev/null)" in *.xctest) ;; *) continue ;; esac
                echo "test-watchdog: threads of process ${test_pid} ($(tr '\0' ' ' < "/proc/${test_pid}/cmdline" 2>/dev/null | cut -c1-160))"
                timeout 120 gdb -p "$test_pid" -batch -ex "thread apply all bt 16" 2>/dev/null | grep -E '^(Thread|#)' | cut -c1-200
            done > "$threads"
        fi
        kill -TERM -- "-$pid" 2>/dev/null
        sleep 10
        kill -KILL -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        drain
        echo
        cat "$threads"
        rm -f "$threads"
        echo "test-watchdog: the run passed its ${limit} s deadline; what had started and not ended:"
        python3 "$here/unfinished-tests.py" "$log"
        exit 124
    fi
    sleep 5
    waited=$((waited + 5))
done
wait "$pid"
status=$?
# A process the run started and left running (a server a test did not stop) would hold the
# output open after the run: named and stopped here.
left="$(pgrep -g "$pid" -a 2>/dev/null | cut -c1-160 || true)"
if [ -n "$left" ]; then
    kill -KILL -- "-$pid" 2>/dev/null
fi
drain
if [ -n "$left" ]; then
    echo "test-watchdog: the run left these processes running; stopped them:"
    echo "$left" | sed 's/^/  /'
fi
python3 "$here/unfinished-tests.py" --slowest 10 "$log"
exit "$status"
