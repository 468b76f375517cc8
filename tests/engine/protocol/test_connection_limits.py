"""Connections and descriptors under hostile clients: Kafka's connection
limits, the idle timeout, one descriptor per partition however often a Fetch names it,
and a muted connection for a client that never reads its replies."""
import os
import select
import socket
import time

import pytest
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.engine.protocol.test_bad_input import build_batch, create_topic, produce
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient
from tests.support.tls import client_context, write_self_signed
from tests.support.waiting import wait_until


def api_versions(client: RawClient):
    return client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                          ApiVersionsResponse)


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def fetch_request(topic: str, repeats: int, max_wait_ms: int = 0, min_bytes: int = 0, offset: int = 0):
    F = FetchRequest.FetchTopic
    partition = F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                                 partition_max_bytes=1 << 20)
    return FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 30,
                        isolation_level=0, session_id=0, session_epoch=-1,
                        topics=[F(topic=topic, partitions=[partition] * repeats)], forgotten_topics_data=[],
                        rack_id="")


@pytest.fixture(scope="module")
def limited_engine(tmp_path_factory):
    from tests.support.engine_process import EngineProcess
    engine = EngineProcess(tmp_path_factory.mktemp("limits") / "data", brokers=1, admin=False,
                           configs={"max.connections.per.ip": "4"}).start()
    yield engine
    engine.kill()


def test_a_fetch_naming_a_partition_thousands_of_times_holds_one_descriptor(limited_engine, topic_name):
    """The client sends the request and does not read: the reply waits in the engine with
    the descriptors it holds. Each partition is answered once, so that is one."""
    port = limited_engine.ports[0]
    setup = RawClient(port)
    try:
        assert create_topic(setup, topic_name) == 0
        for _ in range(4):
            assert produce(setup, topic_name, bytes(build_batch([os.urandom(1000) for _ in range(200)]))) == 0
        answer = setup.request(fetch_request(topic_name, 3), 12, FetchResponse)
        assert [len(t.partitions) for t in answer.responses] == [1]    # named three times, answered once
    finally:
        setup.close()
    pid = limited_engine.process.pid
    before = open_fds(pid)
    hostile = RawClient(port)
    hostile.sock.setsockopt(__import__("socket").SOL_SOCKET, __import__("socket").SO_RCVBUF, 4096)
    try:
        hostile.correlation_id += 1
        request = fetch_request(topic_name, 6000)
        request.with_header(correlation_id=1, client_id="hostile")
        hostile.send_bytes(request.encode(version=12, header=True, framed=True))
        time.sleep(1.0)   # time for the engine to read the partitions (and, before the fix, dup 6,000 fds)
        assert open_fds(pid) < before + 50
        other = RawClient(port)                      # and everyone else is served meanwhile
        try:
            assert api_versions(other).error_code == 0
        finally:
            other.close()
    finally:
        hostile.close()


def four_served(port: int) -> list[RawClient] | None:
    clients = [RawClient(port) for _ in range(4)]
    if all(served(c) for c in clients):
        return clients
    for client in clients:
        client.close()
    return None


def test_max_connections_per_ip_closes_the_extra_connection_and_frees_its_place(limited_engine):
    port = limited_engine.ports[0]
    # The previous test's connections may still be closing on the engine's side: take the
    # four places as soon as they are all free.
    clients = wait_until(lambda: four_served(port), timeout=30, message="four free places")
    try:
        extra = RawClient(port)
        try:
            assert api_versions(extra) is None          # closed by the broker at once
        finally:
            extra.close()
        clients.pop().close()

        def a_new_one_is_served():
            again = RawClient(port)
            try:
                return api_versions(again) is not None
            finally:
                again.close()
        wait_until(a_new_one_is_served, timeout=30, message="a place to free up")
    finally:
        for client in clients:
            client.close()
    assert "max.connections.per.ip (4) reached for 127.0.0.1" in limited_engine.log_path.read_text()


def test_an_idle_connection_is_closed_but_a_long_poll_is_not_idle(engine_factory, topic_name):
    engine = engine_factory(brokers=1, admin=False, configs={"connections.max.idle.ms": "300"})
    port = engine.ports[0]
    poller = RawClient(port, timeout=30)
    try:
        assert create_topic(poller, topic_name) == 0
        # Parked for want of min_bytes for 1.5 s, five idle periods: it is answered all the same.
        answer = poller.request(fetch_request(topic_name, 1, max_wait_ms=1500, min_bytes=1 << 20), 12, FetchResponse)
        assert answer is not None and answer.responses[0].partitions[0].error_code == 0
        idle = RawClient(port, timeout=30)
        try:
            assert api_versions(idle).error_code == 0
            wait_until(idle.is_closed_by_peer, timeout=30, message="the idle connection to be closed")
        finally:
            idle.close()
    finally:
        poller.close()
    assert "connections.max.idle.ms" in engine.log_path.read_text()


