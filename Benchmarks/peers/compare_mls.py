#!/usr/bin/env python3
"""Compare `imprint-bench mls --members N` with the same workload on AWS mls-rs.

Runs imprint-bench (built if missing, unless --no-build) and then
mls_peer_bench.py in .venv-peers, one after the other, and prints both with
ratios (imprint / mls-rs). Lower is better for *_ms and *_bytes, higher for
*_per_s.
"""
import argparse
import datetime
import os

from compare_trace import (HERE, ROOT, add_output_options, fmt, measure_or_load_and_print, ratio, run_imprint,
                           run_json, venv_python)

METRICS = ("commit_ms", "process_ms", "join_ms", "commit_bytes", "welcome_bytes", "encrypt_per_s", "decrypt_per_s",
           "decrypt_batch_per_s")
# mls-rs has no batch API: Imprint's batch rate is set beside mls-rs's one-by-one rate.
PEER_METRIC = {"decrypt_batch_per_s": "decrypt_per_s"}


def measure(args):
    notes = []
    wire = ["--wire"] if args.wire else []
    imprint, err = run_imprint(["mls", "--members", str(args.members), "--runs", str(args.runs), *wire], args.imprint_bench, not args.no_build)
    if err:
        notes.append(f"imprint: {err}; showing mls-rs only")
    peer, perr = run_json([venv_python(), os.path.join(HERE, "mls_peer_bench.py"),
                           "--members", str(args.members), "--runs", str(args.runs), *wire, "--json"])
    if perr:
        notes.append(f"mls-rs: {perr}")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return {"members": args.members, "wire": args.wire, "date_utc": date, "notes": notes,
            "results": {"imprint": imprint, "mls-rs": peer}}


def render(meta, markdown):
    imprint, peer = meta["results"]["imprint"] or {}, meta["results"]["mls-rs"] or {}
    header = ["metric", "imprint", "mls-rs", "imprint/mls-rs"]
    table = [[m, fmt(imprint.get(m)), fmt(peer.get(PEER_METRIC.get(m, m))), ratio(imprint.get(m), peer.get(PEER_METRIC.get(m, m)))]
             for m in METRICS]
    title = (f"MLS, {meta['members']} members added in one commit, suite 1{', wire encoding timed' if meta.get('wire') else ''} — {meta['date_utc']}; "
             f"{peer.get('peer_version', 'mls-rs')}, medians of {peer.get('runs', '?')} runs")
    if markdown:
        print(f"**{title}**\n\n| " + " | ".join(header) + " |\n|---|---:|---:|---:|")
        for r in table:
            print("| " + " | ".join(r) + " |")
        for n in meta["notes"]:
            print(f"\n> note: {n}")
    else:
        print(title)
        widths = [max(len(r[i]) for r in [header] + table) for i in range(len(header))]
        for r in [header] + table:
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        for n in meta["notes"]:
            print(f"note: {n}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int)
    ap.add_argument("--runs", type=int, default=3, help="runs of each implementation (medians)")
    ap.add_argument("--imprint-bench", default=os.path.join(ROOT, ".build", "release", "imprint-bench"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--wire", action="store_true", help="both sides also time wire encoding/decoding of the messages")
    add_output_options(ap)
    args = ap.parse_args()
    measure_or_load_and_print(ap, args, bool(args.members), measure, render, "give --members N (or --from-json FILE)")


if __name__ == "__main__":
    main()
