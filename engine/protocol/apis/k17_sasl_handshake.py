"""SaslHandshake: v0-1 (KIP-43; v1 KIP-152).

On a SASL_PLAINTEXT / SASL_SSL listener, the first request after ApiVersions: the client
names its mechanism. An enabled one (`sasl.enabled.mechanisms`) is answered NONE with the
enabled list; after v1 the tokens come in SaslAuthenticate requests, after v0 as bare
size-prefixed frames without a Kafka header (pre-KIP-152 clients; engine/security/session.py).
An unknown or disabled mechanism gets UNSUPPORTED_SASL_MECHANISM with the enabled list,
then the connection is closed, as Kafka does.
On a logged-in connection whose session has an end (KIP-368), a v1 handshake begins a
re-authentication (engine/security/session.py): it is answered as the first one was, and a
mechanism other than the login's fails at the first SaslAuthenticate, as Kafka's does.
Anywhere else - a PLAINTEXT or SSL listener, or a connection already authenticated whose
session does not end (or that began a re-authentication less than a second ago) - the answer
is ILLEGAL_SASL_STATE.
v0 stays advertised: librdkafka gives up on SASL when it is missing.
"""
import kafka.errors as Errors
from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

from engine.protocol.registry import api
from engine.security.session import HANDSHAKE


@api(SaslHandshakeRequest, SaslHandshakeResponse, versions=(0, 1))
async def handle_sasl_handshake(ctx, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    session = ctx.session
    if session is None or session.state != HANDSHAKE:
        return SaslHandshakeResponse(error_code=Errors.IllegalSaslStateError.errno, mechanisms=[])
    enabled = list(session.enabled_mechanisms)
    if not session.handshake(request.mechanism, raw_tokens=ctx.api_version == 0):
        return SaslHandshakeResponse(error_code=Errors.UnsupportedSaslMechanismError.errno, mechanisms=enabled)
    return SaslHandshakeResponse(error_code=Errors.NoError.errno, mechanisms=enabled)
