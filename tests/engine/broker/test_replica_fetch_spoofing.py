"""Only a replica moves its leader's replication state: a client that fetches "as" a follower
can neither hold a dead follower in the ISR nor make an acks=all produce return early.

One 2-broker engine in this process, so a test can stop the follower's fetcher (a follower
that hangs while its broker stays registered) and read the leader's state. The topic has
min.insync.replicas=2: with its follower gone, an acks=all produce can only fail, once the
ISR has shrunk (replica.lag.time.max.ms); before the fix a spoofer made it succeed at once."""
import threading
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.consumer import (FetchRequest, FetchResponse, OffsetForLeaderEpochRequest,
                                     OffsetForLeaderEpochResponse)
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.engine.protocol.test_bad_input import build_batch
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

LAG_MS = 1500
SPOOFED_OFFSET = 10 ** 12


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with InProcessEngine(tmp_path_factory.mktemp("spoof"), brokers=2, admin=False,
                         configs={"replica.lag.time.max.ms": str(LAG_MS)}) as engine:
        yield engine


def new_topic(running) -> tuple[str, uuid.UUID, int, int]:
    """A 1-partition topic on both brokers: (name, topic id, leader, follower)."""
    name = f"spoof-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": running.engine.bootstrap_servers})
    admin.create_topics([NewTopic(name, 1, 2, config={"min.insync.replicas": "2"})])[name].result(30)

    def settled():
        state = running.engine.controller.image.partition(name, 0)
        return state if state is not None and len(state.isr) == 2 else None
    state = wait_until(settled, message="both replicas in the ISR")
    topic_id = running.engine.controller.image.topics[name].topic_id
    return name, topic_id, state.leader, next(r for r in state.replicas if r != state.leader)


def produce(port: int, topic: str, value: bytes) -> int:
    client = RawClient(port, timeout=60)
    try:
        P = ProduceRequest.TopicProduceData
        request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
            P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=bytes(build_batch([value])))])])
        return client.request(request, 9, ProduceResponse).responses[0].partition_responses[0].error_code
    finally:
        client.close()


def spoofed_fetch(client: RawClient, topic: str, topic_id: uuid.UUID, replica: int, version: int, offset: int):
    F = FetchRequest.FetchTopic
    partition = F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
                                 log_start_offset=0, partition_max_bytes=1 << 20)
    request = FetchRequest(max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0, session_id=0,
                           session_epoch=-1, topics=[F(topic=topic, topic_id=topic_id, partitions=[partition])],
                           forgotten_topics_data=[], rack_id="")
    if version >= 15:
        request.replica_state = FetchRequest.ReplicaState(replica_id=replica, replica_epoch=1)
    else:
        request.replica_id = replica
    return client.request(request, version, FetchResponse).responses[0].partitions[0]


class Spoofer(threading.Thread):
    """Fetches as `replica` every 20 ms, claiming a position far past the log end, with an old
    Fetch (replica_id) and a new one (ReplicaState with a made-up broker epoch) in turn."""

    def __init__(self, port: int, topic: str, topic_id: uuid.UUID, replica: int) -> None:
        super().__init__(daemon=True)
        self.port, self.topic, self.topic_id, self.replica = port, topic, topic_id, replica
        self.errors: list[int] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        client = RawClient(self.port, timeout=30)
        try:
            while not self.stopping.wait(0.02):
                version = (12, 16)[len(self.errors) % 2]
                self.errors.append(spoofed_fetch(client, self.topic, self.topic_id, self.replica, version,
                                                 SPOOFED_OFFSET).error_code)
        finally:
            client.close()


def hang_fetcher(running, follower: int, leader: int) -> None:
    async def stop():
        await running.engine.broker(follower).fetchers[leader].stop()
    running.call(stop())


def test_a_spoofer_neither_keeps_a_dead_follower_in_the_isr_nor_speeds_up_acks_all(running):
    topic, topic_id, leader, follower = new_topic(running)
    port = running.engine.ports[leader]
    assert produce(port, topic, b"replicated") == 0        # both replicas fetch: acks=all succeeds
    hang_fetcher(running, follower, leader)
    spoofer = Spoofer(port, topic, topic_id, follower)
    spoofer.start()
    try:
        # The follower's last position is all the leader may count: the produce waits for the
        # ISR to shrink, then fails with min.insync.replicas=2 unmet (or, on a machine slow
        # enough that the ISR shrank before it arrived, is refused up front).
        assert produce(port, topic, b"unreplicated") in (Errors.NotEnoughReplicasAfterAppendError.errno,
                                                         Errors.NotEnoughReplicasError.errno)
        assert running.engine.controller.image.partition(topic, 0).isr == [leader]
    finally:
        spoofer.stopping.set()
        spoofer.join(30)
    assert spoofer.errors and set(spoofer.errors) == {Errors.TopicAuthorizationFailedError.errno}
    partition = running.engine.broker(leader).partitions[(topic, 0)]
    assert partition.high_watermark == partition.log_end_offset      # moved by the leader alone, never past it


