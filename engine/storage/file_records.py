"""The `.log` file of a segment, and slices of it handed to the network layer.

Byte layout: v2 record batches back to back, exactly as the broker stamped them (see
records.py); nothing else, so any byte range starting at a batch boundary can be sent
to a consumer as is.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from . import filesystem
from .errors import CorruptRecordError, StorageError
from .file_handles import PooledFile, PooledFileOwner
from .records import HEADER_SIZE, BatchHeader, check_header, read_header

# Batch headers are scanned through a read buffer of this size: one pread covers the
# few kilobytes between two index entries, and big batches are stepped over, not read.
SCAN_CHUNK = 64 * 1024


class FileSlice:
    """`size` bytes of a .log file from `position`, for os.sendfile or a plain read.

    The fd belongs to the segment and stays valid until the segment is closed or
    deleted; a sender that outlives the current event-loop turn must os.dup() it first.
    """

    __slots__ = ("fd", "position", "size")

    def __init__(self, fd: int, position: int, size: int) -> None:
        self.fd = fd
        self.position = position
        self.size = size

    def fileno(self) -> int:
        return self.fd

    def read(self) -> bytes:
        return os.pread(self.fd, self.size, self.position) if self.size else b""

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"{type(self).__name__}(fd={self.fd}, position={self.position}, size={self.size})"

    def dup(self) -> "OwnedFileSlice":
        """The same bytes through a descriptor of their own, which stays valid when the
        segment is closed or deleted meanwhile; the holder must close() it."""
        return OwnedFileSlice(os.dup(self.fd), self.position, self.size)


class OwnedFileSlice(FileSlice):
    """A FileSlice that owns its descriptor (see FileSlice.dup)."""

    __slots__ = ()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class FileRecords(PooledFileOwner):
    """Owner of one `.log` file: appends, positional reads, batch scans, truncation.

    Writes go through os.write on an O_APPEND fd, so appended bytes sit in the OS page
    cache before the broker acknowledges them: killing the process loses nothing
    acknowledged; only fsync (flush) protects against power loss.

    Not thread-safe: the owning LogSegment's caller serialises every call.
    """

    def __init__(self, path: Path) -> None:
        self._file = PooledFile(path)
        self.size = os.fstat(self._file.fd).st_size

    def fileno(self) -> int:
        return self._fd

    def append(self, buf) -> int:
        """Write `buf` at the end; return the position it starts at."""
        position = self.size
        view = memoryview(buf)
        try:
            while view:
                view = view[filesystem.FS.write(self._fd, view):]
        except OSError as exc:
            # Never leave half a batch behind: the next append would follow garbage.
            filesystem.FS.ftruncate(self._fd, position)
            raise StorageError(f"append to {self.path} failed: {exc}") from exc
        finally:
            view.release()
        self.size = position + len(buf)
        return position

    def read(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def slice(self, position: int, size: int) -> FileSlice:
        return FileSlice(self._fd, position, max(0, min(size, self.size - position)))

    def batches(self, start: int = 0, *, with_data: bool = False, chunk_bytes: int = SCAN_CHUNK
                ) -> Iterator[tuple[int, BatchHeader, memoryview | None]]:
        """Yield (position, header, batch bytes or None) for each batch from `start`.

        Raises CorruptRecordError at the first position that does not hold a whole,
        well-formed batch header; the caller decides whether that means truncation.
        """
        end = self.size
        pos = start
        buf, buf_start = b"", start
        while pos < end:
            offset = pos - buf_start
            if offset + HEADER_SIZE > len(buf):
                buf, buf_start, offset = self.read(pos, min(chunk_bytes, end - pos)), pos, 0
            header = read_header(buf, offset)
            check_header(header, pos, end - pos)
            data = None
            if with_data:
                if offset + header.size > len(buf):
                    buf, buf_start, offset = self.read(pos, max(chunk_bytes, header.size)), pos, 0
                    if len(buf) < header.size:
                        raise CorruptRecordError(f"short read of batch at position {pos}")
                data = memoryview(buf)[offset:offset + header.size]
            yield pos, header, data
            pos += header.size

    def truncate_to(self, position: int) -> int:
        """Cut the file at `position`; return how many bytes were removed."""
        removed = self.size - position
        if removed > 0:
            filesystem.FS.ftruncate(self._fd, position)
            self.size = position
        return max(0, removed)

    def last_modified_ms(self) -> int:
        return os.fstat(self._fd).st_mtime_ns // 1_000_000

