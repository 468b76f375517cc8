"""Group administration with real admin clients: DescribeGroups (decoded assignments),
ListGroups (filters), OffsetDelete, DeleteGroups, and OffsetFetch across versions."""
from __future__ import annotations

import time

import kafka.errors as Errors
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse
from kafka.structs import OffsetAndMetadata

from engine.coordinator.group_store import partition_for
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until


def active_consumer(bootstrap: str, group_id: str, topic: str, partitions: int) -> KafkaConsumer:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, client_id="admin-test",
                             enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=200)
    deadline = time.monotonic() + 30
    while len(consumer.assignment()) < partitions and time.monotonic() < deadline:
        consumer.poll(timeout_ms=100, max_records=1)
    assert len(consumer.assignment()) == partitions
    return consumer


def test_describe_list_delete_with_kafka_python_admin(group_cluster, group_id, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 2)
    create_topic(bootstrap, topic_name + "-other", 1)
    consumer = active_consumer(bootstrap, group_id, topic_name, 2)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        consumer.commit({TopicPartition(topic_name, 0): _offset(5), TopicPartition(topic_name, 1): _offset(6)})
        described = admin.describe_groups([group_id])[group_id]
        assert (described["group_state"], described["protocol_type"], described["error"]) == \
            ("Stable", "consumer", None)
        [member] = described["members"]
        assert member["client_id"] == "admin-test" and member["client_host"] == "/127.0.0.1"
        # kafka-python decodes the consumer protocol bytes the broker returns.
        assert [(t["topic"], sorted(t["partitions"])) for t in member["member_assignment"]["assigned_partitions"]] \
            == [(topic_name, [0, 1])]
        assert member["member_metadata"]["topics"] == [topic_name]

        stable = admin.list_groups(states_filter=["Stable"])
        assert group_id in [g["group_id"] for g in stable]
        assert group_id not in [g["group_id"] for g in admin.list_groups(states_filter=["Empty"])]
        assert group_id in [g["group_id"] for g in admin.list_groups(types_filter=["classic"])]
        # A classic group is not of the consumer group protocol's type (KIP-848).
        assert group_id not in [g["group_id"] for g in admin.list_groups(types_filter=["consumer"])]

        # A live member subscribes to the topic: its offsets stay; the group stays.
        assert admin.delete_group_offsets(group_id, [TopicPartition(topic_name, 0)]) == {
            TopicPartition(topic_name, 0): Errors.GroupSubscribedToTopicError}
        assert admin.delete_groups([group_id]) == {group_id: "NonEmptyGroupError"}
    finally:
        consumer.close(autocommit=False)
    try:
        assert admin.delete_group_offsets(group_id, [TopicPartition(topic_name, 0)]) == {
            TopicPartition(topic_name, 0): Errors.NoError}
        assert admin.list_group_offsets(group_id)[group_id] == {
            TopicPartition(topic_name, 1): _offset(6)}
        assert admin.delete_groups([group_id]) == {group_id: "OK"}
        gone = admin.describe_groups([group_id])[group_id]
        assert gone["group_state"] == "Dead" and "GroupIdNotFound" in gone["error"]
        assert group_id not in [g["group_id"] for g in admin.list_groups()]
        assert admin.list_group_offsets(group_id)[group_id] == {}
        assert admin.delete_groups([group_id]) == {group_id: "GroupIdNotFoundError"}
    finally:
        admin.close()


def _offset(offset: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, "", -1)


def test_librdkafka_admin_lists_and_describes_groups(group_cluster, group_id, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 3)
    consumer = active_consumer(bootstrap, group_id, topic_name, 3)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        listed = admin.list_consumer_groups(request_timeout=15).result()
        mine = [g for g in listed.valid if g.group_id == group_id]
        assert len(mine) == 1 and mine[0].state == ConsumerGroupState.STABLE and not mine[0].is_simple_consumer_group
        described = admin.describe_consumer_groups([group_id], request_timeout=15)[group_id].result()
        assert described.state == ConsumerGroupState.STABLE and described.partition_assignor == "range"
        [member] = described.members
        assert member.client_id == "admin-test" and member.host == "/127.0.0.1"
        assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) == \
            [(topic_name, p) for p in range(3)]
    finally:
        consumer.close(autocommit=False)


def test_offset_fetch_old_and_batched_versions(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    client = GroupClient(group_cluster, group_id)
    try:
        assert client.commit({(topic_name, 0): 11}, version=2) == {(topic_name, 0): 0}
        assert client.fetch([(topic_name, 0)], version=1) == (0, {(topic_name, 0): 11})
        assert client.fetch(None, version=2) == (0, {(topic_name, 0): 11})  # null topics: everything
        Group = OffsetFetchRequest.OffsetFetchRequestGroup
        batched = client.client.request(OffsetFetchRequest(groups=[
            Group(group_id=group_id, topics=None),
            Group(group_id=_neighbour(group_id), topics=[Group.OffsetFetchRequestTopics(
                name=topic_name, partition_indexes=[0])])], require_stable=False), 8, OffsetFetchResponse)
    finally:
        client.close()
    [mine, other] = batched.groups
    assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in mine.topics] == \
        [(topic_name, [(0, 11)])]
    assert (other.error_code, other.topics[0].partitions[0].committed_offset) == (0, -1)  # nothing committed
    raw = RawClient(group_cluster.ports[(client.coordinator + 1) % 3])
    try:  # a broker that is not the coordinator: v1 puts the error on each partition
        answer = raw.request(OffsetFetchRequest(group_id=group_id, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
            name=topic_name, partition_indexes=[0])]), 1, OffsetFetchResponse)
    finally:
        raw.close()
    assert answer.topics[0].partitions[0].error_code == Errors.NotCoordinatorError.errno


def _neighbour(group_id: str) -> str:
    """Another group id in the same __consumer_offsets partition, so the same coordinator."""
    partitions = int(GROUP_TEST_CONFIGS["offsets.topic.num.partitions"])
    return next(f"{group_id}-{i}" for i in range(1000)
                if partition_for(f"{group_id}-{i}", partitions) == partition_for(group_id, partitions))


def test_the_offsets_topic_is_created_only_with_its_own_settings(engine_factory):
    import time

    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse

    from tests.support.raw_client import RawClient

    engine = engine_factory(brokers=1)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    result = admin.create_topics([NewTopic("__consumer_offsets", 1, 1)], raise_errors=False)
    admin.close()
    assert [t["error_code"] for t in result["topics"]] == [Errors.InvalidRequestError.errno]
    # Auto-creation through Metadata uses offsets.topic.num.partitions (50), not num.partitions (1).
    client = RawClient(engine.port)
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="__consumer_offsets")],
                              allow_auto_topic_creation=True)
    try:
        topic = wait_until(lambda: next((t for t in client.request(request, 12, MetadataResponse).topics
                                         if t.error_code == 0), None), message="__consumer_offsets to be created")
    finally:
        client.close()
    assert topic.is_internal and len(topic.partitions) == 50
