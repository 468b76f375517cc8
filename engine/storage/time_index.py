"""The `.timeindex` file: a sparse map from timestamp to offset."""
from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

from .errors import CorruptIndexError
from .index_file import IndexFile, non_decreasing, strictly_increasing


class TimeIndex(IndexFile):
    """`<base offset>.timeindex`: entries of 12 bytes, big-endian

        int64 timestamp | int32 relative offset (offset - base_offset)

    An entry (t, o) says: the largest timestamp in the segment up to and including
    offset o is t, first reached at o.  An entry is added only when t exceeds the last
    one, so timestamps strictly increase and offsets never decrease.

    Not thread-safe: only its LogSegment calls it, on the broker's event loop.
    """

    ENTRY = struct.Struct(">qi")

    def __init__(self, path: Path, base_offset: int, max_index_size: int = 10 * 1024 * 1024):
        super().__init__(path, base_offset, max_index_size)
        self._timestamps = array("q")
        self._offsets = array("i")

    def _parse(self, data: bytes) -> None:
        timestamps, offsets = array("q"), array("i")
        for ts, rel in self.ENTRY.iter_unpack(data):
            timestamps.append(ts)
            offsets.append(rel)
        if offsets and (offsets[0] < 0 or not strictly_increasing(timestamps)
                        or not non_decreasing(offsets)):
            raise CorruptIndexError(f"{self.path}: entries are out of order")
        self._timestamps, self._offsets = timestamps, offsets

    def _clear(self, keep: int) -> None:
        del self._timestamps[keep:]
        del self._offsets[keep:]

    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry, or (-1, base_offset) if there is none."""
        if not self.entries:
            return -1, self.base_offset
        if self._loaded:
            return self._timestamps[-1], self.base_offset + self._offsets[-1]
        ts, rel = self._read_entry(self.entries - 1)
        return ts, self.base_offset + rel

    def maybe_append(self, timestamp: int, offset: int) -> bool:
        """Append (timestamp, offset) if the timestamp is larger than the last one."""
        self.load()
        if self._timestamps and timestamp <= self._timestamps[-1]:
            return False
        rel = self.relative(offset)
        if self._offsets and rel < self._offsets[-1]:
            raise ValueError(f"time index offset {offset} goes backwards in {self.path}")
        self._write_entry(timestamp, rel)
        self._timestamps.append(timestamp)
        self._offsets.append(rel)
        return True

    def lookup(self, target_timestamp: int) -> tuple[int, int]:
        """The largest entry with timestamp <= target, else (-1, base_offset)."""
        self.load()
        i = bisect_right(self._timestamps, target_timestamp) - 1
        if i < 0:
            return -1, self.base_offset
        return self._timestamps[i], self.base_offset + self._offsets[i]

    def truncate_to(self, offset: int) -> None:
        """Drop every entry whose offset is >= `offset`."""
        self.load()
        self._truncate_entries(bisect_left(self._offsets, self.relative(offset)))

    def sanity_check(self, next_offset: int | None = None) -> None:
        """Cheap open-time check of size and first/last entries, as Kafka's sanityCheck."""
        self._check_size()
        if not self.entries:
            return
        first_ts, first_rel = self._read_entry(0)
        last_ts, last_rel = self._read_entry(self.entries - 1)
        if first_rel < 0 or last_rel < first_rel or last_ts < first_ts:
            raise CorruptIndexError(f"{self.path}: entries out of order")
        if self.entries > 1 and last_ts == first_ts:
            raise CorruptIndexError(f"{self.path}: entries out of order")
        if next_offset is not None and self.base_offset + last_rel >= next_offset:
            raise CorruptIndexError(f"{self.path}: offset beyond the segment's end")
