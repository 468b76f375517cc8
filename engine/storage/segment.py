"""One segment of a partition's log: the `.log`, `.index`, `.timeindex` and `.txnindex`
files that share a base offset (Kafka's LogSegment)."""
from __future__ import annotations

import os
from contextlib import contextmanager

from pathlib import Path
from typing import Iterator

from kafka.record.default_records import DefaultRecordBatch

from .errors import CorruptIndexError, CorruptRecordError, StorageError
from .file_records import FileRecords, FileSlice
from .log_config import LogConfig
from .log_files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, offset_file
from .offset_index import OffsetIndex
from .records import HEADER_SIZE, INT32_MAX, BatchHeader, read_header, validate_crc
from .time_index import TimeIndex
from .transaction_index import TransactionIndex

__all__ = ["LogSegment", "FileSlice"]


class LogSegment:
    """Owns `<base offset, 20 digits>.log`, `.index` and `.timeindex` in the partition dir.

    * `.log`: v2 record batches back to back (file_records.FileRecords).
    * `.index`: (int32 relative offset, int32 position) entries (offset_index.OffsetIndex).
    * `.timeindex`: (int64 timestamp, int32 relative offset) entries (time_index.TimeIndex).
    * `.txnindex`: the transactions aborted by a marker in this segment
      (transaction_index.TransactionIndex); only exists once there is one.

    Every offset in the segment is >= base_offset and < base_offset + 2**31, so the
    indexes can store offsets relative to the base in 4 bytes.  An index entry is added
    once `index_interval_bytes` have been appended since the previous one.

    The segment's end state (next offset, max timestamp) is derived, not stored: it is
    read lazily from the last index entries plus a short scan of the .log tail, so
    opening an old segment costs a stat and a few small reads.

    Not thread-safe: the owning Log's caller (the broker's event loop) serialises calls.
    """

    def __init__(self, directory: Path, base_offset: int, *, index_interval_bytes: int,
                 max_index_size: int, now_ms: int, file_suffix: str = "") -> None:
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.created_ms = now_ms
        # Plain strings, not Paths: start-up opens a segment per partition, tens of thousands.
        stem = os.path.join(os.fspath(directory), f"{base_offset:020d}")
        self.log = FileRecords(stem + LOG_SUFFIX + file_suffix)
        self.offset_index = OffsetIndex(stem + INDEX_SUFFIX + file_suffix, base_offset, max_index_size)
        self.time_index = TimeIndex(stem + TIME_INDEX_SUFFIX + file_suffix, base_offset, max_index_size)
        self.txn_index = TransactionIndex(offset_file(directory, base_offset, TXN_INDEX_SUFFIX + file_suffix),
                                          base_offset)
        self._tail_loaded = False
        self._next_offset = base_offset
        self._max_timestamp = -1
        self._offset_of_max_timestamp = -1
        self._bytes_since_last_index_entry = 0
        self._rolling_timestamp: int | None = None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Keep the three files' descriptors open while another thread (the cleaner's) uses them."""
        with self.log.pinned(), self.offset_index.pinned(), self.time_index.pinned():
            yield

    @classmethod
    def open(cls, directory: Path, base_offset: int, config: LogConfig, now_ms: int, *,
             file_suffix: str = "") -> LogSegment:
        """Open the segment's files, creating any that are missing.  A `file_suffix`
        (".cleaned") names a segment the log cleaner is still writing."""
        return cls(directory, base_offset, index_interval_bytes=config.index_interval_bytes,
                   max_index_size=config.segment_index_bytes, now_ms=now_ms, file_suffix=file_suffix)

    @property
    def files(self) -> tuple[Path, Path, Path]:
        """The .log, .index and .timeindex paths, in that order."""
        return self.log.path, self.offset_index.path, self.time_index.path

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"

    # --- derived state ---------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.log.size

    @property
    def next_offset(self) -> int:
        """One past the last offset held; the base offset when empty."""
        self._load_tail()
        return self._next_offset

    @property
    def max_timestamp(self) -> int:
        self._load_tail()
        return self._max_timestamp

    @property
    def offset_of_max_timestamp(self) -> int:
        """Last offset of the first batch that reached max_timestamp (-1 if none)."""
        self._load_tail()
        return self._offset_of_max_timestamp

    @property
    def rolling_based_timestamp(self) -> int | None:
        """Max timestamp of the first batch, which segment.ms is measured from (as Kafka)."""
        if self._rolling_timestamp is None and self.size:
            self._rolling_timestamp = read_header(self.log.read(0, HEADER_SIZE)).max_timestamp
        return self._rolling_timestamp

    def largest_timestamp(self) -> int:
        """What retention.ms compares: the max timestamp, or the file mtime if none."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.log.last_modified_ms()

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        ts = self.rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now_ms - self.created_ms

    def can_convert_to_relative(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def has_overflow(self, offset: int) -> bool:
        """True if `offset` cannot be stored relative to this segment's base."""
        return not self.can_convert_to_relative(offset)

    def should_roll(self, config: LogConfig, *, message_bytes: int, max_timestamp: int,
                    last_offset: int, now_ms: int) -> bool:
        """Kafka's LogSegment.shouldRoll: full by bytes or age, index full, or overflow."""
        full = self.size > config.segment_bytes - message_bytes
        aged = self.time_waited_for_roll(now_ms, max_timestamp) > config.segment_ms
        return (self.size > 0 and (full or aged)) or self.offset_index.is_full \
            or self.time_index.is_full or self.has_overflow(last_offset)

    # --- loading ---------------------------------------------------------------------
    def sanity_check(self) -> None:
        """Cheap open-time check of both indexes; raises CorruptIndexError."""
        self.offset_index.sanity_check(self.size)
        self.time_index.sanity_check()
        try:
            self._load_tail()
        except CorruptRecordError as exc:
            # The last index entry points at something that is not a batch boundary.
            raise CorruptIndexError(f"{self.log.path}: {exc}") from exc
        self.time_index.sanity_check(self._next_offset)

    def _load_tail(self) -> None:
        """Derive next offset and max timestamp from the last index entries + tail scan."""
        if self._tail_loaded:
            return
        offset, position = self.offset_index.last_entry()
        timestamp, ts_offset = self.time_index.last_entry()
        self._next_offset = self.base_offset
        self._max_timestamp, self._offset_of_max_timestamp = (
            (timestamp, ts_offset) if timestamp >= 0 else (-1, -1))
        self._bytes_since_last_index_entry = 0
        for _, header, _ in self.log.batches(position):
            self._next_offset = header.next_offset
            self._track_max_timestamp(header.max_timestamp, header.last_offset)
            self._bytes_since_last_index_entry += header.size
        self._tail_loaded = True

    def _ensure_indexes(self) -> None:
        try:
            self.offset_index.load()
            self.time_index.load()
        except CorruptIndexError:
            self._reindex(validate=False)

    def _track_max_timestamp(self, timestamp: int, offset: int) -> None:
        if timestamp > self._max_timestamp:
            self._max_timestamp, self._offset_of_max_timestamp = timestamp, offset

    # --- writes ----------------------------------------------------------------------
    def append(self, buf, first_offset: int, last_offset: int, max_timestamp: int,
               offset_of_max_timestamp: int) -> None:
        """Append batches already stamped with offsets first_offset..last_offset."""
        if not buf:
            return
        if self.has_overflow(first_offset) or self.has_overflow(last_offset):
            raise StorageError(f"offsets {first_offset}..{last_offset} overflow {self!r}")
        self._ensure_indexes()
        self._load_tail()
        position = self.log.append(buf)
        try:
            self._track_max_timestamp(max_timestamp, offset_of_max_timestamp)
            self._maybe_index(last_offset, position)
        except BaseException:
            # Undo the write: offsets the log end never reached must not stay on disk.
            self.log.truncate_to(position)
            self.offset_index.truncate_to(first_offset)
            self.time_index.truncate_to(first_offset)
            self._tail_loaded = False
            raise
        if position == 0:
            self._rolling_timestamp = max_timestamp
        self._bytes_since_last_index_entry += len(buf)
        self._next_offset = last_offset + 1

    def _maybe_index(self, offset: int, position: int) -> None:
        if self._bytes_since_last_index_entry >= self.index_interval_bytes:
            self.offset_index.append(offset, position)
            if self._max_timestamp >= 0:  # batches without timestamps have nothing to index
                self.time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
            self._bytes_since_last_index_entry = 0

    def recover(self, max_message_bytes: int = INT32_MAX) -> int:
        """Validate every batch (length, then CRC-32C), cut the file at the first bad byte
        and rebuild both indexes.  Returns the number of bytes truncated."""
        valid = self._reindex(validate=True, max_message_bytes=max_message_bytes)
        return self.log.truncate_to(valid)

    def _reindex(self, *, validate: bool, max_message_bytes: int = INT32_MAX) -> int:
        """Rebuild the indexes from the .log; return the end of the last good batch."""
        self.offset_index.reset()
        self.time_index.reset()
        self._next_offset = self.base_offset
        self._max_timestamp, self._offset_of_max_timestamp = -1, -1
        self._bytes_since_last_index_entry = 0
        self._rolling_timestamp = None
        self._tail_loaded = True
        valid = 0
        try:
            for position, header, data in self.log.batches(0, with_data=validate):
                if validate:
                    self._validate(header, data, position, max_message_bytes)
                self._track_max_timestamp(header.max_timestamp, header.last_offset)
                self._maybe_index(header.last_offset, position)
                self._bytes_since_last_index_entry += header.size
                self._next_offset = header.next_offset
                valid = position + header.size
        except CorruptRecordError:
            if not validate:
                raise
        return valid

    def _validate(self, header: BatchHeader, data, position: int, max_message_bytes: int) -> None:
        if header.size > max_message_bytes:
            raise CorruptRecordError(f"batch at {position} is larger than {max_message_bytes}")
        validate_crc(data, 0, header)
        if self.has_overflow(header.base_offset) or self.has_overflow(header.last_offset):
            raise CorruptRecordError(f"batch at {position} has offsets outside {self!r}")
        if header.base_offset < self._next_offset:
            raise CorruptRecordError(
                f"batch at {position} goes back to offset {header.base_offset}")

    def truncate_to(self, offset: int) -> int:
        """Remove every batch holding an offset >= `offset` (the whole batch that holds
        `offset`, too); return the number of bytes removed."""
        found = self.translate_offset(offset)
        if found is None:
            return 0
        position, header = found
        cut = min(offset, header.base_offset)
        self.offset_index.truncate_to(cut)
        self.time_index.truncate_to(cut)
        self.txn_index.truncate_to(cut)
        removed = self.log.truncate_to(position)
        self._tail_loaded = False
        self._load_tail()
        if self.size == 0:
            self._rolling_timestamp = None
        return removed

    # --- reads -----------------------------------------------------------------------
    def translate_offset(self, offset: int, start_position: int = 0
                         ) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= `offset`."""
        self._ensure_indexes()
        _, position = self.offset_index.lookup(offset)
        for pos, header, _ in self.log.batches(max(position, start_position)):
            if header.last_offset >= offset:
                return pos, header
        return None

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_batch: bool = True) -> FileSlice | None:
        """Bytes from the batch holding `start_offset`, at most `max_size` of them (but the
        whole first batch if `min_one_batch`), never past `max_position`.  A partial
        batch at the end is fine: consumers drop it.  None if no batch holds an offset
        >= start_offset."""
        if max_size < 0:
            raise ValueError(f"invalid max size {max_size}")
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        position, header = found
        limit = self.size if max_position is None else min(max_position, self.size)
        wanted = max(max_size, header.size) if min_one_batch else max_size
        return self.log.slice(position, min(limit - position, wanted))

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int | None = None
                                 ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record >= start_offset with timestamp >= target."""
        start_offset = self.base_offset if start_offset is None else start_offset
        self._ensure_indexes()
        _, ts_offset = self.time_index.lookup(timestamp)
        _, position = self.offset_index.lookup(max(ts_offset, start_offset))
        for pos, header, _ in self.log.batches(position):
            if header.max_timestamp < timestamp or header.last_offset < start_offset:
                continue
            # Only this batch is decoded record by record; DefaultRecordBatch copies it.
            for record in DefaultRecordBatch(self.log.read(pos, header.size)):
                if record.timestamp >= timestamp and record.offset >= start_offset:
                    return record.offset, record.timestamp
        return None

    def headers_from(self, offset: int) -> Iterator[BatchHeader]:
        """Headers of the batches from the one holding `offset` to the end of the segment."""
        for _, header in self.batches_from(offset):
            yield header

    def batches_from(self, offset: int) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of the batches from the one holding `offset` to the end."""
        found = self.translate_offset(offset)
        if found is not None:
            for position, header, _ in self.log.batches(found[0]):
                yield position, header

    # --- lifecycle -------------------------------------------------------------------
    def flush(self) -> None:
        """fsync the .log and the indexes."""
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        self.log.close()
        self.offset_index.close()
        self.time_index.close()
        self.txn_index.close()

    def delete(self) -> None:
        self.log.delete()
        self.offset_index.delete()
        self.time_index.delete()
        self.txn_index.delete()
