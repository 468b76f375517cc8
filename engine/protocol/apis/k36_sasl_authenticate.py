"""SaslAuthenticate: v0-2 (KIP-152; v1 KIP-368 session lifetime; v2 flexible).

After a SaslHandshake v1 on a SASL listener, carries the mechanism's tokens: one round for
PLAIN, two for SCRAM (engine/security/scram.py), one for a good OAUTHBEARER token and two for a
refused one (RFC 7628: the error document, then the client's acknowledgement;
engine/security/oauthbearer.py). Wrong credentials, an unknown user or a
garbled token get SASL_AUTHENTICATION_FAILED with Kafka's message ("Authentication failed
during authentication due to invalid credentials with SASL mechanism X": it never says
which part was wrong, nor echoes any of the token), then the connection is closed.
Anywhere else (no handshake yet, a non-SASL listener, already authenticated) the answer is
ILLEGAL_SASL_STATE.
v1+ (KIP-368): the answer that completes a login carries SessionLifetimeMs, the time until the
session ends - the smaller of connections.max.reauth.ms (when above 0) and what is left of an
OAUTHBEARER token - or 0 when it does not end; the client must re-authenticate before then
(SaslHandshake and SaslAuthenticate again on the same connection), as the same principal with
the same mechanism, else the failure's message says why and the connection is closed
(engine/security/session.py). Re-authentication failures say "during re-authentication".
"""
import kafka.errors as Errors
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse

from engine.protocol.registry import api
from engine.security.session import AUTHENTICATE, AuthenticationFailed


@api(SaslAuthenticateRequest, SaslAuthenticateResponse, versions=(0, 2))
async def handle_sasl_authenticate(ctx, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    session = ctx.session
    if session is None or session.state != AUTHENTICATE or session.raw_tokens:
        return SaslAuthenticateResponse(error_code=Errors.IllegalSaslStateError.errno,
                                        error_message="SaslAuthenticate is not expected now", auth_bytes=b"",
                                        session_lifetime_ms=0)
    try:
        reply = session.authenticate(request.auth_bytes or b"", ctx.api_version)
    except AuthenticationFailed as exc:
        return SaslAuthenticateResponse(error_code=Errors.SaslAuthenticationFailedError.errno,
                                        error_message=str(exc), auth_bytes=b"", session_lifetime_ms=0)
    return SaslAuthenticateResponse(error_code=Errors.NoError.errno, error_message=None, auth_bytes=reply,
                                    session_lifetime_ms=session.session_lifetime_ms if session.authenticated else 0)
