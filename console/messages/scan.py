"""Reading a topic's partitions between offsets: the loop under browse, search, tail and export.

`read_forward` fetches every partition from its position towards its end, all partitions in
one Fetch per leader per round, and yields each batch's records as kafka.record decodes
them. `search` runs a RecordFilter over that loop with live stats and limits; its positions
say where a stopped search can continue.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from console.errors import InvalidInput
from console.kafka_gateway.batches import (
    BatchInfo,
    ConsumedRecord,
    fast_records,
    scan_batches,
    to_consumed,
)
from console.kafka_gateway.consumer import OFFSET_OUT_OF_RANGE, READ_COMMITTED, READ_UNCOMMITTED, TopicReader
from console.messages.filters import RecordFilter
from console.messages.transaction_marks import in_transaction

FETCH_PARTITION_BYTES = 4 << 20
FETCH_MAX_BYTES = 32 << 20
STATS_EVERY_SECONDS = 0.25


@dataclass
class ReadProgress:
    """Where each partition's read stands; `notes` tell the user about clamps and skips."""

    positions: dict[int, int]
    ends: dict[int, int]
    notes: list[str] = field(default_factory=list)

    def active(self) -> dict[int, int]:
        return {p: o for p, o in self.positions.items() if o < self.ends[p]}


class AbortedTransactions:
    """Which batches of one Fetch answer belong to aborted transactions, as Kafka's consumer
    decides it in read_committed: the answer lists (producer id, first offset) of every aborted
    transaction it overlaps; a producer's transactional batches are aborted from the listed
    first offset until its ABORT marker."""

    def __init__(self, listed) -> None:
        self._pending = sorted(listed, key=lambda a: a[1])
        self._aborting: set[int] = set()

    def is_aborted(self, info: BatchInfo) -> bool:
        """Call for every batch, in log order; True for data of an aborted transaction."""
        if info.producer_id < 0:
            return False
        while self._pending and self._pending[0][1] <= info.next_offset - 1:
            self._aborting.add(self._pending.pop(0)[0])
        if info.control:
            if info.control == "ABORT":
                self._aborting.discard(info.producer_id)
            return False
        return info.transactional and info.producer_id in self._aborting


def read_forward(reader: TopicReader, progress: ReadProgress, *,
                 want: Callable[[bytes, BatchInfo], bool] | None = None, partition_bytes: int = FETCH_PARTITION_BYTES,
                 isolation_level: int = READ_UNCOMMITTED) -> Iterator[tuple[int, bytes, BatchInfo, object | None]]:
    """Yield (partition, record set, batch, kafka.record batch or None when `want` refused
    it) for every batch between the positions and the ends, advancing `progress.positions`
    past each batch as it is yielded. Stops when every partition reached its end.
    READ_COMMITTED reads up to the last stable offset, and yields the batches of aborted
    transactions as None with `info.aborted` set (control batches come as None, as always)."""
    committed = isolation_level == READ_COMMITTED
    stalled: dict[int, int] = {}
    while active := progress.active():
        alone = next((p for p in active if stalled.get(p)), None)
        if alone is None:
            fetched = reader.fetch(active, partition_max_bytes=partition_bytes, max_bytes=FETCH_MAX_BYTES,
                                   isolation_level=isolation_level)
        else:
            # No progress: its next batch may be larger than its share of the answer. Asked
            # alone, it comes first, and KIP-74 lets the first partition return a whole batch.
            fetched = reader.fetch({alone: active[alone]}, partition_max_bytes=FETCH_MAX_BYTES,
                                   max_bytes=FETCH_MAX_BYTES, isolation_level=isolation_level)
        for partition, answer in fetched.items():
            start = progress.positions[partition]
            if answer.error_code == OFFSET_OUT_OF_RANGE:
                _clamp(progress, partition, answer.log_start_offset)
                continue
            if answer.error_code:
                progress.notes.append(f"Partition {partition} stopped at offset {start}: {answer.error}")
                progress.ends[partition] = start
                continue
            end = answer.last_stable_offset if committed and answer.last_stable_offset >= 0 else answer.high_watermark
            progress.ends[partition] = min(progress.ends[partition], end)
            aborted = AbortedTransactions(answer.aborted_transactions) if committed else None
            for info, batch in scan_batches(answer.records, from_offset=start,
                                            want=None if want is None else (lambda b, raw=answer.records: want(raw, b))):
                if aborted is not None and aborted.is_aborted(info):
                    info.aborted, batch = True, None
                if info.next_offset > progress.positions[partition]:
                    yield partition, answer.records, info, batch
                    # A batch may run past the end asked for: the position stops at the end.
                    progress.positions[partition] = min(max(progress.positions[partition], info.next_offset),
                                                        max(progress.ends[partition], progress.positions[partition]))
                if progress.positions[partition] >= progress.ends[partition]:
                    break
            if progress.positions[partition] == start:
                stalled[partition] = stalled.get(partition, 0) + 1
                if stalled[partition] >= 3:   # nothing readable below the high watermark (aborted data, a gap)
                    progress.notes.append(f"Partition {partition}: no readable records from offset {start}.")
                    progress.ends[partition] = start
            else:
                stalled.pop(partition, None)


