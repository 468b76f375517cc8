"""Converting a group between the classic protocol and the consumer protocol while it has
members: KIP-848's online upgrade and downgrade (Kafka's ConsumerGroup.fromClassicGroup and
ClassicGroup.fromConsumerGroup).

- Upgrade: a classic group whose members speak the `consumer` protocol type becomes a
  consumer group when a ConsumerGroupHeartbeat joins it. Each classic member keeps its member
  id, its subscription (read from its JoinGroup metadata) and its last assignment as its
  current and target assignment; the group epoch, the assignment epoch and every member epoch
  are the classic generation. The new member then bumps the epoch like any other join.
- Downgrade: a consumer group whose remaining members all speak the classic protocol becomes a
  classic group of those members again, at the group epoch as its generation, each member
  holding its target assignment; the caller then starts a classic rebalance so a leader
  assigns with the members' own assignors.

`group.consumer.migration.policy` (disabled, upgrade, downgrade, bidirectional) says which
conversions happen. A classic member may join a consumer group that has members whatever
the policy, as in Kafka. Committed offsets, and pending transactional ones, go with the group.
These functions only build the new group object; the coordinator swaps it in, answers the
old group's waiters and writes the records.
"""
from __future__ import annotations

from typing import Callable

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from engine.coordinator.consumer_group import ClassicMemberMetadata, ConsumerGroup, ConsumerMember, TopicPartition
from engine.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupMetadata, GroupState, MemberMetadata

POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
# The newest ConsumerProtocolAssignment version; a member gets its subscription's version up to it.
ASSIGNMENT_MAX_VERSION = 3


class MalformedSubscriptionError(ValueError):
    """A member's JoinGroup metadata is not a ConsumerProtocolSubscription."""


def upgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("upgrade", "bidirectional")


def downgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("downgrade", "bidirectional")


def decode_subscription(metadata: bytes) -> ConsumerProtocolSubscription:
    try:
        return ConsumerProtocolSubscription.decode(bytes(metadata))
    except Exception as exc:  # noqa: BLE001 - a client's bytes
        raise MalformedSubscriptionError(f"the embedded consumer protocol is malformed: {exc}") from None


def owned_partitions(subscription: ConsumerProtocolSubscription) -> frozenset[TopicPartition]:
    """The partitions a rejoining member says it still owns (v1+; an eager member owns none)."""
    owned = getattr(subscription, "owned_partitions", None) or []
    return frozenset((tp.topic, p) for tp in owned for p in tp.partitions)


def encode_assignment(partitions: frozenset[TopicPartition], classic: ClassicMemberMetadata) -> bytes:
    """A member's partitions as SyncGroup hands them out, in its subscription's version."""
    version = min(decode_subscription(classic.protocols[0][1]).version or 0, ASSIGNMENT_MAX_VERSION)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append(partition)
    assignment = ConsumerProtocolAssignment(
        version=version, user_data=None,
        assigned_partitions=[ConsumerProtocolAssignment.TopicPartition(version=version, topic=t, partitions=ps)
                             for t, ps in by_topic.items()])
    return bytes(assignment.encode(version=version))


def decode_assignment(data: bytes) -> frozenset[TopicPartition]:
    if not data:
        return frozenset()
    try:
        assignment = ConsumerProtocolAssignment.decode(bytes(data))
    except Exception as exc:  # noqa: BLE001 - written by a client's leader
        raise MalformedSubscriptionError(f"an assignment is malformed: {exc}") from None
    return frozenset((tp.topic, p) for tp in assignment.assigned_partitions for p in tp.partitions)


def consumer_group_from_classic(classic: GroupMetadata, now_ms: int,
                                topic_exists: Callable[[str], bool]) -> ConsumerGroup:
    """The consumer group of a classic group's members; raises MalformedSubscriptionError."""
    group = ConsumerGroup(classic.group_id, now_ms)
    group.group_epoch = group.assignment_epoch = classic.generation_id
    for member in classic.members.values():
        metadata = member.metadata(classic.protocol_name) if classic.protocol_name else member.protocols[0][1]
        subscription = decode_subscription(metadata)
        assigned = frozenset(tp for tp in decode_assignment(member.assignment) if topic_exists(tp[0]))
        group.put_member(ConsumerMember(
            member.member_id, member.group_instance_id, getattr(subscription, "rack_id", None), member.client_id,
            member.client_host, member.rebalance_timeout_ms, subscribed_topics=frozenset(subscription.topics or ()),
            member_epoch=classic.generation_id, previous_member_epoch=classic.generation_id, assigned=assigned,
            classic=ClassicMemberMetadata(member.session_timeout_ms,
                                          tuple((n, bytes(m)) for n, m in member.protocols))), now_ms)
        group.target[member.member_id] = assigned
    carry_offsets(classic, group)
    return group


def classic_group_from_consumer(group: ConsumerGroup, now_ms: int) -> GroupMetadata:
    """The classic group of a consumer group whose members all speak the classic protocol,
    Stable at the group epoch, each member holding its target assignment."""
    classic = GroupMetadata(group.group_id, now_ms, state=GroupState.STABLE)
    classic.generation_id = group.group_epoch
    for member in group.members.values():
        classic.add(MemberMetadata(
            member.member_id, member.instance_id, member.client_id, member.client_host, member.rebalance_timeout_ms,
            member.classic.session_timeout_ms, CONSUMER_PROTOCOL_TYPE, list(member.classic.protocols),
            assignment=encode_assignment(group.target.get(member.member_id, frozenset()), member.classic)))
    classic.protocol_name = classic.select_protocol()
    carry_offsets(group, classic)
    return classic


def carry_offsets(source: GroupMetadata, into: GroupMetadata) -> None:
    """Committed offsets, and pending transactional ones, stay with the group id."""
    into.offsets = source.offsets
    into.pending_txn_offsets = source.pending_txn_offsets
