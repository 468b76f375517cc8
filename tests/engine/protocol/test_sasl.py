"""SASL_PLAINTEXT listeners: real clients log in with PLAIN and SCRAM-SHA-256/512 and produce and
consume; the wire rules of Kafka's SaslServerAuthenticator; credentials survive a restart.

One 2-broker engine for the module. Topics have replication factor 2 and min.insync.replicas=2,
so an acks=all produce succeeds only if the follower's replica fetcher logged in too."""
import asyncio
import struct
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.raw_client import RawClient
from tests.support.sasl import (ADMIN, ADMIN_PASSWORD, SCRAM_PASSWORD, SCRAM_USER, add_scram_user, aiokafka_round_trip,
                                authenticate, confluent_round_trip, handshake, kafka_python_sasl, raw_scram_login, start_sasl_engine)

LOGINS = {"PLAIN": (ADMIN, ADMIN_PASSWORD), "SCRAM-SHA-256": (SCRAM_USER, SCRAM_PASSWORD),
          "SCRAM-SHA-512": (SCRAM_USER, SCRAM_PASSWORD)}


@pytest.fixture(scope="module")
def sasl_engine(tmp_path_factory):
    engine = start_sasl_engine(tmp_path_factory.mktemp("sasl"))
    assert add_scram_user(engine.bootstrap, SCRAM_USER, SCRAM_PASSWORD) == {SCRAM_USER: None}
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def new_topic(engine) -> str:
    name = f"sasl-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, **kafka_python_sasl())
    try:
        admin.create_topics([NewTopic(name, 1, 2, topic_configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    return name


def is_closed_after_failure(client: RawClient) -> bool:
    """The broker serves nothing more after a failed login: the next request closes it unanswered.
    (Left alone, it waits for the client to hang up, which every Kafka client does on an auth error.)"""
    return client.request(ApiVersionsRequest(), 3, ApiVersionsResponse) is None


def values(n: int) -> list[bytes]:
    return [f"v{i}".encode() for i in range(n)]


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_produces_and_consumes_after_logging_in(sasl_engine, mechanism):
    topic, login = new_topic(sasl_engine), kafka_python_sasl(mechanism, *LOGINS[mechanism])
    producer = KafkaProducer(bootstrap_servers=sasl_engine.bootstrap, acks="all", **login)
    for value in values(20):
        producer.send(topic, value).get(timeout=60)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=sasl_engine.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=30000, group_id=f"g-{topic}", **login)
    received = []
    for message in consumer:
        received.append(message.value)
        if len(received) == 20:
            break
    consumer.close()
    assert received == values(20)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_confluent_kafka_produces_and_consumes_after_logging_in(sasl_engine, mechanism):
    topic = new_topic(sasl_engine)
    user, password = LOGINS[mechanism]
    login = {"bootstrap.servers": sasl_engine.bootstrap, "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
    assert confluent_round_trip(login, topic, values(20)) == values(20)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_aiokafka_produces_and_consumes_after_logging_in(sasl_engine, mechanism):
    topic = new_topic(sasl_engine)
    user, password = LOGINS[mechanism]
    login = dict(bootstrap_servers=sasl_engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                 sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
    assert aiokafka_round_trip(login, topic, values(20)) == values(20)


def test_a_wrong_password_is_refused_and_the_broker_serves_others(sasl_engine):
    client = RawClient(sasl_engine.ports[0])
    assert handshake(client, "PLAIN").mechanisms == ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"]
    refused = authenticate(client, f"\0{ADMIN}\0wrong-password".encode())
    assert refused.error_code == Errors.SaslAuthenticationFailedError.errno
    assert refused.error_message == ("Authentication failed during authentication due to invalid credentials "
                                     "with SASL mechanism PLAIN")
    assert is_closed_after_failure(client)
    client.close()

    scram = RawClient(sasl_engine.ports[0])
    refused = raw_scram_login(scram, SCRAM_USER, "wrong-password")
    assert refused.error_code == Errors.SaslAuthenticationFailedError.errno and "wrong" not in refused.error_message
    assert is_closed_after_failure(scram)
    scram.close()

    errors = []      # librdkafka reports the broker's authentication error through error_cb
    confluent = Producer({"bootstrap.servers": sasl_engine.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                          "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": SCRAM_USER,
                          "sasl.password": "wrong-password", "error_cb": errors.append})
    for _ in range(300):
        confluent.poll(0.1)
        if any(e.code() == KafkaError._AUTHENTICATION for e in errors):
            break
    failure = next(e for e in errors if e.code() == KafkaError._AUTHENTICATION)
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in failure.str()
    assert "wrong-password" not in failure.str()

    good = RawClient(sasl_engine.ports[0])
    assert raw_scram_login(good, SCRAM_USER, SCRAM_PASSWORD).error_code == 0
    assert good.request(MetadataRequest(topics=None), 9, MetadataResponse).brokers
    good.close()
    assert sasl_engine.alive()
    assert "wrong-password" not in sasl_engine.log_text() and ADMIN_PASSWORD not in sasl_engine.log_text()


def test_unauthenticated_produce_closes_the_connection_and_writes_nothing(sasl_engine):
    topic = new_topic(sasl_engine)
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=None, key=None, value=b"intruder", headers=[])
    P = ProduceRequest.TopicProduceData
    produce = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=builder.build())])])
    for prelude in ([], ["api_versions"], ["handshake"]):
        client = RawClient(sasl_engine.ports[0])
        if "api_versions" in prelude:
            assert client.request(ApiVersionsRequest(), 3, ApiVersionsResponse).error_code == 0
        if "handshake" in prelude:      # after a handshake only SaslAuthenticate may come
            assert handshake(client, "SCRAM-SHA-256").error_code == 0
        assert client.request(produce, 9, ApiVersionsResponse) is None       # closed, no answer
        client.close()
    consumer = KafkaConsumer(bootstrap_servers=sasl_engine.bootstrap, **kafka_python_sasl())
    partition = TopicPartition(topic, 0)
    assert consumer.end_offsets([partition]) == {partition: 0}
    consumer.close()


