"""Helpers over buffers holding concatenated v2 record batches (magic 2).

A batch starts with a fixed 61-byte header (kafka-python's `HEADER_STRUCT`):

    baseOffset q | length i | partitionLeaderEpoch i | magic b | crc I | attributes h |
    lastOffsetDelta i | firstTimestamp q | maxTimestamp q | producerId q |
    producerEpoch h | baseSequence i | recordsCount i

`length` counts the bytes after itself, so a batch occupies `length + 12` bytes.  The
CRC-32C covers everything from `attributes` to the end of the batch, which is why the
broker can stamp `baseOffset` and `partitionLeaderEpoch` without recomputing it.

These functions never copy a batch: they read and patch headers in place with
struct.*_from, because the produce and fetch paths touch every batch.
"""
from __future__ import annotations

import struct
from typing import Iterator, NamedTuple

from kafka.record.default_records import DefaultRecordBase
from kafka.record.util import calc_crc32c

from .errors import CorruptRecordError

HEADER = DefaultRecordBase.HEADER_STRUCT
HEADER_SIZE = HEADER.size                          # 61
LOG_OVERHEAD = DefaultRecordBase.AFTER_LEN_OFFSET  # 12: baseOffset + length
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD      # 49: a header with no records
MAGIC = 2
CRC_OFFSET = DefaultRecordBase.CRC_OFFSET
ATTRIBUTES_OFFSET = DefaultRecordBase.ATTRIBUTES_OFFSET
LEADER_EPOCH_OFFSET = LOG_OVERHEAD
FIRST_TIMESTAMP_OFFSET = ATTRIBUTES_OFFSET + 2 + 4
MAX_TIMESTAMP_OFFSET = FIRST_TIMESTAMP_OFFSET + 8

TIMESTAMP_TYPE_MASK = DefaultRecordBase.TIMESTAMP_TYPE_MASK
TRANSACTIONAL_MASK = DefaultRecordBase.TRANSACTIONAL_MASK
CONTROL_MASK = DefaultRecordBase.CONTROL_MASK
CODEC_MASK = DefaultRecordBase.CODEC_MASK
INT32_MAX = 2**31 - 1

_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")


class BatchHeader(NamedTuple):
    base_offset: int
    length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def timestamp_type(self) -> int:
        """0 = CreateTime, 1 = LogAppendTime."""
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def compression_type(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    @property
    def last_sequence(self) -> int:
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequence numbers wrap from INT32_MAX back to 0, as in Kafka."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def read_header(buf, pos: int = 0) -> BatchHeader:
    """Unpack the batch header at `pos`; raise CorruptRecordError if it is cut short."""
    try:
        return BatchHeader._make(HEADER.unpack_from(buf, pos))
    except struct.error:
        raise CorruptRecordError(f"truncated batch header at position {pos}") from None


def check_header(header: BatchHeader, pos: int, available: int) -> None:
    """Reject a header whose length or magic cannot be a v2 batch of `available` bytes."""
    if header.length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"batch length {header.length} at position {pos} is too small")
    if header.magic != MAGIC:
        raise CorruptRecordError(f"batch magic {header.magic} at position {pos}, expected 2")
    if header.size > available:
        raise CorruptRecordError(
            f"batch at position {pos} claims {header.size} bytes, only {available} remain"
        )


def iter_batches(buf) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each batch; raise CorruptRecordError on a bad one."""
    end = len(buf)
    pos = 0
    while pos < end:
        header = read_header(buf, pos)
        check_header(header, pos, end - pos)
        yield pos, header
        pos += header.size


def whole_batches_size(buf) -> int:
    """Bytes of `buf` taken by whole batches: fetches may end with a partial batch."""
    end = len(buf)
    pos = 0
    while end - pos >= LOG_OVERHEAD:
        (length,) = _INT32.unpack_from(buf, pos + 8)
        if length < MIN_BATCH_LENGTH or pos + LOG_OVERHEAD + length > end:
            break
        pos += LOG_OVERHEAD + length
    return pos


def validate_crc(buf, pos: int, header: BatchHeader) -> None:
    with memoryview(buf) as view:
        # The slice is a view, so the batch is checksummed where it lies.
        crc = calc_crc32c(view[pos + ATTRIBUTES_OFFSET:pos + header.size])
    if crc != header.crc:
        raise CorruptRecordError(
            f"batch at position {pos} has CRC {header.crc:#010x}, computed {crc:#010x}"
        )


def assign_offsets(buf: bytearray, pos: int, base_offset: int, leader_epoch: int) -> None:
    """Stamp the batch's base offset and leader epoch; both lie outside the CRC."""
    _INT64.pack_into(buf, pos, base_offset)
    _INT32.pack_into(buf, pos + LEADER_EPOCH_OFFSET, leader_epoch)


def set_log_append_time(buf: bytearray, pos: int, timestamp_ms: int) -> None:
    """Mark the batch LogAppendTime at `timestamp_ms` and re-sign it.

    Consumers read every record's timestamp from maxTimestamp once the type bit is set,
    so the records themselves stay untouched.
    """
    (attributes,) = _INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)
    _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    _INT64.pack_into(buf, pos + FIRST_TIMESTAMP_OFFSET, timestamp_ms)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, timestamp_ms)
    (length,) = _INT32.unpack_from(buf, pos + 8)
    with memoryview(buf) as view:
        crc = calc_crc32c(view[pos + ATTRIBUTES_OFFSET:pos + LOG_OVERHEAD + length])
    _UINT32.pack_into(buf, pos + CRC_OFFSET, crc)
