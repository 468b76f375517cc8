"""Live tail: new records of a topic, all partitions, filtered, at a rate a browser can draw.

`tail` long-polls Fetch from each partition's end at the start (or from `start_positions`, where
a previous tail stopped) and yields events. It stops between two records: its last event
("stopped", positions) says exactly where, so a tail restarted with another filter continues
there and no record produced meanwhile is missed.
At most `max_shown_per_second` matching records are sent on; the others are counted as not
shown, so a topic taking 50k records/s keeps the page responsive while the rate is still
reported. While paused, nothing is fetched; on resume the tail continues from where it was.

Isolation, as for a consumer: READ_COMMITTED starts at and reads up to the last stable offset,
so a transaction's records appear once it commits, and never when it aborts (Fetch names the
aborted transactions). READ_UNCOMMITTED shows records as they are written: those of a
transaction come "pending", each marker comes as a row of its own, and the marker's outcome
comes as ("outcome", ...) for the pending records shown before it.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping

from console.kafka_gateway.batches import fast_records, scan_batches, to_consumed
from console.kafka_gateway.consumer import OFFSET_OUT_OF_RANGE, READ_COMMITTED, READ_UNCOMMITTED, TopicReader
from console.messages.filters import RecordFilter
from console.messages.scan import AbortedTransactions
from console.messages.transaction_marks import PendingTransactions, in_transaction, marker_record, outcome_of

REPORT_EVERY_SECONDS = 0.5


class _RateCap:
    """At most `per_second` rows shown per one-second window."""

    def __init__(self, per_second: int) -> None:
        self.per_second, self.window_start, self.in_window = per_second, time.monotonic(), 0

    def admit(self) -> bool:
        now = time.monotonic()
        if now - self.window_start >= 1.0:
            self.window_start, self.in_window = now, 0
        if self.in_window >= self.per_second:
            return False
        self.in_window += 1
        return True


def tail(reader: TopicReader, record_filter: RecordFilter, *, max_shown_per_second: int,
         should_stop: Callable[[], bool], is_paused: Callable[[], bool],
         isolation_level: int = READ_UNCOMMITTED,
         start_positions: Mapping[int, int] | None = None) -> Iterator[tuple[str, object]]:
    """Yield ("started", positions) once the starting positions are known (records produced
    after that are shown), ("record", ConsumedRecord) for shown records and markers,
    ("outcome", (partition, [offsets], outcome)) when a marker decides pending records shown,
    ("stats", dict) twice a second, and ("stopped", positions) last: the first offset of
    each partition that the tail did not look at."""
    positions = {p: o.high_watermark for p, o in reader.offsets(isolation_level=isolation_level).items()}
    for p, o in (start_positions or {}).items():
        if p in positions:
            positions[p] = min(o, positions[p])   # before the log start: Fetch's OFFSET_OUT_OF_RANGE moves it
    yield "started", dict(positions)
    yield from _follow(reader, record_filter, positions, max_shown_per_second=max_shown_per_second,
                       should_stop=should_stop, is_paused=is_paused, isolation_level=isolation_level)
    yield "stopped", dict(positions)


def _follow(reader: TopicReader, record_filter: RecordFilter, positions: dict[int, int], *,
            max_shown_per_second: int, should_stop: Callable[[], bool], is_paused: Callable[[], bool],
            isolation_level: int) -> Iterator[tuple[str, object]]:
    """The tail's loop; returns when asked to stop, with `positions` exact."""
    committed = isolation_level == READ_COMMITTED
    seen = shown = not_shown = matched = 0
    last_report = started = time.monotonic()
    cap = _RateCap(max_shown_per_second)
    pending = PendingTransactions()       # offsets of shown records waiting for their marker
    seen_at_last_report = 0
    while not should_stop():
        if is_paused():
            time.sleep(0.1)
            continue
        fetched = reader.fetch(positions, partition_max_bytes=1 << 20, max_bytes=8 << 20, max_wait_ms=300,
                               isolation_level=isolation_level)
        for partition, answer in fetched.items():
            if answer.error_code == OFFSET_OUT_OF_RANGE:
                positions[partition] = answer.log_start_offset if answer.fetch_offset < answer.log_start_offset \
                    else _end(answer, committed)
                continue
            aborted = AbortedTransactions(answer.aborted_transactions) if committed else None
            end = _end(answer, committed)
            for info, batch in scan_batches(answer.records, from_offset=positions[partition]):
                if info.base_offset >= end:   # a read_committed consumer never reads past the LSO
                    break
                if aborted is not None and aborted.is_aborted(info):
                    batch = None
                elif info.control and not committed:
                    decided = pending.resolve(partition, info)
                    if decided:
                        yield "outcome", (partition, decided, outcome_of(info))
                    if cap.admit():   # a marker takes a row of the cap; the stats count records only
                        yield "record", marker_record(partition, info)
                if batch is not None:
                    fast = fast_records(answer.records, info)
                    in_txn = info.transactional and not committed
                    for r in batch if fast is None else fast:
                        if r.offset < positions[partition]:
                            continue
                        if should_stop():
                            positions[partition] = r.offset
                            return
                        seen += 1
                        if not record_filter.match(r):
                            continue
                        matched += 1
                        if not cap.admit():
                            not_shown += 1
                            continue
                        shown += 1
                        record = to_consumed(partition, r, info.compression, info)
                        if in_txn:
                            pending.hold(partition, info.producer_id, r.offset)
                            record = in_transaction(record, info)
                        yield "record", record
                positions[partition] = max(positions[partition], info.next_offset)
        now = time.monotonic()
        if now - last_report >= REPORT_EVERY_SECONDS:
            rate = (seen - seen_at_last_report) / (now - last_report)
            seen_at_last_report, last_report = seen, now
            yield "stats", {"records_seen": seen, "matches": matched, "shown": shown, "not_shown": not_shown,
                            "records_per_second": int(rate), "elapsed_seconds": round(now - started, 1),
                            "positions": {str(p): o for p, o in sorted(positions.items())}}


def _end(answer, committed: bool) -> int:
    """Where a consumer of this isolation level stops: the high watermark, or the LSO."""
    return answer.last_stable_offset if committed and answer.last_stable_offset >= 0 else answer.high_watermark
