"""SASL re-authentication (KIP-368): with connections.max.reauth.ms=2000 librdkafka and kafka-python
log in again on their open connections every session and lose no record; on the wire, SaslAuthenticate tells
the session lifetime (no longer than an OAUTHBEARER token lives), an expired session's next
request closes its connection, and a re-authentication must keep its principal and mechanism.
The broker's metrics count what happened.

One single-broker engine for the module; waits are for events, with generous bounds, and the
only time the tests take for granted is that a session of 2 s has ended after 2.5 s."""
from __future__ import annotations

import time
import urllib.request
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.net.sasl.scram import ScramClient
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from prometheus_client.parser import text_string_to_metric_families

from tests.support.engine_process import free_port_range
from tests.support.oauth import IdentityProvider
from tests.support.promtool import check_metrics
from tests.support.raw_client import RawClient
from tests.support.sasl import (ADMIN, ADMIN_PASSWORD, SCRAM_PASSWORD, SCRAM_USER, add_scram_user, authenticate,
                                handshake, kafka_python_sasl, raw_scram_login, start_sasl_engine)
from tests.support.waiting import wait_until

MAX_REAUTH_MS = 2000
LISTENER = "SASL_PLAINTEXT"
PAST_THE_SESSION_S = MAX_REAUTH_MS / 1000 + 0.5
SOCKET_SERVER = "kafka_server_socket_server_metrics"


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    return IdentityProvider(tmp_path_factory.mktemp("idp"))


@pytest.fixture(scope="module")
def engine(tmp_path_factory, provider):
    metrics_port = free_port_range(1)
    started = start_sasl_engine(tmp_path_factory.mktemp("reauth"), brokers=1, extra_args=[
        "--config", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        *provider.broker_configs(),
        "--config", f"connections.max.reauth.ms={MAX_REAUTH_MS}",
        # one mechanism of the listener without an end to its sessions
        "--config", "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms=0",
        "--metrics-port", str(metrics_port)])
    started.metrics_port = metrics_port
    assert add_scram_user(started.bootstrap, SCRAM_USER, SCRAM_PASSWORD) == {SCRAM_USER: None}
    yield started
    if started.alive():
        assert started.terminate() == 0, started.log_text()


def scrape(engine) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{engine.metrics_port}/metrics", timeout=10) as answer:
        return answer.read()


def metric(engine, name: str) -> float:
    """One series of the broker's: a listener's counter, or the broker-wide gauge."""
    labels = {} if name.startswith("kafka_network_") else {"listener": LISTENER}
    for family in text_string_to_metric_families(scrape(engine).decode()):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    raise AssertionError(f"no series {name}{labels}")


def counters(engine) -> dict[str, float]:
    return {short: metric(engine, name) for short, name in (
        ("reauthenticated", f"{SOCKET_SERVER}_successful_reauthentication_total"),
        ("failed", f"{SOCKET_SERVER}_failed_reauthentication_total"),
        ("no_reauth", f"{SOCKET_SERVER}_successful_authentication_no_reauth_total"),
        ("latencies", f"{SOCKET_SERVER}_reauthentication_latency_count"),
        ("expired", "kafka_network_socketserver_expiredconnectionskilledcount"))}


def plain_token(user: str = ADMIN, password: str = ADMIN_PASSWORD) -> bytes:
    return f"\0{user}\0{password}".encode()


