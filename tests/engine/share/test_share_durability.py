"""Share group state and membership outlive their brokers: an empty share group is still
listed and described after a restart (its records in __consumer_offsets), and when a
partition's leader stops, the new leader reads the share partition's state from the share
coordinator: what was acknowledged is not delivered again, what was only acquired is."""
from __future__ import annotations

from confluent_kafka import AcknowledgeType
from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

from engine.protocol.specs import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from tests.engine.cluster.helpers import create_topic as create_replicated_topic
from tests.engine.cluster.helpers import partition_state, stop_broker
from tests.engine.share.test_share_consumers import produce_one_by_one, share_consumer
from tests.support.groups import create_topic, produce, set_group_configs
from tests.support.raw_client import RawClient
from tests.support.share import (ACCEPT, SHARE_TEST_CONFIGS, RawShareMember, coordinator_port, describe_share_offsets,
                                 offsets_of)
from tests.support.waiting import wait_until


def test_an_empty_share_group_and_its_offsets_survive_a_restart(engine_factory):
    engine = engine_factory(brokers=1, configs=SHARE_TEST_CONFIGS)
    create_topic(engine.bootstrap, "orders", 1)
    produce(engine.bootstrap, "orders", [f"o{i}".encode() for i in range(8)])
    set_group_configs(engine.bootstrap, "billing", {"share.auto.offset.reset": "earliest"})
    member = RawShareMember(engine.ports[0], "billing", "orders", "biller")
    member.join()
    assert offsets_of(member.fetch()) == list(range(8))
    member.acknowledge([(0, 4, [ACCEPT])], epoch=None)
    member.fetch(epoch=-1)
    member.heartbeat(epoch=-1)
    member.close()
    assert engine.terminate() == 0
    engine.start()
    wait_until(lambda: describe_share_offsets(engine.ports[0], "billing").error_code == 0, timeout=30,
               message="the group's coordinator to load")
    [row] = describe_share_offsets(engine.ports[0], "billing").topics[0].partitions
    assert (row.start_offset, row.lag) == (5, 3)
    client = RawClient(coordinator_port(engine.ports[0], "billing"))
    try:
        listed = client.request(ListGroupsRequest(states_filter=[], types_filter=["share"]), 5, ListGroupsResponse)
        assert [(g.group_id, g.group_state) for g in listed.groups] == [("billing", "Empty")]
        [described] = client.request(ShareGroupDescribeRequest(group_ids=["billing"], include_authorized_operations=False),
                                     1, ShareGroupDescribeResponse).groups
        assert (described.error_code, described.group_state, described.members) == (0, "Empty", [])
    finally:
        client.close()


def test_a_leader_move_keeps_acknowledged_records_and_redelivers_acquired_ones(engine_factory):
    engine = engine_factory(brokers=3, configs=SHARE_TEST_CONFIGS)
    create_replicated_topic(engine.bootstrap, "tasks", 1, 3)
    set_group_configs(engine.bootstrap, "runners", {"share.auto.offset.reset": "earliest"})
    produce_one_by_one(engine.bootstrap, "tasks", 20)
    consumer = share_consumer(engine.bootstrap, "runners", "tasks", **{"share.acknowledgement.mode": "explicit",
                                                                       "max.poll.records": 20})
    try:
        batch = wait_until(lambda: [m for m in consumer.poll(0.5) if not m.error()], timeout=60,
                           message="the first delivery")
        accepted = {m.offset() for m in batch if m.offset() < 10}
        for message in batch:
            consumer.acknowledge(message, AcknowledgeType.ACCEPT if message.offset() in accepted
                                 else AcknowledgeType.RELEASE)
        consumer.commit_sync(10)
        wait_until(lambda: describe_share_offsets(engine.ports[0], "runners").topics[0].partitions[0].start_offset
                   == 10, message="the acknowledgements to be durable")
        # The records after 10 are taken again, and held, when the leader goes.
        held = set()
        wait_until(lambda: held.update(m.offset() for m in consumer.poll(0.5) if not m.error()) or len(held) == 10,
                   timeout=60, message="the released records to be acquired again")
        leader = partition_state(engine.bootstrap, "tasks")[0][0]
        stop_broker(engine, leader)
        wait_until(lambda: partition_state(engine.bootstrap, "tasks")[0][0] not in (leader, -1), timeout=60,
                   message="a new leader")
        for offset in sorted(held):
            consumer.acknowledge_offset("tasks", 0, offset, AcknowledgeType.RELEASE)
        consumer.commit_sync(10)        # the old leader's locks are gone: these answer an error, or nothing
        delivered: list[int] = []

        def poll_round():
            for message in consumer.poll(0.5):
                if not message.error():
                    delivered.append(message.offset())
                    consumer.acknowledge(message, AcknowledgeType.ACCEPT)
            consumer.commit_sync(10)
            return set(delivered) >= held
        wait_until(poll_round, timeout=90, interval=0, message="the held records from the new leader")
    finally:
        consumer.close()
    assert not set(delivered) & accepted
    assert set(delivered) == held
