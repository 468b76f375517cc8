"""Connections and descriptors under hostile clients: Kafka's connection
limits, the idle timeout, one descriptor per partition however often a Fetch names it,
and a muted connection for a client that never reads its replies."""
import os
import time

import pytest
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.engine.protocol.test_bad_input import build_batch, create_topic, produce
from tests.support.raw_client import RawClient
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


def test_max_connections_per_ip_closes_the_extra_connection_and_frees_its_place(limited_engine):
    port = limited_engine.ports[0]
    clients = [RawClient(port) for _ in range(4)]
    try:
        assert all(api_versions(c).error_code == 0 for c in clients)
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
