"""TLS listeners (SASL_SSL and SSL): real clients verify the engine's certificate, log in, and
produce and consume; Fetch answers go out without sendfile (TLS is encrypted in user space).
Topics have replication factor 2 and min.insync.replicas=2, so acks=all succeeds only if the
followers' fetchers connect with TLS and log in too."""
import socket
import ssl
import uuid
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import AlterConfigOp, ConfigResource, KafkaAdminClient, NewTopic
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.client_settings import kafka_python_settings, librdkafka_settings
from tests.support.engine_process import EngineProcess
from tests.support.keytool import exported_certificate, key_store, trust_store
from tests.support.raw_client import RawClient
from tests.support.sasl import (ADMIN, ADMIN_PASSWORD, SCRAM_PASSWORD, SCRAM_USER, aiokafka_round_trip,
                                confluent_round_trip, start_sasl_engine)
from tests.support.tls import client_context, write_client_certificate, write_self_signed

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
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False, tls=client_context(ca),
                           extra_args=["--security-protocol", "SSL", "--config", f"ssl.keystore.location={keystore}"])
    engine.start(timeout=60)
    try:
        assert kafka_python_round_trip(engine, kafka_python_tls(ca, None)) == VALUES
    finally:
        assert engine.terminate() == 0, engine.log_text()


def test_an_ssl_listener_with_keytool_pkcs12_stores_and_client_certificates(tmp_path):
    """The broker's key store and the trust store for client certificates are PKCS12 files made
    by keytool, as a Kafka operator's are; a client with a certificate the store trusts is served."""
    password = "p12-secret"
    broker_store = key_store(tmp_path / "broker.p12", password)
    broker_certificate = exported_certificate(broker_store, password, tmp_path / "broker.pem")
    client_pem, client_ca = write_client_certificate(tmp_path, [(NameOID.COMMON_NAME, "alice")])
    trusted = trust_store(tmp_path / "clients.p12", password, client_ca)
    readiness = client_context(broker_certificate)
    readiness.load_cert_chain(str(client_pem))
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False, tls=readiness, extra_args=[
        "--security-protocol", "SSL", "--config", "ssl.keystore.type=PKCS12",
        "--config", f"ssl.keystore.location={broker_store}", "--config", f"ssl.keystore.password={password}",
        "--config", "ssl.client.auth=required", "--config", "ssl.truststore.type=PKCS12",
        "--config", f"ssl.truststore.location={trusted}", "--config", f"ssl.truststore.password={password}"])
    engine.start(timeout=60)
    try:
        login = dict(security_protocol="SSL", ssl_cafile=str(broker_certificate), ssl_certfile=str(client_pem),
                     ssl_keyfile=str(client_pem))
        assert kafka_python_round_trip(engine, login) == VALUES
        assert password not in engine.log_text()

        # Kafka-named client settings with PKCS12 stores, as Connect workers and the tools take them.
        client_store = tmp_path / "client.p12"
        client_store.write_bytes(pkcs12_of(client_pem, password))
        settings = {"bootstrap.servers": engine.bootstrap, "security.protocol": "SSL",
                    "ssl.truststore.type": "PKCS12", "ssl.truststore.password": password,
                    "ssl.truststore.location": str(trust_store(tmp_path / "brokers.p12", password,
                                                               broker_certificate)),
                    "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(client_store),
                    "ssl.keystore.password": password}
        python_login = kafka_python_settings(settings)
        del python_login["bootstrap_servers"]
        assert kafka_python_round_trip(engine, python_login) == VALUES
        topic = new_topic(engine, python_login)
        assert confluent_round_trip(librdkafka_settings(settings), topic, VALUES) == VALUES
    finally:
        assert engine.terminate() == 0, engine.log_text()


def pkcs12_of(pem: Path, password: str) -> bytes:
    """A PEM key and certificate as a PKCS12 store, as `openssl pkcs12 -export` makes one."""
    key = serialization.load_pem_private_key(pem.read_bytes(), None)
    certificate = x509.load_pem_x509_certificate(pem.read_bytes())
    return pkcs12.serialize_key_and_certificates(b"client", key, certificate, None,
                                                 serialization.BestAvailableEncryption(password.encode()))


def test_a_listeners_key_store_is_replaced_at_run_time(tmp_path):
    """Certificate rotation as with Kafka's kafka-configs --alter on `listener.name.<l>.ssl.*`:
    new connections get the new certificate, open ones keep theirs; a key store that does not
    load, or whose certificate names another subject, is refused and changes nothing."""
    password = "rotate-me"
    old = key_store(tmp_path / "old.p12", password)
    new = key_store(tmp_path / "new.p12", password)
    other = key_store(tmp_path / "other.p12", password, common_name="somebody-else")
    old_ca, new_ca = (exported_certificate(store, password, tmp_path / f"{store.stem}.pem") for store in (old, new))
    both = tmp_path / "both.pem"
    both.write_bytes(old_ca.read_bytes() + new_ca.read_bytes())
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False, tls=client_context(old_ca), extra_args=[
        "--security-protocol", "SSL", "--config", "ssl.keystore.type=PKCS12",
        "--config", f"ssl.keystore.location={old}", "--config", f"ssl.keystore.password={password}"])
    engine.start(timeout=60)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, security_protocol="SSL", ssl_cafile=str(both))
    try:
        assert presented_certificate(engine, old_ca) == old_ca.read_text()

        def rotate(store: Path) -> str:
            change = {"listener.name.ssl.ssl.keystore.location": (AlterConfigOp.SET, str(store)),
                      "listener.name.ssl.ssl.keystore.password": (AlterConfigOp.SET, password)}
            return admin.alter_configs([ConfigResource("BROKER", "0", change)], incremental=True,
                                       raise_on_unknown=False)
        refused = rotate(other)
        assert "DistinguishedName does not match" in str(refused)
        assert "cannot read the file" in str(rotate(tmp_path / "missing.p12"))
        assert presented_certificate(engine, old_ca) == old_ca.read_text()    # nothing changed

        assert rotate(new) == {"broker": {"0": "OK"}}
        assert presented_certificate(engine, new_ca) == new_ca.read_text()
        assert kafka_python_round_trip(engine, dict(security_protocol="SSL", ssl_cafile=str(new_ca))) == VALUES
        assert password not in engine.log_text()
        admin.close()
        assert engine.terminate() == 0
        engine.tls = client_context(new_ca)      # the readiness check must trust the new certificate
        engine.start(timeout=60)                 # the stores set at run time outlive a restart
        assert presented_certificate(engine, new_ca) == new_ca.read_text()
    finally:
        admin.close()
        assert engine.terminate() == 0, engine.log_text()


def presented_certificate(engine, ca: Path) -> str:
    """The certificate a new TLS connection to broker 0 is shown, as PEM."""
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", engine.ports[0]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return ssl.DER_cert_to_PEM_cert(tls.getpeercert(binary_form=True)).replace("\r\n", "\n")
