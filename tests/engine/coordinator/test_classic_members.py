"""Mixed groups (KIP-848's online migration), spoken with raw requests so each step can be
checked: a classic group upgraded when a consumer-protocol member joins, its classic members
served by the consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit),
and the group downgraded when the last consumer-protocol member leaves."""
from __future__ import annotations

import pytest
from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from engine.protocol.specs import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from tests.support.groups import (GROUP_TEST_CONFIGS, GroupClient, HeartbeatMember, assignment, create_topic,
                                  subscription, topic_ids)

NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 0, 22, 25, 27
INCONSISTENT_GROUP_PROTOCOL, MEMBER_ID_REQUIRED, GROUP_ID_NOT_FOUND = 23, 79, 69
CLASSIC, CONSUMER = 0, 1
ALL = {0, 1, 2, 3}


@pytest.fixture
def topic(group_cluster, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 4)
    return topic_name


class Classic:
    """One classic member on its own connection to the coordinator."""

    def __init__(self, engine, group_id: str, topic: str) -> None:
        self.client = GroupClient(engine, group_id)
        self.topic = topic
        self.member_id, self.generation = "", -1

    def join(self, **kwargs):
        protocols = kwargs.pop("protocols", [("range", subscription([self.topic]))])
        joined = self.client.join_as_new_member(protocols=protocols, **kwargs) if not self.member_id else \
            self.client.join(self.member_id, protocols=protocols, **kwargs)
        if joined.error_code == NONE:
            self.member_id, self.generation = joined.member_id, joined.generation_id
        return joined

    def sync(self, assignments=None):
        return self.client.sync(self.member_id, self.generation, assignments)

    def partitions(self, synced) -> set[int]:
        decoded = ConsumerProtocolAssignment.decode(synced.assignment)
        return {p for t in decoded.assigned_partitions if t.topic == self.topic for p in t.partitions}

    def heartbeat(self) -> int:
        return self.client.heartbeat(self.member_id, self.generation)

    def close(self) -> None:
        self.client.close()


def describe(client: GroupClient):
    request = ConsumerGroupDescribeRequest(group_ids=[client.group_id], include_authorized_operations=False)
    [group] = client.client.request(request, 1, ConsumerGroupDescribeResponse).groups
    return group


def group_type(client: GroupClient) -> str:
    listed = client.client.request(ListGroupsRequest(states_filter=[], types_filter=[]), 5, ListGroupsResponse)
    return next(g.group_type for g in listed.groups if g.group_id == client.group_id)


def rejoin_until_stable(member: Classic) -> set[int]:
    """Join and sync again while the coordinator says a rebalance is on; the partitions at the end."""
    for _ in range(10):
        joined = member.join()
        assert joined.error_code == NONE, joined
        synced = member.sync()
        if synced.error_code == NONE and member.heartbeat() == NONE:
            return member.partitions(synced)
        assert synced.error_code in (NONE, REBALANCE_IN_PROGRESS), synced
    raise AssertionError("the classic member never became stable")


def test_a_classic_group_upgrades_and_downgrades_with_its_members(group_cluster, group_id, topic):
    classic = Classic(group_cluster, group_id, topic)
    modern_client = GroupClient(group_cluster, group_id)
    try:
        joined = classic.join()
        assert (joined.error_code, joined.leader) == (NONE, joined.member_id)    # the classic leader
        synced = classic.sync({classic.member_id: assignment({topic: [0, 1, 2, 3]})})
        assert synced.error_code == NONE and classic.partitions(synced) == ALL
        assert group_type(modern_client) == "classic"

        # A consumer-protocol member joins: the group is upgraded and keeps the classic member.
        modern = HeartbeatMember(modern_client, "modern-1", [topic], topic_ids(modern_client.client, [topic]))
        answer = modern.heartbeat()
        assert (answer.error_code, answer.member_epoch) == (NONE, classic.generation + 1)
        assert modern.owned == set()                     # all four are still the classic member's
        assert group_type(modern_client) == "consumer"
        described = describe(modern_client)
        members = {m.member_id: m for m in described.members}
        assert (members[classic.member_id].member_type, members["modern-1"].member_type) == (CLASSIC, CONSUMER)
        assert members[classic.member_id].member_epoch == classic.generation
        assert {p for t in members[classic.member_id].assignment.topic_partitions for p in t.partitions} == ALL

        # The classic member learns of the rebalance from its heartbeat and rejoins as a follower.
        assert classic.heartbeat() == REBALANCE_IN_PROGRESS
        rejoined = classic.join()
        assert (rejoined.error_code, rejoined.generation_id, rejoined.leader, rejoined.members,
                rejoined.protocol_name) == (NONE, answer.member_epoch, "", [], "range")
        kept = classic.partitions(classic.sync())
        assert len(kept) == 2 and classic.heartbeat() == NONE
        assert classic.client.commit({(topic, 0): 5}, member_id=classic.member_id,
                                     generation_id=classic.generation, version=5) == {(topic, 0): NONE}
        assert classic.client.commit({(topic, 0): 6}, member_id=classic.member_id,
                                     generation_id=classic.generation - 1, version=5) == \
            {(topic, 0): ILLEGAL_GENERATION}
        modern.heartbeat()
        assert {p for _, p in modern.owned} == ALL - kept      # released by the classic member's rejoin

        # The last consumer-protocol member leaves: a classic group again, which rebalances.
        assert modern.heartbeat(epoch=-1).error_code == NONE
        assert group_type(modern_client) == "classic"
        assert modern_client.describe().group_state == "PreparingRebalance"
        assert classic.heartbeat() == REBALANCE_IN_PROGRESS
        leader = classic.join()
        assert (leader.error_code, leader.leader, [m.member_id for m in leader.members]) == \
            (NONE, classic.member_id, [classic.member_id])
        assert leader.generation_id == answer.member_epoch + 1
        synced = classic.sync({classic.member_id: assignment({topic: [0, 1, 2, 3]})})
        assert classic.partitions(synced) == ALL and modern_client.describe().group_state == "Stable"
        assert modern_client.fetch([(topic, 0)])[1] == {(topic, 0): 5}   # offsets stay with the group
    finally:
        classic.close()
        modern_client.close()


