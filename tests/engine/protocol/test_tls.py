"""TLS listeners (SASL_SSL and SSL): real clients verify the engine's certificate, log in, and
produce and consume; Fetch answers go out without sendfile (TLS is encrypted in user space).
Topics have replication factor 2 and min.insync.replicas=2, so acks=all succeeds only if the
followers' fetchers connect with TLS and log in too."""
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.support.raw_client import RawClient
from tests.support.sasl import (ADMIN, ADMIN_PASSWORD, SCRAM_PASSWORD, SCRAM_USER, aiokafka_round_trip,
                                confluent_round_trip, start_sasl_engine)
from tests.support.tls import client_context, write_self_signed

VALUES = [f"tls-{i}".encode() * 50 for i in range(30)]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return write_self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def sasl_ssl_engine(tmp_path_factory, certificate):
    keystore, ca = certificate
    engine = start_sasl_engine(tmp_path_factory.mktemp("sasl-ssl"), protocol="SASL_SSL", tls=client_context(ca),
                               extra_args=["--config", "ssl.keystore.type=PEM",
                                           "--config", f"ssl.keystore.location={keystore}"])
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, **kafka_python_tls(ca, "PLAIN"))
    from kafka.admin._users import UserScramCredentialUpsertion
    assert admin.alter_user_scram_credentials([UserScramCredentialUpsertion(SCRAM_USER, m, SCRAM_PASSWORD)
                                               for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")]) == {SCRAM_USER: None}
    admin.close()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def kafka_python_tls(ca, mechanism: str | None) -> dict:
    if mechanism is None:
        return dict(security_protocol="SSL", ssl_cafile=str(ca))
    user, password = (ADMIN, ADMIN_PASSWORD) if mechanism == "PLAIN" else (SCRAM_USER, SCRAM_PASSWORD)
    return dict(security_protocol="SASL_SSL", ssl_cafile=str(ca), sasl_mechanism=mechanism,
                sasl_plain_username=user, sasl_plain_password=password)


def new_topic(engine, login: dict) -> str:
    name = f"tls-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, **login)
    try:
        replicas = min(2, engine.brokers)
        admin.create_topics([NewTopic(name, 1, replicas, topic_configs={"min.insync.replicas": str(replicas)})])
    finally:
        admin.close()
    return name


def kafka_python_round_trip(engine, login: dict) -> list[bytes]:
    topic = new_topic(engine, login)
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, acks="all", **login)
    for value in VALUES:
        producer.send(topic, value).get(timeout=60)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=engine.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=30000, **login)
    received = []
    for message in consumer:
        received.append(message.value)
        if len(received) == len(VALUES):
            break
    consumer.close()
    return received


def test_kafka_python_over_sasl_ssl_with_scram(sasl_ssl_engine, certificate):
    assert kafka_python_round_trip(sasl_ssl_engine, kafka_python_tls(certificate[1], "SCRAM-SHA-256")) == VALUES


def test_confluent_kafka_over_sasl_ssl_with_plain(sasl_ssl_engine, certificate):
    login = {"bootstrap.servers": sasl_ssl_engine.bootstrap, "security.protocol": "SASL_SSL",
             "ssl.ca.location": str(certificate[1]), "sasl.mechanism": "PLAIN", "sasl.username": ADMIN,
             "sasl.password": ADMIN_PASSWORD}
    topic = new_topic(sasl_ssl_engine, kafka_python_tls(certificate[1], "PLAIN"))
    assert confluent_round_trip(login, topic, VALUES) == VALUES


def test_aiokafka_over_sasl_ssl_with_scram_sha_512(sasl_ssl_engine, certificate):
    topic = new_topic(sasl_ssl_engine, kafka_python_tls(certificate[1], "PLAIN"))
    login = dict(bootstrap_servers=sasl_ssl_engine.bootstrap, security_protocol="SASL_SSL",
                 ssl_context=client_context(certificate[1]), sasl_mechanism="SCRAM-SHA-512",
                 sasl_plain_username=SCRAM_USER, sasl_plain_password=SCRAM_PASSWORD)
    assert aiokafka_round_trip(login, topic, VALUES) == VALUES


def test_a_plaintext_client_on_a_tls_listener_is_closed_and_others_are_served(sasl_ssl_engine, certificate):
    client = RawClient(sasl_ssl_engine.ports[0])
    assert client.request(ApiVersionsRequest(), 3, ApiVersionsResponse) is None
    client.close()
    assert kafka_python_round_trip(sasl_ssl_engine, kafka_python_tls(certificate[1], "PLAIN")) == VALUES


def test_an_ssl_listener_without_sasl(tmp_path, certificate):
    keystore, ca = certificate
    from tests.support.engine_process import EngineProcess
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False, tls=client_context(ca),
                           extra_args=["--security-protocol", "SSL", "--config", f"ssl.keystore.location={keystore}"])
    engine.start(timeout=60)
    try:
        assert kafka_python_round_trip(engine, kafka_python_tls(ca, None)) == VALUES
    finally:
        assert engine.terminate() == 0, engine.log_text()
