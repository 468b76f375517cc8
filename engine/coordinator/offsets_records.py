"""Records of `__consumer_offsets`, in Kafka's format, so its tools can read our log.

Each record's key and value start with an int16 version; the rest follows Kafka's
group-coordinator schemas (OffsetCommitKey/Value, GroupMetadataKey/Value), encoded
with the classic protocol types (int16-length strings, int32-length bytes and arrays;
v4 values are "flexible": compact lengths and tagged fields):

    OffsetCommitKey   (key v0/v1)  group, topic, partition int32
    GroupMetadataKey  (key v2)     group
    OffsetCommitValue (v0-4)       offset int64, leaderEpoch int32 (v3+), metadata,
                                   commitTimestamp int64, expireTimestamp int64 (v1 only)
    GroupMetadataValue (v0-4)      protocolType, generation int32, protocol?, leader?,
                                   currentStateTimestamp int64 (v2+), members[
                                     memberId, groupInstanceId? (v3+), clientId, clientHost,
                                     rebalanceTimeout int32 (v1+), sessionTimeout int32,
                                     subscription bytes, assignment bytes]

A null value is a tombstone: the offset or the group was deleted. We write key v1/v2 and
value v3 (v1 when an offset carries an expire timestamp, as Kafka does), and read every
version. kafka-python has no codec for these (they are not wire messages), hence struct.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from kafka.errors import CorruptRecordException
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.cluster import slices
from engine.coordinator.record_types import Reader, encode_string
from engine.storage.errors import RecordTooLargeError
from engine.storage.log import Log
from engine.storage.records import LOG_OVERHEAD, BatchHeader, read_header

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3
_FLEXIBLE = 4

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass
class OffsetAndMetadata:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1      # only from OffsetCommit v2-4's retention_time_ms
    # Where the record lies in `__consumer_offsets` (-1: not known), not part of it: a
    # transaction's offsets replace a committed one only if written after it (Kafka's recordOffset).
    record_offset: int = field(default=-1, compare=False)


@dataclass
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass
class GroupRecord:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: list[MemberRecord] = field(default_factory=list)


# --- encoding -----------------------------------------------------------------------------

def _bytes(value: bytes) -> bytes:
    return _I32.pack(len(value)) + bytes(value)


def offset_key(group: str, topic: str, partition: int) -> bytes:
    return _I16.pack(OFFSET_COMMIT_KEY_VERSION) + encode_string(group) + encode_string(topic) + _I32.pack(partition)


def group_key(group: str) -> bytes:
    return _I16.pack(GROUP_METADATA_KEY_VERSION) + encode_string(group)


def offset_value(value: OffsetAndMetadata) -> bytes:
    if value.expire_timestamp >= 0:
        return (_I16.pack(1) + _I64.pack(value.offset) + encode_string(value.metadata)
                + _I64.pack(value.commit_timestamp) + _I64.pack(value.expire_timestamp))
    return (_I16.pack(OFFSET_COMMIT_VALUE_VERSION) + _I64.pack(value.offset) + _I32.pack(value.leader_epoch)
            + encode_string(value.metadata) + _I64.pack(value.commit_timestamp))


def group_value(record: GroupRecord) -> bytes:
    out = [_I16.pack(GROUP_METADATA_VALUE_VERSION), encode_string(record.protocol_type), _I32.pack(record.generation),
           encode_string(record.protocol), encode_string(record.leader), _I64.pack(record.current_state_timestamp),
           _I32.pack(len(record.members))]
    for m in record.members:
        out += [encode_string(m.member_id), encode_string(m.group_instance_id), encode_string(m.client_id),
                encode_string(m.client_host),
                _I32.pack(m.rebalance_timeout_ms), _I32.pack(m.session_timeout_ms), _bytes(m.subscription),
                _bytes(m.assignment)]
    return b"".join(out)


def build_batch(records: list[tuple[bytes, bytes | None]], timestamp_ms: int, *, producer_id: int = -1,
                producer_epoch: int = -1, base_sequence: int = -1) -> bytearray:
    """One uncompressed v2 batch of (key, value) records; the log assigns the offsets. With a
    producer id, a transactional batch (TxnOffsetCommit's records)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=producer_id >= 0,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=base_sequence, batch_size=2**31 - 1)
    for i, (key, value) in enumerate(records):
        builder.append(i, timestamp_ms, key, value, headers=[])
    return builder.build()


async def build_batch_in_slices(records: Iterable[tuple[bytes, bytes | None]], timestamp_ms: int, *, max_bytes: int,
                                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1
                                ) -> bytearray:
    """build_batch in slices of the event loop (a commit may name thousands of partitions);
    RecordTooLargeError as soon as the batch outgrows `max_bytes` (the partition's
    max.message.bytes), so that a commit too large to store is never built whole."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=producer_id >= 0,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=base_sequence, batch_size=2**31 - 1)
    with slices.Pacer() as pacer:
        for i, (key, value) in enumerate(records):
            builder.append(i, timestamp_ms, key, value, headers=[])
            if builder.size() > max_bytes:
                raise RecordTooLargeError(f"the first {i + 1} records of the batch already exceed "
                                          f"max.message.bytes={max_bytes}")
            await pacer.tick()
    return builder.build()


BATCH_OVERHEAD = 61     # a v2 batch's header
RECORD_OVERHEAD = 32    # the most a record's varint lengths, deltas and attributes take


def record_bytes(key: bytes, value: bytes | None) -> int:
    """The most bytes a record of `key` and `value` takes in a batch."""
    return RECORD_OVERHEAD + len(key) + (len(value) if value is not None else 0)


def batches_within(records: list[tuple[bytes, bytes | None]], max_bytes: int) -> list[list]:
    """`records` in order, cut into runs that each fit in one batch of `max_bytes`; a record
    too large for any batch is a run of its own (its write fails)."""
    runs: list[list] = [[]]
    size = BATCH_OVERHEAD
    for key, value in records:
        need = record_bytes(key, value)
        if runs[-1] and size + need > max_bytes:
            runs.append([])
            size = BATCH_OVERHEAD
        runs[-1].append((key, value))
        size += need
    return runs


# --- decoding -----------------------------------------------------------------------------

def decode_key(data: bytes) -> OffsetKey | GroupKey | None:
    """The key of a `__consumer_offsets` record; None for record types we do not use."""
    reader = Reader(data)
    version = reader.int16()
    if version in (0, 1):
        return OffsetKey(reader.string(), reader.string(), reader.int32())
    if version == 2:
        return GroupKey(reader.string())
    return None


def decode_offset_value(data: bytes) -> OffsetAndMetadata:
    version = _I16.unpack_from(data)[0]
    reader = Reader(data, flexible=version >= _FLEXIBLE)
    reader.pos = 2
    offset = reader.int64()
    leader_epoch = reader.int32() if version >= 3 else -1
    metadata = reader.string() or ""
    commit_timestamp = reader.int64()
    expire_timestamp = reader.int64() if version == 1 else -1
    return OffsetAndMetadata(offset, leader_epoch, metadata, commit_timestamp, expire_timestamp)


def decode_group_value(data: bytes) -> GroupRecord:
    version = _I16.unpack_from(data)[0]
    reader = Reader(data, flexible=version >= _FLEXIBLE)
    reader.pos = 2
    record = GroupRecord(protocol_type=reader.string() or "", generation=reader.int32(), protocol=reader.string(),
                         leader=reader.string(), current_state_timestamp=reader.int64() if version >= 2 else -1)
    for _ in range(max(reader.array_length(), 0)):
        member_id = reader.string()
        instance_id = reader.string() if version >= 3 else None
        client_id, client_host = reader.string(), reader.string()
        rebalance_timeout = reader.int32() if version >= 1 else -1
        session_timeout = reader.int32()
        subscription, assignment = reader.bytes(), reader.bytes()
        reader.skip_tags()
        if rebalance_timeout < 0:
            rebalance_timeout = session_timeout
        record.members.append(MemberRecord(member_id, instance_id, client_id, client_host, rebalance_timeout,
                                           session_timeout, subscription, assignment))
    reader.skip_tags()
    return record


# What a record that does not follow the schemas raises while decoded.
DECODE_ERRORS = (struct.error, ValueError, IndexError, TypeError)


def read_log(log: Log, start_offset: int | None = None, *,
             on_undecodable: Callable[[int, str], None] | None = None
             ) -> Iterator[tuple[int, bytes, bytes | None]]:
    """(offset, key, value) of every keyed record from `start_offset` (the log start) on.

    Reads through the Log API batch by batch; gaps left by compaction are skipped. A batch
    whose records cannot be parsed is passed to `on_undecodable(base offset, reason)` and
    skipped (without a callback, it raises).
    """
    for header, records in read_batches(log, start_offset, on_undecodable=on_undecodable):
        if not header.is_control:
            yield from records


def read_batches(log: Log, start_offset: int | None = None, *,
                 on_undecodable: Callable[[int, str], None] | None = None
                 ) -> Iterator[tuple[BatchHeader, list[tuple[int, bytes, bytes | None]]]]:
    """Every batch from `start_offset` on, with its keyed (offset, key, value) records; control
    batches too (their key says COMMIT or ABORT: `control_type`), so that a loader can apply
    transactional records only once their COMMIT marker follows."""
    offset = log.log_start_offset if start_offset is None else start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).read()
        pos = 0
        while pos + LOG_OVERHEAD <= len(data):
            header = read_header(data, pos)
            if pos + header.size > len(data):
                break
            try:
                parsed = [(r.offset, r.key, r.value) for r in DefaultRecordBatch(data[pos:pos + header.size])]
            except (CorruptRecordException, *DECODE_ERRORS) as exc:
                if on_undecodable is None:
                    raise
                on_undecodable(header.base_offset, f"batch: {type(exc).__name__}: {exc}")
                parsed = []
            yield header, [(o, k, v) for o, k, v in parsed if o >= offset and k is not None]
            offset = header.next_offset
            pos += header.size
        if pos == 0:  # the read held no complete batch: nothing more below the log end
            return


def control_type(key: bytes) -> int:
    """A control record's type: 0 ABORT, 1 COMMIT (key: int16 version, int16 type)."""
    return _I16.unpack_from(key, 2)[0]
