"""Crash-safe replacement of segments by a cleaned one (Kafka's `.cleaned`/`.swap` protocol).

The log cleaner writes the replacement under `<base>.log.cleaned` (+ `.index.cleaned`,
`.timeindex.cleaned`) and fsyncs it. Then:

1. `commit_cleaned`: rename the index files, then the `.log`, from `.cleaned` to `.swap`.
   `<base>.log.swap` existing is the commit point: from then on the swap must finish.
2. The caller deletes the old segments.
3. `finish_swap`: rename the `.swap` files to their final names.

A crash before step 1 completes leaves the old segments intact plus stray `.cleaned`
files, which the loader deletes. A crash after it leaves a `.log.swap` that
`complete_interrupted_swaps` (called by the loader before anything else) finishes: it
deletes whatever old segments remain in the swap's offset range and renames the swap
into place; the indexes of that segment are rebuilt from the `.log`.

No asyncio here; the caller owns the directory while these run.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import filesystem
from .file_records import FileRecords
from .log_files import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, fsync_dir, offset_file,
                        offset_from_file, unlink_quietly)

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
_INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX)


def _path(directory: Path, base_offset: int, suffix: str, extra: str = "") -> Path:
    return offset_file(directory, base_offset, suffix + extra)


def commit_cleaned(directory: Path, base_offset: int) -> None:
    """Step 1: `.cleaned` -> `.swap`, the `.log` last (its rename is the commit point).
    The `.txnindex` cannot be rebuilt from the `.log` alone, so it always takes part (empty
    if the cleaned segment aborts nothing): a swap then always holds its own."""
    txn_index = _path(directory, base_offset, TXN_INDEX_SUFFIX, CLEANED_SUFFIX)
    if not txn_index.exists():
        txn_index.touch()
    for suffix in (TXN_INDEX_SUFFIX, *_INDEX_SUFFIXES, LOG_SUFFIX):
        os.rename(_path(directory, base_offset, suffix, CLEANED_SUFFIX),
                  _path(directory, base_offset, suffix, SWAP_SUFFIX))
    fsync_dir(directory)


def finish_swap(directory: Path, base_offset: int) -> None:
    """Step 3: `.swap` -> final names (the old segments are gone by now); the .txnindex
    first, so a `.log.swap` left by a crash means its .txnindex is still a `.swap` too."""
    for suffix in (TXN_INDEX_SUFFIX, LOG_SUFFIX, *_INDEX_SUFFIXES):
        filesystem.FS.replace(_path(directory, base_offset, suffix, SWAP_SUFFIX), _path(directory, base_offset, suffix))
    fsync_dir(directory)


def complete_interrupted_swaps(directory: Path) -> int:
    """Finish every swap a crash interrupted after its commit point; return how many."""
    directory = Path(directory)
    swaps = sorted(name for name in os.listdir(directory) if name.endswith(LOG_SUFFIX + SWAP_SUFFIX))
    for name in swaps:
        base = offset_from_file(name)
        if base is None:
            continue
        end = _next_offset(directory / name, base)
        for other in os.listdir(directory):
            other_base = offset_from_file(other)
            if other_base is None or not other.endswith(LOG_SUFFIX) or not base < other_base < end:
                continue
            for suffix in (LOG_SUFFIX, TXN_INDEX_SUFFIX, *_INDEX_SUFFIXES):
                unlink_quietly(_path(directory, other_base, suffix))
        # The swap's own indexes may be half renamed; the loader rebuilds missing ones.
        for suffix in _INDEX_SUFFIXES:
            unlink_quietly(_path(directory, base, suffix, SWAP_SUFFIX))
            unlink_quietly(_path(directory, base, suffix))
        swapped_txn_index = _path(directory, base, TXN_INDEX_SUFFIX, SWAP_SUFFIX)
        if swapped_txn_index.exists():
            filesystem.FS.replace(swapped_txn_index, _path(directory, base, TXN_INDEX_SUFFIX))
        filesystem.FS.replace(directory / name, _path(directory, base, LOG_SUFFIX))
    if swaps:
        fsync_dir(directory)
    return len(swaps)


def _next_offset(path: Path, base_offset: int) -> int:
    """One past the last offset in a swap file (fsynced before it was committed)."""
    records = FileRecords(path)
    try:
        end = base_offset
        for _, header, _ in records.batches():
            end = header.next_offset
        return end
    finally:
        records.close()
