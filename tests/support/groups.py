"""Helpers for consumer group tests: engine configs, topics, records, raw group requests."""
from __future__ import annotations

import contextlib
from collections import defaultdict

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.consumer import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                                     LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest,
                                     OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
                                     SyncGroupRequest, SyncGroupResponse)
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kafka.protocol.metadata import (FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest,
                                     MetadataResponse)

from engine.protocol.specs import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until  # noqa: F401 - group and console tests import it from here

GROUP_TEST_CONFIGS = {
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "500",
    "log.cleaner.backoff.ms": "200",
    "offsets.topic.num.partitions": "10",
    # The consumer group protocol (KIP-848): members heartbeat often, so rebalances are quick.
    "group.consumer.heartbeat.interval.ms": "200",
    "group.consumer.session.timeout.ms": "10000",
}


def create_topic(bootstrap: str, name: str, partitions: int, *, replication: int = 1,
                 configs: dict | None = None) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, replication, topic_configs=configs or {})])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, records, *, partition: int | None = None) -> None:
    """records: values, or (key, value) pairs; waits until all are acknowledged."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    try:
        futures = []
        for record in records:
            key, value = record if isinstance(record, tuple) else (None, record)
            futures.append(producer.send(topic, key=key, value=value, partition=partition))
        for future in futures:
            future.get(timeout=15)
    finally:
        producer.close()


class GroupClient:
    """Speaks the group protocol with raw requests to the group's coordinator."""

    def __init__(self, engine, group_id: str, *, via: int = 0) -> None:
        self.group_id = group_id
        bootstrap = RawClient(engine.ports[via])
        try:
            found = bootstrap.request(FindCoordinatorRequest(key=group_id, key_type=0), 3, FindCoordinatorResponse)
            if found.error_code:  # the first lookup may create __consumer_offsets
                found = bootstrap.request(FindCoordinatorRequest(key=group_id, key_type=0), 3,
                                          FindCoordinatorResponse)
        finally:
            bootstrap.close()
        assert found.error_code == 0, found
        self.coordinator = found.node_id
        self.client = RawClient(found.port)

    def close(self) -> None:
        self.client.close()

    def begin(self, method: str, *args, **kwargs):
        """Send a request without waiting (it may block on a rebalance); returns a function
        that reads its answer."""
        request, version, response_class = getattr(self, f"_{method}_request")(*args, **kwargs)
        self.client.correlation_id += 1
        request.with_header(correlation_id=self.client.correlation_id, client_id="raw-test")
        self.client.send_bytes(request.encode(version=version, header=True, framed=True))
        return lambda: response_class.decode(self.client.read_frame(), version=version, header=True)

    def join(self, *args, **kwargs):
        return self.client.request(*self._join_request(*args, **kwargs))

    def _join_request(self, member_id: str = "", *, protocol_type: str = "consumer", protocols=None,
                      instance_id=None, session_timeout_ms: int = 10000, rebalance_timeout_ms: int = 10000,
                      version: int = 5):
        protocols = protocols or [("range", subscription(["t"]))]
        request = JoinGroupRequest(
            group_id=self.group_id, session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=rebalance_timeout_ms,
            member_id=member_id, group_instance_id=instance_id, protocol_type=protocol_type,
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols])
        return request, version, JoinGroupResponse

    def join_as_new_member(self, **kwargs):
        """JoinGroup twice, as v4+ clients do: the first answer is MEMBER_ID_REQUIRED."""
        first = self.join(**kwargs)
        if first.error_code != 79:
            return first
        return self.join(first.member_id, **kwargs)

    def sync(self, *args, **kwargs):
        return self.client.request(*self._sync_request(*args, **kwargs))

    def _sync_request(self, member_id: str, generation_id: int, assignments: dict | None = None, *,
                      instance_id=None, version: int = 5):
        request = SyncGroupRequest(
            group_id=self.group_id, generation_id=generation_id, member_id=member_id, group_instance_id=instance_id,
            protocol_type="consumer", protocol_name="range",
            assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
                         for m, a in (assignments or {}).items()])
        return request, version, SyncGroupResponse

    def heartbeat(self, member_id: str, generation_id: int, *, instance_id=None):
        request = HeartbeatRequest(group_id=self.group_id, generation_id=generation_id, member_id=member_id,
                                   group_instance_id=instance_id)
        return self.client.request(request, 4, HeartbeatResponse).error_code

    def leave(self, member_id: str):
        request = LeaveGroupRequest(group_id=self.group_id, members=[
            LeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=None)])
        return self.client.request(request, 5, LeaveGroupResponse)

    def commit(self, offsets: dict, *, member_id: str = "", generation_id: int = -1, instance_id=None,
               retention_time_ms: int = -1, version: int = 9) -> dict:
        """offsets: {(topic, partition): offset}; returns {(topic, partition): error code}."""
        by_topic = defaultdict(list)
        for (topic, partition), offset in offsets.items():
            by_topic[topic].append(OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
                committed_metadata=""))
        request = OffsetCommitRequest(
            group_id=self.group_id, generation_id_or_member_epoch=generation_id, member_id=member_id,
            group_instance_id=instance_id, retention_time_ms=retention_time_ms,
            topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=t, partitions=p) for t, p in by_topic.items()])
        response = self.client.request(request, version, OffsetCommitResponse)
        return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}

    def fetch(self, partitions: list | None = None, *, version: int = 7) -> tuple[int, dict]:
        """(error code, {(topic, partition): committed offset})."""
        topics = None
        if partitions is not None:
            by_topic = defaultdict(list)
            for topic, partition in partitions:
                by_topic[topic].append(partition)
            topics = [OffsetFetchRequest.OffsetFetchRequestTopic(name=t, partition_indexes=p)
                      for t, p in by_topic.items()]
        response = self.client.request(OffsetFetchRequest(group_id=self.group_id, topics=topics), version,
                                       OffsetFetchResponse)
        return response.error_code, {(t.name, p.partition_index): p.committed_offset
                                     for t in response.topics for p in t.partitions}

    def describe(self, version: int = 5):
        request = DescribeGroupsRequest(groups=[self.group_id], include_authorized_operations=False)
        return self.client.request(request, version, DescribeGroupsResponse).groups[0]