def bearer(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def metadata(client: RawClient):
    return client.request(MetadataRequest(topics=None), 9, MetadataResponse)


def login(client: RawClient, mechanism: str, token: bytes, version: int = 2):
    assert handshake(client, mechanism).error_code == 0
    return authenticate(client, token, version)


def new_topic(engine) -> str:
    name = f"reauth-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, **kafka_python_sasl())
    try:
        admin.create_topics([NewTopic(name, 1, 1)])
    finally:
        admin.close()
    return name


def librdkafka_login(engine, provider, mechanism: str) -> dict:
    login = {"bootstrap.servers": engine.bootstrap, "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": mechanism}
    if mechanism == "OAUTHBEARER":        # a token good for 10 minutes: the sessions end at 2 s all the same
        return {**login, "oauth_cb": lambda config: (provider.token("carol"), time.time() + 600)}
    user, password = (ADMIN, ADMIN_PASSWORD) if mechanism == "PLAIN" else (SCRAM_USER, SCRAM_PASSWORD)
    return {**login, "sasl.username": user, "sasl.password": password}


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"])
def test_librdkafka_re_authenticates_its_connections_and_no_record_is_lost(engine, provider, mechanism):
    topic = new_topic(engine)
    before = counters(engine)
    login = librdkafka_login(engine, provider, mechanism)
    producer = Producer({**login, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    consumer = Consumer({**login, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                         "fetch.wait.max.ms": 100})
    consumer.subscribe([topic])
    sent, received = [], []

    def consume(timeout: float) -> None:
        message = consumer.poll(timeout)
        if message is not None and message.error() is None:
            received.append(message.value())

    try:
        started = time.monotonic()
        # Several sessions: at least 4 of them, until the broker counts a few renewals of the
        # producer's and the consumer's connections.
        while time.monotonic() - started < 4 * MAX_REAUTH_MS / 1000 or \
                counters(engine)["reauthenticated"] - before["reauthenticated"] < 6:
            assert time.monotonic() - started < 180, f"re-authentications so far: {counters(engine)}"
            value = f"{mechanism}-{len(sent)}".encode()
            producer.produce(topic, value)
            sent.append(value)
            producer.poll(0)
            consume(0.1)
        assert producer.flush(60) == 0
        wait_until(lambda: consume(0.2) or len(received) >= len(sent), timeout=60, message="every record consumed")
    finally:
        consumer.close()
    assert received == sent                 # none lost, none twice, in order
    after = counters(engine)
    assert after["failed"] == before["failed"]
    assert after["latencies"] - before["latencies"] == after["reauthenticated"] - before["reauthenticated"]


def test_kafka_python_re_authenticates_its_connections_too(engine):
    topic = new_topic(engine)
    before = counters(engine)
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, acks="all", **kafka_python_sasl())
    consumer = KafkaConsumer(topic, bootstrap_servers=engine.bootstrap, group_id=f"g-{topic}",
                             auto_offset_reset="earliest", fetch_max_wait_ms=100, **kafka_python_sasl())
    sent, received = [], []

    def consume() -> bool:
        for records in consumer.poll(timeout_ms=100).values():
            received.extend(record.value for record in records)
        return len(received) >= len(sent)

    try:
        started = time.monotonic()
        while time.monotonic() - started < 4 * MAX_REAUTH_MS / 1000 or \
                counters(engine)["reauthenticated"] - before["reauthenticated"] < 6:
            assert time.monotonic() - started < 180, f"re-authentications so far: {counters(engine)}"
            sent.append(f"kafka-python-{len(sent)}".encode())
            producer.send(topic, sent[-1])
            consume()
        producer.flush(60)
        wait_until(consume, timeout=60, message="every record consumed")
    finally:
        producer.close()
        consumer.close()
    assert received == sent
    assert counters(engine)["failed"] == before["failed"]


def test_the_session_lifetime_is_told_and_an_expired_sessions_next_request_closes_it(engine):
    before = counters(engine)
    client = RawClient(engine.ports[0])
    try:
        response = login(client, "PLAIN", plain_token())
        assert (response.error_code, response.session_lifetime_ms) == (0, MAX_REAUTH_MS)
        assert metadata(client).brokers
        time.sleep(PAST_THE_SESSION_S)
        assert metadata(client) is None       # closed unanswered, as Kafka's "expired" channel
    finally:
        client.close()
    assert counters(engine)["expired"] == before["expired"] + 1
    wait_until(lambda: f"its SASL session (PLAIN, {ADMIN}) expired" in engine.log_text(), timeout=10,
               message="the expired session's close logged")


def test_a_re_authentication_renews_even_an_expired_session(engine):
    before = counters(engine)
    client = RawClient(engine.ports[0])
    try:
        assert login(client, "PLAIN", plain_token()).error_code == 0
        time.sleep(PAST_THE_SESSION_S)         # the session is over: only a re-authentication may come
        renewed = login(client, "PLAIN", plain_token())
        assert (renewed.error_code, renewed.session_lifetime_ms) == (0, MAX_REAUTH_MS)
        assert metadata(client).brokers
    finally:
        client.close()
    after = counters(engine)
    assert (after["reauthenticated"], after["expired"]) == (before["reauthenticated"] + 1, before["expired"])


@pytest.mark.parametrize("again, message", [
    (lambda client: login(client, "PLAIN", plain_token("bob", "bob-secret")),
     f"Cannot change principals during re-authentication from User.{ADMIN}: User.bob"),
    (lambda client: login(client, "PLAIN", plain_token(ADMIN, "wrong")),
     "Authentication failed during re-authentication due to invalid credentials with SASL mechanism PLAIN"),
    (lambda client: login(client, "SCRAM-SHA-256", ScramClient(SCRAM_USER, SCRAM_PASSWORD,
                                                               "SCRAM-SHA-256").first_message()),
     "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of mechanism "
     "'PLAIN'"),
])
def test_a_re_authentication_must_keep_the_principal_and_the_mechanism(engine, again, message):
    before = counters(engine)
    client = RawClient(engine.ports[0])
    try:
        assert login(client, "PLAIN", plain_token()).error_code == 0
        refused = again(client)
        assert (refused.error_code, refused.error_message) == (Errors.SaslAuthenticationFailedError.errno, message)
        assert metadata(client) is None
    finally:
        client.close()
    assert counters(engine)["failed"] == before["failed"] + 1


def test_a_hostile_re_authentication_gains_nothing_and_holds_nothing(engine):
    """A client that begins a re-authentication may send nothing but its login until it ends:
    another request closes it unanswered, and so does a token past sasl.server.max.receive.size
    (read no further than its size). A second start within a second is refused and leaves the
    session as it was. Other connections are served throughout."""
    before = counters(engine)
    storm, stalled, huge, bystander = (RawClient(engine.ports[0]) for _ in range(4))
    try:
        for client in (storm, stalled, huge, bystander):
            assert login(client, "PLAIN", plain_token()).error_code == 0
        assert login(storm, "PLAIN", plain_token()).error_code == 0          # a re-authentication
        assert [handshake(storm, "PLAIN").error_code for _ in range(20)] == [Errors.IllegalSaslStateError.errno] * 20
        assert metadata(storm).brokers                                        # still the same session
        assert handshake(stalled, "PLAIN").error_code == 0                    # begun, never finished
        assert metadata(stalled) is None                                      # no request meanwhile
        assert handshake(huge, "PLAIN").error_code == 0
        huge.send_bytes((1 << 20).to_bytes(4, "big") + bytes(64))             # 1 MiB announced > 512 KiB
        assert huge.read_frame() is None
        assert metadata(bystander).brokers
    finally:
        for client in (storm, stalled, huge, bystander):
            client.close()
    after = counters(engine)
    assert after["reauthenticated"] == before["reauthenticated"] + 1
    assert after["failed"] == before["failed"] + 1                           # the stalled one's


def test_an_oauthbearer_session_ends_no_later_than_its_token(engine, provider):
    long_lived = RawClient(engine.ports[0])
    short_lived = RawClient(engine.ports[0])
    try:
        assert login(long_lived, "OAUTHBEARER", bearer(provider.token("dave", lifetime_s=600))).session_lifetime_ms \
            == MAX_REAUTH_MS
        response = login(short_lived, "OAUTHBEARER", bearer(provider.token("dave", lifetime_s=1)))
        assert response.error_code == 0 and 0 <= response.session_lifetime_ms <= 1000    # `exp` is a whole second
        time.sleep(1.5)                        # the token has expired: the connection does not outlive it
        assert metadata(short_lived) is None
    finally:
        long_lived.close()
        short_lived.close()


def test_a_mechanism_whose_sessions_do_not_end_tells_0_and_takes_no_re_authentication(engine):
    client = RawClient(engine.ports[0])
    try:
        response = raw_scram_login(client, SCRAM_USER, SCRAM_PASSWORD, "SCRAM-SHA-512")
        assert (response.error_code, response.session_lifetime_ms) == (0, 0)
        assert handshake(client, "SCRAM-SHA-512").error_code == Errors.IllegalSaslStateError.errno
        assert metadata(client).brokers
    finally:
        client.close()


def test_a_client_that_cannot_re_authenticate_is_counted_and_closed_when_its_session_ends(engine):
    before = counters(engine)
    client = RawClient(engine.ports[0])
    try:
        assert login(client, "PLAIN", plain_token(), version=0).error_code == 0    # no lifetime in v0
        assert counters(engine)["no_reauth"] == before["no_reauth"] + 1
        time.sleep(PAST_THE_SESSION_S)
        assert metadata(client) is None
    finally:
        client.close()


def test_promtool_accepts_the_families(engine):
    result = check_metrics(scrape(engine))
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
