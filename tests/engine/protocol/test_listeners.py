"""Several named listeners per broker, with the authorizer on:
- INTERNAL (PLAINTEXT, the inter-broker listener; ANONYMOUS is a super user here),
- EXTERNAL (SASL_PLAINTEXT, advertised as `localhost`),
- CERTS (SSL with ssl.client.auth=required: the client certificate's subject, mapped by
  ssl.principal.mapping.rules, is the principal).
Metadata, DescribeCluster and FindCoordinator answer the endpoints of the listener the client
came through; the same ACL applies to alice whether she logs in with SCRAM or a certificate."""
import socket
import ssl
import uuid

import pytest
from cryptography.x509.oid import NameOID
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.metadata import (ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest,
                                     FindCoordinatorResponse)

from tests.support.acls import STANDARD_AUTHORIZER, USERS, grant, kafka_python_login
from tests.support.engine_process import EngineProcess, PortTakenError, free_port_range
from tests.support.raw_client import RawClient
from tests.support.sasl import add_scram_user, authenticate, handshake
from tests.support.tls import client_context, write_client_certificate, write_self_signed

BROKERS = 2
RULES = "RULE:^CN=([^,]+),O=Acme$/$1/L"


class Listeners:
    def __init__(self, engine: EngineProcess, base: int, files: dict) -> None:
        self.engine, self.base, self.files = engine, base, files

    def ports(self, listener: str) -> list[int]:
        offset = {"INTERNAL": 0, "EXTERNAL": BROKERS, "CERTS": 2 * BROKERS}[listener]
        return [self.base + offset + i for i in range(BROKERS)]

    def bootstrap(self, listener: str, host: str = "127.0.0.1") -> str:
        return ",".join(f"{host}:{port}" for port in self.ports(listener))

    def tls(self, certificate: str | None = "alice") -> dict:
        settings = dict(security_protocol="SSL", ssl_cafile=str(self.files["server_ca"]), ssl_check_hostname=False)
        if certificate:
            settings.update(ssl_certfile=str(self.files[certificate]), ssl_keyfile=str(self.files[certificate]))
        return settings


def start(directory) -> Listeners:
    keystore, server_ca = write_self_signed(directory)
    # Certificates list the subject from the most general part: RFC 2253 writes it the other way round.
    alice, client_ca = write_client_certificate(directory, [(NameOID.ORGANIZATION_NAME, "Acme"),
                                                            (NameOID.COMMON_NAME, "Alice")], "alice")
    stranger, stranger_ca = write_client_certificate(directory, [(NameOID.ORGANIZATION_NAME, "Other"),
                                                                 (NameOID.COMMON_NAME, "Eve")], "eve")
    truststore = directory / "truststore.pem"
    truststore.write_bytes(client_ca.read_bytes() + stranger_ca.read_bytes())
    users = directory / "users.properties"
    users.write_text('user_admin="admin-secret"\n')
    for _ in range(5):
        base = free_port_range(3 * BROKERS)
        engine = EngineProcess(directory / "data", brokers=BROKERS, admin=False, extra_args=[
            "--listener", f"INTERNAL=PLAINTEXT://127.0.0.1:{base}",
            "--listener", f"EXTERNAL=SASL_PLAINTEXT://127.0.0.1:{base + BROKERS}",
            "--listener", f"CERTS=SSL://127.0.0.1:{base + 2 * BROKERS}",
            "--inter-broker-listener", "INTERNAL", "--sasl-users-file", str(users),
            "--config", f"advertised.listeners=EXTERNAL://localhost:{base + BROKERS}",
            "--config", f"ssl.keystore.location={keystore}",
            "--config", "listener.name.certs.ssl.client.auth=required",
            "--config", f"listener.name.certs.ssl.truststore.location={truststore}",
            "--config", f"listener.name.certs.ssl.principal.mapping.rules={RULES}",
            "--config", f"authorizer.class.name={STANDARD_AUTHORIZER}",
            "--config", "super.users=User:ANONYMOUS;User:admin"])
        engine.port = base          # the INTERNAL listener: where the readiness check asks
        try:
            engine.start(timeout=60)
        except PortTakenError:
            continue
        return Listeners(engine, base, {"server_ca": server_ca, "alice": alice, "eve": stranger})
    raise RuntimeError("no free ports")


@pytest.fixture(scope="module")
def listeners(tmp_path_factory):
    running = start(tmp_path_factory.mktemp("listeners"))
    add_scram_user(running.bootstrap("EXTERNAL", "localhost"), "alice", USERS["alice"])
    yield running
    if running.engine.alive():
        assert running.engine.terminate() == 0, running.engine.log_text()


def brokers_seen(bootstrap: str, **login) -> set[tuple[str, int]]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **login)
    try:
        return {(b["host"], b["port"]) for b in admin.describe_cluster()["brokers"]}
    finally:
        admin.close()


