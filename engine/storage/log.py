"""One partition's log: an ordered run of segments plus its producer state (Kafka's UnifiedLog)."""
from __future__ import annotations

import os
import shutil
import time
from engine import clock
from engine.metrics.stats import log_flushed
from bisect import bisect_right
from pathlib import Path
from typing import Callable

from .errors import OffsetOutOfRangeError, RecordBatchTooLargeError
from .file_records import FileSlice
from .leader_epoch_cache import LeaderEpochFileCache
from .log_config import LogConfig
from .log_files import STRAY_DIR_SUFFIX, as_path, delete_dir_name, fsync_dir
from .log_loader import LogLoader, RecoveryStats, rebuild_producer_state
from .log_transactions import collect_aborted, index_completed, stage_producers
from .log_validator import (LogAppendInfo, StampedBatches, analyze_records,
                            assign_offsets_and_timestamps, check_follower_offsets)
from .producer_state import BatchMetadata, ProducerStateManager, TxnVerification
from .transaction_index import AbortedTxn
from .record_keys import check_keys
from .segment import LogSegment
from .segment_swap import commit_cleaned, finish_swap

__all__ = ["Log", "LogAppendInfo", "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP"]

# ListOffsets sentinels.
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3


class Log:
    """The partition dir `<topic>-<partition>`: segments in base-offset order, the last
    one active (the only one appended to), and the partition's producer state.

    Offsets: `log_start_offset` is the first offset a consumer may read (DeleteRecords
    and retention raise it), `log_end_offset` the next offset to assign,
    `recovery_point` the offset below which everything is known to be fsynced - the
    loader re-validates only what lies above it after a crash.

    Not thread-safe: the Log owns its segments and producer state, and the broker's
    event loop is its only caller.
    """

    def __init__(self, directory: Path, config: LogConfig, segments: list[LogSegment], *,
                 log_start_offset: int, recovery_point: int,
                 producer_state: ProducerStateManager, now_ms: int) -> None:
        self.dir = as_path(directory)
        self._broker_dir = str(self.dir.parent)   # whose LogFlushStats a flush counts in
        self.config = config
        self._segments = segments
        self.log_start_offset = log_start_offset
        self.recovery_point = recovery_point
        self.producer_state = producer_state
        self._log_end_offset = segments[-1].next_offset
        self.last_flush_ms = now_ms
        self._closed = False
        # Which leader epoch began at which offset; replicas truncate by it (KIP-101).
        self.leader_epoch_cache = LeaderEpochFileCache(self.dir)
        if self.leader_epoch_cache.damaged:
            for segment in segments:
                for header in segment.headers_from(segment.base_offset):
                    self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        self.leader_epoch_cache.truncate_from_end(self._log_end_offset)

    @classmethod
    def open(cls, directory: Path | str, config: LogConfig, *, recovery_point: int = 0,
             log_start_offset: int = 0, now_ms: int, had_clean_shutdown: bool = False,
             stats: RecoveryStats | None = None) -> Log:
        """Load the partition dir (creating it if new); see log_loader.LogLoader. `stats`
        adds up what recovery did."""
        directory = Path(directory)
        producer_state = ProducerStateManager(directory)
        loaded = LogLoader(directory, config, producer_state, recovery_point=recovery_point,
                           log_start_offset=log_start_offset, had_clean_shutdown=had_clean_shutdown,
                           now_ms=now_ms, stats=stats).load()
        return cls(directory, config, loaded.segments, log_start_offset=loaded.log_start_offset,
                   recovery_point=loaded.recovery_point, producer_state=producer_state,
                   now_ms=now_ms)

    def __repr__(self) -> str:
        return (f"Log({self.dir.name}, start={self.log_start_offset}, "
                f"end={self._log_end_offset}, segments={len(self._segments)})")

    # --- state -------------------------------------------------------------------------
    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return tuple(self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    @property
    def unflushed_messages(self) -> int:
        """Offsets above the recovery point (Kafka counts flush.messages this way)."""
        return self._log_end_offset - self.recovery_point

    @property
    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    def update_config(self, config: LogConfig) -> None:
        self.config = config
        for segment in self._segments:
            segment.index_interval_bytes = config.index_interval_bytes

    def _segment_index(self, offset: int) -> int:
        """Index of the segment holding `offset` (the last one whose base is <= offset)."""
        return max(0, bisect_right(self._segments, offset, key=lambda s: s.base_offset) - 1)

    # --- appends -----------------------------------------------------------------------
    def append(self, records: bytearray, *, leader_epoch: int, now_ms: int,
               control: bool = False, records_checked: bool = False,
               verification: TxnVerification | None = None) -> LogAppendInfo:
        """Append a Produce request's batches as leader: validate, assign offsets, write.
        `control`: the batches are transaction markers the broker built (control_records.py).
        `records_checked`: a worker thread ran the checks of compressed batches and keys already.
        `verification`: a client's append under KIP-890 verification (stage_producers); None for
        the broker's own writes, and with `transaction.partition.verification.enable=false`."""
        records = records if isinstance(records, bytearray) else bytearray(records)
        batches = analyze_records(records, self.config, from_client=not control, control=control,
                                  records_checked=records_checked, now_ms=now_ms)
        if not batches:
            return LogAppendInfo(-1, -1, -1, -1, -1, self.log_start_offset, 0)
        if len(records) > self.config.segment_bytes:     # Kafka's UnifiedLog.append refuses it too
            raise RecordBatchTooLargeError(
                f"Message batch size is {len(records)} bytes in append to partition {self.dir.name}, "
                f"which exceeds the maximum configured segment size of {self.config.segment_bytes}.")
        if self.config.compact and not control and not records_checked:
            check_keys(records, batches, self.dir.name)
        log_append_time = now_ms if self.config.message_timestamp_type == "LogAppendTime" else None
        stamped = assign_offsets_and_timestamps(
            records, batches, base_offset=self._log_end_offset, leader_epoch=leader_epoch,
            log_append_time=log_append_time)
        info = self._append(records, stamped, now_ms, validate_producers=True, verification=verification,
                            log_append_time=-1 if log_append_time is None else log_append_time)
        if not info.duplicate:
            self.leader_epoch_cache.assign(leader_epoch, info.first_offset)
        return info

    def append_as_follower(self, records, *, now_ms: int) -> LogAppendInfo:
        """Append batches that already carry their offsets (replication from a leader)."""
        records = records if isinstance(records, bytearray) else bytearray(records)
        batches = analyze_records(records, self.config, from_client=False)
        if not batches:
            return LogAppendInfo(-1, -1, -1, -1, -1, self.log_start_offset, 0)
        stamped = check_follower_offsets(batches, self._log_end_offset)
        info = self._append(records, stamped, now_ms, validate_producers=False, log_append_time=-1)
        for header in stamped.headers:
            self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        return info

    def _append(self, records: bytearray, stamped: StampedBatches, now_ms: int, *,
                validate_producers: bool, log_append_time: int,
                verification: TxnVerification | None = None) -> LogAppendInfo:
        try:
            duplicate = stage_producers(self.producer_state, records, stamped.headers,
                                        validate=validate_producers, verification=verification)
            if duplicate is not None:
                self.producer_state.abort()
                return self._duplicate_info(duplicate)
            self._write(records, stamped, now_ms)
        except BaseException:
            self.producer_state.abort()
            raise
        completed = self.producer_state.commit()
        if completed:
            index_completed(self.producer_state, self.active_segment, completed)
        if self.unflushed_messages >= self.config.flush_messages:
            self.flush(now_ms)   # after the .txnindex entry, so the flush covers it
        return LogAppendInfo(stamped.first_offset, stamped.last_offset, stamped.max_timestamp,
                             stamped.offset_of_max_timestamp, log_append_time,
                             self.log_start_offset, stamped.num_records)

    def _duplicate_info(self, duplicate: BatchMetadata) -> LogAppendInfo:
        # Kafka acks a retried batch with the offsets it got the first time.
        log_append = self.config.message_timestamp_type == "LogAppendTime"
        return LogAppendInfo(
            duplicate.first_offset, duplicate.last_offset, duplicate.timestamp,
            duplicate.last_offset, duplicate.timestamp if log_append else -1,
            self.log_start_offset, duplicate.last_offset - duplicate.first_offset + 1,
            duplicate=True)

    def _write(self, records: bytearray, stamped: StampedBatches, now_ms: int) -> None:
        segment = self.active_segment
        if segment.should_roll(self.config, message_bytes=len(records),
                               max_timestamp=stamped.max_timestamp,
                               last_offset=stamped.last_offset, now_ms=now_ms):
            segment = self.roll(now_ms, base_offset=stamped.first_offset)
        segment.append(records, stamped.first_offset, stamped.last_offset,
                       stamped.max_timestamp, stamped.offset_of_max_timestamp)
        self._log_end_offset = stamped.last_offset + 1

    # --- reads -------------------------------------------------------------------------
    def read(self, start_offset: int, max_bytes: int, *, max_offset: int | None = None,
             min_one_batch: bool = True) -> FileSlice:
        """Bytes from the batch holding `start_offset`, from one segment, ending before
        `max_offset` (exclusive, e.g. the high watermark).  Empty at the end."""
        end = self._log_end_offset
        if start_offset < self.log_start_offset or start_offset > end:
            raise OffsetOutOfRangeError(start_offset, self.log_start_offset, end)
        bound = end if max_offset is None else min(max_offset, end)
        if start_offset >= bound:
            return self._empty_slice()
        for i in range(self._segment_index(start_offset), len(self._segments)):
            found = self._segments[i].read(start_offset, max_bytes, self._max_position(i, bound),
                                           min_one_batch)
            if found is not None:
                return found
        return self._empty_slice()

    def _max_position(self, i: int, bound: int) -> int | None:
        """Byte position in segment i where offset `bound` begins (None: the whole segment)."""
        segment = self._segments[i]
        if bound == self._log_end_offset:
            return None
        if i + 1 < len(self._segments) and self._segments[i + 1].base_offset <= bound:
            return None
        found = segment.translate_offset(bound)
        return None if found is None else found[0]

    def _empty_slice(self) -> FileSlice:
        """No bytes, so no descriptor (-1): the pooled file of the active segment is not reopened
        for it (an idle follower's fetches end here for every partition, twice a second)."""
        return FileSlice(-1, self.active_segment.size, 0)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound), from the .txnindex files."""
        return collect_aborted(self._segments[self._segment_index(fetch_offset):], fetch_offset, upper_bound)

    def fetch_upper_bound(self, fetch_offset: int, max_offset: int) -> int:
        """An offset no read from `fetch_offset` bounded by `max_offset` goes past: reads stay in one segment."""
        i = self._segment_index(fetch_offset)
        following = self._segments[i + 1].base_offset if i + 1 < len(self._segments) else self._log_end_offset
        return min(max_offset, following)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= `timestamp`.

        Also answers ListOffsets' sentinels: -1 latest, -2 earliest (timestamp -1),
        -3 the record with the largest timestamp.
        """
        if timestamp == LATEST_TIMESTAMP:
            return self._log_end_offset, -1
        if timestamp == EARLIEST_TIMESTAMP:
            return self.log_start_offset, -1
        if timestamp == MAX_TIMESTAMP:
            return self.max_timestamp_and_offset()
        for segment in self._segments[self._segment_index(self.log_start_offset):]:
            if segment.max_timestamp >= timestamp:
                found = segment.find_offset_by_timestamp(
                    timestamp, max(segment.base_offset, self.log_start_offset))
                if found is not None:
                    return found
        return None

    def max_timestamp_and_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record holding the log's largest timestamp."""
        segments = self._segments[self._segment_index(self.log_start_offset):]
        best = max(segments, key=lambda s: s.max_timestamp)
        if best.max_timestamp < 0:
            return None
        found = best.find_offset_by_timestamp(
            best.max_timestamp, max(best.base_offset, self.log_start_offset))
        return found or (best.offset_of_max_timestamp, best.max_timestamp)

    # --- segments ----------------------------------------------------------------------
    def roll(self, now_ms: int, *, base_offset: int | None = None) -> LogSegment:
        """Start a new active segment at the log end (or `base_offset` if higher)."""
        new_base = max(self._log_end_offset, base_offset or 0)
        active = self.active_segment
        if active.size == 0:
            if active.base_offset == new_base:
                return active
            active.delete()
            self._segments.pop()
        # As Kafka: the old segment is fsynced on roll, so the recovery point moves up
        # and a restart never re-reads it.
        self._flush_up_to(new_base)
        segment = LogSegment.open(self.dir, new_base, self.config, now_ms)
        self._segments.append(segment)
        fsync_dir(self.dir)
        self.producer_state.take_snapshot(new_base)
        return segment

    def delete_old_segments(self, now_ms: int, high_watermark: int | None = None) -> int:
        """Apply retention; return the number of segments deleted.

        As Kafka, only segments wholly below `high_watermark` may go (None: no bound, for a
        log outside replication): an unreplicated tail is never deleted on the leader, and
        the log start never passes the high watermark."""
        deleted = 0
        if self.config.delete:
            deleted += self._delete_leading(self._retention_ms_breached(now_ms), now_ms, high_watermark)
            deleted += self._delete_leading(self._retention_bytes_breached(), now_ms, high_watermark)
        deleted += self._delete_leading(self._log_start_breached, now_ms, high_watermark)
        return deleted

    def _retention_ms_breached(self, now_ms: int) -> Callable:
        retention_ms = self.config.retention_ms
        return lambda segment, _next: (
            retention_ms >= 0 and segment.largest_timestamp() < now_ms - retention_ms)

    def _retention_bytes_breached(self) -> Callable:
        excess = self.size_in_bytes - self.config.retention_bytes

        def breached(segment: LogSegment, _next) -> bool:
            nonlocal excess
            if self.config.retention_bytes < 0 or excess - segment.size < 0:
                return False
            excess -= segment.size
            return True
        return breached

    def _log_start_breached(self, _segment: LogSegment, following: LogSegment | None) -> bool:
        return following is not None and following.base_offset <= self.log_start_offset

    def _delete_leading(self, predicate: Callable, now_ms: int, bound: int | None = None) -> int:
        """Delete the oldest segments while `predicate(segment, next_segment)` holds and the
        segment ends at or below `bound` (default: the log end)."""
        bound = self._log_end_offset if bound is None else bound
        count = 0
        for i, segment in enumerate(self._segments):
            following = self._segments[i + 1] if i + 1 < len(self._segments) else None
            upper = following.base_offset if following is not None else self._log_end_offset
            if (following is None and segment.size == 0) or upper > bound or not predicate(segment, following):
                break
            count += 1
        if count == 0:
            return 0
        if count == len(self._segments):
            self.roll(now_ms)  # a log always keeps an active segment
        doomed, self._segments = self._segments[:count], self._segments[count:]
        self.log_start_offset = max(self.log_start_offset, self._segments[0].base_offset)
        self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
        for segment in doomed:
            segment.delete()
        self.producer_state.delete_snapshots_below(self._segments[0].base_offset)
        return count

    def delete_records_before(self, offset: int, now_ms: int | None = None) -> int:
        """DeleteRecords: raise log_start_offset to `offset`; return the new start."""
        if offset > self._log_end_offset:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self._log_end_offset)
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            self._delete_leading(self._log_start_breached, _now(now_ms))
        return self.log_start_offset

    def truncate_to(self, offset: int) -> bool:
        """Remove everything at or above `offset` (replication); True if anything went."""
        if offset >= self._log_end_offset:
            return False
        if offset < self._segments[0].base_offset:
            self.truncate_fully_and_start_at(offset)
            return True
        keep = self._segment_index(offset)
        for segment in self._segments[keep + 1:]:
            segment.delete()
        del self._segments[keep + 1:]
        self.active_segment.truncate_to(offset)
        self._log_end_offset = self.active_segment.next_offset
        self.log_start_offset = min(self.log_start_offset, self._log_end_offset)
        self.recovery_point = min(self.recovery_point, self._log_end_offset)
        rebuild_producer_state(self._segments, self.producer_state, self._log_end_offset)
        self.leader_epoch_cache.truncate_from_end(self._log_end_offset)
        return True

    def truncate_fully_and_start_at(self, offset: int, now_ms: int | None = None) -> None:
        """Drop every segment and restart the log, empty, at `offset`."""
        for segment in self._segments:
            segment.delete()
        self._segments = [LogSegment.open(self.dir, offset, self.config, _now(now_ms))]
        fsync_dir(self.dir)
        self._log_end_offset = self.log_start_offset = self.recovery_point = offset
        self.producer_state.truncate_fully()
        self.leader_epoch_cache.clear()

    # --- compaction: segment replacement (used by cleaner.py) ----------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    def replace_segments(self, cleaned: LogSegment, old: list[LogSegment], *,
                         last_modified_ms: int, now_ms: int) -> LogSegment:
        """Swap the consecutive non-active segments `old` for `cleaned`, which the log
        cleaner wrote under the ".cleaned" suffix at old[0]'s base offset.

        Offsets do not move: `cleaned` holds a subset of the old batches' offsets. The
        swap is crash-safe (segment_swap.py), and the new .log keeps the old segments'
        last-modified time, which retention falls back on for batches without timestamps.
        Raises ValueError, touching nothing, if `old` is no longer a run of this log's
        non-active segments (retention or truncation got there first).
        """
        start = next((i for i, s in enumerate(self._segments) if s is old[0]), None)
        if (start is None or start + len(old) >= len(self._segments)
                or any(a is not b for a, b in zip(self._segments[start:start + len(old)], old))):
            raise ValueError(f"segments {old} are no longer part of {self!r}")
        base = old[0].base_offset
        cleaned.flush()
        cleaned.close()
        commit_cleaned(self.dir, base)
        for segment in old:
            segment.delete()
        finish_swap(self.dir, base)
        replacement = LogSegment.open(self.dir, base, self.config, now_ms)
        os.utime(replacement.log.path, ns=(last_modified_ms * 1_000_000,) * 2)
        self._segments[start:start + len(old)] = [replacement]
        return replacement

    # --- durability --------------------------------------------------------------------
    def flush(self, now_ms: int | None = None) -> None:
        """fsync everything up to the log end and move the recovery point there."""
        self._flush_up_to(self._log_end_offset)
        if now_ms is not None:
            self.last_flush_ms = now_ms

    def maybe_flush(self, now_ms: int) -> bool:
        """Flush if flush.ms has passed since the last flush and something is unflushed."""
        if self.unflushed_messages and now_ms - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now_ms)
            return True
        return False

    def _flush_up_to(self, offset: int) -> None:
        if offset <= self.recovery_point:
            return
        started = time.perf_counter()
        for i, segment in enumerate(self._segments):
            following = self._segments[i + 1] if i + 1 < len(self._segments) else None
            if segment.base_offset < offset and (
                    following is None or following.base_offset > self.recovery_point):
                segment.flush()
        self.recovery_point = offset
        log_flushed(self._broker_dir, (time.perf_counter() - started) * 1000)   # LogFlushRateAndTimeMs

    def close(self) -> None:
        """Snapshot producer state at the log end (unless the newest snapshot is there
        already) and close every file."""
        if self._closed:
            return
        if self.producer_state.snapshot_needed(self._log_end_offset):
            self.producer_state.take_snapshot(self._log_end_offset)
        self._close_files()

    def release_descriptors(self) -> None:
        """Close every segment file's descriptor; each reopens on its next use (a log just
        loaded on a worker thread hands nothing open to the event loop)."""
        for segment in self._segments:
            segment.close()

    def _close_files(self) -> None:
        for segment in self._segments:
            segment.close()
        self._closed = True

    def delete(self) -> None:
        """Remove the partition dir: renamed aside first, so a crash mid-way never leaves
        a half-deleted dir that would load as a live partition."""
        doomed = self.rename_for_deletion()
        fsync_dir(self.dir.parent)
        shutil.rmtree(doomed, ignore_errors=True)

    def rename_for_deletion(self) -> Path:
        """Close the log and rename its dir `<topic>-<partition>.<uuid>-delete`, which the
        next load removes; the caller fsyncs the parent dir and removes the renamed dir
        (for many logs: one fsync, and the removal off the event loop)."""
        self._close_files()
        doomed = self.dir.with_name(delete_dir_name(self.dir.name))
        os.rename(self.dir, doomed)
        return doomed

    def rename_stray(self) -> Path:
        """Close the log and rename its dir `<topic>-<partition>.<uuid>-stray` (KIP-866): kept
        for the operator, never loaded again. Returns the new path."""
        self._close_files()
        stray = self.dir.with_name(delete_dir_name(self.dir.name, STRAY_DIR_SUFFIX))
        os.rename(self.dir, stray)
        fsync_dir(self.dir.parent)
        return stray


def _now(now_ms: int | None) -> int:
    return clock.now_ms() if now_ms is None else now_ms
