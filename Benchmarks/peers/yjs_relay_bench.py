#!/usr/bin/env python3
"""A plaintext Yjs relay, measured the way `imprint-bench sync latency` measures Imprint.

The relay is pycrdt-websocket (a Yjs room server) with pycrdt-store's SQLiteYStore, so it
stores every update it relays, running as its own process on loopback; two clients
(pycrdt documents with the pycrdt Provider over real WebSockets) run in this process, as
Imprint's two members run in imprint-bench's. Client A types one short edit at a time; the
latency is from A's change to the moment B's document shows it. Sequential, like Imprint's
run: the next edit starts when the previous one is visible.

    yjs_relay_bench.py [--edits 1000] [--json]

Prints p50/p90/p99/max in milliseconds (one JSON object with --json). Needs pycrdt,
pycrdt-websocket, pycrdt-store and websockets (Benchmarks/peers/setup.sh installs them).
"""
import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time


class Channel:
    """A websockets connection as the Channel pycrdt's provider and server read and write."""

    def __init__(self, websocket, path):
        self._websocket = websocket
        self._path = path

    @property
    def path(self):
        return self._path

    def __aiter__(self):
        return self

    async def __anext__(self):
        import websockets
        try:
            return await self.recv()
        except websockets.ConnectionClosed:
            raise StopAsyncIteration

    async def send(self, message):
        await self._websocket.send(message)

    async def recv(self):
        return bytes(await self._websocket.recv())


async def serve(port, db_path):
    import websockets
    from pycrdt.store import SQLiteYStore
    from pycrdt.websocket import WebsocketServer, YRoom

    class Store(SQLiteYStore):
        pass
    Store.db_path = db_path

    async with WebsocketServer(auto_clean_rooms=False) as server:
        room = YRoom(ready=True, ystore=Store(path="/bench"))
        server.rooms["/bench"] = room

        async def handler(connection):
            await server.serve(Channel(connection, connection.request.path))

        async with websockets.serve(handler, "127.0.0.1", port, max_size=None, compression=None):
            print("ready", flush=True)
            await asyncio.Future()


async def measure(port, edits):
    import websockets
    from pycrdt import Doc, Provider, Text

    url = f"ws://127.0.0.1:{port}/bench"
    doc_a, doc_b = Doc(), Doc()
    doc_a["body"] = text_a = Text()
    doc_b["body"] = text_b = Text()
    seen = asyncio.Event()
    target = {"length": 0}

    def on_change(event):
        if len(str(text_b)) >= target["length"]:
            seen.set()
    text_b.observe(on_change)

    async with websockets.connect(url, max_size=None, compression=None) as ws_a, \
            websockets.connect(url, max_size=None, compression=None) as ws_b:
        async with Provider(doc_a, Channel(ws_a, "/bench")), Provider(doc_b, Channel(ws_b, "/bench")):
            await asyncio.sleep(0.5)  # initial sync
            latencies = []
            for i in range(edits):
                word = f"w{i} "
                seen.clear()
                target["length"] = len(str(text_a)) + len(word)
                started = time.perf_counter()
                text_a += word
                await asyncio.wait_for(seen.wait(), timeout=30)
                latencies.append((time.perf_counter() - started) * 1000)
            assert str(text_a) == str(text_b), "the clients disagree"
            return latencies


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.db))
        return

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="yjs-relay-") as work:
        db = os.path.join(work, "ystore.db")
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--db", db],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            if server.stdout.readline().strip() != "ready":
                raise SystemExit("the relay did not start")
            latencies = asyncio.run(measure(port, args.edits))
            stored = os.path.getsize(db) + sum(os.path.getsize(db + s) for s in ("-wal", "-journal") if os.path.exists(db + s))
        finally:
            # SIGTERM may be ignored when the caller ignores it (dispositions are inherited).
            server.kill()
            server.wait()
    load = os.getloadavg()[0]
    result = {
        "peer": "pycrdt-websocket + SQLiteYStore (plaintext relay)", "edits": len(latencies),
        "p50_ms": round(statistics.median(latencies), 2), "p90_ms": round(percentile(latencies, 90), 2),
        "p99_ms": round(percentile(latencies, 99), 2), "max_ms": round(max(latencies), 2),
        "store_bytes": stored, "load": round(load, 2),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"plaintext Yjs relay: {result['edits']} edits, p50 {result['p50_ms']} ms, p90 {result['p90_ms']} ms, "
              f"p99 {result['p99_ms']} ms, max {result['max_ms']} ms; store {stored} bytes; load {result['load']}")


if __name__ == "__main__":
    main()
