"""Reading a framed response the broker encoded itself: where its body begins.

A frame is its size (4 bytes), the response header - the correlation id (4 bytes), then in
flexible versions (header v1) the tagged fields: a count, then per field a tag, a size and
the data, all unsigned varints but the data - and the body.
"""
from __future__ import annotations


def body_offset(frame, *, flexible: bool) -> int:
    """Where the body of a framed response begins."""
    position = 8
    if flexible:
        count, position = uvarint(frame, position)
        for _ in range(count):
            _, position = uvarint(frame, position)
            size, position = uvarint(frame, position)
            position += size
    return position


def uvarint(buf, position: int) -> tuple[int, int]:
    """(the unsigned varint at `position`, the position after it)."""
    value = shift = 0
    while True:
        byte = buf[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
