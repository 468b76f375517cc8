"""The `.index` file: a sparse map from offset to the .log position of its batch."""
from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

from .errors import CorruptIndexError
from .index_file import IndexFile, strictly_increasing


class OffsetIndex(IndexFile):
    """`<base offset>.index`: entries of 8 bytes, big-endian

        int32 relative offset (offset - base_offset) | int32 position in the .log

    An entry (o, p) says: the batch starting at byte p of the .log ends at offset o, so
    the first batch holding any offset > o starts at p or later.  Offsets and
    positions both strictly increase.  `lookup` answers with the largest entry <= the
    target, from which the segment scans forward through batch headers.

    Not thread-safe: only its LogSegment calls it, on the broker's event loop.
    """

    ENTRY = struct.Struct(">ii")

    def __init__(self, path: Path, base_offset: int, max_index_size: int = 10 * 1024 * 1024):
        super().__init__(path, base_offset, max_index_size)
        self._offsets = array("i")    # relative offsets, for bisect
        self._positions = array("i")

    def _parse(self, data: bytes) -> None:
        flat = array("i")
        flat.frombytes(data)
        if sys.byteorder == "little":
            flat.byteswap()
        offsets, positions = flat[0::2], flat[1::2]
        if offsets and (offsets[0] < 0 or not strictly_increasing(offsets)
                        or positions[0] < 0 or not strictly_increasing(positions)):
            raise CorruptIndexError(f"{self.path}: entries are not strictly increasing")
        self._offsets, self._positions = offsets, positions

    def _clear(self, keep: int) -> None:
        del self._offsets[keep:]
        del self._positions[keep:]

    @property
    def last_offset(self) -> int:
        """Offset of the last entry, or the base offset if there is none."""
        return self.last_entry()[0]

    def last_entry(self) -> tuple[int, int]:
        if not self.entries:
            return self.base_offset, 0
        if self._loaded:
            return self.base_offset + self._offsets[-1], self._positions[-1]
        rel, position = self._read_entry(self.entries - 1)
        return self.base_offset + rel, position

    def append(self, offset: int, position: int) -> None:
        self.load()
        rel = self.relative(offset)
        if self._offsets and (rel <= self._offsets[-1] or position <= self._positions[-1]):
            raise ValueError(f"index entry ({offset}, {position}) does not follow "
                             f"({self.last_offset}, {self._positions[-1]}) in {self.path}")
        self._write_entry(rel, position)
        self._offsets.append(rel)
        self._positions.append(position)

    def lookup(self, target_offset: int) -> tuple[int, int]:
        """The largest entry with offset <= target, else (base_offset, 0)."""
        self.load()
        i = bisect_right(self._offsets, self.relative(target_offset)) - 1
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + self._offsets[i], self._positions[i]

    def truncate_to(self, offset: int) -> None:
        """Drop every entry whose offset is >= `offset`."""
        self.load()
        self._truncate_entries(bisect_left(self._offsets, self.relative(offset)))

    def sanity_check(self, log_size: int | None = None) -> None:
        """Cheap open-time check (size, first and last entry), as Kafka's sanityCheck.

        A full check of every entry happens when the index is first loaded.
        """
        self._check_size()
        if not self.entries:
            return
        first_rel, first_pos = self._read_entry(0)
        last_rel, last_pos = self._read_entry(self.entries - 1)
        if first_rel < 0 or first_pos < 0 or last_rel < first_rel or last_pos < first_pos:
            raise CorruptIndexError(f"{self.path}: entries out of order")
        if self.entries > 1 and (last_rel == first_rel or last_pos == first_pos):
            raise CorruptIndexError(f"{self.path}: entries out of order")
        if log_size is not None and last_pos >= log_size:
            raise CorruptIndexError(
                f"{self.path}: position {last_pos} is beyond the log's {log_size} bytes"
            )
