"""A connection closed to make room under max.connections (KIP-402, engine/protocol/listener.py)
while its request is being handled: as Kafka's Processor closes the channel, the client sees the
close at once and gets no answer, but the request is handled to its end, never cut half-way. A
handler cancelled at an await has written its record and not applied it: here an OffsetCommit's
record was in `__consumer_offsets` while the group still answered the old offset (a restart would
answer the new one); an EndTxn cut there leaves PrepareCommit written and the transaction Ongoing.

In process, so that the test can hold the coordinator's write at its wait for the high watermark."""
from __future__ import annotations

import asyncio
import threading

import pytest
from kafka.protocol.consumer import (OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                                     OffsetFetchResponse)

from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from engine.broker.partition import Partition
from engine.cluster.internal_topics import OFFSETS_TOPIC
from engine.security import listeners
from tests.engine.protocol.test_bad_input import create_topic
from tests.support.engine_process import free_port_range
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

GROUP, TOPIC = "evicted-group", "evicted-topic"


@pytest.fixture
def two_listeners(tmp_path):
    """One broker, INTERNAL (the inter-broker listener) and EXTERNAL, max.connections=1."""
    base = free_port_range(2)
    named, inter_broker = listeners.build({
        "listeners": f"INTERNAL://127.0.0.1:{base},EXTERNAL://127.0.0.1:{base + 1}",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL"}, {}, host="127.0.0.1", port=base, brokers=1,
        default_protocol="PLAINTEXT", users_file=None)
    with InProcessEngine(tmp_path, brokers=1, admin=False, configs={"max.connections": "1"},
                         listeners=named, inter_broker_listener=inter_broker) as running:
        running.ports = {"INTERNAL": base, "EXTERNAL": base + 1}
        yield running


def commit(client: RawClient, offset: int) -> int:
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    request = OffsetCommitRequest(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="",
                                  group_instance_id=None, retention_time_ms=-1, topics=[T(name=TOPIC, partitions=[
                                      T.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                                                     committed_leader_epoch=-1,
                                                                     committed_metadata="")])])
    return client.request(request, 8, OffsetCommitResponse).topics[0].partitions[0].error_code


def committed(client: RawClient) -> int:
    T = OffsetFetchRequest.OffsetFetchRequestTopic
    response = client.request(OffsetFetchRequest(group_id=GROUP, topics=[T(name=TOPIC, partition_indexes=[0])],
                                                 require_stable=False), 7, OffsetFetchResponse)
    return response.topics[0].partitions[0].committed_offset


def test_a_request_in_flight_on_a_connection_closed_for_room_is_handled_to_its_end(two_listeners, monkeypatch):
    running = two_listeners
    first = RawClient(running.ports["EXTERNAL"])
    assert create_topic(first, TOPIC) == 0
    wait_until(lambda: first.request(FindCoordinatorRequest(key=GROUP, key_type=0), 3,
                                     FindCoordinatorResponse).error_code == 0, message="the group's coordinator")
    wait_until(lambda: commit(first, 1) == 0, message="the first commit")
    first.close()

    # The coordinator's next write waits at its high watermark until the test lets it go on.
    reached, gate = threading.Event(), asyncio.Event()
    real = Partition.wait_for_high_watermark

    def held(partition, offset):
        future = real(partition, offset)
        if partition.topic != OFFSETS_TOPIC:
            return future

        async def after_the_gate():
            reached.set()
            await gate.wait()
            return await future
        return asyncio.ensure_future(after_the_gate())
    monkeypatch.setattr(Partition, "wait_for_high_watermark", held)

    evicted = RawClient(running.ports["EXTERNAL"])     # admitted once the first one's close is seen
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    request = OffsetCommitRequest(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="",
                                  group_instance_id=None, retention_time_ms=-1, topics=[T(name=TOPIC, partitions=[
                                      T.OffsetCommitRequestPartition(partition_index=0, committed_offset=2,
                                                                     committed_leader_epoch=-1,
                                                                     committed_metadata="")])])
    request.with_header(correlation_id=1, client_id="evicted")
    evicted.send_bytes(request.encode(version=8, header=True, framed=True))
    assert reached.wait(30), "the commit did not reach its write"

    admin = RawClient(running.ports["INTERNAL"])       # the protected listener: admitted past the limit
    try:
        assert committed(admin) == 1                   # served; the commit is still in flight
        assert evicted.read_frame() is None            # closed at once, unanswered, as Kafka's channel close
        running.loop.call_soon_threadsafe(gate.set)
        wait_until(lambda: committed(admin) == 2, timeout=10,
                   message="the commit read before the close to be applied, as it was written")
    finally:
        evicted.close()
        admin.close()
