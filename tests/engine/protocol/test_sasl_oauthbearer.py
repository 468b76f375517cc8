"""SASL OAUTHBEARER with real clients: kafka-python and librdkafka log in with JWTs signed by a
test identity provider, the engine checks them against its JWKS, and the token's subject is the
principal the ACLs see; expired, mis-signed and unsigned tokens are refused. Without a JWKS the
listener takes unsigned tokens, as Kafka's default validator does (librdkafka's built-in one)."""
from __future__ import annotations

import json
import time
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka import Producer
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka import KafkaProducer
from kafka.admin import NewTopic

from tests.support.acls import admin_client, grant, start_acl_engine
from tests.support.oauth import IdentityProvider, TokenProvider, unsecured_token
from tests.support.raw_client import RawClient
from tests.support.sasl import authenticate, confluent_round_trip, handshake, start_sasl_engine

MECHANISMS = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    return IdentityProvider(tmp_path_factory.mktemp("idp"))


@pytest.fixture(scope="module")
def oauth_engine(tmp_path_factory, provider):
    engine = start_acl_engine(tmp_path_factory.mktemp("oauth"), brokers=1, extra_args=[
        "--config", f"sasl.enabled.mechanisms={MECHANISMS}", *provider.broker_configs()])
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def kafka_python_oauth(token: str) -> dict:
    return dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER",
                sasl_oauth_token_provider=TokenProvider(token))


def topic_for(engine, principal: str) -> str:
    name = f"oauth-{uuid.uuid4().hex[:8]}"
    admin = admin_client(engine.bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1)])
        for operation in ("WRITE", "READ", "DESCRIBE"):
            grant(admin, principal, operation, "TOPIC", name)
        grant(admin, principal, "READ", "GROUP", f"g-{name}")
    finally:
        admin.close()
    return name


def produce(engine, login: dict, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, request_timeout_ms=10000, max_block_ms=10000,
                             **login)
    try:
        producer.send(topic, b"by token").get(timeout=30)
    finally:
        producer.close()


def test_a_signed_token_logs_in_as_its_subject(oauth_engine, provider):
    topic = topic_for(oauth_engine, "User:alice")
    produce(oauth_engine, kafka_python_oauth(provider.token("alice")), topic)
    with pytest.raises(Errors.TopicAuthorizationFailedError):     # mallory's token is good, her ACLs none
        produce(oauth_engine, kafka_python_oauth(provider.token("mallory")), topic)


@pytest.mark.parametrize("kind,reason", [("expired", "the token has expired"),
                                         ("foreign key", "signature does not verify"),
                                         ("unsigned", "algorithm 'none' is not accepted"),
                                         ("reserved principal", "the token's principal is reserved")])
def test_bad_tokens_are_answered_with_rfc_7628s_error_then_refused(oauth_engine, provider, kind, reason):
    token = {"expired": lambda: provider.token("alice", lifetime_s=-300),
             "foreign key": lambda: provider.token("alice", key=rsa.generate_private_key(public_exponent=65537,
                                                                                         key_size=2048)),
             "unsigned": lambda: unsecured_token("alice"),
             "reserved principal": lambda: provider.token("__engine-inter-broker")}[kind]()
    client = RawClient(oauth_engine.ports[0])
    try:
        assert handshake(client, "OAUTHBEARER").error_code == 0
        first = authenticate(client, f"n,,\x01auth=Bearer {token}\x01\x01".encode())
        assert (first.error_code, json.loads(first.auth_bytes)) == (0, {"status": "invalid_token"})
        refused = authenticate(client, b"\x01")                 # the client's acknowledgement
        assert refused.error_code == Errors.SaslAuthenticationFailedError.errno
        assert reason in refused.error_message and token not in refused.error_message
        assert client.is_closed_by_peer()
    finally:
        client.close()
    assert token not in oauth_engine.log_text()


def test_librdkafka_logs_in_with_its_token_callback(oauth_engine, provider):
    topic = topic_for(oauth_engine, "User:bob")
    login = {"bootstrap.servers": oauth_engine.bootstrap, "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": "OAUTHBEARER",
             "oauth_cb": lambda config: (provider.token("bob"), time.time() + 600)}
    assert confluent_round_trip(login, topic, [b"one", b"two"]) == [b"one", b"two"]


def test_without_a_jwks_unsigned_tokens_are_taken_as_kafkas_default_is(tmp_path):
    engine = start_sasl_engine(tmp_path, brokers=1, extra_args=["--config", f"sasl.enabled.mechanisms={MECHANISMS}"])
    try:
        assert "accepts unsecured (unsigned) tokens" in engine.log_text()
        login = {"bootstrap.servers": engine.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                 "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.config": "principal=carol",
                 "enable.sasl.oauthbearer.unsecure.jwt": True}     # librdkafka's built-in unsigned tokens
        producer = Producer(login)
        producer.produce(f"unsecured-{uuid.uuid4().hex[:6]}", b"v")
        assert producer.flush(30) == 0
    finally:
        assert engine.terminate() == 0, engine.log_text()
