"""Helpers for share group tests: the engine's configs for them, group configs, and a share
group member spoken with raw requests (kafka-python's codec over a socket), for the steps
and error codes the real share consumer (confluent-kafka's ShareConsumer) does not expose."""
from __future__ import annotations

import threading

from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse

from engine.protocol.specs import (DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse,
                                   ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareFetchRequest,
                                   ShareFetchResponse, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse)
from tests.support.raw_client import RawClient

# Short timers so that tests of expiry and membership finish in seconds: the minimums are
# lowered, the defaults kept where a test does not ask for less through a group config.
SHARE_TEST_CONFIGS = {
    "group.share.min.session.timeout.ms": "1000",
    "group.share.session.timeout.ms": "6000",
    "group.share.min.heartbeat.interval.ms": "100",
    "group.share.heartbeat.interval.ms": "200",
    "group.share.min.record.lock.duration.ms": "1000",
    "offsets.topic.num.partitions": "5",
    "share.coordinator.state.topic.num.partitions": "5",
}
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
INVALID_RECORD_STATE, SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH = 121, 122, 123


def _metadata(port: int, topic: str, connect=RawClient):
    client = connect(port)
    try:
        return client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                              allow_auto_topic_creation=False), 12, MetadataResponse)
    finally:
        client.close()


def topic_id_of(port: int, topic: str, connect=RawClient):
    return _metadata(port, topic, connect).topics[0].topic_id


def leader_port(port: int, topic: str, partition: int = 0, connect=RawClient) -> int:
    response = _metadata(port, topic, connect)
    leader = next(p.leader_id for p in response.topics[0].partitions if p.partition_index == partition)
    return next(b.port for b in response.brokers if b.node_id == leader)


def coordinator_port(port: int, key: str, key_type: int = 0, connect=RawClient) -> int:
    client = connect(port)
    try:
        for _ in range(20):   # the first lookup may create the internal topic
            found = client.request(FindCoordinatorRequest(key=key, key_type=key_type), 3, FindCoordinatorResponse)
            if found.error_code == 0:
                return found.port
    finally:
        client.close()
    raise AssertionError(f"no coordinator for {key!r}: {found}")


def describe_share_offsets(port: int, group_id: str, topics=None, version: int = 1):
    """DescribeShareGroupOffsets for one group, sent to its coordinator."""
    client = RawClient(coordinator_port(port, group_id))
    R = DescribeShareGroupOffsetsRequest
    wanted = None if topics is None else [R.DescribeShareGroupOffsetsRequestGroup.DescribeShareGroupOffsetsRequestTopic(
        topic_name=t, partitions=ps) for t, ps in topics.items()]
    try:
        response = client.request(R(groups=[R.DescribeShareGroupOffsetsRequestGroup(group_id=group_id, topics=wanted)]),
                                  version, DescribeShareGroupOffsetsResponse)
    finally:
        client.close()
    return response.groups[0]


