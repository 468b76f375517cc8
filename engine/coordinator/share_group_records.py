"""Share groups (KIP-932) as records of `__consumer_offsets`, in Kafka's formats
(record_specs/), so a coordinator that loads the partition gets the group back: an empty
share group stays listed after a restart, and members keep their ids and epochs.

    key v10 ShareGroupMemberMetadata          group, member -> rack, client, subscription
    key v11 ShareGroupMetadata                group         -> group epoch
    key v12 ShareGroupTargetAssignmentMetadata group        -> assignment epoch
    key v13 ShareGroupTargetAssignmentMember  group, member -> the member's target
    key v14 ShareGroupCurrentMemberAssignment group, member -> member epoch, partitions
    key v15 ShareGroupStatePartitionMetadata  group         -> partitions with share state

As for consumer groups (consumer_group_records.py), the records are rebuilt after each change
and only those that differ from the last write are appended; a removed member's keys get
tombstones. Partitions are stored by topic id; ids of topics that no longer exist are dropped
at load.
"""
from __future__ import annotations

import struct
from typing import Callable

from engine.coordinator import record_specs as S
from engine.coordinator.share_group import ShareGroup, ShareMember, TopicPartition

KEYS = {10: S.ShareGroupMemberMetadataKey, 11: S.ShareGroupMetadataKey, 12: S.ShareGroupTargetAssignmentMetadataKey,
        13: S.ShareGroupTargetAssignmentMemberKey, 14: S.ShareGroupCurrentMemberAssignmentKey,
        15: S.ShareGroupStatePartitionMetadataKey}
VALUES = {10: S.ShareGroupMemberMetadataValue, 11: S.ShareGroupMetadataValue,
          12: S.ShareGroupTargetAssignmentMetadataValue, 13: S.ShareGroupTargetAssignmentMemberValue,
          14: S.ShareGroupCurrentMemberAssignmentValue, 15: S.ShareGroupStatePartitionMetadataValue}
_I16 = struct.Struct(">h")


def _key(version: int, group_id: str, member_id: str | None = None) -> bytes:
    fields = {"group_id": group_id} if member_id is None else {"group_id": group_id, "member_id": member_id}
    return bytes(KEYS[version](version=version, **fields).encode(version=version))


def _value(version: int, **fields) -> bytes:
    return bytes(VALUES[version](version=0, **fields).encode(version=0))


def records_of(group: ShareGroup, topic_id: Callable[[str], object]) -> dict[bytes, bytes]:
    """Every record of the group's current state; `topic_id(name)` is None for a gone topic."""
    def by_id(partitions, struct_class) -> list:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        return [struct_class(version=0, topic_id=topic_id(t), partitions=sorted(ps))
                for t, ps in sorted(by_topic.items()) if topic_id(t) is not None]

    current = S.ShareGroupCurrentMemberAssignmentValue.TopicPartitions
    target = S.ShareGroupTargetAssignmentMemberValue.TopicPartition
    info = S.ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo
    gid = group.group_id
    records = {_key(11, gid): _value(11, epoch=group.group_epoch),
               _key(12, gid): _value(12, assignment_epoch=group.assignment_epoch),
               _key(15, gid): _value(15, initialized_topics=[
                   info(version=0, topic_id=topic_id(t), topic_name=t, partitions=sorted(ps))
                   for t, (_, ps) in sorted(group.initialized.items()) if topic_id(t) is not None],
                   deleting_topics=[])}
    for m in group.members.values():
        records[_key(10, gid, m.member_id)] = _value(
            10, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topics))
        records[_key(13, gid, m.member_id)] = _value(
            13, topic_partitions=by_id(group.target.get(m.member_id, frozenset()), target))
        records[_key(14, gid, m.member_id)] = _value(
            14, member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch, state=0,
            assigned_partitions=by_id(m.assigned, current))
    return records


def diff(written: dict[bytes, bytes], records: dict[bytes, bytes]) -> list[tuple[bytes, bytes | None]]:
    """What to append so the log says `records`: changed records, and tombstones for the rest."""
    changed = [(k, v) for k, v in records.items() if written.get(k) != v]
    return changed + [(k, None) for k in written if k not in records]


def replay(key: bytes, value: bytes | None, into: dict[str, dict[bytes, bytes]]) -> bool:
    """Apply one record to `into` ({group id: {key: value}}) if it is a share group's; False if not."""
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
                       now_ms: int) -> ShareGroup | None:
    """The group its records describe (None without its epoch record: it was deleted)."""
    decoded: dict[int, dict[str | None, object]] = {v: {} for v in KEYS}
    for key, value in records.items():
        version = _I16.unpack_from(key)[0]
        member_id = getattr(KEYS[version].decode(key, version=version), "member_id", None)
        decoded[version][member_id] = VALUES[version].decode(value, version=_I16.unpack_from(value)[0])
    if None not in decoded[11]:
        return None
    group = ShareGroup(group_id, now_ms)
    group.group_epoch = decoded[11][None].epoch
    group.assignment_epoch = decoded[12][None].assignment_epoch if None in decoded[12] else 0

    def by_name(topics) -> frozenset[TopicPartition]:
        return frozenset((name, p) for t in topics if (name := topic_name(t.topic_id)) is not None
                         for p in t.partitions)
    for member_id, meta in decoded[10].items():
        current = decoded[14].get(member_id)
        group.put_member(ShareMember(
            member_id, meta.rack_id, meta.client_id, meta.client_host,
            subscribed_topics=frozenset(meta.subscribed_topic_names),
            member_epoch=current.member_epoch if current else 0,
            previous_member_epoch=current.previous_member_epoch if current else -1,
            assigned=by_name(current.assigned_partitions) if current else frozenset()), now_ms)
        if member_id in decoded[13]:
            group.target[member_id] = by_name(decoded[13][member_id].topic_partitions)
    if None in decoded[15]:
        for topic in decoded[15][None].initialized_topics:
            name = topic_name(topic.topic_id)
            if name is not None:
                group.initialized[name] = (topic.topic_id, frozenset(topic.partitions))
    group.written = dict(records)
    return group
