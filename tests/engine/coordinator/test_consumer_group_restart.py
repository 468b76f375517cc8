"""A consumer-protocol (KIP-848) group across an engine restart: its records in
__consumer_offsets (Kafka's ConsumerGroup* formats) bring it back, so a librdkafka member
carries on under the same member id and epoch, and its commits keep working."""
from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, TopicPartition

from engine.protocol.specs import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic, produce, wait_until

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
