"""Every record of a v2 batch, parsed against its header and Kafka's record format before the
batch is taken: the part of Kafka's LogValidator (with DefaultRecord.readFrom) that reads the
records themselves (the format and its rules: record_stream.py).

A batch is taken only if its records are exactly `recordsCount`, record i has offsetDelta i
(so the header's lastOffsetDelta, which moves the log end offset, is what the records hold),
and every record parses: its key, value, header count, header keys and values all inside its
length, its fields ending exactly there. A lie is INVALID_RECORD, as Kafka answers it.

Who parses, so that it costs little (benchmarks/record_checks.py, docs/engine/reliability.md):
- aiokafka's C record reader (Cython) parses a whole batch, every field of every record, at
  ~0.07 us a record (~0.13 with the timestamp check of a CreateTime topic). An uncompressed batch (the produce hot path) goes to it as it is; a
  compressed one once inflated, if it inflates to at most FAST_PATH_BYTES (every batch
  librdkafka or the Java client builds by default).
- A batch that inflates further is never held whole: its records are read as they are
  inflated (decompression.py bounds the total), each run of whole records checked in place
  by the C reader behind a header rewritten for it, and a record bigger than ASSEMBLE_BYTES
  read field by field in Python (RecordStream), so memory stays at FAST_PATH_BYTES plus a
  chunk (plus, for a big record, one copy of what was pending when it began).
- When the C reader refuses, RecordStream reads the same bytes again to say which rule broke.

Where the two readers differ (the C reader is more lenient): it takes a varint longer than
5 bytes, and a record attributes byte with its top bit set when the shifted fields happen to
line up; RecordStream refuses both, as Kafka's reader does the first.

A client's CreateTime records are also checked against the topic's
message.timestamp.before/after.max.ms (`timestamps`: the oldest and newest allowed), as in
Kafka: every record outside is listed, and the batch is INVALID_TIMESTAMP (NO_TIMESTAMP, -1, passes).
Pure computation over buffers: no I/O, not shared between threads.
"""
from __future__ import annotations

from itertools import chain
from typing import Iterator

from aiokafka.errors import CorruptRecordException
from aiokafka.record.default_records import DefaultRecordBatch as FastRecordBatch

from .decompression import inflate
from .errors import InvalidRecordError, InvalidTimestampError
from .record_stream import MIN_RECORD_LENGTH, VARINT_BYTES, RecordStream
from .records import CODEC_MASK, HEADER, HEADER_SIZE, MIN_BATCH_LENGTH, BatchHeader

FAST_PATH_BYTES = 1 << 20
ASSEMBLE_BYTES = 1 << 20
_REFUSED = (CorruptRecordException, ValueError, IndexError)   # the C reader's (UnicodeDecodeError is a ValueError)


def check_records(buf, position: int, header: BatchHeader, limit: int, *,
                  timestamps: tuple[int, int] | None = None) -> None:
    """Raise InvalidRecordError unless the records of the batch at `position` match its header
    and parse; CorruptRecordError if a compressed batch does not inflate (or has bytes after
    its compressed stream); InvalidTimestampError if a record's timestamp is outside
    `timestamps` (oldest, newest). `limit`: the most a batch may inflate to."""
    with memoryview(buf) as view:
        if not header.compression_type:
            _check_group(bytes(view[position:position + header.size]), header, first_index=0,
                         count=header.records_count, timestamps=timestamps)
            return
        plain = bytearray(view[position:position + HEADER_SIZE])
        compressed = bytes(view[position + HEADER_SIZE:position + header.size])
    chunks = inflate(header.compression_type, compressed, limit)
    for chunk in chunks:
        plain += chunk
        if len(plain) > HEADER_SIZE + FAST_PATH_BYTES:   # too big to hold: read as it inflates
            _check_streamed(plain, chunks, header, timestamps)
            return
    _group_header(plain, header, len(plain) - HEADER_SIZE, header.records_count)
    _check_group(plain, header, first_index=0, count=header.records_count, timestamps=timestamps)


