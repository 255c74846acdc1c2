#!/usr/bin/env python3
"""Run one editing trace through imprint-bench, Loro and Yrs, and compare.

The engines are interleaved round by round (imprint, loro, yrs, imprint, loro,
yrs, ...), each run in its own fresh process (so peak RSS is per engine) doing
--runs runs and reporting their medians. The machine's load drifts, so the
ratio columns are the median over --rounds rounds of that round's
imprint/peer ratio (both measured within seconds of each other); the value
columns are medians over the rounds. Imprint: `imprint-bench trace <trace>
--runs N --json` (--imprint-bench; built with `swift build -c release
--static-swift-stdlib -Xlinker -no-pie --product imprint-bench` if the binary
is missing, unless --no-build). Peers: trace_peer.py in .venv-peers (created by
setup.sh if missing).

--repeat K writes the trace concatenated K times (as the Eg-walker paper's
C1/C2 repeat friendsforever and clownschool 25 times) to a temporary file and
runs that: copy k's positions are shifted by k x len(endContent), so each copy
edits its own region after the previous copies' text; its roots depend on every
head of copy k-1, so each agent's transactions stay one chain; endContent is
the original's repeated K times.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = ("loro", "yrs")
METRICS = ("apply_ms", "merge_ms", "save_bytes", "save_bytes_zstd", "load_ms", "load_full_ms", "peak_rss_mb",
           "baseline_rss_mb", "loaded_doc_mb")
ENGINES = ("imprint",) + PEERS


def venv_python():
    py = os.path.join(ROOT, ".venv-peers", "bin", "python")
    if not os.access(py, os.X_OK):
        out = subprocess.run([os.path.join(HERE, "setup.sh")], check=True, capture_output=True, text=True)
        py = out.stdout.strip().splitlines()[-1]
    return py


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()[-1]
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "no JSON on stdout"


def run_imprint(cmd_args, binary, build):
    """Run `imprint-bench <cmd_args> --json`, building it first if missing."""
    if not os.access(binary, os.X_OK):
        if not build:
            return None, f"{binary} not found (--no-build)"
        print("building imprint-bench (swift build -c release --static-swift-stdlib -Xlinker -no-pie --product imprint-bench)...", file=sys.stderr)
        b = subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "-Xlinker", "-no-pie", "--product", "imprint-bench"], cwd=ROOT)
        if b.returncode != 0 or not os.access(binary, os.X_OK):
            return None, "swift build of imprint-bench failed"
    res, err = run_json([binary, *cmd_args, "--json"])
    if err:
        return None, f"`imprint-bench {cmd_args[0]}` unavailable or failed: {err}"
    return res, None


def ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return f"{a / b:.2f}x"
    return "-"


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}" if v >= 100 else f"{v:.3g}"
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def rows(results, ratios=None):
    """Table rows; `ratios` (peer -> metric -> median of per-round ratios) replaces the
    ratio of the medians where given (older --json files have none)."""
    imp = results.get("imprint") or {}
    out = []
    for m in METRICS:
        vals = [imp.get(m)] + [(results.get(p) or {}).get(m) for p in PEERS]
        if not any(v is not None for v in vals):
            continue
        rs = []
        for p in PEERS:
            r = ((ratios or {}).get(p) or {}).get(m)
            rs.append(f"{r:.2f}x" if r is not None else ratio(imp.get(m), (results.get(p) or {}).get(m)))
        out.append([m] + [fmt(v) for v in vals] + rs)
    sha = [("ok" if r.get("ok", r.get("final_sha256") == results["expected_sha256"]) else "MISMATCH") if r else "-"
           for r in [imp] + [results.get(p) for p in PEERS]]
    out.append(["final_sha256"] + sha + ["", ""])
    return out


def repeated_trace(path, copies):
    """Writes `path`'s trace concatenated `copies` times to a temporary .json.gz (see the
    module doc); returns its path."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    txns, shift = trace["txns"], len(trace["endContent"])
    n = len(txns)
    heads = [i for i, t in enumerate(txns) if t.get("numChildren", 0) == 0]
    roots = [i for i, t in enumerate(txns) if not t["parents"]]
    out = []
    for k in range(copies):
        for i, t in enumerate(txns):
            parents = [p + k * n for p in t["parents"]]
            if k > 0 and not t["parents"]:
                parents = [h + (k - 1) * n for h in heads]
            children = t.get("numChildren", 0) + (len(roots) if k < copies - 1 and i in heads else 0)
            out.append({**t, "parents": parents, "numChildren": children,
                        "patches": [[pos + k * shift, d, ins] for pos, d, ins in t["patches"]]})
    trace["txns"] = out
    trace["endContent"] = trace["endContent"] * copies
    fd, tmp = tempfile.mkstemp(suffix=".json.gz", prefix=os.path.basename(path).split(".json")[0] + f"-x{copies}-")
    with gzip.open(os.fdopen(fd, "wb"), "wt", encoding="utf-8") as f:
        json.dump(trace, f)
    return tmp


def run_engine(engine, trace, args, py):
    if engine == "imprint":
        return run_imprint(["trace", trace, "--runs", str(args.runs)], args.imprint_bench, not args.no_build)
    res, err = run_json([py, os.path.join(HERE, "trace_peer.py"), trace, "--peer", engine,
                         "--runs", str(args.runs), "--json"])
    return res, (f"{engine}: {err}" if err else None)


