"""The console's access tokens for SASL OAUTHBEARER (RFC 7628), got from the identity provider's
token endpoint with the OAuth 2 client credentials grant (RFC 6749 section 4.4), as Kafka's own
OIDC login does (KIP-768: `sasl.oauthbearer.token.endpoint.url`, `clientId`, `clientSecret`,
`scope`).

- The request: POST `grant_type=client_credentials` (and `scope` when set), with the client id
  and secret in HTTP Basic authentication (RFC 6749 section 2.3.1, as Kafka's Java client and
  librdkafka send them), over the standard library's urllib with a timeout. An https endpoint's
  certificate is checked against the system's trust store (OpenSSL's `SSL_CERT_FILE` replaces
  it). Redirects are not followed: they would carry the credentials to another address.
- `TOKENS` keeps each token by endpoint, client id, scope and a digest of the secret (a wrong
  secret never gets a token fetched with the right one) until shortly before it expires
  (`expires_in`, else the JWT's `exp`): every admin client, producer and reader the console
  opens reuses it. One fetch per key at a time: threads asking meanwhile wait for it.
- A failure is a TokenEndpointError, a GatewayError whose sentence names the endpoint and the
  HTTP status or the OAuth `error` (RFC 6749 section 5.2), never the secret or a token.

This module maps a cluster's OAuth settings to its clients' options: `token_provider()` is
what kafka-python takes as `sasl_oauth_token_provider`; `librdkafka_oauth_options()` gives
librdkafka (the Spark data source) the same client, for its own `oidc` login, which sends the
same request and keeps its own token.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka.net.sasl.oauth import AbstractTokenProvider

from console.kafka_gateway.errors import GatewayError
from console.kafka_gateway.records import ConnectionSettings

REFRESH_MARGIN_SECONDS = 60.0     # a token is renewed this long before it expires (at most a fifth of its life)
UNKNOWN_LIFETIME_SECONDS = 60.0   # kept this long when neither expires_in nor a JWT exp says
MAX_ANSWER_BYTES = 1 << 20
_TEXT_LIMIT = 200


class TokenEndpointError(GatewayError):
    """The token endpoint refused the client, or could not be asked: says which endpoint and why."""


@dataclass(frozen=True)
class ClientCredentials:
    """An OAuth 2 client of the console: where it asks for tokens, and who it is."""

    token_endpoint_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str = ""

    @classmethod
    def of(cls, settings: ConnectionSettings) -> ClientCredentials:
        return cls(token_endpoint_url=settings.oauth_token_endpoint_url, client_id=settings.oauth_client_id,
                   client_secret=settings.oauth_client_secret, scope=settings.oauth_scope)

    def cache_key(self) -> tuple[str, str, str, str]:
        digest = hashlib.sha256(f"{self.client_id}\0{self.client_secret}".encode()).hexdigest()
        return (self.token_endpoint_url, self.client_id, self.scope, digest)


@dataclass(frozen=True)
class AccessToken:
    value: str = field(repr=False)
    lifetime_seconds: float


@dataclass(frozen=True)
class _Cached:
    value: str = field(repr=False)
    renew_at: float                  # clock() past which the token is fetched again


class TokenCache:
    """Access tokens by client, each until shortly before it expires. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tokens: dict[tuple[str, ...], _Cached] = {}
        self._fetching: dict[tuple[str, ...], threading.Lock] = {}
        self._lock = threading.Lock()

    def token(self, credentials: ClientCredentials, *, timeout_s: float) -> str:
        """The client's token: the cached one while it is fresh, else one fetched now (once,
        however many threads ask at the same moment). TokenEndpointError when none can be had."""
        key = credentials.cache_key()
        cached = self._fresh(key)
        if cached is not None:
            return cached
        with self._lock:
            fetching = self._fetching.setdefault(key, threading.Lock())
        # Another thread's fetch is waited for as long as one fetch may take, not once per waiter.
        if not fetching.acquire(timeout=timeout_s):
            raise TokenEndpointError(_no_answer(credentials.token_endpoint_url, timeout_s))
        try:
            cached = self._fresh(key)           # the fetch just waited for may have got it
            if cached is not None:
                return cached
            asked_at = self._clock()
            token = request_token(credentials=credentials, timeout_s=timeout_s)
            with self._lock:
                self._forget_expired(now=asked_at)
                self._tokens[key] = _Cached(token.value, asked_at + _renew_after(token.lifetime_seconds))
            return token.value
        finally:
            fetching.release()

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()

    def _fresh(self, key: tuple[str, ...]) -> str | None:
        entry = self._tokens.get(key)
        return entry.value if entry is not None and self._clock() < entry.renew_at else None

    def _forget_expired(self, *, now: float) -> None:
        """Tokens of a rotated secret or a removed cluster are not kept past their time."""
        for key in [k for k, entry in self._tokens.items() if entry.renew_at <= now]:
            del self._tokens[key]


