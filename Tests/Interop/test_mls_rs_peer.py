"""Smoke test for mls_rs_peer.py: mls-rs clients driven only through the protocol.

Run with any pytest (the driver itself runs in .venv-peers, created by
Benchmarks/peers/setup.sh if missing):  pytest Tests/Interop/test_mls_rs_peer.py
"""
import base64
import json
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def venv_python():
    py = os.path.join(ROOT, ".venv-peers", "bin", "python")
    if not os.access(py, os.X_OK):
        try:
            subprocess.run([os.path.join(ROOT, "Benchmarks", "peers", "setup.sh")], check=True,
                           capture_output=True)
        except (OSError, subprocess.CalledProcessError) as e:
            pytest.skip(f"cannot set up .venv-peers: {e}")
    return py


class Driver:
    def __init__(self):
        self.p = subprocess.Popen([venv_python(), os.path.join(HERE, "mls_rs_peer.py")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0

    def raw(self, **req):
        self.n += 1
        req["id"] = self.n
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        assert reply["id"] == self.n
        return reply

    def __call__(self, cmd, **req):
        reply = self.raw(cmd=cmd, **req)
        assert reply["ok"], reply
        return reply

    def close(self):
        self.raw(cmd="quit")
        self.p.stdin.close()
        assert self.p.wait(timeout=10) == 0


@pytest.fixture
def drv():
    d = Driver()
    yield d
    d.close()


def text(s):
    return base64.b64encode(s.encode()).decode()


def roundtrip(drv, sender, receiver, group, msg):
    ct = drv("encrypt", client=sender, group=group, plaintext=text(msg))["message"]
    got = drv("process", client=receiver, group=group, message=ct)
    assert got["kind"] == "application" and base64.b64decode(got["plaintext"]).decode() == msg
    assert got["sender"] == sender


def secrets_agree(drv, group, clients, epoch):
    vals = [drv("export_secret", client=c, group=group, label="imprint test", context="ctx", length=32)
            for c in clients]
    assert all(v["epoch"] == epoch for v in vals)
    assert len({v["secret"] for v in vals}) == 1 and len(base64.b64decode(vals[0]["secret"])) == 32
    return vals[0]["secret"]


def test_two_clients_lifecycle(drv):
    drv("new_client", name="alice")
    kp_bob = drv("new_client", name="bob")["key_package"]
    assert drv("inspect", message=kp_bob)["wire_format"] == "key_package"
    gid = drv("create_group", client="alice", group_id="00112233")["group"]
    assert gid == "00112233"

    added = drv("add", client="alice", group=gid, key_packages=[kp_bob])
    assert added["epoch"] == 1 and added["welcome"] and "ratchet_tree" not in added
    joined = drv("join", client="bob", welcome=added["welcome"])
    assert joined == {"ok": True, "id": joined["id"], "group": gid, "epoch": 1, "probed": True}
    assert [m["name"] for m in drv("members", client="bob", group=gid)["members"]] == ["alice", "bob"]

    roundtrip(drv, "alice", "bob", gid, "hello bob")
    roundtrip(drv, "bob", "alice", gid, "hello alice")
    s1 = secrets_agree(drv, gid, ["alice", "bob"], 1)

    upd = drv("update", client="bob", group=gid)
    assert upd["path"] is True and upd["epoch"] == 2
    got = drv("process", client="alice", group=gid, message=upd["commit"])
    assert got["kind"] == "commit" and got["sender"] == "bob" and got["epoch"] == 2
    s2 = secrets_agree(drv, gid, ["alice", "bob"], 2)
    assert s1 != s2
    roundtrip(drv, "alice", "bob", gid, "after update")

    rm = drv("remove", client="alice", group=gid, name="bob")
    assert rm["epoch"] == 3
    got = drv("process", client="bob", group=gid, message=rm["commit"])
    assert got["kind"] == "commit" and got.get("removed") is True
    assert [m["name"] for m in drv("members", client="alice", group=gid)["members"]] == ["alice"]


def test_multi_add_out_of_band_tree_and_remove_by_index(drv):
    drv("new_client", name="carol", ratchet_tree_extension=False)
    kps = [drv("new_client", name=n)["key_package"] for n in ("dave", "erin")]
    gid = drv("create_group", client="carol")["group"]
    added = drv("add", client="carol", group=gid, key_packages=kps)
    assert added["ratchet_tree"], "no ratchet_tree extension -> tree must come out of band"
    bad = drv.raw(cmd="join", client="dave", welcome=added["welcome"])
    assert not bad["ok"]
    for n in ("dave", "erin"):
        assert drv("join", client=n, welcome=added["welcome"], ratchet_tree=added["ratchet_tree"],
                   group=gid, epoch=1)["probed"] is False
    secrets_agree(drv, gid, ["carol", "dave", "erin"], 1)
    roundtrip(drv, "erin", "dave", gid, "multi-add works")

    idx = {m["name"]: m["index"] for m in drv("members", client="dave", group=gid)["members"]}
    assert idx == {"carol": 0, "dave": 1, "erin": 2}
    rm = drv("remove", client="dave", group=gid, index=idx["erin"])
    for n in ("carol", "erin"):
        assert drv("process", client=n, group=gid, message=rm["commit"])["epoch"] == 2
    secrets_agree(drv, gid, ["carol", "dave"], 2)


def test_proposals_then_commit(drv):
    drv("new_client", name="fay")
    kp_gus = drv("new_client", name="gus")["key_package"]
    kp_hal = drv("new_client", name="hal")["key_package"]
    gid = drv("create_group", client="fay")["group"]
    drv("join", client="gus", welcome=drv("add", client="fay", group=gid, key_packages=[kp_gus])["welcome"])
    props = drv("propose_add", client="gus", group=gid, key_packages=[kp_hal])["proposals"]
    assert drv("process", client="fay", group=gid, message=props[0])["kind"] == "proposal"
    c = drv("commit", client="fay", group=gid)
    assert c["welcome"]
    assert drv("process", client="gus", group=gid, message=c["commit"])["epoch"] == 2
    drv("join", client="hal", welcome=c["welcome"])
    secrets_agree(drv, gid, ["fay", "gus", "hal"], 2)


def test_errors_are_replies_not_crashes(drv):
    assert drv.raw(cmd="nope")["ok"] is False
    assert drv.raw(cmd="encrypt", client="nobody", plaintext="")["ok"] is False
    drv("new_client", name="ivy")
    drv("create_group", client="ivy")
    assert drv.raw(cmd="process", client="ivy", message="!!!")["ok"] is False
    assert drv.raw(cmd="process", client="ivy", message=base64.b64encode(b"\x00\x01junk").decode())["ok"] is False
    assert drv("epoch", client="ivy")["epoch"] == 0
