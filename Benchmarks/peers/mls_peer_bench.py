#!/usr/bin/env python3
"""MLS workload of `imprint-bench mls --members N` through AWS mls-rs (mls_rs_uniffi).

Cipher suite 1 (MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519), basic
credentials, in-memory state, ratchet_tree extension in the Welcome.
Per run (fresh clients every run; medians over --runs):
  setup (untimed)  creator makes a group and adds a receiver (one commit); the
                   receiver joins; N fresh clients each make a KeyPackage.
  commit_ms        creator: one commit adding all N KeyPackages, then applying
                   it locally (mls-rs keeps an own commit pending until the
                   creator processes it; both steps are timed, also reported
                   apart as commit_build_ms / commit_apply_ms).
  process_ms       the receiver (an existing member) processes that commit.
  join_ms          one of the N joins from the single Welcome.
  commit_bytes / welcome_bytes   wire-format MLSMessage sizes.
  encrypt_per_s    creator encrypts --messages application messages of 1 KiB.
  decrypt_per_s    the receiver decrypts them, in order.
Messages are handed over as decoded mls-rs Message objects, as
`imprint-bench mls` hands over decoded MLSMessage values: neither side times
wire encoding or decoding. With --wire both do (to_bytes / Message.from_bytes
here), but through the Python bindings a from_bytes call costs about 50 us of
FFI and conversion overhead for a 1 KiB message, which is not mls-rs's work.

The uniffi-generated Python bindings copy every `bytes` argument into Rust one
byte per Python loop iteration (about 230 us for the 1 KiB payload of each
encrypt call, 60 ms for a 300 KB commit with --wire). Unless
--unpatched-bindings is given, that loop is replaced by one memmove, so the
timings measure mls-rs rather than the binding's byte copying. mls-rs itself
is untouched.
"""
import argparse
import ctypes
import json
import os
import statistics
import time

import mls_rs_uniffi as mls
import mls_rs_uniffi.mls_rs_uniffi as bindings

SUITE = mls.CipherSuite.CURVE25519_AES128  # RFC 9420 suite 1


def patch_bytes_lowering():
    """Copy `bytes` arguments into the Rust buffer with one memmove instead of a
    Python loop over the bytes (same resulting buffer)."""
    def write(self, value):
        n = len(value)
        with self._reserve(n):
            if n:
                dest = ctypes.cast(self.rbuf.data, ctypes.c_void_p).value + self.rbuf.len
                ctypes.memmove(dest, bytes(value), n)
    bindings._UniffiRustBufferBuilder.write = write


def client(name):
    return mls.Client(name.encode(), mls.generate_signature_keypair(SUITE), mls.client_config_default())


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return (time.perf_counter() - t0) * 1000.0, r


def one_run(members, messages, wire):
    creator, receiver = client("creator"), client("receiver")
    group = creator.create_group(None)
    setup = group.add_members([receiver.generate_key_package_message()])
    group.process_incoming_message(setup.commit_message)
    rgroup = receiver.join_group(None, setup.welcome_message).group

    joiners = [client(f"member-{i}") for i in range(members)]
    kps = [c.generate_key_package_message() for c in joiners]

    build_ms, out = timed(lambda: group.add_members(kps))
    apply_ms, _ = timed(lambda: group.process_incoming_message(out.commit_message))
    commit_wire, welcome_wire = out.commit_message.to_bytes(), out.welcome_message.to_bytes()
    if wire:
        process_ms, res = timed(lambda: rgroup.process_incoming_message(mls.Message.from_bytes(commit_wire)))
        join_ms, joined = timed(lambda: joiners[-1].join_group(None, mls.Message.from_bytes(welcome_wire)))
    else:
        process_ms, res = timed(lambda: rgroup.process_incoming_message(out.commit_message))
        join_ms, joined = timed(lambda: joiners[-1].join_group(None, out.welcome_message))
    assert res.is_commit()

    payload = os.urandom(1024)
    if wire:
        enc_ms, cts = timed(lambda: [group.encrypt_application_message(payload).to_bytes() for _ in range(messages)])
        dec_ms, pts = timed(lambda: [rgroup.process_incoming_message(mls.Message.from_bytes(c)) for c in cts])
    else:
        enc_ms, cts = timed(lambda: [group.encrypt_application_message(payload) for _ in range(messages)])
        dec_ms, pts = timed(lambda: [rgroup.process_incoming_message(c) for c in cts])
    assert all(p.data == payload for p in pts)
    assert joined.group.export_secret(b"bench", b"", 32) == group.export_secret(b"bench", b"", 32)
    return {
        "commit_ms": build_ms + apply_ms,
        "commit_build_ms": build_ms,
        "commit_apply_ms": apply_ms,
        "process_ms": process_ms,
        "join_ms": join_ms,
        "commit_bytes": len(commit_wire),
        "welcome_bytes": len(welcome_wire),
        "encrypt_per_s": messages / (enc_ms / 1000.0),
        "decrypt_per_s": messages / (dec_ms / 1000.0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--messages", type=int, default=2000, help="1 KiB application messages per run")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--wire", action="store_true", help="time wire encoding and decoding too (see the module docstring)")
    ap.add_argument("--unpatched-bindings", action="store_true",
                    help="keep the bindings' byte-by-byte copy of bytes arguments (see the module docstring)")
    args = ap.parse_args()
    if not args.unpatched_bindings:
        patch_bytes_lowering()
    if args.members < 1 or args.runs < 1 or args.messages < 1:
        raise SystemExit("error: --members, --runs and --messages must be >= 1")
    runs = [one_run(args.members, args.messages, args.wire) for _ in range(args.runs)]
    from importlib.metadata import version
    out = {"members": args.members, "peer": "mls-rs",
           "peer_version": "agentvault-mls-rs-uniffi " + version("agentvault-mls-rs-uniffi"),
           "cipher_suite": 1, "runs": args.runs, "messages": args.messages,
           "bindings_bytes_copy": "python-loop" if args.unpatched_bindings else "memmove", "wire": args.wire}
    for key in runs[0]:
        med = statistics.median(r[key] for r in runs)
        out[key] = int(med) if key.endswith("_bytes") else round(med, 3 if key.endswith("_ms") else 1)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:16} {v}")


if __name__ == "__main__":
    main()