@pytest.mark.parametrize("mechanism, token", [("PLAIN", b"\xff\x00\x00"), ("PLAIN", b""), ("PLAIN", b"a\0b"),
                                              ("SCRAM-SHA-256", b"\x00garbage\xff"), ("SCRAM-SHA-512", b"")])
def test_a_garbage_token_gets_an_error_not_a_crash(sasl_engine, mechanism, token):
    client = RawClient(sasl_engine.ports[1])
    assert handshake(client, mechanism).error_code == 0
    response = authenticate(client, token)
    assert response.error_code == Errors.SaslAuthenticationFailedError.errno
    assert is_closed_after_failure(client)
    client.close()
    assert RawClient(sasl_engine.ports[1]).request(ApiVersionsRequest(), 3, ApiVersionsResponse).error_code == 0


def test_an_unknown_mechanism_gets_the_enabled_ones_then_the_close(sasl_engine):
    client = RawClient(sasl_engine.ports[0])
    response = handshake(client, "GSSAPI")
    assert response.error_code == Errors.UnsupportedSaslMechanismError.errno
    assert response.mechanisms == ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"]
    assert is_closed_after_failure(client)
    client.close()


def test_handshake_v0_takes_bare_tokens_as_pre_kip_152_clients_send_them(sasl_engine):
    client = RawClient(sasl_engine.ports[0])
    assert handshake(client, "PLAIN", version=0).error_code == 0
    token = f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()
    client.send_bytes(struct.pack(">i", len(token)) + token)
    assert client.read_frame() == b""            # an empty bare token: logged in
    assert client.request(MetadataRequest(topics=None), 9, MetadataResponse).brokers
    client.close()


def test_sasl_requests_after_login_are_illegal_state(sasl_engine):
    client = RawClient(sasl_engine.ports[0])
    assert raw_scram_login(client, SCRAM_USER, SCRAM_PASSWORD, "SCRAM-SHA-512").error_code == 0
    assert handshake(client, "PLAIN").error_code == Errors.IllegalSaslStateError.errno
    assert authenticate(client, b"x").error_code == Errors.IllegalSaslStateError.errno
    client.close()


