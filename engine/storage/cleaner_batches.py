"""What the log cleaner does to one batch (see cleaner.py): read its records (a compressed
batch inflated as a bounded stream), keep the latest record of each key, and re-encode what
is left with the original's offsets, producer fields and codec; a batch left with no record
that holds an active producer's last sequence or epoch stays as an empty batch
(`retains_empty`, `empty_batch`). Pure functions over bytes."""
from __future__ import annotations

import hashlib
import logging
import struct

from kafka.codec import gzip_encode, lz4_encode, snappy_encode, zstd_encode
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import calc_crc32c, encode_varint

from .cleaner_txns import CleanedTransactions
from .control_records import read_marker
from .decompression import inflate
from .errors import CorruptRecordError, StorageError
from .log_config import LONG_MAX
from .producer_state import LastRecord
from .records import (ATTRIBUTES_OFFSET, CODEC_MASK, CONTROL_MASK, CRC_OFFSET, HEADER, HEADER_SIZE, LOG_OVERHEAD,
                      TIMESTAMP_TYPE_MASK, TRANSACTIONAL_MASK, BatchHeader)

log = logging.getLogger(__name__)

DELETE_HORIZON_MASK = 0x40       # batch attribute bit 6 (KIP-534)
_COMPRESSORS = {1: gzip_encode, 2: snappy_encode, 3: lz4_encode, 4: zstd_encode}
_UINT32 = struct.Struct(">I")
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")


def digest(key: bytes) -> bytes:
    """16 bytes per key in the offset map whatever the key's size, as Kafka's SkimpyOffsetMap."""
    return hashlib.md5(key, usedforsecurity=False).digest()


def records_of(data, header: BatchHeader, limit: int, where: str) -> list | None:
    """The batch's records, a compressed one inflated as a bounded stream; None if it cannot
    be read within the bound (it is then kept as it is, never dropped)."""
    if not header.compression_type:
        return list(DefaultRecordBatch(bytes(data)))
    try:
        with memoryview(data) as view:
            body = b"".join(inflate(header.compression_type, view[HEADER_SIZE:header.size], limit))
    except StorageError as exc:
        log.warning("Cleaner keeps the batch at offset %d of %s as it is: %s", header.base_offset, where, exc)
        return None
    plain = bytearray(data[:HEADER_SIZE]) + body   # the same batch, uncompressed, for kafka.record to parse
    _INT16.pack_into(plain, ATTRIBUTES_OFFSET, header.attributes & ~CODEC_MASK)
    _INT32.pack_into(plain, 8, len(plain) - LOG_OVERHEAD)
    return list(DefaultRecordBatch(bytes(plain)))


def delete_horizon(now_ms: int, delete_retention_ms: int) -> int:
    """When a tombstone or marker first kept now may go: now + delete.retention.ms, at most
    Long.MAX (a batch's base timestamp is an int64; a retention near Long.MAX keeps it forever)."""
    return min(now_ms + delete_retention_ms, LONG_MAX)


def filter_batch(data, header: BatchHeader, offset_map: dict[bytes, int], now_ms: int,
                  delete_retention_ms: int, stats, limit: int, where: str) -> bytes | bytearray | None:
    """The data batch with only the records worth keeping, or None if none is."""
    horizon = header.first_timestamp if header.attributes & DELETE_HORIZON_MASK else None
    records = records_of(data, header, limit, where)
    if records is None:
        return bytes(data)
    kept, tombstones = [], 0
    for record in records:
        stats.records_read += 1
        key = record.key
        if key is None:
            continue
        latest = offset_map.get(digest(key))
        if latest is not None and record.offset < latest:
            continue
        if record.value is None:
            if horizon is not None and horizon <= now_ms:
                stats.tombstones_dropped += 1
                continue
            tombstones += 1
        kept.append(record)
    stats.records_retained += len(kept)
    if not kept:
        return None
    if tombstones:
        if horizon is None:
            horizon = delete_horizon(now_ms, delete_retention_ms)  # first time kept: start the clock
        stats.kept_tombstones_until(horizon)
        if len(kept) == len(records) and header.attributes & DELETE_HORIZON_MASK:
            return bytes(data)
        return encode_batch(kept, header, delete_horizon=horizon)
    if len(kept) == len(records):
        return bytes(data)
    return encode_batch(kept, header, delete_horizon=None)


