"""A segment's aborted-transaction index, `<base offset, 20 digits>.txnindex` (Kafka's TransactionIndex)."""
from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

from . import filesystem
from .log_files import unlink_quietly

# Kafka's AbortedTxn: version int16 (0) | producer_id int64 | first_offset int64 |
# last_offset int64 | last_stable_offset int64, big-endian, 34 bytes.
ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = ENTRY.size
CURRENT_VERSION = 0
log = logging.getLogger(__name__)


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int        # the transaction's first data offset
    last_offset: int         # the offset of its ABORT marker
    last_stable_offset: int  # the partition's LSO once this transaction completed

    def encode(self) -> bytes:
        return ENTRY.pack(CURRENT_VERSION, *self)


class TransactionIndex:
    """Every transaction whose ABORT marker lies in the segment, in marker order.

    Byte layout: ENTRY_SIZE-byte entries back to back, nothing else (no header), as
    Kafka writes it. A torn last entry (a crash mid-write) is ignored, and so is everything
    from an entry of another version on (logged). The file is
    created with the first entry - a segment without aborted transactions has none, as
    in Kafka. Entries are cached in memory after the first read (34 bytes per aborted
    transaction): fetches consult them on every read_committed request.

    A read_committed consumer needs, for the records it fetches, the aborted
    transactions that overlap them: `collect(fetch_offset, upper_bound)` answers those,
    and says whether the search may stop (Kafka's TxnIndexSearchResult.isComplete: an
    entry whose last stable offset reaches the bound proves no later segment holds one
    that overlaps).

    Not thread-safe: owned by its LogSegment, called on the broker's event loop (and
    by the cleaner's thread while it holds the segment pinned, read-only).
    """

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = Path(path)
        self.base_offset = base_offset
        self._entries: list[AbortedTxn] | None = None
        self._dirty = False

    def __repr__(self) -> str:
        return f"TransactionIndex({self.path.name}, entries={len(self.entries)})"

    @property
    def entries(self) -> list[AbortedTxn]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> list[AbortedTxn]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        whole = len(data) - len(data) % ENTRY_SIZE
        entries = []
        for pos in range(0, whole, ENTRY_SIZE):
            version, *fields = ENTRY.unpack_from(data, pos)
            if version != CURRENT_VERSION:
                # Not an entry we wrote: keep what precedes it rather than fail every fetch.
                log.warning("%s: entry at byte %d has version %d; entries from there are ignored",
                            self.path, pos, version)
                break
            entries.append(AbortedTxn(*fields))
        return entries

    # --- writes --------------------------------------------------------------------------
    def append(self, txn: AbortedTxn) -> None:
        entries = self.entries
        if entries and txn.last_offset < entries[-1].last_offset:
            raise ValueError(f"aborted txn ending at {txn.last_offset} goes back before "
                             f"{entries[-1].last_offset} in {self.path}")
        self._write_all([txn], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        entries.append(txn)

    def _write_all(self, txns: list[AbortedTxn], flags: int) -> None:
        fd = filesystem.FS.open(self.path, flags, 0o644)
        try:
            view = memoryview(b"".join(t.encode() for t in txns))
            while view:
                view = view[filesystem.FS.write(fd, view):]
        finally:
            os.close(fd)
        self._dirty = True

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose marker is at or above `offset` (the log was cut there)."""
        kept = [t for t in self.entries if t.last_offset < offset]
        if len(kept) == len(self.entries) and self._size_is_whole():
            return
        self._entries = kept
        if not kept:
            unlink_quietly(self.path)
            return
        self._write_all(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)

    def _size_is_whole(self) -> bool:
        try:
            return self.path.stat().st_size % ENTRY_SIZE == 0
        except FileNotFoundError:
            return True

    def reset(self) -> None:
        """Forget every entry (the segment is being re-indexed from its .log)."""
        self._entries = []
        unlink_quietly(self.path)

    # --- reads ---------------------------------------------------------------------------
    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """Entries overlapping [fetch_offset, upper_bound) and whether the search is complete."""
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    # --- lifecycle -----------------------------------------------------------------------
    def flush(self) -> None:
        if not self._dirty or not self.path.exists():
            self._dirty = False
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            filesystem.FS.fsync(fd)
        finally:
            os.close(fd)
        self._dirty = False

    def close(self) -> None:
        """Nothing stays open between calls; kept for the segment's symmetry."""

    def delete(self) -> None:
        unlink_quietly(self.path)
        self._entries = []
