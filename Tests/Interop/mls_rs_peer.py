#!/usr/bin/env python3
"""Long-running MLS interop peer backed by AWS mls-rs (mls_rs_uniffi).

Reads one JSON object per line on stdin, writes one JSON object per line on
stdout. All state (clients, key-package private keys, groups) lives in this
process only: mls_rs_uniffi keeps key-package secrets in memory. Binary values
are standard base64; group ids are hex. See Tests/Interop/README.md.
"""
import base64
import json
import os
import sys
import traceback

import mls_rs_uniffi as mls

SUITE = mls.CipherSuite.CURVE25519_AES128  # RFC 9420 cipher suite 1
WIRE = {1: "public", 2: "private", 3: "welcome", 4: "group_info", 5: "key_package"}


class DriverError(Exception):
    pass


# --- minimal RFC 9420 TLS readers (only what the bindings do not expose) ---

class Reader:
    def __init__(self, data):
        self.b, self.i = data, 0

    def take(self, n):
        if self.i + n > len(self.b):
            raise DriverError("truncated MLS structure")
        v = self.b[self.i:self.i + n]
        self.i += n
        return v

    def uint(self, n):
        return int.from_bytes(self.take(n), "big")

    def varint(self):
        first = self.b[self.i] if self.i < len(self.b) else None
        if first is None or first >> 6 == 3:
            raise DriverError("bad MLS varint")
        n = 1 << (first >> 6)
        v = self.uint(n)
        return v & ((1 << (8 * n - 2)) - 1)

    def opaque(self):
        return self.take(self.varint())

    def vector(self):
        return Reader(self.opaque())

    def done(self):
        return self.i >= len(self.b)


def message_header(data):
    """MLSMessage -> {wire_format, group_id?, epoch?, content_type?, path?}."""
    r = Reader(data)
    r.uint(2)  # version
    wf = r.uint(2)
    out = {"wire_format": WIRE.get(wf, wf)}
    if wf in (1, 2):
        out["group_id"] = r.opaque().hex()
        out["epoch"] = r.uint(8)
        if wf == 2:
            out["content_type"] = {1: "application", 2: "proposal", 3: "commit"}.get(r.uint(1))
        else:
            sender_type = r.uint(1)
            if sender_type in (1, 2):
                r.uint(4)
            r.opaque()  # authenticated_data
            ct = r.uint(1)
            out["content_type"] = {1: "application", 2: "proposal", 3: "commit"}.get(ct)
            if ct == 3:
                r.opaque()  # proposals
                out["path"] = r.uint(1) == 1
    return out


