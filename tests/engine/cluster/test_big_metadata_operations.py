"""Big metadata operations do not freeze the engine: growing a topic to
3,000 partitions and deleting them leaves other connections served while the work runs,
a deletion writes the checkpoints once, not once per replica, and a cluster-wide partition
limit refuses what would pass it with POLICY_VIOLATION and a readable message."""
import threading
import time

import kafka.errors as Errors
import pytest
from kafka.protocol.admin import (CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
                                  CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.cluster import slices
from engine.protocol import registry
from engine.storage import checkpoint
from engine.storage.log_manager import LogManager
from tests.engine.protocol.test_bad_input import build_batch, create_topic
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

PARTITIONS = 3000


@pytest.fixture
def in_process_engine(tmp_path):
    with InProcessEngine(tmp_path, brokers=1, admin=False,
                         configs={"max.partitions": str(PARTITIONS + 10)}) as running:
        yield running.engine


class Pinger(threading.Thread):
    """Another client: ApiVersions again and again, noting when each answer came."""

    def __init__(self, port: int, pause: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.port, self.pause, self.answered, self.stopping = port, pause, [], threading.Event()

    def run(self) -> None:
        client = RawClient(self.port, timeout=120)
        try:
            while not self.stopping.is_set():
                response = client.request(ApiVersionsRequest(client_software_name="p", client_software_version="1"),
                                          3, ApiVersionsResponse)
                assert response.error_code == 0
                self.answered.append(time.monotonic())
                time.sleep(self.pause)
        finally:
            client.close()

    def answers_between(self, start: float, end: float) -> int:
        return sum(start <= t <= end for t in self.answered)


def produce_to(client: RawClient, topic: str, partition: int) -> int:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=partition, records=bytes(build_batch([b"x"])))])])
    return client.request(request, 9, ProduceResponse).responses[0].partition_responses[0].error_code


def test_thousands_of_partitions_come_and_go_while_other_clients_are_served(in_process_engine, monkeypatch):
    port = in_process_engine.ports[0]
    client = RawClient(port, timeout=120)
    pinger = Pinger(port)
    try:
        assert create_topic(client, "big") == 0
        pinger.start()
        wait_until(lambda: pinger.answered, message="the pinger's first answer")

        started = time.monotonic()
        T = CreatePartitionsRequest.CreatePartitionsTopic
        grown = client.request(CreatePartitionsRequest(topics=[T(name="big", count=PARTITIONS, assignments=None)],
                                                       timeout_ms=60000, validate_only=False), 1,
                               CreatePartitionsResponse)
        assert grown.results[0].error_code == 0
        wait_until(lambda: produce_to(client, "big", PARTITIONS - 1) == 0, timeout=120,
                   message="the last new partition to take a record")
        # Served all along: the work was sliced, not done in one turn of the event loop.
        assert pinger.answers_between(started, time.monotonic()) >= 5

        writes = []
        real_write = checkpoint.OffsetCheckpointFile.write
        monkeypatch.setattr(checkpoint.OffsetCheckpointFile, "write",
                            lambda self, offsets: writes.append(self.path.name) or real_write(self, offsets))
        started = time.monotonic()
        deleted = client.request(DeleteTopicsRequest(topic_names=["big"], timeout_ms=60000), 4, DeleteTopicsResponse)
        assert deleted.responses[0].error_code == 0
        assert len(writes) <= 4          # the two checkpoint files once (and a periodic round at most)
        log_dir = in_process_engine.data_dir / "broker-0"
        wait_until(lambda: not any(p.name.startswith("big-") for p in log_dir.iterdir()), timeout=120,
                   message="the deleted partitions' dirs to go")
        assert pinger.answers_between(started, time.monotonic()) >= 1
    finally:
        pinger.stopping.set()
        pinger.join(30)
        client.close()


def test_the_cluster_wide_partition_limit_refuses_with_a_readable_message(in_process_engine):
    client = RawClient(in_process_engine.ports[0])
    try:
        assert create_topic(client, "small") == 0
        T = CreatePartitionsRequest.CreatePartitionsTopic
        answer = client.request(CreatePartitionsRequest(topics=[T(name="small", count=2**31 - 1, assignments=None)],
                                                        timeout_ms=10000, validate_only=False), 1,
                                CreatePartitionsResponse).results[0]
        assert answer.error_code == Errors.PolicyViolationError.errno
        assert "over its limit of 3010 (max.partitions)" in answer.error_message
    finally:
        client.close()


