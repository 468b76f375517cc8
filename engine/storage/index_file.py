"""What the offset index and the time index share (Kafka's AbstractIndex).

An index file is an array of fixed-size big-endian entries keyed by an offset relative
to the segment's base offset.  Entries are appended with os.write (O_APPEND) and kept in
memory too; the in-memory copy is loaded lazily, on first use, so that opening a log
with thousands of old segments reads nothing but their file sizes.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

from . import filesystem
from .errors import CorruptIndexError
from .file_handles import PooledFile, PooledFileOwner


class IndexFile(PooledFileOwner):
    """Base for OffsetIndex and TimeIndex.  Not thread-safe: its segment serialises calls."""

    ENTRY: struct.Struct  # set by subclasses

    def __init__(self, path: Path, base_offset: int, max_index_size: int) -> None:
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self._file = PooledFile(path)
        self._file_size = os.fstat(self._file.fd).st_size
        self._loaded = False

    @property
    def entries(self) -> int:
        return self._file_size // self.ENTRY.size

    @property
    def is_full(self) -> bool:
        """Advisory: the segment rolls once its index reaches segment.index.bytes."""
        return self.entries >= self.max_index_size // self.ENTRY.size

    def relative(self, offset: int) -> int:
        return offset - self.base_offset

    # --- subclass hooks ------------------------------------------------------------
    def _parse(self, data: bytes) -> None:
        raise NotImplementedError

    def _clear(self, keep: int) -> None:
        raise NotImplementedError

    # --- shared mechanics ----------------------------------------------------------
    def load(self) -> None:
        """Read the whole file into memory; raise CorruptIndexError if inconsistent."""
        if self._loaded:
            return
        self._check_size()
        self._parse(os.pread(self._fd, self._file_size, 0))
        self._loaded = True

    def _check_size(self) -> None:
        if self._file_size % self.ENTRY.size:
            raise CorruptIndexError(
                f"{self.path}: size {self._file_size} is not a multiple of {self.ENTRY.size}"
            )

    def _read_entry(self, n: int) -> tuple:
        """Entry `n` straight from the file, for sanity checks without a full load."""
        return self.ENTRY.unpack(os.pread(self._fd, self.ENTRY.size, n * self.ENTRY.size))

    def _write_entry(self, *fields) -> None:
        filesystem.FS.write(self._fd, self.ENTRY.pack(*fields))
        self._file_size += self.ENTRY.size

    def _truncate_entries(self, keep: int) -> None:
        if keep < self.entries:
            filesystem.FS.ftruncate(self._fd, keep * self.ENTRY.size)
            self._file_size = keep * self.ENTRY.size
        self._clear(keep)

    def reset(self) -> None:
        """Drop every entry (before a rebuild from the log)."""
        filesystem.FS.ftruncate(self._fd, 0)
        self._file_size = 0
        self._clear(0)
        self._loaded = True



def strictly_increasing(values) -> bool:
    return all(a < b for a, b in zip(values, values[1:]))


def non_decreasing(values) -> bool:
    return all(a <= b for a, b in zip(values, values[1:]))
