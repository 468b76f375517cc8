"""Committed offsets and group metadata survive an engine restart (clean or SIGKILL) and a
move of the coordinator to another broker."""
from __future__ import annotations

import time

import kafka.errors as Errors
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from tests.engine.cluster.helpers import stop_broker
from tests.support.groups import (GROUP_TEST_CONFIGS, GroupClient, assignment, create_topic, produce,
                                  subscription, wait_until)


def committed(bootstrap: str, group_id: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets. After a restart the coordinator may still move (the
    preferred replicas take their leadership back once in sync, later on a loaded machine)
    or still be loading: NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS are retried, as
    Kafka's own AdminClient does, up to a generous deadline."""
    deadline = time.monotonic() + 60
    while True:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            offsets = admin.list_group_offsets(group_id)[group_id]
            return {(tp.topic, tp.partition): o.offset for tp, o in offsets.items()}
        except (Errors.NotCoordinatorError, Errors.CoordinatorLoadInProgressError,
                Errors.CoordinatorNotAvailableError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            admin.close()


def consume(bootstrap: str, topic: str, group_id: str, count: int) -> list[tuple[int, int]]:
    """(partition, offset) of the next `count` records the group gets, committing them."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, auto_offset_reset="earliest",
                             enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=200)
    seen = []
    deadline = time.monotonic() + 30
    try:
        while len(seen) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=200, max_records=count - len(seen)).values():
                seen += [(r.partition, r.offset) for r in records]
        consumer.commit()
    finally:
        consumer.close()
    return seen


def test_offsets_survive_a_clean_restart_and_a_kill(engine_factory, tmp_path, topic_name):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=3, configs=GROUP_TEST_CONFIGS, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, 2)
    produce(engine.bootstrap, topic_name, [f"m{i}".encode() for i in range(40)])
    first = consume(engine.bootstrap, topic_name, "durable", 15)
    before = committed(engine.bootstrap, "durable")
    assert sum(before.values()) == 15 and len(first) == 15

    assert engine.terminate() == 0
    engine = engine_factory(brokers=3, configs=GROUP_TEST_CONFIGS, data_dir=data_dir)
    assert committed(engine.bootstrap, "durable") == before
    second = consume(engine.bootstrap, topic_name, "durable", 15)
    assert not set(first) & set(second)  # resumed where the group left off

    after = committed(engine.bootstrap, "durable")
    engine.kill()  # SIGKILL: acknowledged commits are in the log already
    engine = engine_factory(brokers=3, configs=GROUP_TEST_CONFIGS, data_dir=data_dir)
    assert committed(engine.bootstrap, "durable") == after
    rest = consume(engine.bootstrap, topic_name, "durable", 10)
    final = committed(engine.bootstrap, "durable")
    assert sum(final.values()) == 40
    assert sorted(first + second + rest) == sorted((p, o) for (_, p), n in final.items() for o in range(n))


def test_offsets_and_members_move_with_the_coordinator(engine_factory, topic_name):
    engine = engine_factory(brokers=3, configs=GROUP_TEST_CONFIGS)
    create_topic(engine.bootstrap, topic_name, 1)
    client = GroupClient(engine, "moving")
    old_coordinator = client.coordinator
    try:
        joined = client.join_as_new_member(protocols=[("range", subscription([topic_name]))],
                                           session_timeout_ms=30000)
        member, generation = joined.member_id, joined.generation_id
        assert client.sync(member, generation, {member: assignment({topic_name: [0]})}).error_code == 0
        assert client.commit({(topic_name, 0): 42}, member_id=member, generation_id=generation) == \
            {(topic_name, 0): 0}
    finally:
        client.close()
    stop_broker(engine, old_coordinator)  # its __consumer_offsets partitions get new leaders (followers)
    moved = wait_until(lambda: _coordinator_elsewhere(engine, old_coordinator), message="a new coordinator")
    try:
        # The new coordinator loaded the group from the replicated log: same member, same generation.
        assert moved.heartbeat(member, generation) == 0
        assert moved.describe().group_state == "Stable"
        assert moved.fetch([(topic_name, 0)]) == (0, {(topic_name, 0): 42})
        assert moved.commit({(topic_name, 0): 43}, member_id=member, generation_id=generation) == \
            {(topic_name, 0): 0}
    finally:
        moved.close()
    admin = KafkaAdminClient(bootstrap_servers=",".join(f"127.0.0.1:{p}" for i, p in enumerate(engine.ports)
                                                        if i != old_coordinator))
    try:
        assert admin.list_group_offsets("moving")["moving"] == {
            TopicPartition(topic_name, 0): OffsetAndMetadata(43, "", -1)}
    finally:
        admin.close()


def _coordinator_elsewhere(engine, old: int):
    via = 1 if old == 0 else 0  # bootstrap from a broker that is up
    try:
        client = GroupClient(engine, "moving", via=via)
    except (AssertionError, OSError):
        return None
    if client.coordinator == old:
        client.close()
        return None
    return client
