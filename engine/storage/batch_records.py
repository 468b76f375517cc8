"""Checks that a v2 batch's header tells the truth about its records: the part of Kafka's
LogValidator that reads the records themselves.

Inside a batch (after the 61-byte header, decompressed if the batch is compressed), each
record is laid out as (varints are zigzag-encoded, as in Kafka's DefaultRecord):

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value | headersCount varint | headers

The walk checks that the records fill the batch exactly (every `length` lands inside it and
the last one ends at its end), that the count matches `recordsCount`, and that record i has
offsetDelta i, so the header's `lastOffsetDelta` (which moves the log end offset) is what the
records hold. Keys (record_keys.py checks them on compacted topics, once this walk has
bounded the batch), values and headers are not parsed.

An uncompressed batch - the produce hot path - is read by aiokafka's C record reader
(`check_plain_batch`, about 7x faster than a walk in Python), which refuses a count or
lengths that do not fill the batch (the walker then says which rule broke); its offsets
are compared with 0, 1, 2, ... The
walker (`RecordWalker`) takes the bytes of a compressed batch in chunks, so that batch is
checked while it is inflated (decompression.py) and never held whole. Pure computation over
buffers: no I/O, not shared between threads.
"""
from __future__ import annotations

from aiokafka.errors import CorruptRecordException
from aiokafka.record.default_records import DefaultRecordBatch as FastRecordBatch

from .errors import CorruptRecordError, InvalidRecordError
from .records import HEADER_SIZE, BatchHeader

MIN_RECORD_LENGTH = 6   # attributes, and one byte each for the two deltas, key, value, headers
FIELDS_BYTES = 24       # attributes, timestampDelta and offsetDelta fit in this


def check_plain_batch(buf, position: int, header: BatchHeader) -> None:
    """The records of the uncompressed batch at `position` match its header: INVALID_RECORD if
    the count, an offset delta or a length lies, CORRUPT_MESSAGE if they hold but a record's
    own fields do not parse (the CRC held: the client signed garbage)."""
    try:
        offsets = [record.offset for record in FastRecordBatch(bytes(buf[position:position + header.size]))]
    except (CorruptRecordException, ValueError, IndexError) as exc:
        walker = RecordWalker(header.records_count)   # the slow path says which rule broke
        with memoryview(buf) as view:
            walker.feed(view[position + HEADER_SIZE:position + header.size])
        walker.finish()
        raise CorruptRecordError(f"the records of the batch do not parse: {exc}") from None
    if offsets != list(range(header.base_offset, header.base_offset + header.records_count)):
        bad = next(i for i, offset in enumerate(offsets) if offset != header.base_offset + i)
        raise InvalidRecordError(f"record {bad} has offset delta {offsets[bad] - header.base_offset}")


class RecordWalker:
    def __init__(self, expected_count: int) -> None:
        self.expected_count = expected_count
        self.count = 0
        self._pending = bytearray()   # the start of a record cut by a chunk boundary
        self._skip = 0                # bytes of a checked record still to come: not kept

    def feed(self, chunk: bytes) -> None:
        """Check the records of the next `chunk` of the stream. Memory stays at a chunk and a
        record's first bytes: once a record's fields are checked, the rest is skipped."""
        with memoryview(chunk) as view:
            skipped = min(self._skip, len(view))
            self._skip -= skipped
            self._pending += view[skipped:]
        pos = self._walk(self._pending, 0, len(self._pending))
        if pos >= len(self._pending):
            self._skip += pos - len(self._pending)
            self._pending.clear()
        else:
            del self._pending[:pos]

    def finish(self) -> None:
        if self._skip:
            raise InvalidRecordError(f"the last record runs {self._skip} bytes past the end of the batch")
        if self._pending:
            raise InvalidRecordError(f"{len(self._pending)} bytes after the last whole record")
        if self.count != self.expected_count:
            raise InvalidRecordError(f"batch header says {self.expected_count} records, it holds {self.count}")

    def _walk(self, buf, pos: int, end: int) -> int:
        """Check the records from `pos`; return where the first one too short to check starts,
        or the end of the last record checked (past `end` when its body is still to come).

        Hot path (every produced record): the common one-byte varints are read inline."""
        count, expected = self.count, self.expected_count
        try:
            while pos < end:
                start = pos
                length = buf[pos]
                pos += 1
                if length & 0x80:
                    byte = buf[pos]
                    pos += 1
                    length = (length & 0x7F) | (byte & 0x7F) << 7
                    if byte & 0x80:
                        length, pos = _varint(buf, start)
                length = (length >> 1) ^ -(length & 1)
                record_end = pos + length
                if record_end > end and end - pos < FIELDS_BYTES:
                    return start                         # cut by the chunk boundary (or lying)
                if length < MIN_RECORD_LENGTH:
                    raise InvalidRecordError(f"record {count} has length {length}")
                pos += 1                                 # attributes
                while buf[pos] & 0x80:                   # timestampDelta: skipped
                    pos += 1
                delta = buf[pos + 1]
                pos += 2
                if delta & 0x80:
                    byte = buf[pos]
                    pos += 1
                    delta = (delta & 0x7F) | (byte & 0x7F) << 7
                    if byte & 0x80:
                        delta, pos = _varint(buf, pos - 2)
                if (delta >> 1) ^ -(delta & 1) != count:
                    raise InvalidRecordError(f"record {count} has offset delta {(delta >> 1) ^ -(delta & 1)}")
                if pos >= record_end:
                    raise InvalidRecordError(f"record {count} is shorter than its fields")
                count += 1
                if count > expected:
                    raise InvalidRecordError(f"batch header says {expected} records, it holds more")
                pos = record_end
            return pos
        except IndexError:
            raise InvalidRecordError(f"record {count} is cut short") from None
        finally:
            self.count = count


def _varint(buf, pos: int) -> tuple[int, int]:
    """The raw (still zigzagged) varint at `pos` and the position after it; at most 5 bytes."""
    value = shift = 0
    for i in range(pos, pos + 5):
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i + 1
        shift += 7
    raise InvalidRecordError("varint longer than 5 bytes")
