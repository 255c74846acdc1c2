#!/usr/bin/env python3
"""Replay an editing trace through a peer CRDT (Loro or Yrs/pycrdt).

Measures what `imprint-bench trace` measures (see shared/contracts/cli.md), as
medians over --runs runs, in this one process (run one peer per process so
ru_maxrss is per peer; compare_trace.py does that):

  apply_ms     every patch as a local edit into a fresh document, one
               commit/transaction per trace txn, then read the text.
               Concurrent traces: the whole fork-per-txn replay + merge.
  merge_ms     the full history (Loro: updates from the empty version; Yrs:
               encoded state as update) imported into a fresh document as a
               remote update, then read the text.
  save_bytes   full-history save (Loro: snapshot; Yrs: encoded state as v1
               update); save_bytes_zstd: the same through the `zstd` CLI (-3).
  load_ms      saved bytes -> document -> text.
  peak_rss_mb  peak RSS (VmHWM) of this process while replaying: the peak is
               reset (/proc/self/clear_refs) after the trace is loaded, so the
               JSON parse's transient peak is excluded; the interpreter and the
               in-memory trace stay in (baseline_rss_mb = RSS at that point).
               Falls back to ru_maxrss where the reset is not possible.

Positions in the traces are Unicode code points. Loro's LoroText.insert/delete
take code points. pycrdt's Text indexes UTF-8 bytes, so for Yrs the patches
are converted to byte offsets before timing (only needed for non-ASCII text).
"""
import argparse
import bisect
import gc
import gzip
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def proc_status_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return None


