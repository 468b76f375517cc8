"""Log compaction: keep the latest record of every key (Kafka's LogCleaner).

A compacted log (cleanup.policy contains "compact") has a clean head, already compacted,
and a dirty tail, written since; the boundary is the log's *first dirty offset*, kept per
partition in `cleaner-offset-checkpoint` (OffsetCheckpointFile format) in the log dir.
The active segment is never cleaned, nor segments younger than min.compaction.lag.ms, nor
segments reaching above the bound the broker gives, the last stable offset (as Kafka): a
record a follower may still truncate must not supersede older ones, and an open
transaction's data is not known yet to be committed or aborted.

A log is cleaned once dirty bytes / (clean + dirty bytes) reaches
min.cleanable.dirty.ratio, or once its oldest dirty segment is older than
max.compaction.lag.ms. A cleaning:

1. scans the dirty segments into an offset map, key -> offset of its latest record
   (bounded by log.cleaner.dedupe.buffer.size at 24 bytes an entry, as Kafka's map of
   16-byte key hashes and 8-byte offsets; a full map stops at a segment boundary and the
   rest waits for the next round);
2. rewrites every segment below the end of the map, in groups that fit one segment
   (segment.bytes and 2^31 offsets), keeping a record unless a later record has its key.
   Offsets never change, so gaps are normal. A batch that keeps all its records is copied
   byte for byte; one that loses some is re-encoded (`encode_batch`), keeping its base
   offset, last offset delta (so producer sequence numbers stay intact), producer fields,
   timestamp type and compression codec; a batch that loses all records is dropped, unless
   it is the last of an active producer (below). Records without a key are dropped, as
   Kafka does (a compacted topic cannot hold them); batches of aborted transactions are
   dropped (their records never enter the offset map either), and COMMIT/ABORT markers go
   only once no data of their transaction is left and delete.retention.ms has passed
   (cleaner_txns.py, Kafka's rule);
3. swaps each group for its cleaned segment crash-safely (Log.replace_segments).

An active producer's last sequence and epoch stay in the log (Kafka's RETAIN_EMPTY): the batch
holding its last data offset, or the marker that is its last entry, is kept as an empty batch
(header only, `empty_batch`) when it loses all its records (`retains_empty`, against the producer
state read on the owner once per group, as Kafka's lastRecordsOfActiveProducers). A producer state
rebuilt from the log (a restart without snapshot, a new replica) thus still answers a retry of the
last acknowledged batch as a duplicate. Once the producer expired (producer.id.expiration.ms) or
wrote again, a cleaning drops it; an empty marker ends no transaction (log_transactions.py).

Tombstones (null values) live delete.retention.ms after the cleaner first keeps them
(KIP-534): the first cleaning that keeps a batch with tombstones rewrites it with a delete
horizon, now + delete.retention.ms, stored as the batch's base timestamp and flagged in its
attributes (bit 6), as Kafka does; record timestamps are deltas from it, so clients read
the same timestamps. A later cleaning past the horizon drops them, and a log whose
earliest horizon has passed is cleaned even when it has no new dirty data (the horizons
are tracked in memory, as in Kafka).

A cleaning that fails on a partition's data (a batch it cannot read) marks that partition
uncleanable, logs it once and goes on with the others, as Kafka's LogCleanerManager does; it is
not cleaned again until it is deleted or created anew (`uncleanable_partitions`; DescribeConfigs
shows them, engine/protocol/configs.py). An I/O error is the disk's, not the partition's: it
goes to the broker.

Cleaning is a generator of steps (`StepRunner` drives it). The broker runs the steps on a
worker thread, off the event loop, except the segment swap, which the generator hands back
as an `OnOwner` step for the log's owner (the loop) to run. The log may change between
steps (appends, retention, deletion): the cleaner pins the files it reads and writes
(file_handles.py), so their descriptors stay valid, and checks on the owner, right before
every swap, that its segments are still there. Memory stays bounded: the offset map holds
16-byte key digests, at most log.cleaner.dedupe.buffer.size / 24 entries, as Kafka's; files
are read in log.cleaner.io.buffer.size chunks; a compressed batch is inflated as a bounded
stream (decompression.py), and one that inflates past the bound is kept as it is. No asyncio
here.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .checkpoint import OffsetCheckpointFile
from .cleaner_batches import digest, empty_batch, filter_batch, filter_marker, records_of, retains_empty
from .cleaner_steps import OnOwner, StepRunner
from .cleaner_txns import CleanedTransactions
from .control_records import read_marker
from .decompression import decompressed_limit
from .log import Log
from .log_files import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, offset_file, unlink_quietly
from .log_transactions import collect_aborted
from .producer_state import LastRecord
from .errors import CorruptRecordError, is_io_failure
from .records import INT32_MAX, read_header
from .segment import LogSegment
from .segment_swap import CLEANED_SUFFIX

log = logging.getLogger(__name__)

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_MAP_ENTRY_BYTES = 24
BATCHES_PER_STEP = 200

TopicPartition = tuple[str, int]


class CleaningAborted(Exception):
    """The log changed under the cleaner (segments deleted, log closed)."""


@dataclass
class CleanerStats:
    topic_partition: TopicPartition
    first_dirty_offset: int
    end_offset: int                 # the new first dirty offset
    records_read: int = 0
    records_retained: int = 0
    tombstones_dropped: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    segments_before: int = 0
    segments_after: int = 0
    earliest_delete_horizon: int | None = None   # of the tombstones kept

    def kept_tombstones_until(self, horizon: int) -> None:
        if self.earliest_delete_horizon is None or horizon < self.earliest_delete_horizon:
            self.earliest_delete_horizon = horizon


@dataclass(frozen=True)
class Cleanable:
    """A log due for cleaning: its dirty range and dirty ratio."""
    first_dirty_offset: int
    upper_bound: int                # the base offset of the first segment not to clean
    dirty_ratio: float


class LogCleaner:
    """Compacts the logs of one log dir and owns its `cleaner-offset-checkpoint`.

    One cleaning at a time: `logs_to_clean` on the owner's thread, then the steps of `clean`
    through a StepRunner (see the module docstring).
    """

    def __init__(self, log_dir: Path | str, *, dedupe_buffer_size: int = 128 * 1024 * 1024,
                 io_buffer_size: int = 512 * 1024) -> None:
        self._checkpoint_file = OffsetCheckpointFile(Path(log_dir) / CLEANER_CHECKPOINT)
        self._first_dirty: dict[TopicPartition, int] = self._checkpoint_file.read_or_ignore(
            "compacted logs are cleaned again from their start")
        self._seen: dict[TopicPartition, Log] = {}
        self._delete_horizons: dict[TopicPartition, int] = {}
        self._uncleanable: dict[TopicPartition, Log] = {}   # written on the owner's thread only
        self.max_map_entries = max(1, dedupe_buffer_size // OFFSET_MAP_ENTRY_BYTES)
        self.io_buffer_size = io_buffer_size

    # --- which logs, and how much of them -------------------------------------------
    def first_dirty_offset(self, tp: TopicPartition, log: Log) -> int:
        if self._seen.get(tp, log) is not log:  # the partition was deleted and re-created
            self._first_dirty.pop(tp, None)
            self._delete_horizons.pop(tp, None)
        self._seen[tp] = log
        offset = self._first_dirty.get(tp, log.log_start_offset)
        if not log.log_start_offset <= offset <= log.log_end_offset:
            offset = log.log_start_offset
        return offset

    def cleanable(self, tp: TopicPartition, log: Log, now_ms: int,
                  high_watermark: int | None = None) -> Cleanable | None:
        """The dirty range if the log is due for cleaning, else None."""
        if not log.config.compact or log.closed:
            return None
        segments = log.segments
        first_dirty = self.first_dirty_offset(tp, log)
        upper = segments[-1].base_offset
        if high_watermark is not None:
            upper = next((s.base_offset for s in segments[:-1] if s.next_offset > high_watermark), upper)
        if log.config.min_compaction_lag_ms > 0:
            horizon = now_ms - log.config.min_compaction_lag_ms
            upper = next((s.base_offset for s in segments[:-1]
                          if s.next_offset > first_dirty and s.largest_timestamp() > horizon), upper)
        dirty = [s for s in segments[:-1] if s.next_offset > first_dirty and s.base_offset < upper]
        dirty_bytes = sum(s.size for s in dirty)
        clean_bytes = sum(s.size for s in segments if s.next_offset <= first_dirty)
        ratio = dirty_bytes / (clean_bytes + dirty_bytes) if dirty_bytes else 0.0
        first_ts = dirty[0].rolling_based_timestamp if dirty_bytes else None
        overdue = first_ts is not None and 0 <= first_ts < now_ms - log.config.max_compaction_lag_ms
        horizon = self._delete_horizons.get(tp)
        tombstones_due = horizon is not None and horizon <= now_ms
        if not (dirty_bytes and ratio >= log.config.min_cleanable_dirty_ratio) and not overdue \
                and not tombstones_due:
            return None
        return Cleanable(first_dirty, upper, ratio)

    def logs_to_clean(self, logs: dict[TopicPartition, Log], now_ms: int,
                      high_watermarks: dict[TopicPartition, int] | None = None
                      ) -> list[tuple[TopicPartition, Log]]:
        """The logs due for cleaning, dirtiest first; forgets partitions that are gone.
        With `high_watermarks`, a log without one is not cleaned."""
        for tp in [tp for tp in self._first_dirty if tp not in logs]:
            del self._first_dirty[tp]
        for tp in [tp for tp in self._seen if tp not in logs]:
            del self._seen[tp]
        for tp in [tp for tp in self._delete_horizons if tp not in logs]:
            del self._delete_horizons[tp]
        for tp in [tp for tp, log in self._uncleanable.items() if logs.get(tp) is not log]:
            del self._uncleanable[tp]   # deleted, or deleted and created again: a new log
        due = [(c.dirty_ratio, tp, log) for tp, log in logs.items()
               if (high_watermarks is None or tp in high_watermarks) and tp not in self._uncleanable
               and (c := self.cleanable(tp, log, now_ms, _bound(high_watermarks, tp))) is not None]
        return [(tp, log) for _, tp, log in sorted(due, key=lambda d: -d[0])]

    # --- partitions that failed -----------------------------------------------------------
    @property
    def uncleanable_partitions(self) -> list[TopicPartition]:
        """Partitions a cleaning failed on (Kafka's uncleanable partitions of a log dir; their
        count is its `uncleanable-partitions-count`): never cleaned again until the partition
        is deleted (or deleted and created again). Read on the owner's thread."""
        return sorted(self._uncleanable)

    def _mark_uncleanable(self, tp: TopicPartition, log_: Log, exc: Exception) -> None:
        if tp in self._uncleanable:
            return
        self._uncleanable[tp] = log_
        log.warning("Cleaning of %s-%d failed, its partition is marked uncleanable and not cleaned again "
                    "(the other partitions are): %s: %s", tp[0], tp[1], type(exc).__name__, exc)

    # --- cleaning ---------------------------------------------------------------------
    def run(self, logs: dict[TopicPartition, Log], now_ms: int,
            high_watermarks: dict[TopicPartition, int] | None = None) -> list[CleanerStats]:
        """Clean every log that is due, without yielding (tests, tools)."""
        results = []
        for tp, log_ in self.logs_to_clean(logs, now_ms, high_watermarks):
            stats = StepRunner(self.clean(tp, log_, now_ms, _bound(high_watermarks, tp))).run_here()
            if stats is not None:
                results.append(stats)
        return results

    def clean(self, tp: TopicPartition, log_: Log, now_ms: int,
              high_watermark: int | None = None) -> Iterator[None]:
        """Clean one log; a generator that yields between steps and returns CleanerStats
        (None if there was nothing to do or the log changed under it)."""
        cleanable = self.cleanable(tp, log_, now_ms, high_watermark)
        if cleanable is None:
            return None
        try:
            stats = yield from self._clean(tp, log_, cleanable, now_ms)
        except CleaningAborted as exc:
            log.info("Cleaning of %s-%d aborted: %s", tp[0], tp[1], exc)
            return None
        except Exception as exc:  # noqa: BLE001 - one bad partition must not stop the others
            if is_io_failure(exc):
                raise                        # the disk's, not the partition's: the broker decides
            yield OnOwner(lambda error=exc: self._mark_uncleanable(tp, log_, error))
            return None
        if stats is not None:
            self._first_dirty[tp] = stats.end_offset
            if stats.earliest_delete_horizon is None:
                self._delete_horizons.pop(tp, None)
            else:
                self._delete_horizons[tp] = stats.earliest_delete_horizon
            self._checkpoint_file.write(self._first_dirty)
            log.info("Cleaned %s-%d up to offset %d: %d of %d records kept, %d tombstones dropped, "
                     "%d -> %d bytes", tp[0], tp[1], stats.end_offset, stats.records_retained,
                     stats.records_read, stats.tombstones_dropped, stats.bytes_read, stats.bytes_written)
        return stats

    def _clean(self, tp, log_: Log, cleanable: Cleanable, now_ms: int):
        segments = list(log_.segments)
        dirty = [s for s in segments[:-1]
                 if s.next_offset > cleanable.first_dirty_offset and s.base_offset < cleanable.upper_bound]
        offset_map, end = yield from self._build_offset_map(log_, segments, dirty, cleanable.first_dirty_offset)
        to_clean = [s for s in segments[:-1] if s.base_offset < end]
        if not to_clean:
            return None
        stats = CleanerStats(tp, cleanable.first_dirty_offset, max(end, cleanable.first_dirty_offset),
                             segments_before=len(segments))
        for group in group_segments_by_size(to_clean, log_.config.segment_bytes):
            yield from self._clean_group(log_, segments, group, offset_map, now_ms, stats)
        stats.segments_after = len(log_.segments)
        return stats

    def _build_offset_map(self, log_: Log, segments: list[LogSegment], dirty: list[LogSegment], end: int):
        """key digest -> latest offset over as many whole dirty segments as the map holds;
        returns the map and the offset where the unmapped rest begins (`end` if nothing is mapped)."""
        offset_map: dict[bytes, int] = {}
        limit = decompressed_limit(log_.config.max_message_bytes)
        txns = CleanedTransactions()
        for segment in dirty:
            segment_map: dict[bytes, int] = {}
            steps = 0
            txns.add_aborted(_aborted_in(segments, segment))
            with segment.log.pinned():
                for _, header, data in segment.log.batches(0, with_data=True, chunk_bytes=self.io_buffer_size):
                    if header.is_control:
                        _track_marker(txns, data, header)
                    elif not txns.on_batch(header):
                        for record in records_of(data, header, limit, log_.dir.name) or ():
                            if record.key is not None:
                                segment_map[digest(record.key)] = record.offset
                    steps += 1
                    if steps % BATCHES_PER_STEP == 0:
                        yield
                        _check_still_there(log_, [segment])
            if offset_map and len(offset_map.keys() | segment_map.keys()) > self.max_map_entries:
                break
            offset_map.update(segment_map)
            following = segments[segments.index(segment) + 1]
            end = following.base_offset
            yield
            _check_still_there(log_, [segment])
        return offset_map, end

    def _clean_group(self, log_: Log, segments: list[LogSegment], group: list[LogSegment],
                     offset_map: dict[bytes, int], now_ms: int, stats: CleanerStats):
        base = group[0].base_offset
        _remove_cleaned_files(log_.dir, base)  # left over from an aborted round
        cleaned = LogSegment.open(log_.dir, base, log_.config, now_ms, file_suffix=CLEANED_SUFFIX)
        limit = decompressed_limit(log_.config.max_message_bytes)
        txns = CleanedTransactions(cleaned.txn_index)
        retention = log_.config.delete_retention_ms
        last_records: dict[int, LastRecord] = {}
        try:
            # The producer state is the owner's: read there, once per group (as Kafka, per cleanSegments).
            yield OnOwner(lambda: last_records.update(log_.producer_state.last_records_of_active_producers()))
            steps = 0
            with cleaned.pinned():
                for segment in group:
                    txns.add_aborted(_aborted_in(segments, segment))
                    with segment.log.pinned():
                        for _, header, data in segment.log.batches(0, with_data=True,
                                                                   chunk_bytes=self.io_buffer_size):
                            stats.bytes_read += header.size
                            if header.is_control:
                                kept = filter_marker(data, header, txns, now_ms, retention, stats)
                            elif txns.on_batch(header):
                                kept = None     # an aborted transaction's data
                                stats.records_read += header.records_count
                            else:
                                kept = filter_batch(data, header, offset_map, now_ms, retention, stats, limit,
                                                    log_.dir.name)
                            if kept is None and retains_empty(header, last_records):
                                kept = empty_batch(header)   # an active producer's last sequence / epoch
                            if kept is not None:
                                new_header = read_header(kept)
                                cleaned.append(kept, new_header.base_offset, new_header.last_offset,
                                               new_header.max_timestamp, new_header.last_offset)
                                stats.bytes_written += len(kept)
                            steps += 1
                            if steps % BATCHES_PER_STEP == 0:
                                yield
                                _check_still_there(log_, group)
                cleaned.flush()
            last_modified = max(s.log.last_modified_ms() for s in group)

            def swap() -> None:   # on the log's owner: the only step that changes the Log
                _check_still_there(log_, group)
                log_.replace_segments(cleaned, group, last_modified_ms=last_modified, now_ms=now_ms)
            yield OnOwner(swap)
        except BaseException:
            cleaned.delete()
            _remove_cleaned_files(log_.dir, base)
            raise
        yield


