"""Lag and members of groups run by real consumers (kafka-python, confluent-kafka), checked
against counts computed by hand from what was produced and committed."""
from confluent_kafka import Consumer, TopicPartition as ConfluentPartition
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from console.groups import selectors
from tests.console.conftest import make_topic
from tests.support.groups import produce
from tests.support.waiting import wait_until

PRODUCED = {0: 10, 1: 7, 2: 4}


def _topic_with_records(cluster, engine_cluster, name: str) -> str:
    make_topic(cluster, name, assignments={0: [0], 1: [1], 2: [2]})
    for partition, count in PRODUCED.items():
        produce(engine_cluster.bootstrap, name, [b"r%d" % i for i in range(count)], partition=partition)
    return name


def _stable_detail(cluster, group_id: str, members: int):
    def check():
        view = selectors.group_detail(cluster=cluster, group_id=group_id)
        return view if view.state == "Stable" and len(view.members) == members else None
    return wait_until(check, timeout=60, message=f"{group_id} Stable with {members} member(s)")


def test_kafka_python_group_lag_and_assignment(cluster, engine_cluster, unique_topic, unique_group):
    topic = _topic_with_records(cluster, engine_cluster, unique_topic())
    group = unique_group("kafka-python")
    consumer = KafkaConsumer(topic, bootstrap_servers=engine_cluster.bootstrap, group_id=group,
                             client_id="kp-client", enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=10000, heartbeat_interval_ms=300)
    committed = {0: 6, 1: 7, 2: 1}
    try:
        wait_until(lambda: consumer.poll(timeout_ms=100) is not None and len(consumer.assignment()) == 3,
                   timeout=60, message="the assignment")
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, f"kp-{p}", -1) for p, o in committed.items()})
        given = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        view = _stable_detail(cluster, group, 1)
    finally:
        consumer.close(autocommit=False)
    [member] = view.members
    assert member.client_id == "kp-client" and member.subscribed_topics == (topic,)
    assert [(t, p) for t, ps in member.assignment for p in ps] == given
    expected_lag = {p: PRODUCED[p] - committed[p] for p in PRODUCED}           # 4, 0, 3
    assert {r.partition: r.lag for r in view.partitions} == expected_lag
    assert {r.partition: r.metadata for r in view.partitions} == {p: f"kp-{p}" for p in PRODUCED}
    assert {r.owner for r in view.partitions} == {member.member_id}
    assert view.total_lag == sum(expected_lag.values()) == view.topics[0].lag
    assert view.protocol_type == "consumer" and view.assignor and not view.is_empty

    listed = selectors.group_list(cluster=cluster, search=group)
    [row] = listed.groups
    assert (row.total_lag, row.worst.partition, row.worst.lag) == (7, 0, 4)
    empty = wait_until(lambda: (v := selectors.group_detail(cluster=cluster, group_id=group)).state == "Empty" and v,
                       timeout=30, message="the group to empty after close()")
    assert empty.is_empty and empty.total_lag == 7


def test_confluent_kafka_group_lag_follows_production(cluster, engine_cluster, unique_topic, unique_group):
    topic = _topic_with_records(cluster, engine_cluster, unique_topic())
    group = unique_group("librdkafka")
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group,
                         "client.id": "rdkafka-client", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                         "heartbeat.interval.ms": 300})
    try:
        consumer.subscribe([topic])
        read = 0
        def all_read():
            nonlocal read
            read += len([m for m in consumer.consume(num_messages=100, timeout=0.2) if m.error() is None])
            return read == sum(PRODUCED.values())
        wait_until(all_read, timeout=60, message="every record consumed")
        consumer.commit(asynchronous=False)
        given = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        view = _stable_detail(cluster, group, 1)
        assert view.total_lag == 0
        [member] = view.members
        assert member.client_id == "rdkafka-client"
        assert [(t, p) for t, ps in member.assignment for p in ps] == given
        produce(engine_cluster.bootstrap, topic, [b"more"] * 5, partition=1)
        after = selectors.group_detail(cluster=cluster, group_id=group)
        assert {r.partition: r.lag for r in after.partitions} == {0: 0, 1: 5, 2: 0}
        committed = consumer.committed([ConfluentPartition(topic, p) for p in PRODUCED], timeout=10)
        assert {tp.partition: tp.offset for tp in committed} == {r.partition: r.committed_offset
                                                                  for r in after.partitions}
    finally:
        consumer.close()