def filter_marker(data, header: BatchHeader, txns: CleanedTransactions, now_ms: int, delete_retention_ms: int,
                  stats) -> bytes | bytearray | None:
    """A COMMIT/ABORT marker kept as it is while its transaction still has data before it;
    once it has none, stamped with a delete horizon (now + delete.retention.ms) and dropped
    by the first cleaning past that horizon (Kafka's rule, cleaner_txns.py)."""
    try:
        marker = read_marker(data, 0, header)
    except CorruptRecordError:
        return None   # an empty control batch: nothing left to tell consumers
    if not txns.on_marker(header, marker):
        return bytes(data)
    horizon = header.first_timestamp if header.attributes & DELETE_HORIZON_MASK else None
    if horizon is not None and horizon <= now_ms:
        return None
    if horizon is not None:
        stats.kept_tombstones_until(horizon)
        return bytes(data)
    horizon = delete_horizon(now_ms, delete_retention_ms)
    stats.kept_tombstones_until(horizon)
    return encode_batch(list(DefaultRecordBatch(bytes(data))), header, delete_horizon=horizon)


def retains_empty(header: BatchHeader, last_records: dict[int, LastRecord]) -> bool:
    """Whether the batch must stay, emptied, when it keeps no record (Kafka's
    isBatchLastRecordOfProducer, BatchRetention.RETAIN_EMPTY): it holds the last data offset
    of an active producer (so its last sequence), or, for a producer whose last entry is a
    marker, it is that marker (so its epoch). Producers that expired lose theirs."""
    if not header.has_producer_id:
        return False
    last = last_records.get(header.producer_id)
    if last is None:
        return False
    if last.last_data_offset is not None:
        return header.last_offset == last.last_data_offset
    return header.is_control and header.producer_epoch == last.producer_epoch


def empty_batch(original: BatchHeader) -> bytearray:
    """`original`'s header alone, zero records (Kafka's DefaultRecordBatch.writeEmptyHeader):
    its base offset, last offset delta, leader epoch, producer id, epoch and base sequence,
    timestamp type and transactional and control bits; uncompressed, both timestamps its
    max timestamp. kafka.record's builder sets neither the offsets nor the control and
    timestamp-type bits of a batch without records, so the header is packed here."""
    attributes = original.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK)
    return _seal(bytearray(HEADER_SIZE), original, attributes, original.max_timestamp, original.max_timestamp, 0)


def encode_batch(records: list, original: BatchHeader, *, delete_horizon: int | None) -> bytearray:
    """A v2 batch of `records` (kafka.record records) with `original`'s base offset, last
    offset delta, leader epoch, producer fields, timestamp type and codec.

    kafka.record's builder always bases timestamps on the first record; a delete horizon
    must be the base timestamp instead, so the batch is encoded here.
    """
    base_ts = delete_horizon if delete_horizon is not None else records[0].timestamp
    body = bytearray()
    for record in records:
        encoded = bytearray(b"\x00")  # record attributes: unused
        put = encoded.append
        encode_varint(record.timestamp - base_ts, put)
        encode_varint(record.offset - original.base_offset, put)
        for field in (record.key, record.value):
            if field is None:
                encode_varint(-1, put)
            else:
                encode_varint(len(field), put)
                encoded += field
        encode_varint(len(record.headers), put)
        for name, value in record.headers:
            name = name.encode()
            encode_varint(len(name), put)
            encoded += name
            if value is None:
                encode_varint(-1, put)
            else:
                encode_varint(len(value), put)
                encoded += value
        encode_varint(len(encoded), body.append)
        body += encoded
    codec = original.compression_type
    if codec:
        body = _COMPRESSORS[codec](bytes(body))
    log_append_time = original.timestamp_type == 1
    attributes = codec | (original.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK))
    if delete_horizon is not None:
        attributes |= DELETE_HORIZON_MASK
    max_ts = original.max_timestamp if log_append_time else max(r.timestamp for r in records)
    return _seal(bytearray(HEADER_SIZE) + body, original, attributes, base_ts, max_ts, len(records))


def _seal(buf: bytearray, original: BatchHeader, attributes: int, base_ts: int, max_ts: int,
          count: int) -> bytearray:
    """Pack the header of `buf` (header space, then the records) with `original`'s offsets
    and producer fields, and sign it."""
    HEADER.pack_into(buf, 0, original.base_offset, len(buf) - LOG_OVERHEAD, original.partition_leader_epoch, 2, 0,
                     attributes, original.last_offset_delta, base_ts, max_ts, original.producer_id,
                     original.producer_epoch, original.base_sequence, count)
    with memoryview(buf) as view:
        _UINT32.pack_into(buf, CRC_OFFSET, calc_crc32c(view[ATTRIBUTES_OFFSET:]))
    return buf
