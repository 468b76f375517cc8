"""Record sets from Fetch answers, read with kafka.record (v0/v1 message sets and v2 batches,
every compression codec kafka.codec knows: gzip, snappy, lz4, zstd). Where every record of
many batches must be looked at (search, tail), `fast_records` decodes v2 batches with
aiokafka's C record reader instead: measured ~10x faster than kafka.record's pure Python
(benchmarks/message_search.py: a JSON-path scan went from ~90k to ~400k records/s).

A batch that stops decoding part way (a corrupt record on disk, a codec that fails) never
breaks a page: its records decode up to the bad one, and the rest of the batch comes as one
`UndecodableRecord` naming its offsets and why, which `to_consumed` turns into a
ConsumedRecord with `undecodable` set (the message browser shows it as such).

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
    undecodable: str = ""            # why the records from `offset` on could not be decoded ("" when they were)

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


@dataclass(frozen=True, slots=True)
class UndecodableRecord:
    """The rest of a batch from `offset` (to `last_offset`), which did not decode; it reads as
    a record with no key, value or headers, so filters and pages take it as they are."""

    offset: int
    last_offset: int
    reason: str
    timestamp: int = -1
    timestamp_type: int = 0
    key: None = None
    value: None = None
    headers: tuple = ()


class DecodedRecords:
    """A batch's records (kafka.record's or aiokafka's decoder), iterated once; if decoding
    stops part way, an UndecodableRecord for the rest, and nothing is raised."""

    __slots__ = ("_batch", "_info", "_from_offset")

    def __init__(self, batch, info: BatchInfo, from_offset: int = -1) -> None:
        self._batch, self._info, self._from_offset = batch, info, from_offset

    def __iter__(self):
        next_offset = self._info.base_offset
        try:
            for record in self._batch:
                next_offset = record.offset + 1
                yield record
        except Exception:  # noqa: BLE001 - kafka.record and the codecs raise many types on corrupt bytes
            last = self._info.next_offset - 1
            # A read from inside the undecodable part names the offset it asked for.
            first = self._from_offset if next_offset < self._from_offset <= last else next_offset
            why = ("its batch does not decompress" if self._info.compression and next_offset == self._info.base_offset
                   else "its bytes do not follow Kafka's record format")
            yield UndecodableRecord(first, last, why, self._info.max_timestamp)


def scan_batches(raw: bytes, *, from_offset: int, want: Callable[[BatchInfo], bool] | None = None,
                 ) -> Iterator[tuple[BatchInfo, DecodedRecords | None]]:
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
        yield info, DecodedRecords(batch, info, from_offset)


def fast_records(raw: bytes, info: BatchInfo):
    """The records of a v2 batch decoded by aiokafka's C record reader (Cython, ~10x kafka.record's
    pure-Python one: the search's hot path when every record must be looked at). None for
    v0/v1 message sets. Its records lack `size_in_bytes`; `to_consumed(..., batch=info)`
    computes it."""
    if info.magic < 2:
        return None
    try:
        return DecodedRecords(FastRecordBatch(raw[info.start:info.end]), info)
    except Exception:  # noqa: BLE001 - a header the C reader refuses: kafka.record's batch says why
        return None


def to_consumed(partition: int, r, codec: int, batch: BatchInfo | None = None) -> ConsumedRecord:
    """A decoded record (kafka.record's, or aiokafka's with its batch header) as a ConsumedRecord."""
    if isinstance(r, UndecodableRecord):
        span = f"offset {r.offset}" if r.last_offset <= r.offset else f"offsets {r.offset}-{r.last_offset}"
        return ConsumedRecord(partition, r.offset, r.timestamp, 0, None, None, (), 0, codec,
                              undecodable=f"The record at {span} could not be decoded: {r.reason}.")
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
    """COMMIT or ABORT for a control batch (its one record's key says which), else "". A
    control batch without its record is a marker compaction emptied (the log keeps its header
    for the producer's state, as Kafka's cleaner does): no marker to show, so ""."""
    if not batch.is_control_batch:
        return ""
    try:
        marker = next(iter(batch), None)
    except (CorruptRecordError, ValueError, struct.error):
        return "UNKNOWN"
    if marker is None:
        return ""
    return "ABORT" if marker.abort else "COMMIT" if marker.commit else "UNKNOWN"


def _is_control(batch) -> bool:
    return batch.magic >= 2 and batch.is_control_batch
