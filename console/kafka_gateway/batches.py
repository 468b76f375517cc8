"""Record sets from Fetch answers, read with kafka.record (v0/v1 message sets and v2 batches,
every compression codec kafka.codec knows: gzip, snappy, lz4, zstd). Where every record of
many batches must be looked at (search, tail), `fast_records` decodes v2 batches with
aiokafka's C record reader instead: measured ~10x faster than kafka.record's pure Python
(benchmarks/message_search.py: a JSON-path scan went from ~90k to ~400k records/s).

`scan_batches` walks a record set batch by batch and lets the caller skip a batch before its
records are decoded: for an uncompressed batch the record bytes are in the record set as
they are, so a search can look for its substring in `raw[start:end]` first (a batch without
it cannot hold a match) and decode only the batches that may. Compressed batches are always
decoded. Control batches (transaction markers) are never records a person wrote: they come
as (info, None), `info.control` naming the marker (COMMIT or ABORT) and `info.producer_id`
its producer, so that the message browser can show them and tell which records they end.
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from aiokafka.record.default_records import DefaultRecordBatch as FastRecordBatch
from kafka.errors import CorruptRecordError
from kafka.record import MemoryRecords
from kafka.record.util import size_of_varint

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
    # Transactions (read_uncommitted browsing): "" for a record outside any transaction, else
    # "committed", "aborted" or "open"; a transaction marker's row has `control` COMMIT or ABORT.
    transaction: str = ""
    control: str = ""
    producer_id: int = -1

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
    first_timestamp: int = -1
    magic: int = 2
    producer_id: int = -1
    transactional: bool = False
    control: str = ""                # "COMMIT" or "ABORT" for a control batch (a transaction marker)
    aborted: bool = False            # read_committed: the batch belongs to an aborted transaction


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


def fast_records(raw: bytes, info: BatchInfo):
    """The records of a v2 batch decoded by aiokafka's C record reader (Cython, ~10x kafka.record's
    pure-Python one: the search's hot path when every record must be looked at). None for
    v0/v1 message sets. Its records lack `size_in_bytes`; `to_consumed(..., batch=info)`
    computes it."""
    if info.magic < 2:
        return None
    return FastRecordBatch(raw[info.start:info.end])


def to_consumed(partition: int, r, codec: int, batch: BatchInfo | None = None) -> ConsumedRecord:
    """A decoded record (kafka.record's, or aiokafka's with its batch header) as a ConsumedRecord."""
    body = getattr(r, "size_in_bytes", None)   # kafka.record's: the body, without its length prefix
    size = record_size(r, batch) if body is None else body + size_of_varint(body)
    return ConsumedRecord(partition, r.offset, r.timestamp, r.timestamp_type or 0, r.key, r.value,
                          tuple(r.headers), size, codec)


def record_size(r, batch: BatchInfo) -> int:
    """A v2 record's size in its batch, from its fields (Kafka's DefaultRecord.sizeInBytes).
    With LogAppendTime the written timestamp delta is unknown; 0 is assumed."""
    timestamp_delta = 0 if r.timestamp_type == 1 else r.timestamp - batch.first_timestamp
    body = 1 + size_of_varint(r.offset - batch.base_offset) + size_of_varint(timestamp_delta)
    for data in (r.key, r.value):
        body += 1 if data is None else size_of_varint(len(data)) + len(data)
    body += size_of_varint(len(r.headers))
    for name, data in r.headers:
        encoded = name.encode("utf-8")
        body += size_of_varint(len(encoded)) + len(encoded) + (1 if data is None else size_of_varint(len(data)) + len(data))
    return body + size_of_varint(body)


def _info(batch, start: int, size: int) -> BatchInfo:
    if batch.magic >= 2:
        return BatchInfo(batch.base_offset, batch.next_offset, start, start + size, batch.compression_type,
                         batch.records_count, batch.max_timestamp, batch.first_timestamp, batch.magic,
                         batch.producer_id, batch.is_transactional, _control_type(batch))
    # v0/v1 message sets: the (wrapper) message's offset is the last inner record's.
    return BatchInfo(-1, batch.base_offset + 1, start, start + size, batch.compression_type, 1, -1, -1, batch.magic)


def _control_type(batch) -> str:
    """COMMIT or ABORT for a control batch (its one record's key says which), else ""."""
    if not batch.is_control_batch:
        return ""
    try:
        marker = next(iter(batch), None)
    except (CorruptRecordError, ValueError, struct.error):
        return "UNKNOWN"
    if marker is None:
        return "UNKNOWN"
    return "ABORT" if marker.abort else "COMMIT" if marker.commit else "UNKNOWN"


def _is_control(batch) -> bool:
    return batch.magic >= 2 and batch.is_control_batch