def test_each_listener_advertises_its_own_endpoints(listeners):
    assert brokers_seen(listeners.bootstrap("INTERNAL")) == {("127.0.0.1", p) for p in listeners.ports("INTERNAL")}
    assert brokers_seen(listeners.bootstrap("EXTERNAL"), **kafka_python_login("admin")) == \
        {("localhost", p) for p in listeners.ports("EXTERNAL")}
    assert brokers_seen(listeners.bootstrap("CERTS"), **listeners.tls()) == \
        {("127.0.0.1", p) for p in listeners.ports("CERTS")}


def test_describe_cluster_and_find_coordinator_follow_the_listener(listeners):
    client = RawClient(listeners.ports("INTERNAL")[0])
    try:
        response = client.request(DescribeClusterRequest(include_cluster_authorized_operations=True,
                                                         endpoint_type=1), 1, DescribeClusterResponse)
        assert sorted(b.port for b in response.brokers) == listeners.ports("INTERNAL")
        assert len(response.authorized_operations) == 7           # ANONYMOUS is a super user here
    finally:
        client.close()
    topic = f"l-{uuid.uuid4().hex[:6]}"
    producer = KafkaProducer(bootstrap_servers=listeners.bootstrap("EXTERNAL", "localhost"), acks="all",
                             **kafka_python_login("admin"))
    producer.send(topic, b"through EXTERNAL").get(timeout=60)      # auto-created, replicated (acks=all)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=listeners.bootstrap("EXTERNAL", "localhost"),
                             group_id=f"g-{topic}", auto_offset_reset="earliest", consumer_timeout_ms=30000,
                             **kafka_python_login("admin"))
    try:
        assert next(iter(consumer)).value == b"through EXTERNAL"
    finally:
        consumer.close()
    assert coordinator_of(listeners.ports("EXTERNAL")[0], f"g-{topic}") in \
        {("localhost", p) for p in listeners.ports("EXTERNAL")}
    assert coordinator_of(listeners.ports("INTERNAL")[0], f"g-{topic}", login=False) in \
        {("127.0.0.1", p) for p in listeners.ports("INTERNAL")}


def coordinator_of(port: int, group: str, login: bool = True) -> tuple[str, int]:
    client = RawClient(port)
    try:
        if login:
            assert handshake(client, "PLAIN").error_code == 0
            assert authenticate(client, b"\0admin\0admin-secret").error_code == 0
        response = client.request(FindCoordinatorRequest(key_type=0, coordinator_keys=[group]), 4,
                                  FindCoordinatorResponse)
        (found,) = response.coordinators
        assert found.error_code == 0
        return found.host, found.port
    finally:
        client.close()


def test_a_certificate_and_a_scram_login_are_the_same_principal(listeners):
    topic = f"certs-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(bootstrap_servers=listeners.bootstrap("INTERNAL"))
    admin.create_topics([NewTopic(topic, 1, 2)])
    grant(admin, "User:alice", "READ", "TOPIC", topic)
    admin.close()
    for bootstrap, login in ((listeners.bootstrap("CERTS"), listeners.tls("alice")),
                             (listeners.bootstrap("EXTERNAL", "localhost"), kafka_python_login("alice"))):
        client = KafkaAdminClient(bootstrap_servers=bootstrap, **login)
        try:
            (described,) = client.describe_topics([topic])
            assert set(described["authorized_operations"]) == {"READ", "DESCRIBE"}
        finally:
            client.close()


def tls_api_versions(listeners, certificate: str | None) -> ApiVersionsResponse | None:
    """ApiVersions over a raw TLS connection to CERTS, presenting `certificate` (or none)."""
    context = client_context(listeners.files["server_ca"])
    context.check_hostname = False
    if certificate:
        context.load_cert_chain(listeners.files[certificate])
    request = ApiVersionsRequest()
    request.with_header(correlation_id=1, client_id="tls-test")
    try:
        with socket.create_connection(("127.0.0.1", listeners.ports("CERTS")[0]), timeout=10) as raw, \
                context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            sock.sendall(request.encode(version=3, header=True, framed=True))
            head = sock.recv(4)
            if len(head) < 4:
                return None
            size = int.from_bytes(head, "big")
            frame = b""
            while len(frame) < size:
                chunk = sock.recv(size - len(frame))
                if not chunk:
                    return None
                frame += chunk
            return ApiVersionsResponse.decode(frame, version=3, header=True)
    except (ssl.SSLError, ConnectionError):
        return None


def test_certs_without_a_certificate_or_with_an_unmapped_one_are_refused(listeners):
    assert tls_api_versions(listeners, "alice").error_code == 0
    assert tls_api_versions(listeners, None) is None      # ssl.client.auth=required
    assert tls_api_versions(listeners, "eve") is None     # O=Other: no mapping rule applies
    assert "No rules apply to CN=Eve,O=Other" in listeners.engine.log_text()
