"""The replica fetchers' login to a SASL listener of this process (see settings.py).

They authenticate as the internal principal with the first enabled mechanism, by SaslHandshake
v1 and SaslAuthenticate, as any Kafka client does. SCRAM's client side is kafka-python's.
A refusal raises ConnectionError, so the fetcher backs off and retries like on any broken
connection.
"""
from __future__ import annotations

from kafka.net.sasl.scram import ScramClient
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
                                 SaslHandshakeResponse)

from engine.security.settings import INTER_BROKER_USER, SecuritySettings


async def login(connection, settings: SecuritySettings, timeout: float) -> None:
    """`connection`: an open engine.broker.connection.BrokerConnection."""
    mechanism = settings.inter_broker_mechanism
    handshake = await connection.request(SaslHandshakeRequest(mechanism=mechanism), 1, SaslHandshakeResponse,
                                         timeout)
    if handshake.error_code:
        raise ConnectionError(f"inter-broker SaslHandshake refused ({handshake.error_code})")
    if mechanism == "PLAIN":
        tokens = iter([f"\0{INTER_BROKER_USER}\0{settings.inter_broker_password}".encode()])
        await _authenticate(connection, next(tokens), timeout)
        return
    client = ScramClient(INTER_BROKER_USER, settings.inter_broker_password, mechanism)
    server_first = await _authenticate(connection, client.first_message(), timeout)
    client.process_server_first_message(server_first)
    client.process_server_final_message(await _authenticate(connection, client.final_message(), timeout))


async def _authenticate(connection, token: bytes, timeout: float) -> bytes:
    response = await connection.request(SaslAuthenticateRequest(auth_bytes=token), 2, SaslAuthenticateResponse,
                                        timeout)
    if response.error_code:
        raise ConnectionError(f"inter-broker SASL authentication refused ({response.error_code})")
    return response.auth_bytes
