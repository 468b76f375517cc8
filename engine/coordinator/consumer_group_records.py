"""Consumer-protocol groups (KIP-848) as records of `__consumer_offsets`, in Kafka's formats
(record_specs/), so a coordinator that loads the partition - after a restart or a failover -
gets the group back: its members keep their ids, epochs and partitions.

    key v3 ConsumerGroupMetadata               group            -> group epoch
    key v5 ConsumerGroupMemberMetadata         group, member    -> ids, client, subscription, and a
                                                                   classic member's protocols
    key v6 ConsumerGroupTargetAssignmentMetadata group          -> assignment epoch
    key v7 ConsumerGroupTargetAssignmentMember group, member    -> the member's target
    key v8 ConsumerGroupCurrentMemberAssignment group, member   -> member epoch, state, partitions

A group's records are rebuilt from memory after each change and only those that differ from
what was written last go to the log (`diff`); a removed member's keys get tombstones.
Partitions are stored by topic id; at load, ids of topics that no longer exist are dropped.
"""
from __future__ import annotations

import struct
from typing import Callable

from engine.coordinator import record_specs as S
from engine.coordinator.consumer_group import (ClassicMemberMetadata, ConsumerGroup, ConsumerMember, MemberState,
                                               TopicPartition)

KEYS = {3: S.ConsumerGroupMetadataKey, 5: S.ConsumerGroupMemberMetadataKey,
        6: S.ConsumerGroupTargetAssignmentMetadataKey, 7: S.ConsumerGroupTargetAssignmentMemberKey,
        8: S.ConsumerGroupCurrentMemberAssignmentKey}
VALUES = {3: S.ConsumerGroupMetadataValue, 5: S.ConsumerGroupMemberMetadataValue,
          6: S.ConsumerGroupTargetAssignmentMetadataValue, 7: S.ConsumerGroupTargetAssignmentMemberValue,
          8: S.ConsumerGroupCurrentMemberAssignmentValue}
STATE_CODES = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1, MemberState.UNRELEASED_PARTITIONS: 2}
STATES = {code: state for state, code in STATE_CODES.items()}
_I16 = struct.Struct(">h")


def _key(version: int, group_id: str, member_id: str | None = None) -> bytes:
    fields = {"group_id": group_id} if member_id is None else {"group_id": group_id, "member_id": member_id}
    return bytes(KEYS[version](version=version, **fields).encode(version=version))


def _value(version: int, **fields) -> bytes:
    return bytes(VALUES[version](version=0, **fields).encode(version=0))


# --- writing ------------------------------------------------------------------------------------

def records_of(group: ConsumerGroup, topic_id: Callable[[str], object]) -> dict[bytes, bytes]:
    """Every record of the group's current state; `topic_id(name)` is None for a gone topic."""
    def by_id(partitions, struct_class) -> list:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        return [struct_class(version=0, topic_id=topic_id(t), partitions=sorted(ps))
                for t, ps in sorted(by_topic.items()) if topic_id(t) is not None]

    current = S.ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions
    target = S.ConsumerGroupTargetAssignmentMemberValue.TopicPartition
    gid = group.group_id
    records = {_key(3, gid): _value(3, epoch=group.group_epoch),
               _key(6, gid): _value(6, assignment_epoch=group.assignment_epoch)}
    for m in group.members.values():
        records[_key(5, gid, m.member_id)] = _value(
            5, instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topics), subscribed_topic_regex=m.subscribed_regex,
            rebalance_timeout_ms=m.rebalance_timeout_ms, server_assignor=m.server_assignor,
            classic_member_metadata=_classic_value(m.classic))
        records[_key(7, gid, m.member_id)] = _value(
            7, topic_partitions=by_id(group.target.get(m.member_id, frozenset()), target))
        records[_key(8, gid, m.member_id)] = _value(
            8, member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
            state=STATE_CODES[m.state], assigned_partitions=by_id(m.assigned, current),
            partitions_pending_revocation=by_id(m.pending_revocation, current))
    return records


def _classic_value(classic: ClassicMemberMetadata | None):
    if classic is None:
        return None
    struct_class = S.ConsumerGroupMemberMetadataValue.ClassicMemberMetadata
    return struct_class(version=0, session_timeout_ms=classic.session_timeout_ms, supported_protocols=[
        struct_class.ClassicProtocol(version=0, name=name, metadata=metadata) for name, metadata in classic.protocols])


def _classic_member(value) -> ClassicMemberMetadata | None:
    if value is None:
        return None
    return ClassicMemberMetadata(value.session_timeout_ms,
                                 tuple((p.name, bytes(p.metadata)) for p in value.supported_protocols))


def diff(written: dict[bytes, bytes], records: dict[bytes, bytes]) -> list[tuple[bytes, bytes | None]]:
    """What to append so the log says `records`: changed records, and tombstones for the rest."""
    changed = [(k, v) for k, v in records.items() if written.get(k) != v]
    return changed + [(k, None) for k in written if k not in records]


# --- loading ------------------------------------------------------------------------------------

def replay(key: bytes, value: bytes | None, into: dict[str, dict[bytes, bytes]]) -> bool:
    """Apply one record to `into` ({group id: {key: value}}) if it is one of these; False if not."""
    version = _I16.unpack_from(key)[0]
    if version not in KEYS:
        return False
    group_id = KEYS[version].decode(key, version=version).group_id
    records = into.setdefault(group_id, {})
    if value is None:
        records.pop(key, None)
    else:
        records[key] = bytes(value)
    return True


def group_from_records(group_id: str, records: dict[bytes, bytes], topic_name: Callable[[object], str | None],
                       now_ms: int) -> ConsumerGroup | None:
    """The group its records describe (None without its epoch record: it was deleted)."""
    decoded: dict[int, dict[str | None, object]] = {v: {} for v in KEYS}
    for key, value in records.items():
        version = _I16.unpack_from(key)[0]
        member_id = getattr(KEYS[version].decode(key, version=version), "member_id", None)
        decoded[version][member_id] = VALUES[version].decode(value, version=_I16.unpack_from(value)[0])
    if None not in decoded[3]:
        return None
    group = ConsumerGroup(group_id, now_ms)
    group.group_epoch = decoded[3][None].epoch
    group.assignment_epoch = decoded[6][None].assignment_epoch if None in decoded[6] else 0

    def by_name(topics) -> frozenset[TopicPartition]:
        return frozenset((name, p) for t in topics if (name := topic_name(t.topic_id)) is not None
                         for p in t.partitions)
    for member_id, meta in decoded[5].items():
        current = decoded[8].get(member_id)
        group.put_member(ConsumerMember(
            member_id, meta.instance_id, meta.rack_id, meta.client_id, meta.client_host, meta.rebalance_timeout_ms,
            subscribed_topics=frozenset(meta.subscribed_topic_names), subscribed_regex=meta.subscribed_topic_regex,
            server_assignor=meta.server_assignor, classic=_classic_member(meta.classic_member_metadata),
            member_epoch=current.member_epoch if current else 0,
            previous_member_epoch=current.previous_member_epoch if current else -1,
            state=STATES.get(current.state, MemberState.STABLE) if current else MemberState.STABLE,
            assigned=by_name(current.assigned_partitions) if current else frozenset(),
            pending_revocation=by_name(current.partitions_pending_revocation) if current else frozenset()), now_ms)
        if member_id in decoded[7]:
            group.target[member_id] = by_name(decoded[7][member_id].topic_partitions)
    group.written = dict(records)
    return group