def test_sigterm_while_thousands_of_replicas_are_being_opened_stops_cleanly(engine_factory):
    """The background task applying a big change is cancelled by a clean stop, and the next
    start opens every partition of the committed metadata."""
    engine = engine_factory(brokers=1, admin=False)
    client = RawClient(engine.ports[0], timeout=120)
    try:
        assert create_topic(client, "big") == 0
        T = CreatePartitionsRequest.CreatePartitionsTopic
        grown = client.request(CreatePartitionsRequest(topics=[T(name="big", count=PARTITIONS, assignments=None)],
                                                       timeout_ms=60000, validate_only=False), 1,
                               CreatePartitionsResponse)
        assert grown.results[0].error_code == 0
    finally:
        client.close()
    assert engine.terminate(timeout=120) == 0
    engine.start(timeout=300)           # opening 3,000 logs at start: a generous bound for a loaded machine
    client = RawClient(engine.ports[0], timeout=120)
    try:
        assert produce_to(client, "big", PARTITIONS - 1) == 0
    finally:
        client.close()


class Windows:
    """Engine-side times (the engine runs in this process, on the same monotonic clock): when
    each ApiVersions was answered, and when the big changes ran."""

    def __init__(self) -> None:
        self.served: list[float] = []
        self.handlers: dict[int, tuple[float, float]] = {}
        self.deletions: list[float] = []

    def timed(self, key: int, real):
        async def handler(ctx, request):
            started = time.monotonic()
            try:
                return await real(ctx, request)
            finally:
                self.handlers[key] = (started, time.monotonic())
        return handler

    def served_between(self, start: float, end: float) -> int:
        return sum(start < t < end for t in self.served)


def test_the_controller_and_the_brokers_answer_other_requests_between_slices_of_a_big_change(
        in_process_engine, monkeypatch):
    """The controller prepares thousands of new partitions in slices, and the brokers delete
    thousands of logs in slices, so another connection's requests are answered while the
    change is applied (in one turn of the event loop, nothing else would be answered in
    between). Slices of 1 ms make this independent of speed."""
    monkeypatch.setattr(slices, "SLICE_S", 0.001)
    windows = Windows()
    real_delete_logs = LogManager.delete_logs
    monkeypatch.setattr(LogManager, "delete_logs", lambda self, keys, **kw: (
        windows.deletions.append(time.monotonic()), real_delete_logs(self, keys, **kw))[1])
    port = in_process_engine.ports[0]
    client = RawClient(port, timeout=120)
    pinger = Pinger(port, pause=0.001)

    async def versions(ctx, request):
        windows.served.append(time.monotonic())
        return await spec.handler(ctx, request)

    with registry.intercept(18, versions) as spec, \
            registry.intercept(19, windows.timed(19, registry.lookup(19).handler)), \
            registry.intercept(37, windows.timed(37, registry.lookup(37).handler)):
        try:
            pinger.start()
            wait_until(lambda: windows.served, message="the pinger's first answer")
            T = CreateTopicsRequest.CreatableTopic
            created = client.request(CreateTopicsRequest(topics=[T(
                name="wide", num_partitions=PARTITIONS // 2, replication_factor=1, assignments=[], configs=[])],
                timeout_ms=60000, validate_only=False), 5, CreateTopicsResponse)
            assert created.topics[0].error_code == 0
            assert windows.served_between(*windows.handlers[19]) >= 1

            P = CreatePartitionsRequest.CreatePartitionsTopic
            grown = client.request(CreatePartitionsRequest(topics=[P(name="wide", count=PARTITIONS, assignments=None)],
                                                           timeout_ms=60000, validate_only=False), 1,
                                   CreatePartitionsResponse)
            assert grown.results[0].error_code == 0
            assert windows.served_between(*windows.handlers[37]) >= 1
            wait_until(lambda: produce_to(client, "wide", PARTITIONS - 1) == 0, timeout=120,
                       message="the last new partition to take a record")

            deleted = client.request(DeleteTopicsRequest(topic_names=["wide"], timeout_ms=60000), 4,
                                     DeleteTopicsResponse)
            assert deleted.responses[0].error_code == 0
            log_dir = in_process_engine.data_dir / "broker-0"
            wait_until(lambda: not any(p.name.startswith("wide-") and p.name[5:].isdigit()
                                       for p in log_dir.iterdir()), timeout=120,
                       message="the deleted partitions' dirs to be renamed aside")
            assert len(windows.deletions) > 1
            assert windows.served_between(windows.deletions[0], windows.deletions[-1]) >= 1
        finally:
            pinger.stopping.set()
            pinger.join(30)
            client.close()
