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

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafka.errors import CorruptRecordError
from kafka.record import MemoryRecords

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