def _renew_after(lifetime: float) -> float:
    return lifetime - min(REFRESH_MARGIN_SECONDS, lifetime / 5)


TOKENS = TokenCache()


class ClientCredentialsTokenProvider(AbstractTokenProvider):
    """kafka-python's `sasl_oauth_token_provider`: the client's token from `TOKENS`. kafka-python
    asks at every login, from its I/O thread, so a renewal there is one request at most."""

    def __init__(self, *, credentials: ClientCredentials, timeout_s: float, cache: TokenCache = TOKENS) -> None:
        super().__init__()
        self._credentials, self._timeout_s, self._cache = credentials, timeout_s, cache

    def token(self) -> str:
        return self._cache.token(self._credentials, timeout_s=self._timeout_s)


def token_provider(settings: ConnectionSettings, *, timeout_s: float) -> ClientCredentialsTokenProvider:
    """The provider for a cluster's OAuth client, its token already fetched (or reused): a
    refused client is a TokenEndpointError here, in the caller's thread, where a page reads it,
    rather than a line in kafka-python's log and a bootstrap that times out."""
    provider = ClientCredentialsTokenProvider(credentials=ClientCredentials.of(settings), timeout_s=timeout_s)
    provider.token()
    return provider


def librdkafka_oauth_options(settings: ConnectionSettings) -> dict[str, str]:
    """librdkafka's OAUTHBEARER settings for the cluster's OAuth client (the secret only in memory)."""
    options = {"sasl.mechanism": settings.sasl_mechanism, "sasl.oauthbearer.method": "oidc",
               "sasl.oauthbearer.token.endpoint.url": settings.oauth_token_endpoint_url,
               "sasl.oauthbearer.client.id": settings.oauth_client_id,
               "sasl.oauthbearer.client.secret": settings.oauth_client_secret}
    if settings.oauth_scope:
        options["sasl.oauthbearer.scope"] = settings.oauth_scope
    return options


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None        # urllib raises HTTPError with the 3xx status instead


_OPENER = urllib.request.build_opener(_NoRedirects)