def test_a_real_follower_fetching_past_the_log_end_is_out_of_range_and_changes_nothing(running):
    topic, topic_id, leader, follower = new_topic(running)
    port = running.engine.ports[leader]
    assert produce(port, topic, b"one") == 0
    hang_fetcher(running, follower, leader)
    partition = running.engine.broker(leader).partitions[(topic, 0)]
    position = partition.followers[follower].log_end_offset

    async def fetch_as_the_follower(offset: int):
        """Over the follower broker's own inter-broker connection: a proven replica fetch."""
        from engine.broker.connection import BrokerConnection
        connection = BrokerConnection(lambda: running.engine.inter_broker.connect(follower, leader), "test-replica")
        try:
            F = FetchRequest.FetchTopic
            request = FetchRequest(replica_id=follower, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                                   isolation_level=0, session_id=0, session_epoch=-1, rack_id="",
                                   forgotten_topics_data=[], topics=[F(topic=topic, partitions=[F.FetchPartition(
                                       partition=0, current_leader_epoch=-1, fetch_offset=offset,
                                       last_fetched_epoch=-1, log_start_offset=0, partition_max_bytes=1 << 20)])])
            return (await connection.request(request, 12, FetchResponse)).responses[0].partitions[0]
        finally:
            connection.close()

    answer = running.call(fetch_as_the_follower(partition.log_end_offset + 1000))
    assert answer.error_code == Errors.OffsetOutOfRangeError.errno
    assert partition.followers[follower].log_end_offset == position
    assert partition.high_watermark <= partition.log_end_offset
    answer = running.call(fetch_as_the_follower(partition.log_end_offset))      # a position it has: taken
    assert answer.error_code == 0 and partition.followers[follower].log_end_offset == partition.log_end_offset


def test_the_follower_catches_up_and_rejoins_once_it_fetches_again(running):
    topic, topic_id, leader, follower = new_topic(running)
    port = running.engine.ports[leader]
    hang_fetcher(running, follower, leader)
    wait_until(lambda: running.engine.controller.image.partition(topic, 0).isr == [leader],
               message="the hung follower to leave the ISR")
    running.call(running.engine.stop_broker(follower))
    running.call(running.engine.start_broker(follower))
    wait_until(lambda: sorted(running.engine.controller.image.partition(topic, 0).isr) == sorted([leader, follower]),
               message="the follower to rejoin the ISR")
    assert produce(port, topic, b"after") == 0



def offset_for_leader_epoch(port: int, topic: str, replica: int):
    T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(replica_id=replica, topics=[T(topic=topic, partitions=[
        T.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)])])
    client = RawClient(port)
    try:
        return client.request(request, 4, OffsetForLeaderEpochResponse).topics[0].partitions[0]
    finally:
        client.close()


def test_offset_for_leader_epoch_as_a_replica_gets_a_client_only_what_any_consumer_gets(running):
    """OffsetForLeaderEpoch reads the leader's epoch cache; a replica id neither changes its
    answer nor the partition's replication state (Kafka 4.0 ignores the id too)."""
    topic, topic_id, leader, follower = new_topic(running)
    port = running.engine.ports[leader]
    assert produce(port, topic, b"one") == 0           # acks=all: both replicas have it
    partition = running.engine.broker(leader).partitions[(topic, 0)]
    before = (partition.high_watermark, running.engine.controller.image.partition(topic, 0).isr)
    as_replica = offset_for_leader_epoch(port, topic, follower)
    as_consumer = offset_for_leader_epoch(port, topic, -1)
    assert (as_replica.error_code, as_replica.leader_epoch, as_replica.end_offset) == \
        (as_consumer.error_code, as_consumer.leader_epoch, as_consumer.end_offset) == (0, 0, 1)
    assert (partition.high_watermark, running.engine.controller.image.partition(topic, 0).isr) == before
