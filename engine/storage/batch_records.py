"""Checks that a v2 batch's header tells the truth about its records: the part of Kafka's
LogValidator that reads the records themselves.

Inside a batch (after the 61-byte header, decompressed if the batch is compressed), each
record is laid out as (varints are zigzag-encoded, as in Kafka's DefaultRecord):

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value | headersCount varint | headers

The walk checks that the records fill the batch exactly (every `length` lands inside it and
the last one ends at its end), that the count matches `recordsCount`, and that record i has
offsetDelta i, so the header's `lastOffsetDelta` (which moves the log end offset) is what the
records hold. A compacted topic also needs a key on every record: the walker lists the index
of each record without one (Kafka names them all in the Produce answer). Anything else - keys,
values, headers - is the consumer's business and is not parsed.

The walker takes the bytes in chunks, so a compressed batch is checked while it is inflated
(decompression.py) and never held whole. Pure computation over buffers: no I/O, not shared
between threads.
"""
from __future__ import annotations

from .errors import InvalidRecordError

MIN_RECORD_LENGTH = 6   # attributes, and one byte each for the two deltas, key, value, headers
FIELDS_BYTES = 24       # attributes, timestampDelta, offsetDelta and the key length fit in this


class RecordWalker:
    def __init__(self, expected_count: int, *, need_key: bool) -> None:
        self.expected_count = expected_count
        self.need_key = need_key
        self.keyless: list[int] = []  # indexes of records without a key (need_key only)
        self.count = 0
        self._pending = bytearray()   # the start of a record cut by a chunk boundary
        self._skip = 0                # bytes of a checked record still to come: not kept
        self._streaming = False

    def walk(self, buf, start: int, end: int) -> None:
        """Check all records in buf[start:end], which must hold whole records only."""
        pos = self._walk(buf, start, end)
        if pos != end:
            raise InvalidRecordError(f"record {self.count} runs past the end of the batch")
        self.finish()

    def feed(self, chunk: bytes) -> None:
        """Check the records of the next `chunk` of the stream. Memory stays at a chunk and a
        record's first bytes: once a record's fields are checked, the rest is skipped."""
        self._streaming = True
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
        or, streaming, the end of the last record checked (past `end` when its body is still to
        come).

        Hot path (every produced record): the common one-byte varints are read inline."""
        count, expected, need_key, streaming = self.count, self.expected_count, self.need_key, self._streaming
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
                if record_end > end and (not streaming or end - pos < FIELDS_BYTES):
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
                if need_key and buf[pos] == 1:           # zigzag(-1): a null key
                    self.keyless.append(count)           # all are named in the Produce answer
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
