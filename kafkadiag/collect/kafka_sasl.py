"""SASL PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677) as client conversations.

A conversation is a generator: it yields each message to send and receives the broker's answer;
it returns when the client is done. SCRAM checks the broker's final signature, so a broker that
does not know the password cannot pass for one that does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Generator

Conversation = Generator[bytes, bytes, None]


class SaslError(Exception):
    pass


def conversation(mechanism: str, username: str, password: str, nonce: str | None = None) -> Conversation:
    if mechanism == "PLAIN":
        return _plain(username, password)
    if mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        return _scram(mechanism, username, password, nonce or secrets.token_urlsafe(24))
    raise SaslError(f"SASL {mechanism} is not spoken by kafkadiag's own client")


def _plain(username: str, password: str) -> Conversation:
    yield b"\0" + username.encode() + b"\0" + password.encode()


def _attributes(message: bytes) -> dict[str, str]:
    text = message.decode("utf-8", errors="replace")
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def _scram(mechanism: str, username: str, password: str, nonce: str) -> Conversation:
    digest = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
    name = username.replace("=", "=3D").replace(",", "=2C")
    first_bare = f"n={name},r={nonce}"
    server_first = yield f"n,,{first_bare}".encode()
    attributes = _attributes(server_first)
    if "e" in attributes:
        raise SaslError(attributes["e"])
    server_nonce, salt, iterations = attributes.get("r", ""), attributes.get("s"), attributes.get("i", "")
    if not server_nonce.startswith(nonce) or salt is None or not iterations.isdigit():
        raise SaslError("the broker's first SCRAM message is malformed")
    salted = hashlib.pbkdf2_hmac(digest().name, password.encode(), base64.b64decode(salt), int(iterations))
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    stored_key = digest(client_key).digest()
    without_proof = f"c=biws,r={server_nonce}"
    auth_message = f"{first_bare},{server_first.decode()},{without_proof}".encode()
    signature = hmac.new(stored_key, auth_message, digest).digest()
    proof = bytes(key ^ sig for key, sig in zip(client_key, signature))
    server_final = yield f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
    final = _attributes(server_final)
    if "e" in final:
        raise SaslError(final["e"])
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    expected = hmac.new(server_key, auth_message, digest).digest()
    if not hmac.compare_digest(base64.b64decode(final.get("v", "")), expected):
        raise SaslError("the broker's SCRAM signature does not match: it does not know this password")
