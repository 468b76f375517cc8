"""Kafka's record format read field by field from a stream of byte chunks: the rules of
Kafka's DefaultRecord.readFrom, in Python, for what the C record reader cannot take whole
(batch_records.py): a record too big to hold, and the reason a batch the C reader refused
breaks the rules.

A record (varints zigzag-encoded, as in Kafka):

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value | headersCount varint |
    headers: [headerKeyLength varint | headerKey (UTF-8) | headerValueLength varint | headerValue]

Record i must have offsetDelta i; a varint is at most 5 bytes (a varlong 10), as Kafka's
ByteUtils reads them; a negative key or value length is null; the header count and a header
key's length are not negative; no field runs past the record's length and the fields end
exactly at it. The attributes byte is unused by Kafka (written 0); one with its top bit set is
refused, because kafka-python's and aiokafka's readers take that byte for a varint and would
read the rest of the record differently from Java's and librdkafka's.
Every break is InvalidRecordError (INVALID_RECORD), naming the record.

Memory is one chunk: keys, values and header values are skipped, never kept; header keys
are decoded incrementally. Headers lying inside the current chunk are read in one inline
loop, so a record of millions of tiny headers costs well under a microsecond each.
Not thread-safe: one stream per check.
"""
from __future__ import annotations

import codecs
from typing import Iterator

from .errors import InvalidRecordError

MIN_RECORD_LENGTH = 6   # attributes, and one byte each for the two deltas, key, value, headers
VARINT_BYTES, VARLONG_BYTES = 5, 10
_NO_END = 1 << 62


