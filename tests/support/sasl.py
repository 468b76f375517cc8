"""An engine whose client listeners require SASL, and a raw SASL login for wire-level tests."""
from __future__ import annotations

from pathlib import Path

from kafka.admin import KafkaAdminClient
from kafka.admin._users import UserScramCredentialUpsertion
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.sasl import (SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
                                 SaslHandshakeResponse)

from tests.support.engine_process import EngineProcess

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"          # PLAIN, from the users file
SCRAM_USER, SCRAM_PASSWORD = "alice", "alice-secret"      # SCRAM-SHA-256 and -512, added by AlterUserScramCredentials


def start_sasl_engine(directory: Path, brokers: int = 2, protocol: str = "SASL_PLAINTEXT",
                      extra_args: list[str] | None = None, tls=None) -> EngineProcess:
    """`tls`: the client SSLContext trusting the engine's certificate, for SASL_SSL / SSL."""
    users = directory / "users.properties"
    users.write_text(f'# PLAIN users\nuser_{ADMIN}="{ADMIN_PASSWORD}"\nuser_bob=bob-secret\n')
    engine = EngineProcess(directory / "data", brokers=brokers, admin=False,
                           extra_args=["--security-protocol", protocol, "--sasl-users-file", str(users),
                                       *(extra_args or [])], tls=tls)
    return engine.start(timeout=60)


def kafka_python_sasl(mechanism: str = "PLAIN", user: str = ADMIN, password: str = ADMIN_PASSWORD) -> dict:
    return dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, sasl_plain_username=user,
                sasl_plain_password=password)


def add_scram_user(bootstrap: str, user: str, password: str) -> dict:
    """Both SCRAM mechanisms for `user`, through kafka-python's admin logged in as the PLAIN admin."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **kafka_python_sasl())
    try:
        return admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, "SCRAM-SHA-256", password),
                                                   UserScramCredentialUpsertion(user, "SCRAM-SHA-512", password)])
    finally:
        admin.close()


def handshake(client, mechanism: str, version: int = 1):
    return client.request(SaslHandshakeRequest(mechanism=mechanism), version, SaslHandshakeResponse)


def authenticate(client, token: bytes, version: int = 2):
    return client.request(SaslAuthenticateRequest(auth_bytes=token), version, SaslAuthenticateResponse)


def raw_scram_login(client, user: str, password: str, mechanism: str = "SCRAM-SHA-256"):
    """Log a RawClient in; returns the last SaslAuthenticate response (error_code 0 on success)."""
    assert handshake(client, mechanism).error_code == 0
    scram = ScramClient(user, password, mechanism)
    first = authenticate(client, scram.first_message())
    if first is None or first.error_code:
        return first
    scram.process_server_first_message(first.auth_bytes)
    return authenticate(client, scram.final_message())


def confluent_round_trip(login: dict, topic: str, values: list[bytes]) -> list[bytes]:
    """librdkafka produces `values` (acks=all) and a new group reads them back from the start,
    both with the `login` settings (bootstrap, protocol, mechanism, ...)."""
    from confluent_kafka import Consumer, Producer

    producer = Producer({**login, "acks": "all"})
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(60) == 0
    consumer = Consumer({**login, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    received = []
    for _ in range(600):
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            received.append(message.value())
        if len(received) == len(values):
            break
    consumer.close()
    return received


def aiokafka_round_trip(login: dict, topic: str, values: list[bytes]) -> list[bytes]:
    """The same with aiokafka (`login`: its keyword arguments, bootstrap_servers included)."""
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run():
        producer = AIOKafkaProducer(acks="all", **login)
        await producer.start()
        try:
            for value in values:
                await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest", **login)
        await consumer.start()
        try:
            got = []
            async with asyncio.timeout(60):
                while len(got) < len(values):
                    for messages in (await consumer.getmany(timeout_ms=500)).values():
                        got += [m.value for m in messages]
            return got
        finally:
            await consumer.stop()
    return asyncio.run(run())
