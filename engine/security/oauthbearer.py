"""SASL OAUTHBEARER on the broker (RFC 7628; Kafka's KIP-255 and KIP-768): the client sends a
JWT, the broker checks it and takes its principal from one of its claims.

The client's first message is `n,[a=authzid],` `\\x01auth=Bearer <token>\\x01` followed by
optional `key=value\\x01` extensions and a final `\\x01`. A good token completes the login as
`User:<claim>`; a bad one is answered with RFC 7628's error document
(`{"status":"invalid_token"}`), the client acknowledges it with `\\x01`, and the login fails
with the reason (the token itself is never echoed or logged).

Two validators, chosen as Kafka chooses its callback handlers:
- with `sasl.oauthbearer.jwks.endpoint.url` (https://, http:// or file://), KIP-768's: the
  token's signature must verify with a key of that JWKS (RS*, PS*, ES* algorithms, matched by
  `kid`), `exp` must be in the future, and `aud` and `iss` must match
  `sasl.oauthbearer.expected.audience` (comma-separated) and `sasl.oauthbearer.expected.issuer`
  when set; `sasl.oauthbearer.clock.skew.seconds` (30) of leeway. The keys are fetched when
  the listener is built (a failure there stops the start, as Kafka's does), then refreshed
  every `sasl.oauthbearer.jwks.endpoint.refresh.ms` (1 h) on a background thread; a token
  signed with an unknown `kid` is refused and brings the next refresh forward, no sooner than
  `sasl.oauthbearer.jwks.endpoint.retry.backoff.ms` (100 ms) after the last, as Kafka's
  RefreshingHttpsJwks does. Fetching never runs on the event loop.
- without it, Kafka's default (OAuthBearerUnsecuredValidatorCallbackHandler): unsigned tokens
  (`"alg":"none"`) are accepted with their `exp` and principal claim checked. That is for
  development only, as in Kafka, and the broker logs a warning when a listener uses it.
The principal is the claim `sasl.oauthbearer.sub.claim.name` names (`sub`); the token's `exp`
bounds the login's session (KIP-368: engine/security/session.py answers the time left as the
session lifetime, and closes a connection whose session ran out at its next request that is
not a re-authentication).
Gaps: SASL extensions are read and ignored (Kafka passes them to a custom validator); no
custom validator classes.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from typing import NamedTuple, Protocol

import jwt

log = logging.getLogger(__name__)

OAUTH_CONFIGS = ("sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.expected.audience",
                 "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.sub.claim.name",
                 "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.clock.skew.seconds",
                 "sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms")
SIGNED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
ERROR_DOCUMENT = json.dumps({"status": "invalid_token"}).encode()
_FETCH_TIMEOUT_S = 10


class TokenRejected(Exception):
    """Why a token was refused, in words safe to tell the client (never the token)."""


class ValidToken(NamedTuple):
    """What a good token says (Kafka's OAuthBearerToken): whom it names, and until when."""
    principal: str
    expires_ms: int              # its `exp`, in ms since the epoch (Kafka's lifetimeMs)


class Validator(Protocol):
    def validate(self, token: str) -> ValidToken:
        """The token's principal and expiry; raises TokenRejected."""

    def close(self) -> None:
        """Stop any background work."""


def bearer_token(message: bytes) -> str:
    """The token of a client's first OAUTHBEARER message; raises TokenRejected."""
    try:
        text = bytes(message).decode("utf-8")
    except UnicodeDecodeError:
        raise TokenRejected("the OAUTHBEARER message is not UTF-8") from None
    header, separator, rest = text.partition("\x01")
    if not separator or not header.startswith(("n,", "y,")) or not rest.endswith("\x01\x01"):
        raise TokenRejected("the OAUTHBEARER message is malformed (RFC 7628)")
    pairs = dict(pair.partition("=")[::2] for pair in rest[:-2].split("\x01") if pair)
    scheme, _, token = pairs.get("auth", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise TokenRejected("the OAUTHBEARER message has no Bearer token")
    return token.strip()


def validator(configs: dict[str, str]) -> Validator:
    """The validator the `sasl.oauthbearer.*` configs ask for (see the module docstring)."""
    claim = configs.get("sasl.oauthbearer.sub.claim.name") or "sub"
    skew = int(configs.get("sasl.oauthbearer.clock.skew.seconds") or 30)
    url = configs.get("sasl.oauthbearer.jwks.endpoint.url")
    if not url:
        log.warning("OAUTHBEARER accepts unsecured (unsigned) tokens: set sasl.oauthbearer.jwks.endpoint.url "
                    "to verify them against your identity provider's keys")
        return UnsecuredValidator(claim, skew)
    audience = [a.strip() for a in (configs.get("sasl.oauthbearer.expected.audience") or "").split(",") if a.strip()]
    return JwksValidator(url, claim=claim, skew_s=skew, audience=audience or None,
                         issuer=configs.get("sasl.oauthbearer.expected.issuer") or None,
                         refresh_ms=int(configs.get("sasl.oauthbearer.jwks.endpoint.refresh.ms") or 3_600_000),
                         backoff_ms=int(configs.get("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms") or 100))


def _valid(claims: dict, claim: str) -> ValidToken:
    value = claims.get(claim)
    if not isinstance(value, str) or not value.strip():
        raise TokenRejected(f"the token has no {claim!r} claim to name its principal")
    return ValidToken(value.strip(), int(float(claims["exp"]) * 1000))    # `exp`: required and checked


class UnsecuredValidator:
    """Kafka's default: an unsigned token's `exp` and principal claim are checked."""

    def __init__(self, claim: str, skew_s: int) -> None:
        self.claim, self.skew_s = claim, skew_s

    def validate(self, token: str) -> ValidToken:
        try:
            if jwt.get_unverified_header(token).get("alg") != "none":
                raise TokenRejected("this listener takes unsecured tokens (\"alg\":\"none\") only")
            claims = jwt.decode(token, options={"verify_signature": False, "verify_exp": True, "require": ["exp"]},
                                leeway=self.skew_s)
        except jwt.ExpiredSignatureError:
            raise TokenRejected("the token has expired") from None
        except jwt.PyJWTError as exc:
            raise TokenRejected(f"the token is not valid: {exc}") from None
        return _valid(claims, self.claim)

    def close(self) -> None:
        pass


class JwksValidator:
    """KIP-768: signed tokens checked against the keys of a JWKS, refreshed off the event loop."""

    def __init__(self, url: str, *, claim: str, skew_s: int, audience: list[str] | None, issuer: str | None,
                 refresh_ms: int, backoff_ms: int) -> None:
        self.url, self.claim, self.skew_s = url, claim, skew_s
        self.audience, self.issuer = audience, issuer
        self._refresh_s, self._backoff_s = refresh_ms / 1000, backoff_ms / 1000
        self._keys: dict[str, jwt.PyJWK] = self._fetch()        # at start: a failure stops the listener
        self._fetched_at = time.monotonic()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._refresh_loop, name="oauthbearer-jwks", daemon=True)
        self._thread.start()

    def validate(self, token: str) -> ValidToken:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenRejected(f"the token is not valid: {exc}") from None
        if header.get("alg") not in SIGNED_ALGORITHMS:
            raise TokenRejected(f"the token's algorithm {header.get('alg')!r} is not accepted here (a signed token "
                                f"is needed: {', '.join(SIGNED_ALGORITHMS)})")
        kid = header.get("kid")
        candidates = list(self._keys.values()) if kid is None else [self._keys[kid]] if kid in self._keys else []
        if not candidates:
            self._wake.set()           # a key the identity provider may have added since
            raise TokenRejected(f"no key with the token's kid {kid!r} in the JWKS")
        for key in candidates:      # a token without a kid is tried with every key, as jose4j does
            try:
                claims = jwt.decode(token, key, algorithms=list(SIGNED_ALGORITHMS), audience=self.audience,
                                    issuer=self.issuer, leeway=self.skew_s,
                                    options={"require": ["exp"], "verify_aud": self.audience is not None})
            except jwt.InvalidSignatureError:
                continue
            except jwt.ExpiredSignatureError:
                raise TokenRejected("the token has expired") from None
            except jwt.PyJWTError as exc:
                raise TokenRejected(f"the token is not valid: {exc}") from None
            return _valid(claims, self.claim)
        raise TokenRejected("the token's signature does not verify with the JWKS's keys")

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def _fetch(self) -> dict[str, jwt.PyJWK]:
        with urllib.request.urlopen(self.url, timeout=_FETCH_TIMEOUT_S) as answer:   # noqa: S310 - the operator's URL
            document = json.load(answer)
        keys = jwt.PyJWKSet.from_dict(document).keys
        return {key.key_id: key for key in keys if key.key_id}

    def _refresh_loop(self) -> None:
        while not self._closed:
            self._wake.wait(self._refresh_s)
            if self._closed:
                return
            since = time.monotonic() - self._fetched_at
            if since < self._backoff_s:
                time.sleep(self._backoff_s - since)
            self._wake.clear()
            try:
                self._keys = self._fetch()
            except Exception as exc:  # noqa: BLE001 - keep the old keys; the next round tries again
                log.warning("Cannot refresh the JWKS from %s: %s", self.url, exc)
            self._fetched_at = time.monotonic()
