#!/usr/bin/env python3
"""Run one editing trace through imprint-bench, Loro and Yrs, and compare.

Each engine runs in its own fresh process, one after the other (so peak RSS is
per engine). Imprint: `.build/release/imprint-bench trace <trace> --runs N
--json` (built with `swift build -c release --product imprint-bench` if the
binary is missing, unless --no-build). Peers: trace_peer.py in .venv-peers
(created by setup.sh if missing).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = ("loro", "yrs")
METRICS = ("apply_ms", "merge_ms", "save_bytes", "save_bytes_zstd", "load_ms", "peak_rss_mb", "baseline_rss_mb")


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


def rows(results):
    imp = results.get("imprint") or {}
    out = []
    for m in METRICS:
        vals = [imp.get(m)] + [(results.get(p) or {}).get(m) for p in PEERS]
        out.append([m] + [fmt(v) for v in vals] + [ratio(imp.get(m), (results.get(p) or {}).get(m)) for p in PEERS])
    sha = [("ok" if r.get("ok", r.get("final_sha256") == results["expected_sha256"]) else "MISMATCH") if r else "-"
           for r in [imp] + [results.get(p) for p in PEERS]]
    out.append(["final_sha256"] + sha + ["", ""])
    return out


def measure(args):
    trace = os.path.abspath(args.trace)
    notes = []
    imprint, err = run_imprint(["trace", trace, "--runs", str(args.runs)], args.imprint_bench, not args.no_build)
    if err:
        notes.append(f"imprint: {err}; showing peers only")
    py = venv_python()
    results = {"imprint": imprint}
    for peer in [p for p in args.peers.split(",") if p]:
        res, perr = run_json([py, os.path.join(HERE, "trace_peer.py"), trace, "--peer", peer,
                              "--runs", str(args.runs), "--json"])
        if perr:
            notes.append(f"{peer}: {perr}")
        results[peer] = res
    return {
        "trace": os.path.basename(trace).split(".json")[0],
        "runs": args.runs,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}",
        "versions": {p: (results.get(p) or {}).get("peer_version") for p in PEERS},
        "notes": notes,
        "results": results,
    }


def render(meta, markdown):
    results = dict(meta["results"])
    results["expected_sha256"] = next(
        (r["expected_sha256"] for r in results.values() if r and "expected_sha256" in r), None)
    header = ["metric", "imprint", "loro", "yrs", "imprint/loro", "imprint/yrs"]
    table = rows(results)
    title = (f"{meta['trace']} — medians of {meta['runs']} runs, {meta['date_utc']}, {meta['machine']}; "
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
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--imprint-bench", default=os.path.join(ROOT, ".build", "release", "imprint-bench"))
    ap.add_argument("--no-build", action="store_true", help="do not build imprint-bench if missing")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of loro,yrs")
    add_output_options(ap)
    args = ap.parse_args()
    measure_or_load_and_print(ap, args, bool(args.trace), measure, render, "give a trace (or --from-json FILE)")


if __name__ == "__main__":
    main()
