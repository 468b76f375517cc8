"""Converting groups between the classic and the consumer protocol (engine/coordinator/migration.py)."""
from __future__ import annotations

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from engine.coordinator import migration
from engine.coordinator.consumer_group import ClassicMemberMetadata, ConsumerGroup, ConsumerMember
from engine.coordinator.group import GroupMetadata, GroupState, MemberMetadata
from engine.coordinator.offsets_records import OffsetAndMetadata
from tests.support.groups import assignment, subscription


def classic_group() -> GroupMetadata:
    group = GroupMetadata("g", 0, state=GroupState.STABLE)
    group.generation_id, group.protocol_type, group.protocol_name = 4, "consumer", "range"
    for member_id, partitions in (("a", [0, 1]), ("b", [2])):
        group.add(MemberMetadata(member_id, None, f"client-{member_id}", "/127.0.0.1", 30000, 10000, "consumer",
                                 [("range", subscription(["t", "gone"])), ("roundrobin", subscription(["t"]))],
                                 assignment=assignment({"t": partitions, "gone": [0]})))
    group.offsets[("t", 0)] = OffsetAndMetadata(5, -1, "", 0, -1)
    return group


def test_a_classic_group_becomes_a_consumer_group_that_keeps_its_members():
    classic = classic_group()
    group = migration.consumer_group_from_classic(classic, 0, lambda topic: topic == "t")
    assert (group.group_epoch, group.assignment_epoch) == (4, 4)
    a = group.members["a"]
    assert (a.member_epoch, a.previous_member_epoch, a.subscribed_topics, a.assigned) == \
        (4, 4, frozenset({"t", "gone"}), frozenset({("t", 0), ("t", 1)}))   # a gone topic's partitions dropped
    assert a.classic == ClassicMemberMetadata(10000, tuple(classic.members["a"].protocols))
    assert group.target == {"a": a.assigned, "b": frozenset({("t", 2)})}
    assert group.owner_of[("t", 2)] == "b" and group.offsets is classic.offsets


def test_a_consumer_group_of_classic_members_becomes_a_classic_group():
    group = migration.consumer_group_from_classic(classic_group(), 0, lambda topic: topic == "t")
    group.group_epoch = 6
    group.target["a"] = frozenset({("t", 0), ("t", 1), ("t", 2)})
    classic = migration.classic_group_from_consumer(group, 0)
    assert (classic.state, classic.generation_id, classic.protocol_type, classic.protocol_name) == \
        (GroupState.STABLE, 6, "consumer", "range")
    assert list(classic.members) == ["a", "b"] and classic.leader_id == "a"
    assert migration.decode_assignment(classic.members["a"].assignment) == group.target["a"]
    assert classic.members["b"].session_timeout_ms == 10000


def test_an_assignment_is_encoded_in_the_version_of_the_subscription():
    v1 = ConsumerProtocolSubscription(version=1, topics=["t"], user_data=None, owned_partitions=[
        ConsumerProtocolSubscription.TopicPartition(version=1, topic="t", partitions=[3])]).encode(version=1)
    classic = ClassicMemberMetadata(10000, (("cooperative-sticky", bytes(v1)),))
    encoded = migration.encode_assignment(frozenset({("t", 1), ("t", 0)}), classic)
    assert encoded[:2] == b"\x00\x01"
    assert migration.decode_assignment(encoded) == {("t", 0), ("t", 1)}
    assert migration.owned_partitions(migration.decode_subscription(v1)) == {("t", 3)}


def test_a_malformed_subscription_is_refused_by_name():
    with pytest.raises(migration.MalformedSubscriptionError, match="malformed"):
        migration.decode_subscription(b"\x00\x00\xff")
    classic = classic_group()
    classic.members["b"].protocols = [("range", b"junk")]
    with pytest.raises(migration.MalformedSubscriptionError):
        migration.consumer_group_from_classic(classic, 0, lambda topic: True)


@pytest.mark.parametrize("policy,upgrade,downgrade", [
    ("bidirectional", True, True), ("UPGRADE", True, False), ("downgrade", False, True), ("disabled", False, False)])
def test_the_migration_policy(policy, upgrade, downgrade):
    assert (migration.upgrade_enabled(policy), migration.downgrade_enabled(policy)) == (upgrade, downgrade)


def test_classic_members_must_share_a_protocol():
    group = ConsumerGroup("g", 0)
    assert group.supports_classic_protocols("consumer", ["range"])
    assert not group.supports_classic_protocols("connect", ["range"])
    group.put_member(ConsumerMember("a", None, None, "c", "h", 1000,
                                    classic=ClassicMemberMetadata(1, (("range", b""), ("sticky", b"")))), 0)
    group.put_member(ConsumerMember("m", None, None, "c", "h", 1000), 0)   # a consumer-protocol member
    assert group.supports_classic_protocols("consumer", ["roundrobin", "sticky"])
    assert not group.supports_classic_protocols("consumer", ["roundrobin"])
    assert group.all_classic_except("m") and not group.all_classic_except("a")