def test_describe_user_scram_credentials_shows_iterations_only(sasl_engine):
    admin = KafkaAdminClient(bootstrap_servers=sasl_engine.bootstrap, **kafka_python_sasl())
    try:
        described = admin.describe_user_scram_credentials()
        missing = admin.describe_user_scram_credentials(["nobody"])
    finally:
        admin.close()
    assert {int(i["mechanism"]): i["iterations"] for i in described[SCRAM_USER]["credential_infos"]} == \
        {1: 4096, 2: 4096}
    assert missing["nobody"]["error"] == "Attempt to describe a user credential that does not exist"


def test_a_user_quota_throttles_that_authenticated_user_only(sasl_engine):
    """Client quotas by user now see the SASL user, not ANONYMOUS for everyone."""
    from tests.engine.protocol.test_client_quotas import KEY, alter, create
    admin = RawClient(sasl_engine.ports[0], client_id="same-client")
    assert handshake(admin, "PLAIN").error_code == 0
    assert authenticate(admin, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
    alice = RawClient(sasl_engine.ports[0], client_id="same-client")
    assert raw_scram_login(alice, SCRAM_USER, SCRAM_PASSWORD).error_code == 0
    try:
        assert alter(admin, [({"user": SCRAM_USER}, {KEY: 1.0})]) == [(0, None)]      # a burst of 11 partitions
        assert create(alice, f"quota-{uuid.uuid4().hex[:6]}", 15)[0] == 0
        assert create(alice, f"quota-{uuid.uuid4().hex[:6]}", 1)[0] == Errors.ThrottlingQuotaExceededError.errno
        assert create(admin, f"quota-{uuid.uuid4().hex[:6]}", 15)[0] == 0           # same client id, other user
    finally:
        alter(admin, [({"user": SCRAM_USER}, {KEY: None})])
        admin.close()
        alice.close()


def test_a_user_added_later_logs_in_and_credentials_survive_a_restart(sasl_engine):
    """Last in the module: it restarts the engine."""
    assert add_scram_user(sasl_engine.bootstrap, "carol", "carol-secret") == {"carol": None}
    login = kafka_python_sasl("SCRAM-SHA-256", "carol", "carol-secret")
    topic = new_topic(sasl_engine)
    producer = KafkaProducer(bootstrap_servers=sasl_engine.bootstrap, acks="all", **login)
    producer.send(topic, b"before").get(timeout=60)
    producer.close()

    assert sasl_engine.terminate() == 0
    sasl_engine.start(timeout=60)
    for user, password, mechanism in (("carol", "carol-secret", "SCRAM-SHA-256"),
                                      (SCRAM_USER, SCRAM_PASSWORD, "SCRAM-SHA-512")):
        client = RawClient(sasl_engine.ports[1])
        assert raw_scram_login(client, user, password, mechanism).error_code == 0
        client.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=sasl_engine.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=30000, **login)
    assert next(consumer).value == b"before"
    consumer.close()
    assert "carol-secret" not in sasl_engine.log_text()


def test_on_a_plaintext_listener_sasl_requests_are_illegal_state_and_the_apis_are_advertised():
    """In process, as on a PLAINTEXT listener: no SASL session behind the connection."""
    from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

    import engine.protocol.apis  # noqa: F401 - registers the handlers
    from engine.protocol.dispatch import dispatch

    def call(request, version, response_class):
        request.with_header(correlation_id=7, client_id="t")
        reply = asyncio.run(dispatch(None, request.encode(version=version, header=True, framed=False), "127.0.0.1"))
        return response_class.decode(reply[4:], version=version, header=True)

    assert call(SaslHandshakeRequest(mechanism="PLAIN"), 1, SaslHandshakeResponse).error_code == \
        Errors.IllegalSaslStateError.errno
    keys = {k.api_key: (k.min_version, k.max_version)
            for k in call(ApiVersionsRequest(), 3, ApiVersionsResponse).api_keys}
    assert (keys[17], keys[36], keys[50], keys[51]) == ((0, 1), (0, 2), (0, 0), (0, 0))