def topic_ids(client: RawClient, topics: list[str]) -> dict:
    """{topic: topic id} as the broker behind `client` knows them, once it knows them all
    with a leader for every partition (the consumer group protocol names topics by id)."""
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
                              allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    found: dict = {}

    def known() -> bool:
        found.clear()
        for topic in client.request(request, 12, MetadataResponse).topics:
            if topic.error_code == 0 and topic.partitions and all(p.leader_id >= 0 for p in topic.partitions):
                found[topic.name] = topic.topic_id
        return len(found) == len(topics)
    wait_until(known, message=f"the topic ids of {topics}")
    return dict(found)


def subscription(topics: list[str]) -> bytes:
    return ConsumerProtocolSubscription(topics=topics, user_data=None).encode(version=0)


def assignment(partitions: dict[str, list[int]]) -> bytes:
    return ConsumerProtocolAssignment(
        assigned_partitions=[ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=p)
                             for t, p in partitions.items()], user_data=None).encode(version=0)


def set_group_configs(bootstrap: str, group_id: str, configs: dict[str, str | None]) -> dict:
    """IncrementalAlterConfigs on the GROUP resource with kafka-python's admin client."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return admin.alter_configs([ConfigResource(ConfigResourceType.GROUP, group_id, configs=configs)],
                                   raise_on_unknown=False)
    finally:
        admin.close()


@contextlib.contextmanager
def assigned_consumer_protocol_member(bootstrap: str, group_id: str, topic: str, partitions: int):
    """A confluent-kafka consumer in a consumer-protocol group (KIP-848), yielded once it owns all
    `partitions` of `topic`; closed (it leaves the group) on exit."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "group.protocol": "consumer"})
    owned: set = set()
    consumer.subscribe([topic], on_assign=lambda c, ps: owned.update(tp.partition for tp in ps))
    try:
        wait_until(lambda: consumer.poll(0.1) is None and owned == set(range(partitions)), timeout=60,
                   message=f"{group_id}'s assignment")
        yield consumer
    finally:
        consumer.close()


HEARTBEAT_UNCHANGED = object()   # a field the next heartbeat leaves out (null: unchanged)


class HeartbeatMember:
    """One member's heartbeats on its own connection to the coordinator."""

    def __init__(self, client: GroupClient, member_id: str, topics: list[str], ids: dict, *, instance_id=None,
                 rebalance_timeout_ms: int = 30000):
        self.client, self.member_id, self.topics, self.ids = client, member_id, topics, ids
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.names = {topic_id: name for name, topic_id in ids.items()}
        self.instance_id = instance_id
        self.epoch = 0
        self.owned: set[tuple[str, int]] = set()

    def heartbeat(self, *, epoch=None, owned=HEARTBEAT_UNCHANGED, topics=HEARTBEAT_UNCHANGED, assignor=None,
                  rebalance_timeout_ms=-1, regex=None):
        joining = (self.epoch if epoch is None else epoch) == 0
        request = ConsumerGroupHeartbeatRequest(
            group_id=self.client.group_id, member_id=self.member_id,
            member_epoch=self.epoch if epoch is None else epoch, instance_id=self.instance_id,
            rebalance_timeout_ms=self.rebalance_timeout_ms if joining else rebalance_timeout_ms,
            subscribed_topic_names=(self.topics if joining else None) if topics is HEARTBEAT_UNCHANGED else topics,
            subscribed_topic_regex=regex, server_assignor=assignor,
            topic_partitions=([] if joining else None) if owned is HEARTBEAT_UNCHANGED else self._by_id(owned))
        response = self.client.client.request(request, 1, ConsumerGroupHeartbeatResponse)
        if response.error_code == 0:
            self.epoch = response.member_epoch
            if response.assignment is not None:
                self.owned = {(self.names[t.topic_id], p) for t in response.assignment.topic_partitions
                              for p in t.partitions if t.topic_id in self.names}
        return response

    def ack(self):
        """A heartbeat that reports what the member owns now, as clients do after reconciling."""
        return self.heartbeat(owned=self.owned)

    def _by_id(self, owned):
        by_topic: dict = {}
        for topic, partition in owned:
            by_topic.setdefault(self.ids[topic], []).append(partition)
        return [ConsumerGroupHeartbeatRequest.TopicPartitions(topic_id=t, partitions=sorted(p))
                for t, p in by_topic.items()]
