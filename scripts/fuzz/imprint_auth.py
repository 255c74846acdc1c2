"""Schemathesis hook: signs every generated request with a fresh did:key service-auth JWT.

Tokens are single-use (jti replay protection) and bound to one method (lxm), so a static
Authorization header would only get the fuzzer 401s. Loaded with SCHEMATHESIS_HOOKS.
"""
import base64
import json
import os
import itertools
import time
import uuid

import schemathesis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
AUDIENCE = os.environ.get("IMPRINT_SERVICE_DID", "did:web:127.0.0.1")


def base58btc(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    encoded = ""
    while number:
        number, remainder = divmod(number, 58)
        encoded = ALPHABET[remainder] + encoded
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + encoded


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Identity:
    def __init__(self) -> None:
        self.key = Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.did = "did:key:z" + base58btc(b"\xed\x01" + raw)

    def token(self, nsid: str) -> str:
        now = int(time.time())
        header = b64url(json.dumps({"alg": "EdDSA", "typ": "JWT"}).encode())
        claims = b64url(json.dumps({
            "iss": self.did, "aud": AUDIENCE, "lxm": nsid, "iat": now, "exp": now + 60, "jti": str(uuid.uuid4()),
        }).encode())
        signature = b64url(self.key.sign(f"{header}.{claims}".encode()))
        return f"{header}.{claims}.{signature}"


IDENTITIES = itertools.cycle([Identity() for _ in range(8)])


@schemathesis.auth(refresh_interval=None)
class ServiceAuth:
    def get(self, case, ctx):
        # Not the random module: Hypothesis forbids it inside strategies.
        return next(IDENTITIES)

    def set(self, case, data, ctx):
        nsid = case.operation.path.rsplit("/", 1)[-1]
        case.headers = dict(case.headers or {})
        case.headers["Authorization"] = "Bearer " + data.token(nsid)
