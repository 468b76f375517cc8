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
Gaps: no re-authentication (KIP-368: connections.max.reauth.ms is 0, so SessionLifetimeMs is
0); no GSSAPI or delegation tokens.
"""
from __future__ import annotations

import hmac
import struct

from engine.security import oauthbearer
from engine.security.scram import ScramError, ScramServer

HANDSHAKE, AUTHENTICATE, COMPLETE, FAILED = "HANDSHAKE", "AUTHENTICATE", "COMPLETE", "FAILED"
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_ALLOWED = {HANDSHAKE: (API_VERSIONS, SASL_HANDSHAKE), AUTHENTICATE: (SASL_AUTHENTICATE,)}
_API_KEY = struct.Struct(">h")
_SIZE = struct.Struct(">i")


class AuthenticationFailed(Exception):
    """Wrong credentials or a garbled token: the message is what the client is told."""


class SaslSession:
    def __init__(self, settings) -> None:
        self._settings = settings        # engine/security/settings.SecuritySettings
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._scram: ScramServer | None = None
        self.raw_tokens = False          # after SaslHandshake v0: tokens without Kafka headers
        self._oauth_refusal: str | None = None   # OAUTHBEARER: why the token was refused, told at the ack

    @property
    def enabled_mechanisms(self) -> tuple[str, ...]:
        return self._settings.sasl_enabled_mechanisms

    @property
    def authenticated(self) -> bool:
        return self.state == COMPLETE

    def refusal(self, frame: bytes) -> str | None:
        """Why this request may not be sent now (the connection is then closed), else None."""
        if self.state == COMPLETE or self.raw_tokens:
            return None
        (api_key,) = _API_KEY.unpack_from(frame) if len(frame) >= 2 else (-1,)
        if api_key in _ALLOWED.get(self.state, ()):
            return None
        return f"unexpected request (API key {api_key}) during SASL authentication, state {self.state}"

    # --- SaslHandshake -----------------------------------------------------------------------

    def handshake(self, mechanism: str, *, raw_tokens: bool = False) -> bool:
        """True if `mechanism` is enabled; otherwise the session has failed."""
        if mechanism not in self._settings.sasl_enabled_mechanisms:
            self.state = FAILED
            return False
        self.mechanism, self.state, self.raw_tokens = mechanism, AUTHENTICATE, raw_tokens
        if mechanism.startswith("SCRAM-"):
            self._scram = ScramServer(mechanism, lambda user: self._settings.scram_credential(user, mechanism),
                                      self._settings.decoy_key)
        return True

    # --- SaslAuthenticate --------------------------------------------------------------------

    def authenticate(self, token: bytes) -> bytes:
        """The server's token for the client's; raises AuthenticationFailed (state FAILED)."""
        if self.mechanism == "OAUTHBEARER":
            return self._oauthbearer(bytes(token))
        try:
            if self.mechanism == "PLAIN":
                self.principal = self._plain(bytes(token))
                self.state = COMPLETE
                return b""
            reply = self._scram.evaluate(bytes(token))
            if self._scram.complete:
                self.principal, self.state = self._scram.username, COMPLETE
            return reply
        except (ScramError, AuthenticationFailed) as exc:
            self.state = FAILED
            raise AuthenticationFailed(
                f"Authentication failed during authentication due to invalid credentials with SASL mechanism "
                f"{self.mechanism}") from exc

    def _oauthbearer(self, message: bytes) -> bytes:
        """RFC 7628: a good token completes the login; a refused one gets the error document,
        and the client's acknowledgement (`\x01`) then fails the login with the reason."""
        if self._oauth_refusal is not None:
            self.state = FAILED
            raise AuthenticationFailed(f"Authentication failed with SASL mechanism OAUTHBEARER: "
                                       f"{self._oauth_refusal}")
        try:
            self.principal = self._settings.oauth_principal(oauthbearer.bearer_token(message))
        except oauthbearer.TokenRejected as exc:
            self._oauth_refusal = str(exc)
            return oauthbearer.ERROR_DOCUMENT
        self.state = COMPLETE
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
