"""The batched consumer group calls against a real engine, with real kafka-python consumers."""
from collections import Counter

import pytest
from confluent_kafka import Consumer
from kafka import KafkaConsumer

from console.clusters.gateway import cluster_gateway
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, CommittedOffset
from tests.console.conftest import make_topic
from tests.support.groups import produce
from tests.support.waiting import wait_until


@pytest.fixture
def counted_requests():
    """Counts the requests each gateway sends, by API name (spying on kafka-python's manager)."""
    counts: Counter = Counter()

    def spy(gw):
        manager = gw._admin._manager
        send = manager.send

        def counting_send(request, *args, **kwargs):
            counts[type(request).__name__] += 1
            return send(request, *args, **kwargs)
        manager.send = counting_send
        return counts
    return spy


def _committed_groups(gw, topic: str, count: int, prefix: str) -> dict[str, int]:
    ids = [f"{prefix}-{i}" for i in range(count)]
    coordinators = gw.groups.find_coordinators(ids).found
    for i, group_id in enumerate(ids):
        failed = gw.groups.commit_offsets(group_id, coordinator=coordinators[group_id],
                                          offsets={(topic, 0): (i % 5, f"meta-{i}"), (topic, 1): (1, "")})
        assert failed == {}
    return coordinators


def test_offsets_of_many_groups_cost_one_request_per_coordinator(cluster, engine_cluster, unique_topic,
                                                                 counted_requests):
    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1]})
    produce(engine_cluster.bootstrap, topic, [b"x"] * 5, partition=0)
    produce(engine_cluster.bootstrap, topic, [b"y"] * 3, partition=1)
    prefix = unique_topic("group")
    with cluster_gateway(cluster) as gw:
        _committed_groups(gw, topic, 30, prefix)
    with cluster_gateway(cluster) as gw:
        counts = counted_requests(gw)
        listed = [g for g in gw.groups.list_groups() if g.group_id.startswith(prefix)]
        coordinators = gw.groups.find_coordinators(g.group_id for g in listed)
        committed = gw.groups.committed_offsets(coordinators.found)
        described = gw.groups.describe_groups(coordinators.found)
        ends = gw.groups.log_offsets(gw.metadata([topic]).topic(topic).partitions)
    assert len(listed) == 30 and coordinators.errors == {}
    assert {g.listed_by for g in listed} == {coordinators.found[g.group_id] for g in listed}
    nodes = len(set(coordinators.found.values()))
    assert counts["ListGroupsRequest"] == 3                  # one per broker
    assert counts["FindCoordinatorRequest"] == 1             # v4: every key in one request
    assert counts["OffsetFetchRequest"] == nodes             # v8: every group of a coordinator at once
    assert counts["DescribeGroupsRequest"] == nodes
    assert counts["ListOffsetsRequest"] == 2                 # one per partition leader
    assert committed.errors == {}
    assert committed.offsets[f"{prefix}-7"] == {(topic, 0): CommittedOffset(2, -1, "meta-7"),
                                                (topic, 1): CommittedOffset(1, -1, "")}
    assert ends.offsets == {(topic, 0): 5, (topic, 1): 3}
    group = described[f"{prefix}-3"]
    assert group.is_known and group.state == "Empty" and group.members == ()


def test_earliest_offsets_and_unknown_groups(cluster, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 4)
    with cluster_gateway(cluster) as gw:
        partitions = gw.metadata([topic]).topic(topic).partitions
        assert gw.groups.log_offsets(partitions, timestamp=EARLIEST_TIMESTAMP).offsets == {(topic, 0): 0}
        assert gw.groups.log_offsets(partitions, timestamp=2**62).offsets == {(topic, 0): -1}
        ghost = unique_topic("ghost")
        coordinators = gw.groups.find_coordinators([ghost]).found
        assert not gw.groups.describe_groups(coordinators)[ghost].is_known
        assert gw.groups.committed_offsets(coordinators).offsets[ghost] == {}