def tree_members(tree_bytes):
    """ratchet_tree -> [{index, name}] for the occupied leaves (basic credentials)."""
    r = Reader(tree_bytes).vector()
    members, node = [], 0
    while not r.done():
        present = r.uint(1)
        if present:
            kind = r.uint(1)
            if kind == 1:  # leaf
                r.opaque()  # encryption_key
                r.opaque()  # signature_key
                ctype = r.uint(2)
                ident = r.opaque() if ctype == 1 else None
                if ctype != 1:
                    raise DriverError(f"credential type {ctype} not parsed")
                name = ident.decode("utf-8", "replace")
                members.append({"index": node // 2, "name": name})
                for _ in range(5):
                    r.opaque()  # capabilities
                source = r.uint(1)
                if source == 1:
                    r.uint(16)  # lifetime
                elif source == 3:
                    r.opaque()  # parent_hash
                r.opaque()  # extensions
                r.opaque()  # signature
            else:  # parent
                r.opaque()
                r.opaque()
                r.opaque()
        node += 1
    return members


# --- driver state ---

def b64(data):
    return base64.b64encode(data).decode() if data is not None else None


def unb64(s, field):
    try:
        return base64.b64decode(s, validate=True)
    except (TypeError, ValueError):
        raise DriverError(f"{field}: not standard base64")


class Peer:
    def __init__(self):
        self.clients = {}  # name -> dict(client, ext, groups: {gid: {"group", "epoch", "removed"}})

    def client(self, req):
        name = req.get("client")
        if name not in self.clients:
            raise DriverError(f"unknown client {name!r}")
        return self.clients[name]

    def group(self, req):
        c = self.client(req)
        gid = req.get("group")
        if gid is None and len(c["groups"]) == 1:
            gid = next(iter(c["groups"]))
        if gid not in c["groups"]:
            raise DriverError(f"client {req.get('client')!r} has no group {gid!r}")
        return c, gid, c["groups"][gid]

    def name_of(self, identity):
        for name, c in self.clients.items():
            if c["client"].signing_identity() == identity:
                return name
        return None

    def identity_of(self, g, req):
        if "name" in req:
            name = req["name"]
        elif "index" in req:
            by_index = {m["index"]: m["name"] for m in tree_members(g["group"].export_tree().bytes)}
            if req["index"] not in by_index:
                raise DriverError(f"no member at leaf index {req['index']}")
            name = by_index[req["index"]]
        else:
            raise DriverError("give name or index")
        if name not in self.clients:
            raise DriverError(f"member {name!r} is not a client of this driver: mls_rs_uniffi can only "
                              "name a member by a SigningIdentity object, which it cannot build from bytes")
        return self.clients[name]["client"].signing_identity()

    def commit_reply(self, g, out):
        """Apply our own pending commit (mls-rs applies it on processing it) and describe it."""
        res = g["group"].process_incoming_message(out.commit_message)
        g["epoch"] += 1
        if res.is_commit() and res.effect.is_removed():
            g["removed"] = True
        data = out.commit_message.to_bytes()
        reply = {"commit": b64(data), "path": message_header(data).get("path"), "epoch": g["epoch"]}
        if out.welcome_message is not None:
            reply["welcome"] = b64(out.welcome_message.to_bytes())
        if out.ratchet_tree is not None:
            reply["ratchet_tree"] = b64(out.ratchet_tree.bytes)
        return reply

    # --- commands ---

    def cmd_new_client(self, req):
        name = req.get("name")
        if not isinstance(name, str) or not name or name in self.clients:
            raise DriverError("new_client needs a new, non-empty name")
        ext = bool(req.get("ratchet_tree_extension", True))
        cfg = mls.client_config_default()
        if not ext:
            cfg = mls.ClientConfig(group_state_storage=cfg.group_state_storage, use_ratchet_tree_extension=False)
        client = mls.Client(name.encode(), mls.generate_signature_keypair(SUITE), cfg)
        self.clients[name] = {"client": client, "ext": ext, "groups": {}}
        return {"key_package": b64(client.generate_key_package_message().to_bytes())}

    def cmd_key_package(self, req):
        return {"key_package": b64(self.client(req)["client"].generate_key_package_message().to_bytes())}

    def cmd_create_group(self, req):
        c = self.client(req)
        gid = bytes.fromhex(req["group_id"]) if req.get("group_id") else os.urandom(16)
        if gid.hex() in c["groups"]:
            raise DriverError("group id already in use by this client")
        c["groups"][gid.hex()] = {"group": c["client"].create_group(gid), "epoch": 0, "removed": False}
        return {"group": gid.hex(), "epoch": 0}

    def cmd_add(self, req):
        c, _, g = self.group(req)
        kps = [mls.Message.from_bytes(unb64(k, "key_packages")) for k in req.get("key_packages", [])]
        if not kps:
            raise DriverError("add needs key_packages")
        return self.commit_reply(g, g["group"].add_members(kps))

    def cmd_join(self, req):
        c = self.client(req)
        tree = mls.RatchetTree(bytes=unb64(req["ratchet_tree"], "ratchet_tree")) if req.get("ratchet_tree") else None
        group = c["client"].join_group(tree, mls.Message.from_bytes(unb64(req["welcome"], "welcome"))).group
        gid, epoch = req.get("group"), req.get("epoch")
        probed = gid is None or epoch is None
        if probed:
            # The bindings expose neither group id nor epoch: read both from the
            # clear header of a throw-away application message (costs one
            # generation of our sender ratchet; receivers must tolerate the gap).
            h = message_header(group.encrypt_application_message(b"").to_bytes())
            gid, epoch = gid or h["group_id"], h["epoch"] if epoch is None else epoch
        c["groups"][gid] = {"group": group, "epoch": int(epoch), "removed": False}
        return {"group": gid, "epoch": int(epoch), "probed": probed}

    def cmd_encrypt(self, req):
        _, _, g = self.group(req)
        msg = g["group"].encrypt_application_message(unb64(req.get("plaintext", ""), "plaintext"))
        return {"message": b64(msg.to_bytes()), "epoch": g["epoch"]}

    def cmd_process(self, req):
        _, _, g = self.group(req)
        data = unb64(req["message"], "message")
        header = message_header(data)
        res = g["group"].process_incoming_message(mls.Message.from_bytes(data))
        reply = {}
        if res.is_application_message():
            reply = {"kind": "application", "plaintext": b64(res.data), "sender": self.name_of(res.sender)}
        elif res.is_commit():
            g["epoch"] = header.get("epoch", g["epoch"]) + 1
            reply = {"kind": "commit", "sender": self.name_of(res.committer), "path": header.get("path")}
            if res.effect.is_removed():
                g["removed"] = reply["removed"] = True
        elif res.is_received_proposal():
            reply = {"kind": "proposal", "sender": self.name_of(res.sender)}
        else:
            reply = {"kind": type(res).__name__.split(".")[-1].lower()}
        reply["epoch"] = g["epoch"]
        return reply

    def cmd_update(self, req):
        _, _, g = self.group(req)
        return self.commit_reply(g, g["group"].commit())

    cmd_commit = cmd_update

    def cmd_remove(self, req):
        _, _, g = self.group(req)
        return self.commit_reply(g, g["group"].remove_members([self.identity_of(g, req)]))

    def cmd_propose_add(self, req):
        _, _, g = self.group(req)
        kps = [mls.Message.from_bytes(unb64(k, "key_packages")) for k in req.get("key_packages", [])]
        return {"proposals": [b64(p.to_bytes()) for p in g["group"].propose_add_members(kps)]}

    def cmd_propose_remove(self, req):
        _, _, g = self.group(req)
        props = g["group"].propose_remove_members([self.identity_of(g, req)])
        return {"proposals": [b64(p.to_bytes()) for p in props]}

    def cmd_export_secret(self, req):
        _, _, g = self.group(req)
        secret = g["group"].export_secret(req["label"].encode(), req.get("context", "").encode(),
                                          int(req.get("length", 32)))
        return {"secret": b64(secret), "hex": secret.hex(), "epoch": g["epoch"]}

    def cmd_epoch(self, req):
        _, _, g = self.group(req)
        return {"epoch": g["epoch"], "removed": g["removed"]}

    def cmd_members(self, req):
        _, _, g = self.group(req)
        return {"members": tree_members(g["group"].export_tree().bytes), "epoch": g["epoch"]}

    def cmd_tree(self, req):
        _, _, g = self.group(req)
        return {"ratchet_tree": b64(g["group"].export_tree().bytes)}

    def cmd_inspect(self, req):
        return message_header(unb64(req["message"], "message"))

    def handle(self, req):
        fn = getattr(self, "cmd_" + str(req.get("cmd")), None)
        if fn is None:
            raise DriverError(f"unknown cmd {req.get('cmd')!r}")
        return fn(req)


def main():
    peer = Peer()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = {}
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise DriverError("each line must be a JSON object")
            if req.get("cmd") == "quit":
                print(json.dumps({"ok": True, **({"id": req["id"]} if "id" in req else {})}), flush=True)
                break
            reply = {"ok": True, **peer.handle(req)}
        except (DriverError, mls.Error, mls.InternalError, KeyError, ValueError, TypeError) as e:
            msg = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            reply = {"ok": False, "error": f"{type(e).__name__}: {msg}"}
            if os.environ.get("MLS_RS_PEER_DEBUG"):
                traceback.print_exc(file=sys.stderr)
        if isinstance(req, dict) and "id" in req:
            reply["id"] = req["id"]
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
