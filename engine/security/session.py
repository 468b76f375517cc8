"""One connection's SASL state on a SASL_PLAINTEXT / SASL_SSL listener (Kafka's SaslServerAuthenticator).

States, as Kafka's:
  HANDSHAKE   - only ApiVersions and SaslHandshake may be sent;
  AUTHENTICATE- after a good SaslHandshake v1: only SaslAuthenticate;
  COMPLETE    - authenticated: every API, as `principal`;
  FAILED      - the failure's answer is written, then the connection is closed.
Any other request in HANDSHAKE or AUTHENTICATE closes the connection without an answer
(Kafka: "Unexpected Kafka request of type X during SASL handshake"). An unsupported
mechanism gets UNSUPPORTED_SASL_MECHANISM with the enabled ones, wrong credentials or a
garbled token SASL_AUTHENTICATION_FAILED with Kafka's message; both then close.

Mechanisms: PLAIN (RFC 4616: `authzid NUL user NUL password`, checked against the users
file, engine/security/settings.py), SCRAM-SHA-256/512 (scram.py, credentials from the
metadata image) and OAUTHBEARER (RFC 7628, oauthbearer.py: a refused token is answered with
the error document, and the login fails at the client's acknowledgement). After a SaslHandshake v0 the tokens come as bare size-prefixed frames with
no Kafka header (`raw_tokens`; pre-KIP-152 clients) and are answered the same way; a failure
there can only close the connection, as in Kafka.

Session lifetime and re-authentication (KIP-368), as Kafka's ReauthInfo and KafkaChannel:
- A login's session ends after `connections.max.reauth.ms` of its mechanism (when above 0), or
  at the credential's expiry (an OAUTHBEARER token's `exp`), whichever is sooner; an
  OAUTHBEARER session ends at its token's expiry even with connections.max.reauth.ms at 0, as
  in Kafka since 3.3 (KAFKA-13848). SaslAuthenticate v1+ tells the client the time left
  (SessionLifetimeMs); 0: the session does not end. Clients that log in with SaslAuthenticate
  v0 or bare tokens are not told, and their connections are closed all the same.
- On a logged-in connection whose session has an end, a SaslHandshake v1+ begins a
  re-authentication (no more than one start a second; otherwise, or when the session does not
  end, it is answered ILLEGAL_SASL_STATE as before). The client logs in again over the same
  connection: SaslAuthenticate only, until it completes. The mechanism must be the first one's
  and the principal the same, else SASL_AUTHENTICATION_FAILED ("Cannot change principals during
  re-authentication from User.alice: User.bob") and the connection is closed. The new login sets
  the session's new end. Requests answered before the SaslHandshake are unaffected: a connection
  is served one request at a time, so nothing of the old session is still in flight.
- After the end, any request other than that SaslHandshake closes the connection unanswered
  (Kafka: "Disconnecting expired channel", expired-connections-killed-count).
Counted per listener (engine/metrics/stats.SaslListenerStats): re-authentications that
succeeded, failed and their latency, logins of clients that cannot re-authenticate, and the
connections closed for an expired session.
Gaps: no GSSAPI or delegation tokens.
"""
from __future__ import annotations

import hmac
import logging
import struct
import time
from dataclasses import dataclass

from engine.metrics.stats import SaslListenerStats
from engine.security import oauthbearer
from engine.security.scram import ScramError, ScramServer

log = logging.getLogger(__name__)

HANDSHAKE, AUTHENTICATE, COMPLETE, FAILED = "HANDSHAKE", "AUTHENTICATE", "COMPLETE", "FAILED"
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_ALLOWED = {HANDSHAKE: (API_VERSIONS, SASL_HANDSHAKE), AUTHENTICATE: (SASL_AUTHENTICATE,)}
_API_KEY = struct.Struct(">h")
_API_KEY_VERSION = struct.Struct(">hh")
_SIZE = struct.Struct(">i")
MIN_REAUTH_INTERVAL_S = 1.0      # Kafka's KafkaChannel: at most one re-authentication start a second


class AuthenticationFailed(Exception):
    """Wrong credentials or a garbled token: the message is what the client is told."""


@dataclass(frozen=True)
class _Previous:
    """The login a re-authentication must match (Kafka's ReauthInfo), and when it began."""
    mechanism: str
    principal: str
    began: float                     # the session's clock