def test_classic_members_join_and_leave_a_consumer_group(group_cluster, group_id, topic):
    modern_client = GroupClient(group_cluster, group_id)
    first, second = Classic(group_cluster, group_id, topic), Classic(group_cluster, group_id, topic)
    try:
        modern = HeartbeatMember(modern_client, "modern-1", [topic], topic_ids(modern_client.client, [topic]))
        modern.heartbeat()
        assert {p for _, p in modern.owned} == ALL

        refused = first.client.join(protocols=[("range", subscription([topic]))], protocol_type="connect")
        assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
        required = first.client.join(protocols=[("range", subscription([topic]))])
        assert (required.error_code, bool(required.member_id)) == (MEMBER_ID_REQUIRED, True)

        joined = first.join()
        assert (joined.error_code, joined.leader, joined.members) == (NONE, "", [])
        assert first.partitions(first.sync()) == set()          # the modern member still owns them all
        modern.ack()                                            # told to give two up
        assert len(modern.owned) == 2
        assert first.heartbeat() == NONE                        # they are not released yet
        modern.ack()                                            # it no longer owns them
        assert first.heartbeat() == REBALANCE_IN_PROGRESS       # they are free: rejoin to collect them
        assert rejoin_until_stable(first) == ALL - {p for _, p in modern.owned}

        incompatible = second.client.join_as_new_member(protocols=[("sticky", subscription([topic]))])
        assert incompatible.error_code == INCONSISTENT_GROUP_PROTOCOL  # no protocol shared with `first`
        assert second.join().error_code == NONE
        assert group_type(modern_client) == "consumer"
        types = sorted(m.member_type for m in describe(modern_client).members)
        assert types == [CLASSIC, CLASSIC, CONSUMER]

        left = first.client.leave(first.member_id)
        assert [m.error_code for m in left.members] == [NONE]
        wrong = first.client.leave("modern-1")                   # a consumer-protocol member is not classic
        assert [m.error_code for m in wrong.members] == [UNKNOWN_MEMBER_ID]
        assert first.heartbeat() == UNKNOWN_MEMBER_ID
        assert sorted(m.member_id for m in describe(modern_client).members) == sorted(["modern-1", second.member_id])
    finally:
        first.close()
        second.close()
        modern_client.close()


def test_a_classic_group_of_another_protocol_type_is_not_upgraded(group_cluster, group_id, topic):
    classic = Classic(group_cluster, group_id, topic)
    modern_client = GroupClient(group_cluster, group_id)
    try:
        assert classic.join(protocol_type="connect").error_code == NONE
        modern = HeartbeatMember(modern_client, "modern-1", [topic], topic_ids(modern_client.client, [topic]))
        refused = modern.heartbeat()
        assert refused.error_code == GROUP_ID_NOT_FOUND
        assert "cannot be upgraded" in refused.error_message and "'connect'" in refused.error_message
        assert group_type(modern_client) == "classic"
    finally:
        classic.close()
        modern_client.close()


def test_the_migration_policy_can_forbid_the_upgrade(engine_factory, group_id, topic_name):
    engine = engine_factory(brokers=1, configs={**GROUP_TEST_CONFIGS, "group.consumer.migration.policy": "Disabled"})
    create_topic(engine.bootstrap, topic_name, 4)
    classic = Classic(engine, group_id, topic_name)
    modern_client = GroupClient(engine, group_id)
    try:
        assert classic.join().error_code == NONE
        modern = HeartbeatMember(modern_client, "modern-1", [topic_name], topic_ids(modern_client.client, [topic_name]))
        refused = modern.heartbeat()
        assert refused.error_code == GROUP_ID_NOT_FOUND and "online upgrade is disabled" in refused.error_message
    finally:
        classic.close()
        modern_client.close()


def test_a_static_instance_coming_back_classic_downgrades_the_group_at_once(group_cluster, group_id, topic):
    """The last consumer-protocol member is static; its next instance speaks the classic protocol:
    a classic group at once, Stable, with the old instance's partitions and no rebalance."""
    modern_client = GroupClient(group_cluster, group_id)
    other, returning = Classic(group_cluster, group_id, topic), Classic(group_cluster, group_id, topic)
    try:
        modern = HeartbeatMember(modern_client, "modern-1", [topic], topic_ids(modern_client.client, [topic]),
                                 instance_id="instance-1")
        modern.heartbeat()
        assert other.join().error_code == NONE
        modern.ack()
        modern.ack()                                             # it gave two partitions up
        held = {p for _, p in modern.owned}
        rest = rejoin_until_stable(other)
        assert rest == ALL - held
        assert modern.heartbeat(epoch=-2).error_code == NONE      # a static member's temporary leave

        joined = returning.join(instance_id="instance-1")
        assert joined.error_code == NONE and joined.member_id != "modern-1"
        assert group_type(modern_client) == "classic"
        assert modern_client.describe().group_state == "Stable"
        synced = returning.client.sync(returning.member_id, returning.generation, instance_id="instance-1")
        assert synced.error_code == NONE and returning.partitions(synced) == held
        assert other.heartbeat() == NONE                         # no rebalance for the other member
    finally:
        other.close()
        returning.close()
        modern_client.close()
