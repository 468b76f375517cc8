"""Opens a partition dir and brings it to a consistent state (Kafka's LogLoader).

Restart cost must not grow with the data held: segments below the recovery point were
fsynced before that point was checkpointed, so they only get a cheap index sanity
check.  Only the segment holding the recovery point and those after it - the bytes
that may not have reached the disk - are validated batch by batch, and only after an
unclean shutdown.
"""
from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from .errors import CorruptIndexError
from .log_config import LogConfig
from .log_files import (INDEX_SUFFIX, LOG_SUFFIX, STRAY_SUFFIXES, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, fsync_dir,
                        as_path, offset_from_file, unlink_quietly)
from .log_transactions import replay_segments
from .producer_state import ProducerStateManager
from .records import INT32_MAX
from .segment import LogSegment
from .segment_swap import SWAP_SUFFIX, complete_interrupted_swaps


SWAP_LOG_SUFFIX = LOG_SUFFIX + SWAP_SUFFIX


@dataclass
class RecoveryStats:
    """What loading logs cost, summed over the logs of a log dir: the segments crash recovery
    validated batch by batch (none after a clean shutdown) and the bytes it cut off."""
    logs: int = 0
    recovered_segments: int = 0
    truncated_bytes: int = 0

    def add(self, other: RecoveryStats) -> None:
        self.logs += other.logs
        self.recovered_segments += other.recovered_segments
        self.truncated_bytes += other.truncated_bytes


@dataclass
class LoadedLog:
    segments: list[LogSegment]
    log_start_offset: int
    recovery_point: int
    log_end_offset: int


class LogLoader:
    """Single use: `LogLoader(...).load()`.  Runs before the Log exists, so it owns
    every file of the dir for its duration.  Not thread-safe."""

    def __init__(self, directory: Path, config: LogConfig, producer_state: ProducerStateManager,
                 *, recovery_point: int, log_start_offset: int, had_clean_shutdown: bool,
                 now_ms: int, stats: RecoveryStats | None = None) -> None:
        self.dir = as_path(directory)
        self.config = config
        self.producer_state = producer_state
        self.recovery_point = recovery_point
        self.log_start_offset = log_start_offset
        self.had_clean_shutdown = had_clean_shutdown
        self.now_ms = now_ms
        self.stats = stats if stats is not None else RecoveryStats()

    def load(self) -> LoadedLog:
        self.stats.logs += 1
        # One listing serves every step (a listing of a dir not in the page cache is a disk read).
        try:
            names = set(os.listdir(self.dir))
        except FileNotFoundError:
            self.dir.mkdir(parents=True, exist_ok=True)
            names = set()
        if any(name.endswith(SWAP_LOG_SUFFIX) for name in names):
            complete_interrupted_swaps(self.dir)  # before strays: a committed .swap is not one
            names = set(os.listdir(self.dir))
        names = self._remove_stray_files(names)
        segments = self._open_segments(names)
        if not segments:
            # No fsync for a new, empty segment: the metadata journal, not this directory, says
            # the partition exists, and the broker recreates a missing one at start.
            segments = [LogSegment.open(self.dir, self.log_start_offset, self.config, self.now_ms)]
        log_end_offset = segments[-1].next_offset
        log_start_offset = min(max(self.log_start_offset, segments[0].base_offset), log_end_offset)
        recovered = segments[self._first_unflushed:]
        rebuild_producer_state(segments, self.producer_state, log_end_offset, reindex=recovered, names=names)
        # Everything below the end is durable now: clean shutdown flushed it, recovery
        # fsynced what it validated.
        return LoadedLog(segments, log_start_offset, log_end_offset, log_end_offset)

    def _remove_stray_files(self, names: set[str]) -> set[str]:
        """Delete leftovers of interrupted operations; return the names that remain."""
        kept = set(names)
        for name in names:
            orphan_index = name.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)) and \
                f"{name.rsplit('.', 1)[0]}{LOG_SUFFIX}" not in names
            if name.endswith(STRAY_SUFFIXES) or orphan_index:
                unlink_quietly(self.dir / name)
                kept.discard(name)
        return kept

    def _open_segments(self, names: set[str]) -> list[LogSegment]:
        bases = sorted(offset_from_file(name) for name in names
                       if name.endswith(LOG_SUFFIX) and offset_from_file(name) is not None)
        first_unflushed = len(bases)
        if not self.had_clean_shutdown:
            # The segment holding the recovery point may have unflushed bytes too.
            first_unflushed = max(0, bisect_right(bases, self.recovery_point) - 1)
        self._first_unflushed = first_unflushed
        segments = []
        for i, base in enumerate(bases):
            indexes_exist = f"{base:020d}{INDEX_SUFFIX}" in names and f"{base:020d}{TIME_INDEX_SUFFIX}" in names
            segment = LogSegment.open(self.dir, base, self.config, self.now_ms)
            segments.append(segment)
            if i < first_unflushed:
                self._check_indexes(segment, indexes_exist)
        return self._recover(segments, first_unflushed)

    def _check_indexes(self, segment: LogSegment, indexes_exist: bool) -> None:
        try:
            if not indexes_exist:
                raise CorruptIndexError("missing index")
            segment.sanity_check()
        except CorruptIndexError:
            segment.recover(INT32_MAX)

    def _recover(self, segments: list[LogSegment], first_unflushed: int) -> list[LogSegment]:
        """Validate the unflushed segments; after the first torn one, drop the rest."""
        for i in range(first_unflushed, len(segments)):
            segment = segments[i]
            # No max.message.bytes limit here: a lowered limit must not cut data that
            # was accepted under the old one; the CRC is what tells garbage apart.
            truncated = segment.recover(INT32_MAX)
            segment.flush()
            self.stats.recovered_segments += 1
            self.stats.truncated_bytes += truncated
            if truncated:
                for doomed in segments[i + 1:]:
                    doomed.delete()
                del segments[i + 1:]
                fsync_dir(self.dir)
                break
        return segments


def rebuild_producer_state(segments: list[LogSegment], producer_state: ProducerStateManager,
                           log_end_offset: int, *, reindex: list[LogSegment] = (),
                           names: set[str] | None = None) -> None:
    """Newest snapshot at or below the log end, plus the batches after it; the segments in
    `reindex` (validated by crash recovery) get their .txnindex rebuilt by that replay.
    `names`: the dir's listing, if the caller has one."""
    start = producer_state.truncate_and_reload(log_end_offset, names)
    if start < log_end_offset:     # a snapshot at the end (a clean shutdown) leaves nothing to replay
        replay_segments(segments, producer_state, start, reindex)