class SaslSession:
    def __init__(self, settings, stats: SaslListenerStats | None = None, clock=time.monotonic) -> None:
        self._settings = settings        # engine/security/settings.SecuritySettings
        self._clock = clock              # for the session's end; a token's expiry is wall-clock time
        # The listener's counters; the listener hands its own in before the first request.
        self.stats = stats or SaslListenerStats()
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._scram: ScramServer | None = None
        self.raw_tokens = False          # after SaslHandshake v0: tokens without Kafka headers
        self._oauth_refusal: str | None = None   # OAUTHBEARER: why the token was refused, told at the ack
        # KIP-368
        self.session_lifetime_ms = 0     # what SaslAuthenticate v1+ tells the client at the login's end
        self.expires_at: float | None = None     # the clock's time of the session's end; None: it has none
        self.supports_reauthentication = False   # the client sent SaslAuthenticate v1+ (Kafka's meaning)
        self._previous: _Previous | None = None  # while re-authenticating: the login it must match
        self._bad_mechanism: str | None = None   # a re-authentication asked for another mechanism
        self._reauth_started: float | None = None

    @property
    def enabled_mechanisms(self) -> tuple[str, ...]:
        return self._settings.sasl_enabled_mechanisms

    @property
    def authenticated(self) -> bool:
        return self.state == COMPLETE

    @property
    def reauthenticating(self) -> bool:
        return self._previous is not None

    @property
    def authentication_text(self) -> str:
        """Kafka's authenticationOrReauthenticationText, for messages and logs."""
        return "re-authentication" if self._previous is not None else "authentication"

    def refusal(self, frame: bytes) -> str | None:
        """Why this request may not be sent now, else None. A refused request fails the login
        (a re-authentication's, counted) and the listener closes the connection."""
        if self.state == COMPLETE or self.raw_tokens:
            return None
        (api_key,) = _API_KEY.unpack_from(frame) if len(frame) >= 2 else (-1,)
        if api_key in _ALLOWED.get(self.state, ()):
            return None
        reason = f"unexpected request (API key {api_key}) during SASL {self.authentication_text}, state {self.state}"
        self._fail()
        return reason

    # --- the session's end (KIP-368) -----------------------------------------------------------

    def expired(self, frame: bytes) -> bool:
        """Before a logged-in connection's request is served, where the session has an end: a
        SaslHandshake v1+ begins a re-authentication (False); any other request after the end
        is True, and counted: the listener closes the connection unanswered, as Kafka does."""
        now = self._clock()
        if len(frame) >= _API_KEY_VERSION.size:
            api_key, version = _API_KEY_VERSION.unpack_from(frame)
            if api_key == SASL_HANDSHAKE and version >= 1 and self._begin_reauthentication(now):
                return False
        if self.expires_at is None or now <= self.expires_at:
            return False
        self.stats.expired_connections_killed += 1
        return True

    def _begin_reauthentication(self, now: float) -> bool:
        """Kafka's KafkaChannel.maybeBeginServerReauthentication: only a session with an end,
        and no sooner than a second after the last start; else the SaslHandshake is answered
        as on any logged-in connection (ILLEGAL_SASL_STATE)."""
        if self.state != COMPLETE or self.expires_at is None:
            return False
        if self._reauth_started is not None and now - self._reauth_started < MIN_REAUTH_INTERVAL_S:
            return False
        self._reauth_started = now
        self._previous = _Previous(self.mechanism, self.principal, now)
        self.state, self.expires_at, self.session_lifetime_ms = HANDSHAKE, None, 0
        self._scram = self._oauth_refusal = self._bad_mechanism = None
        log.debug("SASL %s re-authentication of %s begins", self.mechanism, self.principal)
        return True

    def _complete(self, principal: str, credential_expires_ms: int | None = None) -> None:
        """The login succeeded as `principal`: the session's end from connections.max.reauth.ms
        and the credential's expiry (Kafka's calcCompletionTimesAndReturnSessionLifetimeMs).
        Raises AuthenticationFailed when a re-authentication names another principal."""
        previous = self._previous
        if previous is not None and principal != previous.principal:
            self._fail()
            raise AuthenticationFailed(f"Cannot change principals during re-authentication from "
                                       f"User.{previous.principal}: User.{principal}")
        self.principal, self.state = principal, COMPLETE
        now, now_ms = self._clock(), time.time() * 1000
        max_reauth_ms = self._settings.connections_max_reauth_ms.get(self.mechanism, 0)
        candidates = [ms for ms in (max_reauth_ms if max_reauth_ms > 0 else None,
                                    None if credential_expires_ms is None else credential_expires_ms - now_ms)
                      if ms is not None]
        self.session_lifetime_ms = max(0, int(min(candidates))) if candidates else 0
        self.expires_at = now + self.session_lifetime_ms / 1000 if candidates else None
        log.debug("SASL %s %s of %s complete; connections.max.reauth.ms=%d, session lifetime %s ms",
                  self.mechanism, self.authentication_text, principal, max_reauth_ms,
                  self.session_lifetime_ms if candidates else "unbounded")
        if previous is not None:
            self._previous = None
            self.stats.successful_reauthentication += 1
            self.stats.reauthentication_latency_ms.record((now - previous.began) * 1000)
        elif not self.supports_reauthentication:
            self.stats.successful_authentication_no_reauth += 1

    def _fail(self) -> None:
        if self._previous is not None and self.state != FAILED:
            self.stats.failed_reauthentication += 1
        self.state = FAILED

    # --- SaslHandshake -----------------------------------------------------------------------

    def handshake(self, mechanism: str, *, raw_tokens: bool = False) -> bool:
        """True if `mechanism` is enabled; otherwise the session has failed. A re-authentication
        with another mechanism than the login's is answered as good here, and fails at its
        first token (Kafka's REAUTH_BAD_MECHANISM)."""
        if mechanism not in self._settings.sasl_enabled_mechanisms:
            self._fail()
            return False
        if self._previous is not None and mechanism != self._previous.mechanism:
            self._bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                   f"re-authentication of mechanism '{self._previous.mechanism}'")
        self.mechanism, self.state, self.raw_tokens = mechanism, AUTHENTICATE, raw_tokens
        if mechanism.startswith("SCRAM-"):
            self._scram = ScramServer(mechanism, lambda user: self._settings.scram_credential(user, mechanism),
                                      self._settings.decoy_key)
        return True

    # --- SaslAuthenticate --------------------------------------------------------------------

    def authenticate(self, token: bytes, version: int = 0) -> bytes:
        """The server's token for the client's (sent in a SaslAuthenticate of `version`, 0 for
        bare tokens); raises AuthenticationFailed (state FAILED)."""
        self.supports_reauthentication = self.supports_reauthentication or version >= 1
        if self._bad_mechanism is not None:
            self._fail()
            raise AuthenticationFailed(self._bad_mechanism)
        if self.mechanism == "OAUTHBEARER":
            return self._oauthbearer(bytes(token))
        try:
            if self.mechanism == "PLAIN":
                principal, reply = self._plain(bytes(token)), b""
            else:
                reply = self._scram.evaluate(bytes(token))
                principal = self._scram.username if self._scram.complete else None
        except (ScramError, AuthenticationFailed) as exc:
            self._fail()
            raise AuthenticationFailed(
                f"Authentication failed during {self.authentication_text} due to invalid credentials with SASL "
                f"mechanism {self.mechanism}") from exc
        if principal is not None:
            self._complete(principal)
        return reply

    def _oauthbearer(self, message: bytes) -> bytes:
        """RFC 7628: a good token completes the login; a refused one gets the error document,
        and the client's acknowledgement (`\x01`) then fails the login with the reason."""
        if self._oauth_refusal is not None:
            self._fail()
            raise AuthenticationFailed(f"Authentication failed with SASL mechanism OAUTHBEARER: "
                                       f"{self._oauth_refusal}")
        try:
            valid = self._settings.oauth_token(oauthbearer.bearer_token(message))
        except oauthbearer.TokenRejected as exc:
            self._oauth_refusal = str(exc)
            return oauthbearer.ERROR_DOCUMENT
        self._complete(valid.principal, valid.expires_ms)
        return b""

    def raw_token_reply(self, token: bytes) -> bytes | None:
        """A bare token after SaslHandshake v0 -> the framed bare reply; None: failed, close."""
        try:
            reply = self.authenticate(token)
        except AuthenticationFailed:
            return None
        if self.state == COMPLETE:
            self.raw_tokens = False      # Kafka requests from here on
        return _SIZE.pack(len(reply)) + reply

    def _plain(self, token: bytes) -> str:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise AuthenticationFailed("malformed PLAIN token")
        try:
            authzid, user, password = (part.decode("utf-8") for part in parts)
        except UnicodeDecodeError:
            raise AuthenticationFailed("PLAIN token is not UTF-8") from None
        if not user or (authzid and authzid != user):
            raise AuthenticationFailed("PLAIN user missing or authorization id differs from it")
        expected = self._settings.plain_password(user)
        # Compare in constant time even for unknown users, so timing does not tell them apart.
        matched = hmac.compare_digest(password.encode(), (expected if expected is not None else "\0").encode())
        if expected is None or not matched:
            raise AuthenticationFailed("invalid credentials")
        return user