def _aborted_in(segments: list[LogSegment], segment: LogSegment) -> list:
    """Aborted transactions overlapping `segment`, from its .txnindex and the later ones."""
    i = segments.index(segment)
    upper = segments[i + 1].base_offset if i + 1 < len(segments) else segment.next_offset
    return collect_aborted(segments[i:], segment.base_offset, upper)


def _track_marker(txns: CleanedTransactions, data, header) -> None:
    try:
        txns.on_marker(header, read_marker(data, 0, header))
    except CorruptRecordError:
        pass   # an empty control batch ends nothing


def _bound(high_watermarks: dict[TopicPartition, int] | None, tp: TopicPartition) -> int | None:
    return None if high_watermarks is None else high_watermarks.get(tp)


def group_segments_by_size(segments: list[LogSegment], max_size: int) -> list[list[LogSegment]]:
    """Runs of consecutive segments that together fit one segment: at most `max_size`
    bytes and offsets within 2^31 of the first base offset (Kafka's groupSegmentsBySize)."""
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        group, size = [segments[i]], segments[i].size
        i += 1
        while (i < len(segments) and size + segments[i].size <= max_size
               and segments[i].next_offset - 1 - group[0].base_offset <= INT32_MAX):
            group.append(segments[i])
            size += segments[i].size
            i += 1
        groups.append(group)
    return groups


def _check_still_there(log_: Log, segments: list[LogSegment]) -> None:
    if log_.closed:
        raise CleaningAborted("the log was closed")
    current = log_.segments
    if any(all(s is not c for c in current) for s in segments):
        raise CleaningAborted("segments were deleted meanwhile")


def _remove_cleaned_files(directory: Path, base_offset: int) -> None:
    for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
        unlink_quietly(offset_file(directory, base_offset, suffix + CLEANED_SUFFIX))