def _clamp(progress: ReadProgress, partition: int, log_start: int) -> None:
    """The log start moved past our position (retention, DeleteRecords) while we read."""
    old = progress.positions[partition]
    progress.positions[partition] = max(old, log_start)
    progress.notes.append(f"Partition {partition}: offset {old} is no longer in the log; continued at {log_start}.")
    if progress.positions[partition] == old:
        progress.ends[partition] = old


@dataclass
class SearchStats:
    records_scanned: int = 0
    bytes_scanned: int = 0
    batches_skipped: int = 0
    matches: int = 0
    elapsed_seconds: float = 0.0
    positions: dict[int, int] = field(default_factory=dict)
    ends: dict[int, int] = field(default_factory=dict)
    done: bool = False
    stopped_by: str = ""             # "", records limit, time limit, matches limit, stop

    def as_dict(self) -> dict:
        return {"records_scanned": self.records_scanned, "bytes_scanned": self.bytes_scanned,
                "batches_skipped": self.batches_skipped, "matches": self.matches,
                "elapsed_seconds": round(self.elapsed_seconds, 3), "records_per_second":
                    int(self.records_scanned / self.elapsed_seconds) if self.elapsed_seconds > 0 else 0,
                "positions": {str(p): o for p, o in sorted(self.positions.items())},
                "ends": {str(p): o for p, o in sorted(self.ends.items())},
                "done": self.done, "stopped_by": self.stopped_by}


@dataclass(frozen=True)
class SearchLimits:
    max_records: int = 10_000_000
    max_seconds: float = 60.0
    max_matches: int = 500


# The clock is read once per this many records evaluated: often enough that a slow filter
# (a JSON path over large values) overshoots the time budget by a few records at most, rarely
# enough that reading the clock costs nothing beside decoding a record.
CLOCK_EVERY_RECORDS = 16


def search(reader: TopicReader, progress: ReadProgress, record_filter: RecordFilter, limits: SearchLimits, *,
           should_stop: Callable[[], bool] = lambda: False, isolation_level: int = READ_UNCOMMITTED,
           clock: Callable[[], float] = time.monotonic) -> Iterator[tuple[str, ConsumedRecord | SearchStats]]:
    """Yield ("match", record) as matches are found, ("stats", stats) every quarter second,
    and ("done", stats) once at the end.

    Limits hold record by record: a search yields at most `max_matches` matches, scans at most
    `max_records` records, and looks at the clock (and at Stop) every CLOCK_EVERY_RECORDS
    records and after every batch, so it ends within a few records' work of its time budget. Its positions are exact either way: a stopped search continues at the
    first record it did not evaluate.
    Transaction markers are never records scanned. In read_uncommitted a match of a
    transactional batch comes PENDING with its producer id, and each marker in range comes as
    ("marker", (partition, info)): the caller learns outcomes from the scan, without reading again."""
    stats = SearchStats(positions=progress.positions, ends=progress.ends)
    started = last_report = clock()
    deadline = started + limits.max_seconds
    match = record_filter.match
    uncommitted = isolation_level == READ_UNCOMMITTED
    for partition, raw, info, batch in read_forward(reader, progress, want=record_filter.batch_may_match,
                                                    isolation_level=isolation_level):
        from_offset, end = progress.positions[partition], progress.ends[partition]
        stats.bytes_scanned += info.end - info.start
        stopped_at = None       # the first offset of this batch not evaluated, when a limit cut it short
        if info.control:
            if uncommitted and from_offset <= info.base_offset < end:
                yield "marker", (partition, info)
        elif batch is None:
            stats.batches_skipped += 1
            stats.records_scanned += _records_between(info, from_offset, end)
        else:
            codec, pending = info.compression, uncommitted and info.transactional
            fast = fast_records(raw, info)
            for r in batch if fast is None else fast:
                if r.offset < from_offset:
                    continue
                if r.offset >= end:
                    break
                scanned = stats.records_scanned
                if stats.matches >= limits.max_matches or scanned >= limits.max_records or \
                        scanned % CLOCK_EVERY_RECORDS == 0 and (clock() >= deadline or should_stop()):
                    stopped_at = r.offset
                    break
                stats.records_scanned = scanned + 1
                if match(r):
                    stats.matches += 1
                    found = to_consumed(partition, r, codec, info)
                    yield "match", in_transaction(found, info) if pending else found
        now = clock()
        stats.elapsed_seconds = now - started
        stats.stopped_by = _limit_hit(stats, limits, should_stop, now >= deadline)
        if stats.stopped_by:
            # Positions move past this batch when the generator resumes; make them exact now.
            progress.positions[partition] = stopped_at if stopped_at is not None else \
                max(progress.positions[partition], min(info.next_offset, end))
            break
        if now - last_report >= STATS_EVERY_SECONDS:
            last_report = now
            yield "stats", stats
    if not stats.stopped_by:
        stats.elapsed_seconds = clock() - started
    stats.done = not stats.stopped_by and not progress.active()
    yield "done", stats