def test_live_consumer_assignment_is_decoded(cluster, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1], 2: [2]})
    group_id = unique_topic("live")
    consumer = KafkaConsumer(topic, bootstrap_servers=engine_cluster.bootstrap, group_id=group_id,
                             client_id="decoder-test", session_timeout_ms=10000, heartbeat_interval_ms=500)
    try:
        wait_until(lambda: consumer.poll(timeout_ms=200) is not None and len(consumer.assignment()) == 3,
                   timeout=60, message="the consumer's assignment")
        given = sorted((tp.topic, tp.partition) for tp in consumer.assignment())

        def stable():
            with cluster_gateway(cluster) as gw:
                coordinators = gw.groups.find_coordinators([group_id]).found
                group = gw.groups.describe_groups(coordinators)[group_id]
            return group if group.state == "Stable" else None
        group = wait_until(stable, timeout=30, message="a Stable group")
    finally:
        consumer.close()
    assert group.protocol_type == "consumer" and group.protocol in ("range", "roundrobin", "sticky",
                                                                        "cooperative-sticky")
    [member] = group.members
    assert member.client_id == "decoder-test" and member.client_host
    assert list(member.assignment) == given
    assert member.subscribed_topics == (topic,)


def test_consumer_protocol_group_is_described_with_consumer_group_describe(cluster, engine_cluster, unique_topic):
    """A KIP-848 group: DescribeGroups does not know it, ConsumerGroupDescribe does."""
    topic = make_topic(cluster, unique_topic(), partitions=3)
    group_id = unique_topic("kip848")
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group_id,
                         "group.protocol": "consumer", "client.id": "kip848-test"})
    owned: set = set()
    consumer.subscribe([topic], on_assign=lambda c, ps: owned.update(tp.partition for tp in ps))
    try:
        wait_until(lambda: consumer.poll(0.2) is None and owned == {0, 1, 2}, timeout=60,
                   message="the consumer's assignment")
        with cluster_gateway(cluster) as gw:
            [listed] = [g for g in gw.groups.list_groups() if g.group_id == group_id]
            coordinators = gw.groups.find_coordinators([group_id]).found
            group = gw.groups.describe_groups(coordinators)[group_id]
    finally:
        consumer.close()
    assert (listed.group_type, listed.protocol_type) == ("consumer", "consumer")
    assert (group.group_type, group.state, group.protocol_type, group.protocol, group.error) == (
        "consumer", "Stable", "consumer", "uniform", None)
    [member] = group.members
    assert member.client_id == "kip848-test" and member.subscribed_topics == (topic,)
    assert member.assignment == tuple((topic, p) for p in range(3))
    assert member.protocol == "consumer"    # ConsumerGroupDescribe v1's member type


def test_delete_offsets_and_group(cluster, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=2)
    other = make_topic(cluster, unique_topic(), partitions=1)
    group_id = unique_topic("doomed")
    with cluster_gateway(cluster) as gw:
        coordinator = gw.groups.find_coordinators([group_id]).found[group_id]
        gw.groups.commit_offsets(group_id, coordinator=coordinator,
                                 offsets={(topic, 0): (0, ""), (topic, 1): (0, ""), (other, 0): (0, "")})
        assert gw.groups.delete_offsets(group_id, coordinator=coordinator, partitions=[(topic, 0), (topic, 1)]) == {}
        left = gw.groups.committed_offsets({group_id: coordinator}).offsets[group_id]
        assert set(left) == {(other, 0)}
        assert gw.groups.delete_groups({group_id: coordinator}) == {}
        assert gw.groups.committed_offsets({group_id: coordinator}).offsets[group_id] == {}
        failed = gw.groups.delete_groups({group_id: coordinator})
    assert "GROUP_ID_NOT_FOUND" in failed[group_id]


def test_brokers_without_batched_versions_get_one_request_per_group(cluster, engine_cluster, unique_topic,
                                                                    counted_requests, monkeypatch):
    """Kafka before 3.0 has neither FindCoordinator v4 nor OffsetFetch v8: same answers, more requests."""
    from console.kafka_gateway.groups import GroupCalls

    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1]})
    prefix = unique_topic("old")
    with cluster_gateway(cluster) as gw:
        expected = _committed_groups(gw, topic, 4, prefix)
        batched = gw.groups.committed_offsets(expected).offsets
    monkeypatch.setattr(GroupCalls, "_version", lambda self, request_class: 3 if "Coordinator" in
                        request_class.__name__ else 7)
    with cluster_gateway(cluster) as gw:
        counts = counted_requests(gw)
        coordinators = gw.groups.find_coordinators(expected)
        offsets = gw.groups.committed_offsets(coordinators.found).offsets
    assert coordinators.found == expected
    assert offsets == batched and len(offsets) == 4
    assert counts["FindCoordinatorRequest"] == 4 and counts["OffsetFetchRequest"] == 4
