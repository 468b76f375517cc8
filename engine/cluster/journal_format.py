"""The byte format of the metadata journal and snapshot files, and how a reader tells a torn
tail from corruption.

A framed file (`journal-<gen>.log`, `snapshot-<gen>.records`) is a sequence of records:

    length int32 | crc uint32 (CRC-32C of the payload) | payload: one JSON object, UTF-8

A crash mid-append leaves at most one incomplete or unsigned record at the very end: a
*torn tail*. Anything else that does not check out - a bad length or CRC with a good record
after it - is *corruption*, and no reader may guess past it. The scan below finds the first
bad byte and then looks for any good record after it to decide which of the two it is.

Files of the older format (`journal-<gen>.jsonl`: one JSON object per line, and
`snapshot-<gen>.json`: one JSON array) are read with the same rule, line by line.

Pure functions over bytes: no file handles, no state.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from kafka.record.util import calc_crc32c

FRAME = struct.Struct(">iI")
MAX_RECORD_BYTES = 64 << 20   # far above any real record: a larger length is garbage


@dataclass(frozen=True)
class Scanned:
    records: list[tuple[int, dict]]   # (byte offset, record) of every good record before the first bad byte
    good_bytes: int                   # where the first bad record starts (== file size if none)
    problem: str | None               # why the record at good_bytes is bad
    torn_tail: bool                   # True: nothing good follows, a crash explains it


def frame(record: dict) -> bytes:
    payload = json.dumps(record, separators=(",", ":")).encode()
    return FRAME.pack(len(payload), calc_crc32c(payload)) + payload


def scan_framed(data: bytes) -> Scanned:
    records, pos = [], 0
    while pos < len(data):
        payload, problem = _frame_at(data, pos)
        if problem is None:
            try:
                record = json.loads(payload)
            except ValueError as exc:
                problem = f"the record's CRC is right but it is not JSON ({exc})"
            else:
                if not isinstance(record, dict):
                    problem = "the record's CRC is right but it is not a JSON object"
        if problem is not None:
            # A record whose CRC matched was written whole: never a torn tail.
            torn = payload is None and not any(_frame_at(data, p)[1] is None for p in range(pos + 1, len(data)))
            return Scanned(records, pos, problem, torn)
        records.append((pos, record))
        pos += FRAME.size + len(payload)
    return Scanned(records, pos, None, False)


def _frame_at(data: bytes, pos: int) -> tuple[bytes | None, str | None]:
    """(payload, None) for a good frame at `pos`, else (None, why) - or (payload, why) never."""
    if len(data) - pos < FRAME.size:
        return None, f"{len(data) - pos} bytes remain, less than a record header"
    length, crc = FRAME.unpack_from(data, pos)
    if length <= 0 or length > MAX_RECORD_BYTES:
        return None, f"record length {length} is impossible"
    end = pos + FRAME.size + length
    if end > len(data):
        return None, f"record of {length} bytes runs past the end of the file"
    payload = data[pos + FRAME.size:end]
    if calc_crc32c(payload) != crc:
        return None, f"CRC mismatch (stored {crc:#010x}, computed {calc_crc32c(payload):#010x})"
    return payload, None


def scan_json_lines(data: bytes) -> Scanned:
    """The older journal format: one JSON object per line."""
    records, pos = [], 0
    lines = data.splitlines(keepends=True)
    for i, line in enumerate(lines):
        record = _json_object(line) if line.endswith(b"\n") else None
        if record is None:
            torn = not any(_json_object(later) is not None for later in lines[i + 1:])
            return Scanned(records, pos, "the line is not a whole JSON object", torn)
        records.append((pos, record))
        pos += len(line)
    return Scanned(records, pos, None, False)


def _json_object(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def scan_json_array(data: bytes) -> Scanned:
    """The older snapshot format: one JSON array, written atomically (never torn)."""
    try:
        records = json.loads(data)
    except ValueError as exc:
        return Scanned([], exc.pos if isinstance(exc, json.JSONDecodeError) else 0, f"not JSON ({exc})", False)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return Scanned([], 0, "not a JSON array of objects", False)
    return Scanned([(0, r) for r in records], len(data), None, False)
