#!/usr/bin/env python3
"""Prints the tests a `swift test` log shows as started and not ended:
    python3 scripts/unfinished-tests.py test.log
or, with --slowest N, the N slowest that passed.

Swift Testing writes "◇ Test name started." and "✔ Test name passed after ..." or
"✘ Test name failed after ..." (a parameterised test: "◇ Test case passing ... to name
started." for each case, then one line for the test "with N test cases"); XCTest writes
"Test Case '-[Suite test]' started." and "... passed" or "... failed". scripts/test-watchdog.sh
prints this when a run outlives its deadline.
"""
import re
import sys


def lines(path):
    """The log's lines without colours (present when the output went to a terminal)."""
    for line in open(path, errors="replace"):
        yield re.sub(r"\x1b\[[0-9;]*m", "", line)


if sys.argv[1] == "--slowest":
    # python3 scripts/unfinished-tests.py --slowest N test.log: the N slowest tests instead.
    count, path = int(sys.argv[2]), sys.argv[3]
    timed = []
    for line in lines(path):
        m = re.search(r"✔ Test (.+?)(?: with \d+ test cases?)? passed after ([0-9.]+) seconds", line)
        if m and not m.group(1).startswith("run with "):  # the whole run's line
            timed.append((float(m.group(2)), m.group(1)))
    if timed:
        print(f"the {min(count, len(timed))} slowest of {len(timed)} tests that passed:")
        for seconds, name in sorted(timed, reverse=True)[:count]:
            print(f"  {seconds:8.1f} s  {name}")
    sys.exit(0)

started = {}  # test name -> the arguments of its parameterised cases that started
for line in lines(sys.argv[1]):
    m = re.search(r"◇ Test case passing (.+) to (.+?) started\.", line)
    if m:
        started.setdefault(m.group(2), []).append(m.group(1))
        continue
    m = re.search(r"◇ Test (.+?) started\.", line)
    if m and m.group(1) != "run":  # "◇ Test run started." opens the whole run
        started.setdefault(m.group(1), [])
        continue
    m = re.search(r"[✔✘] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed) after", line)
    if m:
        started.pop(m.group(1), None)
        continue
    m = re.search(r"Test Case '(.+?)' (started|passed|failed)", line)
    if m:
        if m.group(2) == "started":
            started[m.group(1)] = []
        else:
            started.pop(m.group(1), None)

for name, cases in started.items():
    print(f"  {name}" + (f" (cases: {'; '.join(cases)})" if cases else ""))
if not started:
    print("  (none: the hang is outside a test)")