def reset_peak_rss():
    """Linux: reset VmHWM (peak RSS) so it covers only what follows."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb():
    hwm = proc_status_mb("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def to_utf8_offsets(txns):
    """Sequential patches with code-point offsets -> UTF-8 byte offsets.

    Tracks only the non-ASCII characters (sorted code-point positions and their
    extra UTF-8 bytes), so it is cheap for mostly-ASCII text."""
    pos_list, extra = [], []
    out = []
    for patches in txns:
        conv = []
        for pos, dele, ins in patches:
            i = bisect.bisect_left(pos_list, pos)
            j = bisect.bisect_left(pos_list, pos + dele)
            bpos, bdel = pos + sum(extra[:i]), dele + sum(extra[i:j])
            del pos_list[i:j], extra[i:j]
            shift = len(ins) - dele
            pos_list[i:] = [p + shift for p in pos_list[i:]]
            new = [(pos + k, len(c.encode()) - 1) for k, c in enumerate(ins) if ord(c) > 127]
            pos_list[i:i] = [p for p, _ in new]
            extra[i:i] = [e for _, e in new]
            conv.append((bpos, bdel, ins))
        out.append(conv)
    return out


class LoroPeer:
    name, unit = "loro", "unicode"

    def __init__(self):
        import loro
        self.m = loro
        self.version = loro.LORO_VERSION

    def new(self, actor):
        doc = self.m.LoroDoc()
        doc.peer_id = actor_id(actor, 64)
        return doc

    def text(self, doc):
        return doc.get_text("text")

    def apply(self, doc, text, patches):
        for pos, dele, ins in patches:
            if dele:
                text.delete(pos, dele)
            if ins:
                text.insert(pos, ins)
        doc.commit()

    def read(self, doc):
        return doc.get_text("text").to_string()

    def save(self, doc):
        return doc.export(self.m.ExportMode.Snapshot())

    def history(self, doc):
        return doc.export(self.m.ExportMode.Updates(self.m.VersionVector()))

    def import_(self, doc, data):
        doc.import_(data)

    def import_many(self, doc, blobs):
        doc.import_batch(blobs)

    def writer(self, actor):
        """A document whose local transactions `apply_exporting` can export one by one."""
        return self.new(actor)

    def apply_exporting(self, doc, text, patches):
        """Applies one trace txn as a local commit; returns the update that carries it alone
        (Loro: the updates since the version vector before it)."""
        mark = doc.oplog_vv
        self.apply(doc, text, patches)
        return doc.export(self.m.ExportMode.Updates(mark))


class YrsPeer:
    name, unit = "yrs", "utf8"

    def __init__(self):
        import pycrdt
        from importlib.metadata import version
        self.m = pycrdt
        self.version = version("pycrdt")

    def new(self, actor):
        return self.m.Doc(client_id=actor_id(actor, 53))

    def text(self, doc):
        return doc.get("text", type=self.m.Text)

    def apply(self, doc, text, patches):
        with doc.transaction():
            for pos, dele, ins in patches:
                if dele:
                    del text[pos:pos + dele]
                if ins:
                    text.insert(pos, ins)

    def read(self, doc):
        return str(doc.get("text", type=self.m.Text))

    def save(self, doc):
        return doc.get_update()

    history = save

    def import_(self, doc, data):
        doc.apply_update(data)

    def import_many(self, doc, blobs):
        with doc.transaction():
            for b in blobs:
                doc.apply_update(b)

    def writer(self, actor):
        """A document whose transactions' updates are captured as they commit (Yjs's
        `update` event): `get_update(state)` would also carry the whole delete set every
        time, which makes a replay of K concatenated copies quadratic in time and memory."""
        doc = self.new(actor)
        events = []
        doc._trace_events = events
        doc._trace_subscription = doc.observe(lambda e: events.append(e.update))
        return doc

    def apply_exporting(self, doc, text, patches):
        """Applies one trace txn as one transaction; returns the update its commit emitted."""
        events = doc._trace_events
        events.clear()
        self.apply(doc, text, patches)
        if len(events) != 1:
            raise RuntimeError(f"expected one update event for a transaction, got {len(events)}")
        return events[0]


PEERS = {"loro": LoroPeer, "yrs": YrsPeer}
# Actors: WRITER writes a sequential trace, WRITER + k is agent slot k of a
# concurrent trace, READER only imports. Each maps to a fixed pseudo-random id
# of the library's default size (Loro peer ids: 64 bits; pycrdt client ids: 53
# bits), so sizes are deterministic yet realistic: Yrs encodes the client id
# per block, and tiny ids would shrink its updates (~2x on sveltecomponent).
WRITER, READER = 1, 1000


def actor_id(actor, bits):
    return random.Random(actor).getrandbits(bits)


def plan_concurrent(txns):
    """For each txn, the earlier txns its agent's document must import first.

    Each agent keeps one document (its own actor). Requires that every agent's
    txns form a chain (each sees its own previous one), so a version is a
    per-agent count and "missing" is a per-agent range; checked here."""
    agents = sorted({t["agent"] for t in txns})
    slot = {a: k for k, a in enumerate(agents)}
    by_agent = [[] for _ in agents]          # txn indices per agent, in order
    vv = []                                  # per-txn version after it
    have = [[0] * len(agents) for _ in agents]  # per agent-doc version
    plan = []
    for i, t in enumerate(txns):
        a = slot[t["agent"]]
        target = [0] * len(agents)
        for p in t["parents"]:
            target = [max(x, y) for x, y in zip(target, vv[p])]
        if target[a] != len(by_agent[a]) or any(h > g for h, g in zip(have[a], target)):
            raise ValueError(f"txn {i}: agent {t['agent']} is not a chain; unsupported trace shape")
        missing = sorted(j for b in range(len(agents)) for j in by_agent[b][have[a][b]:target[b]])
        plan.append((a, missing))
        by_agent[a].append(i)
        target[a] += 1
        vv.append(target)
        have[a] = list(target)
    return agents, plan


def replay_sequential(peer, txns):
    doc = peer.new(WRITER)
    text = peer.text(doc)
    for patches in txns:
        peer.apply(doc, text, patches)
    return doc, peer.read(doc)


def replay_concurrent(peer, txns, agents, plan):
    docs = [peer.writer(WRITER + k) for k in range(len(agents))]
    texts = [peer.text(d) for d in docs]
    updates = []
    for patches, (a, missing) in zip(txns, plan):
        doc = docs[a]
        if missing:
            peer.import_many(doc, [updates[j] for j in missing])
        updates.append(peer.apply_exporting(doc, texts[a], patches))
    merged = peer.new(READER)
    peer.import_many(merged, updates)
    return merged, peer.read(merged)


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        result = fn()
        return (time.perf_counter() - t0) * 1000.0, result
    finally:
        gc.enable()


def zstd_size(data):
    if not shutil.which("zstd"):
        return None
    out = subprocess.run(["zstd", "-3", "-c", "-q"], input=data, capture_output=True, check=True)
    return len(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--peer", choices=sorted(PEERS), required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("error: --runs must be >= 1")

    trace = load_trace(args.trace)
    peer = PEERS[args.peer]()
    concurrent = trace.get("kind") == "concurrent"
    txns = [[tuple(p) for p in t["patches"]] for t in trace["txns"]]
    ascii_only = all(p[2].isascii() for patches in txns for p in patches)
    if peer.unit == "utf8" and not ascii_only:
        if concurrent:
            sys.exit("error: non-ASCII concurrent traces need per-fork offset conversion for Yrs; not supported")
        txns = to_utf8_offsets(txns)
    plan = plan_concurrent(trace["txns"]) if concurrent else None
    expected = hashlib.sha256(trace["endContent"].encode()).hexdigest()
    del trace
    gc.collect()
    baseline = proc_status_mb("VmRSS")
    peak_reset = reset_peak_rss()

    results = {k: [] for k in ("apply_ms", "merge_ms", "load_ms")}
    final_sha = save_bytes = history_bytes = None
    for _ in range(args.runs):
        if concurrent:
            ms, (doc, text) = timed(lambda: replay_concurrent(peer, txns, *plan))
        else:
            ms, (doc, text) = timed(lambda: replay_sequential(peer, txns))
        results["apply_ms"].append(ms)
        final_sha = hashlib.sha256(text.encode()).hexdigest()
        saved, history = peer.save(doc), peer.history(doc)
        save_bytes, history_bytes = len(saved), len(history)
        del doc, text

        def merge():
            d = peer.new(READER)
            peer.import_(d, history)
            return peer.read(d)

        def load():
            d = peer.new(READER)
            peer.import_(d, saved)
            return peer.read(d)

        for key, fn in (("merge_ms", merge), ("load_ms", load)):
            ms, text = timed(fn)
            if hashlib.sha256(text.encode()).hexdigest() != expected:
                sys.exit(f"error: {key} produced the wrong text")
            results[key].append(ms)

    out = {
        "trace": os.path.basename(args.trace).split(".json")[0],
        "peer": peer.name,
        "peer_version": peer.version,
        "kind": "concurrent" if concurrent else "sequential",
        "txns": len(txns),
        "patches": sum(len(p) for p in txns),
        "runs": args.runs,
        **{k: round(statistics.median(v), 3) for k, v in results.items()},
        "save_bytes": save_bytes,
        "save_bytes_zstd": zstd_size(saved),
        "history_bytes": history_bytes,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "baseline_rss_mb": round(baseline, 1),
        "peak_rss_reset": peak_reset,
        "final_sha256": final_sha,
        "expected_sha256": expected,
        "ok": final_sha == expected,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:16} {v}")
    if not out["ok"]:
        print("error: final text does not match endContent", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
