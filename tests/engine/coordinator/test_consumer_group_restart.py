"""A consumer-protocol (KIP-848) group across an engine restart and a coordinator move: its
records in __consumer_offsets (Kafka's ConsumerGroup* formats) bring it back, so a member
carries on under the same member id and epoch, and its commits keep working."""
from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, TopicPartition

from engine.protocol.specs import (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
                                   ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse)
from tests.engine.cluster.helpers import stop_broker
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic, produce, topic_ids, wait_until

GROUP = "kip848-restart"


def describe(engine):
    client = GroupClient(engine, GROUP)
    try:
        request = ConsumerGroupDescribeRequest(group_ids=[GROUP], include_authorized_operations=False)
        [group] = client.client.request(request, 0, ConsumerGroupDescribeResponse).groups
    finally:
        client.close()
    return group


def test_a_group_and_its_member_survive_a_restart(engine_factory, topic_name):
    engine = engine_factory(brokers=1, configs=GROUP_TEST_CONFIGS)
    create_topic(engine.bootstrap, topic_name, 2)
    produce(engine.bootstrap, topic_name, [f"m{i}".encode() for i in range(20)])
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": GROUP, "group.protocol": "consumer",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    lost: list = []
    consumer.subscribe([topic_name], on_lost=lambda c, ps: lost.extend(ps))
    try:
        wait_until(lambda: consumer.consume(num_messages=20, timeout=0.2) is not None
                   and len(consumer.assignment()) == 2, timeout=60, message="the assignment")
        before = describe(engine)
        [member] = before.members
        assert (before.group_state, member.member_epoch) == ("Stable", before.group_epoch)

        assert engine.terminate() == 0
        engine.start()   # same ports and data

        after = wait_until(lambda: (g := describe(engine)).error_code == 0 and g, message="the group loaded")
        assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch, before.assignment_epoch)
        assert [(m.member_id, m.member_epoch, m.client_id) for m in after.members] == \
            [(member.member_id, member.member_epoch, member.client_id)]
        assert {(t.topic_name, p) for t in after.members[0].assignment.topic_partitions for p in t.partitions} == \
            {(topic_name, 0), (topic_name, 1)}

        def committed() -> bool:
            consumer.consume(num_messages=20, timeout=0.2)
            try:
                consumer.commit(offsets=[TopicPartition(topic_name, 0, 5)], asynchronous=False)
            except KafkaException:   # the coordinator still loading, or the connection coming back
                return False
            return True
        wait_until(committed, timeout=60, message="a commit after the restart")
        again = describe(engine)
        assert [(m.member_id, m.member_epoch) for m in again.members] == [(member.member_id, member.member_epoch)]
        assert lost == []   # the member never had to give its partitions up and rejoin
    finally:
        consumer.close()


def test_a_group_moves_with_its_coordinator(engine_factory, topic_name):
    """The coordinator's broker stops: the follower that leads the group's __consumer_offsets
    partition next loads the group from its replica, and the member's next heartbeat, with
    its old epoch, is answered as before (raw requests: every field is checked)."""
    engine = engine_factory(brokers=3, configs=GROUP_TEST_CONFIGS)
    create_topic(engine.bootstrap, topic_name, 2, replication=3)
    client = GroupClient(engine, GROUP)
    old = client.coordinator
    try:
        ids = topic_ids(client.client, [topic_name])
        joined = client.client.request(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id="member-1", member_epoch=0, rebalance_timeout_ms=30000,
            subscribed_topic_names=[topic_name], topic_partitions=[]), 1, ConsumerGroupHeartbeatResponse)
        assert (joined.error_code, joined.member_epoch) == (0, 1)
    finally:
        client.close()
    stop_broker(engine, old)

    def moved():
        via = 1 if old == 0 else 0
        try:
            candidate = GroupClient(engine, GROUP, via=via)
        except (AssertionError, OSError):
            return None
        if candidate.coordinator == old:
            candidate.close()
            return None
        return candidate
    client = wait_until(moved, timeout=60, message="a new coordinator")
    try:
        owned = [ConsumerGroupHeartbeatRequest.TopicPartitions(topic_id=ids[topic_name], partitions=[0, 1])]
        answer = wait_until(lambda: (a := client.client.request(ConsumerGroupHeartbeatRequest(
            group_id=GROUP, member_id="member-1", member_epoch=1, topic_partitions=owned), 1,
            ConsumerGroupHeartbeatResponse)).error_code != 14 and a, message="the group loaded")  # LOAD_IN_PROGRESS
        assert (answer.error_code, answer.member_epoch) == (0, 1)
        [group] = client.client.request(ConsumerGroupDescribeRequest(group_ids=[GROUP],
                                        include_authorized_operations=False), 0, ConsumerGroupDescribeResponse).groups
        assert (group.group_state, group.group_epoch, [m.member_id for m in group.members]) == \
            ("Stable", 1, ["member-1"])
        assert sorted(p for t in group.members[0].assignment.topic_partitions for p in t.partitions) == [0, 1]
    finally:
        client.close()