class RawShareMember:
    """One share group member: heartbeats on a connection to the group coordinator, share
    fetches and acknowledgements on a connection to the leader of the topic's partition 0.
    `connect(port)` opens each connection (a logged-in one on a secured engine)."""

    def __init__(self, port: int, group_id: str, topic: str, member_id: str, connect=RawClient) -> None:
        self.group_id, self.topic, self.member_id = group_id, topic, member_id
        self.topic_id = topic_id_of(port, topic, connect)
        self.coordinator = connect(coordinator_port(port, group_id, connect=connect))
        self.leader = connect(leader_port(port, topic, connect=connect))
        self.member_epoch = 0
        self.session_epoch = 0
        self.assignment: list[int] = []
        self._heartbeat_lock = threading.Lock()
        self._stop = threading.Event()
        self._beats: threading.Thread | None = None

    def close(self) -> None:
        self.stop_heartbeats()
        self.coordinator.close()
        self.leader.close()

    def start_heartbeats(self, interval_s: float = 0.2) -> None:
        """Heartbeat on a thread of its own, as a client's background thread does, so the member
        stays in the group while the test takes its time."""
        def beat():
            while not self._stop.wait(interval_s):
                if self.member_epoch > 0:
                    self.heartbeat()
        self._beats = threading.Thread(target=beat, daemon=True)
        self._beats.start()

    def stop_heartbeats(self) -> None:
        self._stop.set()
        if self._beats is not None:
            self._beats.join(10)
            self._beats = None

    def heartbeat(self, epoch: int | None = None, topics=None) -> ShareGroupHeartbeatResponse:
        with self._heartbeat_lock:
            return self._heartbeat(epoch, topics)

    def _heartbeat(self, epoch: int | None, topics) -> ShareGroupHeartbeatResponse:
        epoch = self.member_epoch if epoch is None else epoch
        response = self.coordinator.request(ShareGroupHeartbeatRequest(
            group_id=self.group_id, member_id=self.member_id, member_epoch=epoch, rack_id=None,
            subscribed_topic_names=(topics or [self.topic]) if epoch == 0 else topics), 1, ShareGroupHeartbeatResponse)
        if response.error_code == 0:
            self.member_epoch = response.member_epoch
            if response.assignment is not None:
                self.assignment = sorted(p for t in response.assignment.topic_partitions for p in t.partitions)
        return response

    def join(self) -> ShareGroupHeartbeatResponse:
        response = self.heartbeat(epoch=0)
        assert response.error_code == 0, response
        return response

    def fetch(self, acks=None, *, max_records: int = 500, mode: int = 0, max_wait_ms: int = 2000,
              epoch: int | None = None, version: int = 2) -> ShareFetchResponse:
        """ShareFetch of partition 0 (opening the session first if needed); acks: [(first, last, [types])]."""
        R = ShareFetchRequest
        Partition = R.FetchTopic.FetchPartition
        batches = [Partition.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=types)
                   for f, last, types in acks or []]
        response = self.leader.request(R(
            group_id=self.group_id, member_id=self.member_id,
            share_session_epoch=self.session_epoch if epoch is None else epoch, max_wait_ms=max_wait_ms,
            min_bytes=1, max_bytes=1 << 20, max_records=max_records, batch_size=max_records,
            share_acquire_mode=mode,
            topics=[R.FetchTopic(topic_id=self.topic_id, partitions=[Partition(
                partition_index=0, partition_max_bytes=0, acknowledgement_batches=batches)])],
            forgotten_topics_data=[]), version, ShareFetchResponse)
        if response.error_code == 0 and epoch is None:
            self.session_epoch = self.session_epoch + 1 if self.session_epoch >= 0 else 0
        return response

    def acknowledge(self, acks, *, epoch: int | None = None, version: int = 2) -> ShareAcknowledgeResponse:
        R = ShareAcknowledgeRequest
        Partition = R.AcknowledgeTopic.AcknowledgePartition
        response = self.leader.request(R(
            group_id=self.group_id, member_id=self.member_id,
            share_session_epoch=self.session_epoch if epoch is None else epoch,
            is_renew_ack=any(RENEW in types for _, _, types in acks),
            topics=[R.AcknowledgeTopic(topic_id=self.topic_id, partitions=[Partition(
                partition_index=0, acknowledgement_batches=[
                    Partition.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=types)
                    for f, last, types in acks])])]), version, ShareAcknowledgeResponse)
        if response.error_code == 0 and epoch is None:
            self.session_epoch += 1
        return response


def acquired(response) -> list[tuple[int, int, int]]:
    """(first, last, delivery count) of every acquired range in a ShareFetch answer."""
    return [(r.first_offset, r.last_offset, r.delivery_count) for t in response.responses for p in t.partitions
            for r in p.acquired_records]


def offsets_of(response) -> list[int]:
    return [o for first, last, _ in acquired(response) for o in range(first, last + 1)]


def partition_of(response):
    return response.responses[0].partitions[0]