class RecordStream:
    """Records read one after another from `chunks`, the first being record `first_index`
    of its batch."""

    __slots__ = ("_chunks", "_buf", "_pos", "_consumed", "_end", "index", "timestamp_delta")

    def __init__(self, chunks: Iterator[bytes], first_index: int = 0) -> None:
        self._chunks = chunks
        self._buf: bytes = b""
        self._pos = 0
        self._consumed = 0        # bytes of the chunks before _buf
        self._end = _NO_END       # where the record being read ends, as a stream position
        self.index = first_index  # the record being read next
        self.timestamp_delta = 0  # the last record's timestampDelta

    def check(self, expected_count: int) -> None:
        """Read every record to the end of the stream: they must be `expected_count` in all
        (counting from record 0 of the batch)."""
        while not self.at_end():
            self.read_record()
            if self.index > expected_count:
                raise InvalidRecordError(f"batch header says {expected_count} records, it holds more")
        if self.index != expected_count:
            raise InvalidRecordError(f"batch header says {expected_count} records, it holds {self.index}")

    def at_end(self) -> bool:
        return self._pos >= len(self._buf) and not self._next_chunk()

    def leftover(self) -> bytes:
        """The unread rest of the current chunk (the chunks after it are still in `chunks`)."""
        return self._buf[self._pos:]

    def read_record(self) -> None:
        index = self.index
        self._end = _NO_END
        length = self._varint(VARINT_BYTES)
        if length < MIN_RECORD_LENGTH:
            raise InvalidRecordError(f"record {index} has length {length}")
        self._end = self._position() + length
        self._attributes()
        self.timestamp_delta = self._varint(VARLONG_BYTES)
        delta = self._varint(VARINT_BYTES)
        if delta != index:
            raise InvalidRecordError(f"record {index} has offset delta {delta}")
        for field in ("key", "value"):
            size = self._varint(VARINT_BYTES)
            if size > 0:                                   # negative: null, as Kafka reads it
                self._skip(size, field)
        count = self._varint(VARINT_BYTES)
        if count < 0:
            raise InvalidRecordError(f"record {index} has {count} headers")
        while count:
            count = self._headers_in_chunk(count)
            if count:
                self._header()
                count -= 1
        if self._position() != self._end:
            raise InvalidRecordError(f"record {index}'s fields end {self._end - self._position()} bytes "
                                     f"before its length says")
        self.index = index + 1

    # --- fields -------------------------------------------------------------------------------
    def _attributes(self) -> None:
        if self._pos >= len(self._buf) and not self._next_chunk():
            self._cut_short()
        attributes = self._buf[self._pos]
        if attributes & 0x80:
            raise InvalidRecordError(f"record {self.index} has attributes {attributes:#04x}")
        self._pos += 1

    def _header(self) -> None:
        """One header, field by field (it crosses a chunk boundary)."""
        size = self._varint(VARINT_BYTES)
        if size < 0:
            raise InvalidRecordError(f"record {self.index} has a header key of length {size}")
        self._skip(size, "header key", codecs.getincrementaldecoder("utf-8")())
        size = self._varint(VARINT_BYTES)
        if size > 0:
            self._skip(size, "header value")

    def _headers_in_chunk(self, count: int) -> int:
        """Read headers while each lies whole inside the current chunk and record; return how
        many are left. Hot path for records of many headers: locals only, few calls."""
        buf, pos = self._buf, self._pos
        stop = min(len(buf), self._end - self._consumed)
        index = self.index
        while count:
            start = pos
            byte = buf[pos] if pos < stop else 0x80
            if byte < 0x80:                               # the usual one-byte length, inline
                key_size, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            else:
                key_size, pos = _varint_in(buf, pos, stop, index)
                if key_size is None:
                    break
            if key_size < 0:
                raise InvalidRecordError(f"record {index} has a header key of length {key_size}")
            if pos + key_size > stop:
                break
            if key_size:
                try:
                    str(buf[pos:pos + key_size], "utf-8")
                except UnicodeDecodeError:
                    raise InvalidRecordError(f"record {index} has a header key that is not UTF-8") from None
                pos += key_size
            byte = buf[pos] if pos < stop else 0x80
            if byte < 0x80:
                value_size, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            else:
                value_size, pos = _varint_in(buf, pos, stop, index)
                if value_size is None:
                    break
            if value_size > 0:
                if pos + value_size > stop:
                    break
                pos += value_size
            count -= 1
        else:
            self._pos = pos
            return 0
        self._pos = start          # the header at `start` crosses the chunk (or record) end
        return count

    # --- the stream ---------------------------------------------------------------------------
    def _position(self) -> int:
        return self._consumed + self._pos

    def _next_chunk(self) -> bool:
        for chunk in self._chunks:
            if chunk:
                self._consumed += len(self._buf)
                self._buf, self._pos = chunk, 0
                return True
        return False

    def _cut_short(self):
        raise InvalidRecordError(f"record {self.index} is cut short")

    def _varint(self, max_bytes: int) -> int:
        """The zigzag-decoded varint at the position; hot path: one byte inside the chunk."""
        buf, pos = self._buf, self._pos
        if pos < len(buf) and not buf[pos] & 0x80 and self._consumed + pos < self._end:
            self._pos = pos + 1
            raw = buf[pos]
        else:
            raw = self._long_varint(max_bytes)
        return (raw >> 1) ^ -(raw & 1)

    def _long_varint(self, max_bytes: int) -> int:
        value = shift = 0
        for _ in range(max_bytes):
            if self._position() >= self._end:
                raise InvalidRecordError(f"record {self.index}'s fields run past its length")
            if self._pos >= len(self._buf) and not self._next_chunk():
                self._cut_short()
            byte = self._buf[self._pos]
            self._pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise InvalidRecordError(f"record {self.index} has a varint longer than {max_bytes} bytes")

    def _skip(self, size: int, field: str, decoder=None) -> None:
        if self._position() + size > self._end:
            raise InvalidRecordError(f"record {self.index}'s {field} runs past its length")
        while size:
            if self._pos >= len(self._buf) and not self._next_chunk():
                self._cut_short()
            take = min(size, len(self._buf) - self._pos)
            if decoder is not None:
                self._decode(decoder, self._buf[self._pos:self._pos + take])
            self._pos += take
            size -= take
        if decoder is not None:
            self._decode(decoder, b"", final=True)

    def _decode(self, decoder, data: bytes, *, final: bool = False) -> None:
        try:
            decoder.decode(data, final)
        except UnicodeDecodeError:
            raise InvalidRecordError(f"record {self.index} has a header key that is not UTF-8") from None


def _varint_in(buf, pos: int, stop: int, index: int) -> tuple[int | None, int]:
    """The zigzag-decoded varint at `pos` if it ends before `stop` (else None), and the
    position after it."""
    if pos < stop:
        byte = buf[pos]
        if not byte & 0x80:
            return (byte >> 1) ^ -(byte & 1), pos + 1
    value = shift = 0
    for i in range(pos, min(pos + VARINT_BYTES, stop)):
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), i + 1
        shift += 7
    if pos + VARINT_BYTES <= stop:
        raise InvalidRecordError(f"record {index} has a varint longer than {VARINT_BYTES} bytes")
    return None, pos