def _check_group(batch, header: BatchHeader, *, first_index: int, count: int,
                 timestamps: tuple[int, int] | None = None) -> None:
    """The C reader over `batch`, an uncompressed batch of the records first_index ..
    first_index + count - 1; if it refuses, RecordStream reads them again to say why."""
    stamps = None
    try:
        if timestamps is None:
            offsets = [record.offset for record in FastRecordBatch(batch)]
        else:     # one pass, two lists: the cheapest way to read both (about 0.03 us a record more)
            offsets, stamps = [], []
            add_offset, add_stamp = offsets.append, stamps.append
            for record in FastRecordBatch(batch):
                add_offset(record.offset)
                add_stamp(record.timestamp)
        refused = ""
    except _REFUSED as exc:
        # Only its text is kept: its traceback would keep the reader, and the reader the buffer.
        offsets, refused = None, str(exc)
    base = header.base_offset + first_index
    if offsets is not None and len(offsets) == count and offsets == list(range(base, base + count)):
        if stamps is not None:
            _check_timestamps(stamps, first_index, timestamps)
        return
    # The C reader stops at recordsCount: a count that lies short, or an offset, shows here.
    RecordStream(iter([bytes(batch[HEADER_SIZE:])]), first_index).check(first_index + count)
    raise InvalidRecordError(f"the records of the batch do not parse: {refused}" if refused else
                             "the records' offsets do not count up from the batch's base offset")


def _check_timestamps(stamps: list[int], first_index: int, bounds: tuple[int, int]) -> None:
    oldest, newest = bounds
    if stamps and min(stamps) >= oldest and max(stamps) <= newest:
        return
    refused = [(first_index + i, f"Timestamp {stamp} of message with offset {first_index + i} is out of range. "
                                 f"The timestamp should be within [{oldest}, {newest}]")
               for i, stamp in enumerate(stamps) if stamp != -1 and not oldest <= stamp <= newest]
    if refused:
        raise InvalidTimestampError(refused)


def _check_streamed(pending: bytearray, chunks: Iterator[bytes], header: BatchHeader,
                    timestamps: tuple[int, int] | None = None) -> None:
    """The records of a big inflated batch, as they come (`pending`, a batch header and the
    first records, then `chunks`): each run of whole records is checked in place by the C
    reader, behind a header rewritten for it; a record over ASSEMBLE_BYTES is read by
    RecordStream. Memory: `pending`, at most ASSEMBLE_BYTES and a chunk."""
    expected, index = header.records_count, 0
    while True:
        end, count, next_length = _complete_records(pending, HEADER_SIZE, index)
        if count:
            _group_header(pending, header, end - HEADER_SIZE, count)
            with memoryview(pending) as view, view[:end] as group:
                _check_group(group, header, first_index=index, count=count, timestamps=timestamps)
            del pending[HEADER_SIZE:end]
            index += count
            if index > expected:
                raise InvalidRecordError(f"batch header says {expected} records, it holds more")
        if next_length is not None and next_length > ASSEMBLE_BYTES:
            with memoryview(pending) as view:
                start = bytes(view[HEADER_SIZE:])
            del pending[HEADER_SIZE:]
            stream = RecordStream(chain([start], chunks), index)
            del start
            stream.read_record()
            if timestamps is not None:
                _check_timestamps([header.first_timestamp + stream.timestamp_delta], index, timestamps)
            index += 1
            pending += stream.leftover()
            continue
        chunk = next(chunks, None)
        if chunk is None:
            break
        pending += chunk
    if len(pending) > HEADER_SIZE:   # raises: a record cut short
        RecordStream(iter([bytes(pending[HEADER_SIZE:])]), index).check(expected)
    if index != expected:
        raise InvalidRecordError(f"batch header says {expected} records, it holds {index}")


def _complete_records(buf: bytearray, start: int, first_index: int) -> tuple[int, int, int | None]:
    """(end of the last whole record, how many whole records, the length of the next one if
    its length varint is complete) in `buf`, whose records start at `start`."""
    pos, count = start, 0
    size = len(buf)
    while pos < size:
        raw, after = buf[pos], pos + 1
        if raw & 0x80:
            raw = shift = 0
            for after in range(pos, min(pos + VARINT_BYTES, size)):
                raw |= (buf[after] & 0x7F) << shift
                shift += 7
                if not buf[after] & 0x80:
                    after += 1
                    break
            else:
                if pos + VARINT_BYTES <= size:
                    raise InvalidRecordError(f"record {first_index + count}'s length is a varint longer than "
                                             f"{VARINT_BYTES} bytes")
                return pos, count, None
        length = (raw >> 1) ^ -(raw & 1)
        if length < MIN_RECORD_LENGTH:
            raise InvalidRecordError(f"record {first_index + count} has length {length}")
        if after + length > size:
            return pos, count, length
        pos = after + length
        count += 1
    return pos, count, None


def _group_header(buf: bytearray, header: BatchHeader, records_bytes: int, count: int) -> None:
    """Rewrite the header at the start of `buf` for the C reader: uncompressed, `count` records."""
    HEADER.pack_into(buf, 0, *header._replace(length=MIN_BATCH_LENGTH + records_bytes,
                                              attributes=header.attributes & ~CODEC_MASK, records_count=count))