def median_result(rs):
    """One engine's rounds -> one result: numbers are medians, the rest from the last round."""
    rs = [r for r in rs if r]
    if not rs:
        return None
    out = dict(rs[-1])
    for k, v in rs[-1].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            vals = [r[k] for r in rs if isinstance(r.get(k), (int, float))]
            out[k] = statistics.median(vals)
    out["ok"] = all(r.get("ok", r.get("matches_end_content", True)) for r in rs)
    return out


def measure(args):
    trace = os.path.abspath(args.trace)
    name = os.path.basename(trace).split(".json")[0]
    tmp = None
    if args.repeat > 1:
        tmp = trace = repeated_trace(trace, args.repeat)
        name += f" x{args.repeat}"
    notes = []
    py = venv_python()
    engines = ["imprint"] + [p for p in args.peers.split(",") if p]
    try:
        load_start = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load_start = None
    per_round = []
    try:
        for rnd in range(args.rounds):
            row = {}
            for e in engines:
                res, err = run_engine(e, trace, args, py)
                if err:
                    notes.append(f"round {rnd + 1}: {err}")
                row[e] = res
                print(f"round {rnd + 1}/{args.rounds} {e}: "
                      + (", ".join(f"{m}={res[m]}" for m in ("apply_ms", "merge_ms", "load_ms", "load_full_ms") if m in res) if res else "failed"),
                      file=sys.stderr)
            per_round.append(row)
    finally:
        if tmp:
            os.unlink(tmp)
    results = {e: median_result([r.get(e) for r in per_round]) for e in engines}
    ratios = {}
    for p in PEERS:
        ratios[p] = {}
        for m in METRICS:
            rs = [r["imprint"][m] / r[p][m] for r in per_round
                  if r.get("imprint") and r.get(p) and isinstance(r["imprint"].get(m), (int, float))
                  and isinstance(r[p].get(m), (int, float)) and r[p][m]]
            if rs:
                ratios[p][m] = statistics.median(rs)
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "trace": name,
        "runs": args.runs,
        "rounds": args.rounds,
        "interleaved": True,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}",
        "loadavg_start": load_start,
        "loadavg_end": load,
        "imprint_bench": args.imprint_bench,
        "versions": {p: (results.get(p) or {}).get("peer_version") for p in PEERS},
        "notes": notes,
        "results": results,
        "ratios": ratios,
        "per_round": per_round,
    }


def render(meta, markdown):
    results = dict(meta["results"])
    results["expected_sha256"] = next(
        (r["expected_sha256"] for r in results.values() if r and "expected_sha256" in r), None)
    header = ["metric", "imprint", "loro", "yrs", "imprint/loro", "imprint/yrs"]
    table = rows(results, meta.get("ratios"))
    if meta.get("interleaved"):
        how = (f"{meta['rounds']} interleaved rounds of {meta['runs']} runs each: values are medians over rounds, "
               f"ratios the median of per-round ratios; load average {meta.get('loadavg_start')} at the start, "
               f"{meta.get('loadavg_end')} at the end")
    else:
        how = f"medians of {meta['runs']} runs"
    title = (f"{meta['trace']} — {how}, {meta['date_utc']}, {meta['machine']}; "
             f"loro {meta['versions']['loro']}, pycrdt {meta['versions']['yrs']}")
    if markdown:
        print(f"**{title}**\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        for r in table:
            print("| " + " | ".join(r) + " |")
        for n in meta["notes"]:
            print(f"\n> note: {n}")
    else:
        print(title)
        widths = [max(len(str(r[i])) for r in [header] + table) for i in range(len(header))]
        for r in [header] + table:
            print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        for n in meta["notes"]:
            print(f"note: {n}")


def add_output_options(ap):
    """--from-json FILE and --json / --markdown, shared with compare_mls.py."""
    ap.add_argument("--from-json", metavar="FILE", help="render a saved --json result instead of running")
    fmt_group = ap.add_mutually_exclusive_group()
    fmt_group.add_argument("--json", action="store_true")
    fmt_group.add_argument("--markdown", action="store_true")


def measure_or_load_and_print(ap, args, can_measure, measure, render, missing):
    """Runs `measure(args)` (or reads --from-json), then prints JSON or the rendered table."""
    if args.from_json:
        with open(args.from_json) as f:
            meta = json.load(f)
    elif can_measure:
        meta = measure(args)
    else:
        ap.error(missing)
    if args.json:
        print(json.dumps(meta))
    else:
        render(meta, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--runs", type=int, default=3, help="runs per engine process (their median is that round's value)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (imprint, loro, yrs, imprint, ...)")
    ap.add_argument("--repeat", type=int, default=1, help="concatenate the trace this many times (see above)")
    ap.add_argument("--imprint-bench", default=os.path.join(ROOT, ".build", "release", "imprint-bench"))
    ap.add_argument("--no-build", action="store_true", help="do not build imprint-bench if missing")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of loro,yrs")
    add_output_options(ap)
    args = ap.parse_args()
    measure_or_load_and_print(ap, args, bool(args.trace), measure, render, "give a trace (or --from-json FILE)")


if __name__ == "__main__":
    main()
