"""SCRAM-SHA-256 and SCRAM-SHA-512, server side (RFC 5802, RFC 7677; Kafka's KIP-84).

Credentials are Kafka's: a random salt, an iteration count (4096..16384, as Kafka accepts),
StoredKey = H(HMAC(SaltedPassword, "Client Key")) and ServerKey = HMAC(SaltedPassword,
"Server Key"), where SaltedPassword = PBKDF2-HMAC(password, salt, iterations). The server
never holds the password or the salted password, only these keys.

One `ScramServer` per authentication, two steps:
1. client-first `n,,n=<user>,r=<client nonce>[,ext]` -> server-first `r=<nonce>,s=<salt>,i=<n>`;
2. client-final `c=biws,r=<nonce>,p=<proof>` -> server-final `v=<server signature>`.
A failed check raises `ScramError`, whose message never contains credentials. An unknown
user gets a made-up salt and fails at step 2, like a wrong password, so that the exchange
does not tell which user names exist.

Gaps: no channel binding (a `p=` GS2 header is refused, `y` is accepted as RFC 5802
allows); no delegation tokens (the `tokenauth` extension is refused); usernames in SASLprep
form are compared as sent.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Callable

MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384      # Kafka's ScramMechanism bounds
DEFAULT_ITERATIONS = 4096
# Kafka's mechanism ids in DescribeUserScramCredentials / AlterUserScramCredentials (KIP-554).
MECHANISM_IDS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES = {number: name for name, number in MECHANISM_IDS.items()}
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class ScramError(Exception):
    """The exchange failed; the message is safe to log (no secrets)."""


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def digest_size(mechanism: str) -> int:
    return hashlib.new(_HASHES[mechanism]).digest_size


def credential_from_salted_password(mechanism: str, salted_password: bytes, salt: bytes,
                                    iterations: int) -> ScramCredential:
    """What AlterUserScramCredentials sends (the client salts the password) -> what we keep."""
    digest = _HASHES[mechanism]
    client_key = hmac.digest(salted_password, b"Client Key", digest)
    return ScramCredential(salt=salt, stored_key=hashlib.new(digest, client_key).digest(),
                           server_key=hmac.digest(salted_password, b"Server Key", digest), iterations=iterations)


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)


def credential_from_password(mechanism: str, password: str, *, iterations: int = DEFAULT_ITERATIONS,
                             salt: bytes | None = None) -> ScramCredential:
    salt = secrets.token_bytes(32) if salt is None else salt
    return credential_from_salted_password(mechanism, salted_password(mechanism, password, salt, iterations),
                                           salt, iterations)


class ScramServer:
    """One SCRAM authentication. `lookup(user)` returns the user's credential or None."""

    def __init__(self, mechanism: str, lookup: Callable[[str], ScramCredential | None], decoy_key: bytes,
                 server_nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24)) -> None:
        self.mechanism = mechanism
        self._digest = _HASHES[mechanism]
        self._lookup = lookup
        self._decoy_key = decoy_key          # per-process secret: made-up salts for unknown users
        self._server_nonce = server_nonce    # a seam for RFC 7677's test vector
        self._step = 0
        self.username: str | None = None
        self.complete = False

    def evaluate(self, token: bytes) -> bytes:
        step, self._step = self._step, self._step + 1
        if step == 0:
            return self._client_first(token)
        if step == 1:
            return self._client_final(token)
        raise ScramError("unexpected SCRAM message after the exchange ended")

    def _client_first(self, token: bytes) -> bytes:
        text = _text(token)
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or (parts[1] and not parts[1].startswith("a=")):
            raise ScramError("malformed client-first message (channel binding is not supported)")
        self._gs2_header = f"{parts[0]},{parts[1]},"
        self._client_first_bare = parts[2]
        fields = _fields(self._client_first_bare)
        if "n" not in fields or "r" not in fields or not fields["r"]:
            raise ScramError("client-first message without user name or nonce")
        if set(fields) - {"n", "r"}:
            raise ScramError("SCRAM extensions are not supported (no delegation tokens)")
        self.username = _unescape(fields["n"])
        if parts[1] and _unescape(parts[1][2:]) != self.username:
            raise ScramError("authorization id differs from the user name")
        self._credential = self._lookup(self.username) or self._decoy(self.username)
        self._nonce = fields["r"] + self._server_nonce()
        self._server_first = (f"r={self._nonce},s={base64.b64encode(self._credential.salt).decode()},"
                              f"i={self._credential.iterations}")
        return self._server_first.encode()

    def _client_final(self, token: bytes) -> bytes:
        text = _text(token)
        without_proof, sep, proof_field = text.rpartition(",p=")
        fields = _fields(without_proof) if sep else {}
        if not sep or fields.get("c") != base64.b64encode(self._gs2_header.encode()).decode():
            raise ScramError("malformed client-final message")
        # Kafka's ScramSaslServer checks only that the nonce ends with the server-first one:
        # librdkafka before 2.1 (Debian 12's kcat) sends its own nonce in front of it again.
        if not fields.get("r", "").endswith(self._nonce):
            raise ScramError("nonce mismatch")
        try:
            proof = base64.b64decode(proof_field, validate=True)
        except ValueError:
            raise ScramError("malformed client proof") from None
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = hmac.digest(self._credential.stored_key, auth_message, self._digest)
        if len(proof) != len(signature):
            raise ScramError("invalid credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(self._digest, client_key).digest(), self._credential.stored_key):
            raise ScramError("invalid credentials")
        self.complete = True
        verifier = hmac.digest(self._credential.server_key, auth_message, self._digest)
        return b"v=" + base64.b64encode(verifier)

    def _decoy(self, username: str) -> ScramCredential:
        """A credential no password matches, with a salt stable per user name."""
        salt = hmac.digest(self._decoy_key, username.encode(), "sha256")
        return ScramCredential(salt=salt, stored_key=secrets.token_bytes(32), server_key=b"",
                               iterations=DEFAULT_ITERATIONS)


def _text(token: bytes) -> str:
    try:
        return bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        raise ScramError("SCRAM message is not UTF-8") from None


def _fields(text: str) -> dict[str, str]:
    fields = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or len(name) != 1 or name in fields:
            raise ScramError("malformed SCRAM attribute")
        fields[name] = value
    return fields


def _unescape(name: str) -> str:
    if "=" in name.replace("=2C", "").replace("=3D", ""):
        raise ScramError("malformed user name")
    return name.replace("=2C", ",").replace("=3D", "=")