def request_token(*, credentials: ClientCredentials, timeout_s: float) -> AccessToken:
    """One client credentials grant at the token endpoint (no cache)."""
    url = credentials.token_endpoint_url
    form = {"grant_type": "client_credentials", **({"scope": credentials.scope} if credentials.scope else {})}
    basic = base64.b64encode(f"{credentials.client_id}:{credentials.client_secret}".encode()).decode("ascii")
    request = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode("ascii"), method="POST", headers={
        "Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json", "User-Agent": "kafka-console"})
    try:
        with _OPENER.open(request, timeout=timeout_s) as response:
            status, body = response.status, response.read(MAX_ANSWER_BYTES)
    except urllib.error.HTTPError as exc:
        body = _read_quietly(exc)
        raise TokenEndpointError(_refusal(credentials, exc.code, exc.reason, body)) from None
    except TimeoutError:
        raise TokenEndpointError(_no_answer(url, timeout_s)) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise TokenEndpointError(_no_answer(url, timeout_s)) from None
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise TokenEndpointError(f"Cannot reach the OAuth token endpoint {url}: the console does not trust its "
                                     f"certificate ({reason.verify_message}); SSL_CERT_FILE names the CA bundle "
                                     "to trust.") from None
        raise TokenEndpointError(f"Cannot reach the OAuth token endpoint {url}: "
                                 f"{_scrubbed(str(getattr(reason, 'strerror', None) or reason), credentials)}.") \
            from None
    except (OSError, ValueError) as exc:
        raise TokenEndpointError(f"Cannot reach the OAuth token endpoint {url}: "
                                 f"{_scrubbed(str(exc) or type(exc).__name__, credentials)}.") from None
    return _access_token(credentials, status, body)


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read(MAX_ANSWER_BYTES) if exc.fp is not None else b""
    except OSError:
        return b""
    finally:
        exc.close()


def _access_token(credentials: ClientCredentials, status: int, body: bytes) -> AccessToken:
    """RFC 6749 section 5.1: `access_token`, `token_type` Bearer, `expires_in` (recommended)."""
    url = credentials.token_endpoint_url
    answer = _json_object(body)
    if answer is None:
        raise TokenEndpointError(f"The OAuth token endpoint {url} answered HTTP {status} with no JSON object: "
                                 "is it the identity provider's token endpoint?")
    token, token_type = answer.get("access_token"), answer.get("token_type")
    if not isinstance(token, str) or not token:
        raise TokenEndpointError(f"The OAuth token endpoint {url} answered HTTP {status} without an access_token.")
    if token_type is not None and str(token_type).lower() != "bearer":
        raise TokenEndpointError(f"The OAuth token endpoint {url} gave a token of type "
                                 f"{_scrubbed(str(token_type), credentials)!r}, not Bearer.")
    return AccessToken(token, _lifetime(answer.get("expires_in"), token))


def _lifetime(expires_in, token: str) -> float:
    try:
        seconds = float(expires_in)
    except (TypeError, ValueError):
        seconds = 0.0
    if seconds > 0:
        return seconds
    expires_at = _jwt_expiry(token)
    return max(0.0, expires_at - time.time()) if expires_at is not None else UNKNOWN_LIFETIME_SECONDS


def _jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT, read without checking the signature (the broker checks it)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None


def _refusal(credentials: ClientCredentials, status: int, reason: str, body: bytes) -> str:
    url = credentials.token_endpoint_url
    answer = _json_object(body) or {}
    error, description = answer.get("error"), answer.get("error_description")
    if 300 <= status < 400:
        return (f"The OAuth token endpoint {url} answered HTTP {status} (a redirect, which the console does not "
                "follow with the client's credentials): give the token endpoint's own URL.")
    said = f"HTTP {status}"
    if isinstance(error, str) and error:
        said += f", {_scrubbed(error, credentials)}"
        if isinstance(description, str) and description:
            said += f" ({_scrubbed(description, credentials)})"
    elif reason:
        said += f" ({_scrubbed(str(reason), credentials)})"
    return f"The OAuth token endpoint {url} refused the client {credentials.client_id!r}: {said}."


def _no_answer(url: str, timeout_s: float) -> str:
    return f"The OAuth token endpoint {url} did not answer within {timeout_s:g} s."


def _json_object(body: bytes) -> dict | None:
    try:
        answer = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return answer if isinstance(answer, dict) else None


def _scrubbed(text: str, credentials: ClientCredentials) -> str:
    """The endpoint's own words, short, and never the secret (an endpoint may echo what it got)."""
    text = " ".join(text.split())[:_TEXT_LIMIT]
    return text.replace(credentials.client_secret, "[secret]") if credentials.client_secret else text