def served(client: RawClient) -> bool:
    try:
        return api_versions(client) is not None
    except OSError:
        return False


def test_at_max_connections_a_new_client_waits_for_a_place_instead_of_being_closed(engine_factory):
    """Kafka's acceptor stops accepting at max.connections: the next client waits in the
    backlog, and is served as soon as a connection closes."""
    engine = engine_factory(brokers=1, admin=False, configs={"max.connections": "3"})
    port = engine.ports[0]
    clients = [RawClient(port, timeout=30) for _ in range(3)]
    waiting = RawClient(port, timeout=30)
    try:
        assert all(served(c) for c in clients)
        waiting.correlation_id += 1
        request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
        request.with_header(correlation_id=waiting.correlation_id, client_id="waiting")
        waiting.send_bytes(request.encode(version=3, header=True, framed=True))
        readable, _, _ = select.select([waiting.sock], [], [], 0.5)
        assert readable == []                        # neither answered nor closed while all places are taken
        clients.pop().close()
        frame = waiting.read_frame()                 # accepted once a place is free, and answered
        assert frame is not None and ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0
    finally:
        waiting.close()
        for client in clients:
            client.close()


def connect_from(source: str, port: int) -> RawClient:
    client = RawClient.__new__(RawClient)
    client.sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    client.correlation_id, client.client_id = 0, "from-" + source
    return client


def test_per_ip_overrides_let_in_only_the_addresses_they_name(engine_factory):
    """max.connections.per.ip=0 with an override: 127.0.0.1 (as `localhost`) may hold two
    connections; any other address (127.0.0.2, loopback too) none."""
    engine = engine_factory(brokers=1, admin=False, configs={"max.connections.per.ip": "0",
                                                              "max.connections.per.ip.overrides": "localhost:2"})
    port = engine.ports[0]
    stranger = connect_from("127.0.0.2", port)
    named = [RawClient(port) for _ in range(2)]
    third = None
    try:
        assert api_versions(stranger) is None                     # closed at once
        assert all(served(c) for c in named)
        third = RawClient(port)
        assert api_versions(third) is None
    finally:
        for client in [stranger, *named, *([third] if third else [])]:
            client.close()
    text = engine.log_path.read_text()
    assert "max.connections.per.ip (0) reached for 127.0.0.2" in text
    assert "max.connections.per.ip (2) reached for 127.0.0.1" in text


def test_max_connections_per_ip_zero_needs_overrides(tmp_path):
    from engine.config import BrokerConfig, InvalidConfigError
    with pytest.raises(InvalidConfigError, match="can be set to zero only if max.connections.per.ip.overrides"):
        BrokerConfig(static={"max.connections.per.ip": "0"})
    with pytest.raises(InvalidConfigError, match="max.connections.per.ip.overrides"):
        BrokerConfig(static={"max.connections.per.ip.overrides": "localhost"})


def test_connections_still_in_their_tls_handshake_hold_their_places(engine_factory, tmp_path):
    """Three TCP connections that never start TLS take the three places of 127.0.0.1: a TLS
    client is turned away until one of them goes."""
    keystore, ca = write_self_signed(tmp_path)
    context = client_context(ca)
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False, tls=context,
                           configs={"max.connections.per.ip": "3"},
                           extra_args=["--security-protocol", "SSL", "--config", "ssl.keystore.type=PEM",
                                       "--config", f"ssl.keystore.location={keystore}"]).start()
    port = engine.ports[0]
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]

    def tls_client_served() -> bool:
        try:
            with context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                     server_hostname="127.0.0.1") as tls:
                client = RawClient.__new__(RawClient)
                client.sock, client.correlation_id, client.client_id = tls, 0, "tls"
                return served(client)
        except OSError:          # refused during the handshake
            return False
    try:
        assert not tls_client_served()
        stalled.pop().close()
        wait_until(tls_client_served, timeout=30, message="a TLS client to be served once a place is free")
    finally:
        for sock in stalled:
            sock.close()
        engine.kill()