def _records_between(info: BatchInfo, from_offset: int, end: int) -> int:
    """Records of a batch not decoded, in [from_offset, end) (compaction leaves holes in
    offsets, so the batch's record count is the bound)."""
    if info.base_offset >= from_offset and info.next_offset <= end:
        return info.records_count
    return max(0, min(info.records_count, min(info.next_offset, end) - max(info.base_offset, from_offset)))


def _limit_hit(stats: SearchStats, limits: SearchLimits, should_stop: Callable[[], bool], past_deadline: bool) -> str:
    if should_stop():
        return "stop"
    if stats.records_scanned >= limits.max_records:
        return "records limit"
    if past_deadline:
        return "time limit"
    if stats.matches >= limits.max_matches:
        return "matches limit"
    return ""


def initial_progress(reader: TopicReader, *, partitions: list[int] | None = None,
                     start_offset: int | None = None, end_offset: int | None = None,
                     start_time_ms: int | None = None, end_time_ms: int | None = None,
                     positions: Mapping[int, int] | None = None,
                     isolation_level: int = READ_UNCOMMITTED) -> ReadProgress:
    """Start and end per partition, from offsets, times, or a previous search's positions
    (clamped to the log, with a note for each clamp). The end is the high watermark, or the
    last stable offset with READ_COMMITTED."""
    partitions = reader.partitions if partitions is None else partitions
    unknown = sorted(set(partitions) - set(reader.partitions))
    if unknown:
        raise InvalidInput(f"The topic has no partition {unknown[0]} (it has {len(reader.partitions)}).")
    offsets = reader.offsets(partitions, isolation_level=isolation_level)
    starts = {p: o.log_start_offset for p, o in offsets.items()}
    ends = {p: o.high_watermark for p, o in offsets.items()}
    notes: list[str] = []
    if start_time_ms is not None:
        found = reader.offsets_for_timestamp(start_time_ms, partitions)
        starts = {p: ends[p] if found[p] is None else found[p] for p in partitions}
    if start_offset is not None:
        starts = {p: max(starts[p], start_offset) for p in partitions}
    if end_time_ms is not None:
        found = reader.offsets_for_timestamp(end_time_ms + 1, partitions)
        ends = {p: ends[p] if found[p] is None else found[p] for p in partitions}
    if end_offset is not None:
        ends = {p: min(ends[p], end_offset + 1) for p in partitions}
    if positions:
        for p, o in positions.items():
            if p in starts:
                starts[p] = max(o, offsets[p].log_start_offset)
    for p in partitions:
        if start_offset is not None and start_offset < offsets[p].log_start_offset:
            notes.append(f"Partition {p} starts at offset {offsets[p].log_start_offset}; "
                         f"offset {start_offset} is no longer in the log.")
        if start_offset is not None and start_offset > offsets[p].high_watermark:
            notes.append(f"Partition {p} ends at offset {offsets[p].high_watermark}; offset {start_offset} is past it.")
        starts[p] = min(starts[p], ends[p]) if starts[p] > ends[p] else starts[p]
    return ReadProgress(positions=starts, ends=ends, notes=notes)
