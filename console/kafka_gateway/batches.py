"""Record sets from Fetch answers, read with kafka.record (v0/v1 message sets and v2 batches,
every compression codec kafka.codec knows: gzip, snappy, lz4, zstd).

`scan_batches` walks a record set batch by batch and lets the caller skip a batch before its
records are decoded: for an uncompressed batch the record bytes are in the record set as
they are, so a search can look for its substring in `raw[start:end]` first (a batch without
it cannot hold a match) and decode only the batches that may. Compressed batches are always
decoded. Control batches (transaction markers) are never records a person wrote, so they
are skipped.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafka.errors import CorruptRecordError
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import decode_varint

NO_COMPRESSION = 0
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime", -1: "NoTimestamp", None: "NoTimestamp"}


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """One record as the log holds it: bytes, not yet deserialized."""

    partition: int
    offset: int
    timestamp: int
    timestamp_type: int              # 0 CreateTime, 1 LogAppendTime
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    size: int                        # serialized size of the record inside its batch
    codec: int = 0

    @property
    def timestamp_type_name(self) -> str:
        return TIMESTAMP_TYPES.get(self.timestamp_type, "CreateTime")


@dataclass(slots=True)
class BatchInfo:
    """What a batch header says, before any record is decoded."""

    base_offset: int
    next_offset: int
    start: int                       # byte range of the whole batch inside the record set
    end: int
    compression: int
    records_count: int
    max_timestamp: int


def scan_batches(raw: bytes, *, from_offset: int, want: Callable[[BatchInfo], bool] | None = None,
                 ) -> Iterator[tuple[BatchInfo, object | None]]:
    """Yield (batch header, kafka.record batch) for each whole batch of `raw` that ends after
    `from_offset`; the batch is None for control batches and for batches `want` refuses.
    Iterating a batch decompresses it and decodes its records (the caller skips those below
    `from_offset`: a fetch starts at the batch holding the offset asked for)."""
    records = MemoryRecords(raw)
    pos = 0
    while True:
        try:
            batch = records.next_batch()
        except CorruptRecordError:
            return
        if batch is None:
            return
        size = batch.size_in_bytes
        info = _info(batch, pos, size)
        pos += size
        if info.next_offset <= from_offset:
            continue
        if _is_control(batch) or (want is not None and not want(info)):
            yield info, None
            continue
        yield info, batch


def records_holding(batch, needle: bytes) -> list | None:
    """The records of a v2 batch whose bytes hold `needle`, decoded by kafka.record; the others
    are stepped over by their length prefix, never decoded. None for older formats (the
    caller decodes those whole). A record that holds the needle somewhere (key, value, a
    header, or straddling its neighbour) is a candidate; the caller's filter decides.

    This is the search hot path for batches that do contain the substring: finding the
    record boundaries costs one varint per record, against ~10 for a full decode. It reaches
    into DefaultRecordBatch (`_maybe_uncompress`, `_buffer`, `_pos`, `_read_msg`): kafka-python
    is pinned in requirements.txt, and tests compare this with a full decode for every codec."""
    if not isinstance(batch, DefaultRecordBatch):
        return None
    batch._maybe_uncompress()
    buffer, first = batch._buffer, batch._pos
    hit = buffer.find(needle, first)
    if hit < 0:
        return []
    starts = []
    pos = first
    for _ in range(batch.records_count):
        starts.append(pos)
        length, pos = decode_varint(buffer, pos)
        pos += length
    wanted = []
    size = len(needle)
    while hit >= 0:
        index = bisect_right(starts, hit) - 1
        if not wanted or wanted[-1] != index:
            wanted.append(index)
        # Next occurrence after this record's start: one record is decoded once.
        hit = buffer.find(needle, max(hit + 1, starts[index + 1] if index + 1 < len(starts) else hit + size))
    found = []
    for index in wanted:
        batch._pos = starts[index]
        found.append(batch._read_msg())
    return found


def to_consumed(partition: int, r, codec: int) -> ConsumedRecord:
    """A kafka.record record as a ConsumedRecord (only for records that are kept)."""
    return ConsumedRecord(partition, r.offset, r.timestamp, r.timestamp_type or 0, r.key, r.value,
                          tuple(r.headers), r.size_in_bytes, codec)


def _info(batch, start: int, size: int) -> BatchInfo:
    if batch.magic >= 2:
        return BatchInfo(batch.base_offset, batch.next_offset, start, start + size, batch.compression_type,
                         batch.records_count, batch.max_timestamp)
    # v0/v1 message sets: the (wrapper) message's offset is the last inner record's.
    return BatchInfo(-1, batch.base_offset + 1, start, start + size, batch.compression_type, 1, -1)


def _is_control(batch) -> bool:
    return batch.magic >= 2 and batch.is_control_batch
