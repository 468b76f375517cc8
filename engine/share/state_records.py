"""The records of `__share_group_state`, in Kafka's formats (engine/coordinator/record_specs/):

    key v0 ShareSnapshot (group, topic id, partition) -> snapshot epoch, state epoch,
           leader epoch, start offset, state batches: the share partition's whole state
    key v1 ShareUpdate   (group, topic id, partition) -> snapshot epoch, leader epoch,
           start offset (-1: unchanged), state batches: a change on top of the last snapshot

A null value (tombstone) under either key deletes the share partition's state
(DeleteShareGroupState). Each key and value starts with its int16 version, as kafka-python's
ApiData writes them.
"""
from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

from engine.coordinator import record_specs as S
from engine.share.state import ShareState, StateBatch

SNAPSHOT, UPDATE = 0, 1
_I16 = struct.Struct(">h")
Key = tuple[str, uuid.UUID, int]          # group id, topic id, partition


@dataclass
class StateRecord:
    kind: int                             # SNAPSHOT or UPDATE
    key: Key
    snapshot_epoch: int = 0
    state: ShareState | None = None       # None: a tombstone


def snapshot_key(key: Key) -> bytes:
    group_id, topic_id, partition = key
    return bytes(S.ShareSnapshotKey(version=SNAPSHOT, group_id=group_id, topic_id=topic_id,
                                    partition=partition).encode(version=SNAPSHOT))


def update_key(key: Key) -> bytes:
    group_id, topic_id, partition = key
    return bytes(S.ShareUpdateKey(version=UPDATE, group_id=group_id, topic_id=topic_id,
                                  partition=partition).encode(version=UPDATE))


def snapshot_value(snapshot_epoch: int, state: ShareState) -> bytes:
    batch = S.ShareSnapshotValue.StateBatch
    return bytes(S.ShareSnapshotValue(
        version=0, snapshot_epoch=snapshot_epoch, state_epoch=state.state_epoch, leader_epoch=state.leader_epoch,
        start_offset=state.start_offset,
        state_batches=[batch(version=0, first_offset=b.first_offset, last_offset=b.last_offset,
                             delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                       for b in state.batches]).encode(version=0))


def update_value(snapshot_epoch: int, leader_epoch: int, start_offset: int, batches: list[StateBatch]) -> bytes:
    batch = S.ShareUpdateValue.StateBatch
    return bytes(S.ShareUpdateValue(
        version=0, snapshot_epoch=snapshot_epoch, leader_epoch=leader_epoch, start_offset=start_offset,
        state_batches=[batch(version=0, first_offset=b.first_offset, last_offset=b.last_offset,
                             delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                       for b in batches]).encode(version=0))


def decode(key: bytes, value: bytes | None) -> StateRecord | None:
    """A record of `__share_group_state`; None for a key type it does not hold."""
    kind = _I16.unpack_from(key)[0]
    if kind not in (SNAPSHOT, UPDATE):
        return None
    key_class, value_class = (S.ShareSnapshotKey, S.ShareSnapshotValue) if kind == SNAPSHOT else \
        (S.ShareUpdateKey, S.ShareUpdateValue)
    decoded_key = key_class.decode(key, version=kind)
    record = StateRecord(kind, (decoded_key.group_id, decoded_key.topic_id, decoded_key.partition))
    if value is None:
        return record
    data = value_class.decode(value, version=_I16.unpack_from(value)[0])
    record.snapshot_epoch = data.snapshot_epoch
    batches = [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
               for b in data.state_batches]
    record.state = ShareState(start_offset=data.start_offset,
                              state_epoch=data.state_epoch if kind == SNAPSHOT else -1,
                              leader_epoch=data.leader_epoch, batches=batches)
    return record
