"""Offset reset and deletion through the services, proven with real consumers."""
import time

import pytest
from confluent_kafka import Consumer, TopicPartition as ConfluentPartition
from django.urls import reverse
from kafka import KafkaConsumer, KafkaProducer

from console.accounts.models import AuditLogEntry
from console.errors import InvalidInput
from console.groups import selectors, services
from console.groups.reset import ResetSpec
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit, committed
from tests.support.groups import produce
from tests.support.waiting import wait_until


def _first_offsets(bootstrap: str, topic: str, group: str, partitions: int) -> dict[int, int]:
    """Start a consumer in the group and return the first offset it reads from each partition.
    auto.offset.reset=latest: without the committed offsets it would read nothing."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="latest", session_timeout_ms=10000, heartbeat_interval_ms=300)
    first: dict[int, int] = {}
    try:
        def read():
            for tp, records in consumer.poll(timeout_ms=200).items():
                first.setdefault(tp.partition, records[0].offset)
            return len(first) == partitions
        wait_until(read, timeout=60, message="a record from every partition")
    finally:
        consumer.close(autocommit=False)
    return first


def test_reset_then_consume_resumes_at_the_new_offsets(cluster, engine_cluster, unique_topic, unique_group, users):
    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1]})
    produce(engine_cluster.bootstrap, topic, [b"a"] * 10, partition=0)
    produce(engine_cluster.bootstrap, topic, [b"b"] * 6, partition=1)
    group = unique_group("resume")
    commit(cluster, group, {(topic, 0): 8, (topic, 1): 6}, metadata="keep-me")

    plan = services.group_reset_offsets(cluster=cluster, actor=users["operator"], group_id=group,
                                        spec=ResetSpec(target="shift", shift=-5))
    assert [(r.partition, r.current_offset, r.new_offset, r.lag_after) for r in plan.rows] == [(0, 8, 3, 7),
                                                                                               (1, 6, 1, 5)]
    assert committed(cluster, group) == {(topic, 0): 3, (topic, 1): 1}
    assert _first_offsets(engine_cluster.bootstrap, topic, group, 2) == {0: 3, 1: 1}
    entry = AuditLogEntry.objects.get(action="group.reset_offsets", target=group)
    assert entry.result == "ok" and entry.details["partitions"] == 2 and entry.actor_name == "operator"
    assert f"{topic}-0: 8 -> 3" in entry.details["changes"]


def test_targets_scopes_and_clamping(cluster, engine_cluster, unique_topic, unique_group, users):
    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1], 2: [2]})
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    base = int(time.time() * 1000) - 60_000
    for i in range(6):   # timestamps base, base+10s, ... on partition 0
        producer.send(topic, b"t", partition=0, timestamp_ms=base + i * 10_000).get(timeout=15)
    producer.close()
    produce(engine_cluster.bootstrap, topic, [b"x"] * 4, partition=1)
    group = unique_group("targets")
    commit(cluster, group, {(topic, 0): 1, (topic, 1): 1})

    def preview(**spec):
        plan = selectors.group_reset_preview(cluster=cluster, group_id=group, spec=ResetSpec(**spec))
        return [(r.partition, r.new_offset, r.clamped) for r in plan.rows]
    assert preview(target="latest") == [(0, 6, False), (1, 4, False)]
    assert preview(target="earliest", scope="topic", topic=topic) == [(0, 0, False), (1, 0, False), (2, 0, False)]
    assert preview(target="offset", offset=5, scope="partitions", topic=topic, partitions=(0, 1)) == [
        (0, 5, False), (1, 4, True)]                        # past the log end of partition 1: clamped
    assert preview(target="shift", shift=-3) == [(0, 0, True), (1, 0, True)]
    assert preview(target="datetime", timestamp_ms=base + 25_000, scope="partitions", topic=topic,
                   partitions=(0,)) == [(0, 3, False)]       # first record at or after the time
    assert preview(target="datetime", timestamp_ms=base + 10**9) == [(0, 6, False), (1, 4, False)]
    with pytest.raises(InvalidInput, match="no partition 7"):
        preview(target="earliest", scope="partitions", topic=topic, partitions=(7,))
    with pytest.raises(InvalidInput, match=f"Cannot shift {topic}-2: the group has no committed offset"):
        preview(target="shift", shift=1, scope="topic", topic=topic)     # partition 2 has none
    assert committed(cluster, group) == {(topic, 0): 1, (topic, 1): 1}   # previews change nothing


def test_reset_and_delete_are_refused_while_a_member_is_live(cluster, engine_cluster, unique_topic, unique_group,
                                                             users, operator_client):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 3)
    group = unique_group("live")
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group,
                         "client.id": "still-running", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 10000})
    try:
        consumer.subscribe([topic])
        def assigned():
            consumer.consume(num_messages=10, timeout=0.2)
            return consumer.assignment()
        wait_until(assigned, timeout=60, message="the assignment")
        consumer.commit(offsets=[ConfluentPartition(topic, 0, 2)], asynchronous=False)
        wait_until(lambda: selectors.group_detail(cluster=cluster, group_id=group).state == "Stable", timeout=30,
                   message="a Stable group")
        with pytest.raises(InvalidInput, match="still-running") as refused:
            services.group_reset_offsets(cluster=cluster, actor=users["operator"], group_id=group,
                                         spec=ResetSpec(target="earliest"))
        assert "no members" in str(refused.value)
        preview = selectors.group_reset_preview(cluster=cluster, group_id=group, spec=ResetSpec(target="earliest"))
        assert "still-running" in preview.refusal
        # The delete page says so before the id is typed, and offers no form to type it in.
        page = operator_client.get(reverse("groups:delete", args=[cluster.pk, group])).content.decode()
        assert 'id="delete-refusal"' in page and "Stop these consumers first." in page and "still-running" in page
        assert 'id="delete-group"' not in page
        with pytest.raises(InvalidInput, match="still-running"):
            services.group_delete(cluster=cluster, actor=users["operator"], group_id=group, confirmation=group)
        with pytest.raises(InvalidInput, match="still-running"):
            services.group_delete_offsets(cluster=cluster, actor=users["operator"], group_id=group, topic=topic,
                                          confirmation=group)
        assert committed(cluster, group) == {(topic, 0): 2}
    finally:
        consumer.close()
    page = operator_client.get(reverse("groups:delete", args=[cluster.pk, group])).content.decode()
    assert 'id="delete-group"' in page and 'id="delete-refusal"' not in page      # left: nothing in the way
    failed = AuditLogEntry.objects.filter(target=group, result="failed").values_list("action", flat=True)
    assert sorted(failed) == ["group.delete", "group.delete_offsets", "group.reset_offsets"]


def test_delete_offsets_then_group(cluster, unique_topic, unique_group, users):
    topic = make_topic(cluster, unique_topic(), partitions=2)
    other = make_topic(cluster, unique_topic(), partitions=1)
    group = unique_group("deleted")
    commit(cluster, group, {(topic, 0): 0, (topic, 1): 0, (other, 0): 0})
    with pytest.raises(InvalidInput, match="Type the group's id"):
        services.group_delete(cluster=cluster, actor=users["operator"], group_id=group, confirmation="nope")
    assert services.group_delete_offsets(cluster=cluster, actor=users["operator"], group_id=group, topic=topic,
                                         confirmation=group) == 2
    assert committed(cluster, group) == {(other, 0): 0}
    services.group_delete(cluster=cluster, actor=users["operator"], group_id=group, confirmation=group)
    assert committed(cluster, group) == {}
    actions = AuditLogEntry.objects.filter(target=group).values_list("action", "result")
    assert sorted(actions) == [("group.delete", "failed"), ("group.delete", "ok"), ("group.delete_offsets", "ok")]


def test_previews_match_the_engines_groups_command(cluster, engine_cluster, unique_topic, unique_group):
    """Same meaning as `python -m engine groups --reset-offsets` (engine/tools/consumer_groups.py)."""
    from kafka import TopicPartition

    from engine.tools import consumer_groups as tool

    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1]})
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    base = int(time.time() * 1000) - 60_000
    for i in range(5):
        producer.send(topic, b"t", partition=0, timestamp_ms=base + i * 1000).get(timeout=15)
    producer.close()
    produce(engine_cluster.bootstrap, topic, [b"x"] * 3, partition=1)
    group = unique_group("same-meaning")
    commit(cluster, group, {(topic, 0): 2, (topic, 1): 2})
    cases = [(ResetSpec(target="earliest"), tool.ResetSpec(to_earliest=True)),
             (ResetSpec(target="latest"), tool.ResetSpec(to_latest=True)),
             (ResetSpec(target="offset", offset=4), tool.ResetSpec(to_offset=4)),
             (ResetSpec(target="datetime", timestamp_ms=base + 2500), tool.ResetSpec(to_timestamp=base + 2500))]
    admin = tool.connect(engine_cluster.bootstrap)
    try:
        partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        for ours, theirs in cases:
            plan = selectors.group_reset_preview(cluster=cluster, group_id=group, spec=ours)
            expected = {(tp.topic, tp.partition): offset
                        for tp, offset in tool.plan_reset(admin, group, partitions, theirs).items()}
            assert {(r.topic, r.partition): r.new_offset for r in plan.rows} == expected, ours
    finally:
        admin.close()