def test_consumer_protocol_group_lag_members_and_type(cluster, engine_cluster, unique_topic, unique_group):
    """A KIP-848 group (librdkafka's group.protocol=consumer): the list and the group's page
    show its type, state, assignor, member and lag, read through ConsumerGroupDescribe."""
    topic = _topic_with_records(cluster, engine_cluster, unique_topic())
    group = unique_group("kip848")
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group,
                         "group.protocol": "consumer", "client.id": "kip848-client",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    committed = {0: 6, 1: 7, 2: 1}
    try:
        consumer.subscribe([topic])
        wait_until(lambda: consumer.poll(0.1) is not None and len(consumer.assignment()) == 3,
                   timeout=60, message="the assignment")
        consumer.commit(offsets=[ConfluentPartition(topic, p, o) for p, o in committed.items()], asynchronous=False)
        view = _stable_detail(cluster, group, 1)
        listed = selectors.group_list(cluster=cluster, search=group)
    finally:
        consumer.close()
    assert (view.group_type, view.protocol_type, view.assignor) == ("consumer", "consumer", "uniform")
    [member] = view.members
    assert member.client_id == "kip848-client" and member.subscribed_topics == (topic,)
    assert [(t, p) for t, ps in member.assignment for p in ps] == [(topic, p) for p in range(3)]
    assert {r.partition: r.lag for r in view.partitions} == {p: PRODUCED[p] - committed[p] for p in PRODUCED}
    [row] = listed.groups
    assert (row.group_type, row.state, row.members, row.total_lag) == ("consumer", "Stable", 1, 7)


def test_partitions_without_a_commit_are_listed_and_the_total_says_it_leaves_them_out(
        cluster, engine_cluster, unique_topic, unique_group):
    """A group that committed on 2 of a topic's 6 partitions: all 6 are listed, 4 with "no
    commit"; the total lag counts the 2, and the records of the 4 are what an earliest reset
    would read."""
    from tests.console.groups.conftest import commit

    topic = unique_topic()
    make_topic(cluster, topic, partitions=6)
    for partition in range(6):
        produce(engine_cluster.bootstrap, topic, [b"x"] * (partition + 1), partition=partition)
    group = unique_group("partial")
    commit(cluster, group, {(topic, 0): 0, (topic, 1): 1})
    view = selectors.group_detail(cluster=cluster, group_id=group)
    rows = {p.partition: p for p in view.partitions}
    assert sorted(rows) == [0, 1, 2, 3, 4, 5]
    assert [rows[p].committed_offset for p in range(6)] == [0, 1, None, None, None, None]
    assert [rows[p].lag for p in range(6)] == [1, 1, None, None, None, None]
    assert [rows[p].records for p in (2, 3, 4, 5)] == [3, 4, 5, 6]
    assert view.total_lag == 2 and view.committed_partitions == 2
    assert (view.uncommitted.partitions, view.uncommitted.records) == (4, 18)
    [topic_lag] = view.topics
    assert (topic_lag.partitions, topic_lag.committed, topic_lag.lag, topic_lag.uncommitted_records) == (6, 2, 2, 18)


def test_a_commit_past_the_log_end_shows_its_negative_lag_and_lowers_no_total(
        cluster, engine_cluster, unique_topic, unique_group):
    """Kafka takes a committed offset past the log end: its lag reads negative, as in
    kafka-consumer-groups.sh, and counts as 0 in the group's, the topic's and the list's totals."""
    from tests.console.groups.conftest import commit

    topic = unique_topic()
    make_topic(cluster, topic, partitions=2)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 5, partition=0)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 3, partition=1)
    group = unique_group("ahead")
    commit(cluster, group, {(topic, 0): 1, (topic, 1): 10})
    view = selectors.group_detail(cluster=cluster, group_id=group)
    assert [p.lag for p in view.partitions] == [4, -7]
    assert view.total_lag == 4 and view.topics[0].lag == 4
    [row] = [g for g in selectors.group_list(cluster=cluster, topic=topic).groups if g.group_id == group]
    assert row.total_lag == 4
