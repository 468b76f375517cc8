"""The protocol types the internal topics' records are written in (`__consumer_offsets`,
`__transaction_state`): int16-length strings, int32-length bytes and arrays, and, in
"flexible" versions, compact lengths and tagged fields. kafka-python has no codec for these
records (they are not wire messages), hence struct.
"""
from __future__ import annotations

import struct

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


def encode_string(value: str | None) -> bytes:
    """An int16-length string; null is length -1."""
    if value is None:
        return _I16.pack(-1)
    data = value.encode()
    return _I16.pack(len(data)) + data


def fields_bytes_at_most(fields) -> int:
    """The most `fields` (strings, bytes, None) take in a record, each with its length and a
    tagged-field allowance, plus 64 bytes for a record's fixed-size fields."""
    return 64 + sum(6 + len(f.encode() if isinstance(f, str) else f) for f in fields if f is not None)


class Reader:
    """Reads the classic protocol types from a record's key or value, in order; `flexible`:
    compact lengths and tagged fields."""

    def __init__(self, data: bytes, flexible: bool = False) -> None:
        self.data, self.pos, self.flexible = data, 0, flexible

    def _unpack(self, fmt: struct.Struct) -> int:
        (value,) = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return value

    def int16(self) -> int:
        return self._unpack(_I16)

    def int32(self) -> int:
        return self._unpack(_I32)

    def int64(self) -> int:
        return self._unpack(_I64)

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def _length(self, classic: int) -> int:
        return self.uvarint() - 1 if self.flexible else classic

    def string(self) -> str | None:
        length = self._length(self.int16() if not self.flexible else 0)
        if length < 0:
            return None
        value = self.data[self.pos:self.pos + length].decode()
        self.pos += length
        return value

    def bytes(self) -> bytes:
        length = self._length(self.int32() if not self.flexible else 0)
        value = bytes(self.data[self.pos:self.pos + max(length, 0)])
        self.pos += max(length, 0)
        return value

    def array_length(self) -> int:
        return self._length(self.int32() if not self.flexible else 0)

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.pos += self.uvarint()
