"""Live tail: new records of a topic, all partitions, filtered, at a rate a browser can draw.

`tail` long-polls Fetch from each partition's high watermark at the start and yields events.
At most `max_shown_per_second` matching records are sent on; the others are counted as not
shown, so a topic taking 50k records/s keeps the page responsive while the rate is still
reported. While paused, nothing is fetched; on resume the tail continues from where it was.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from console.kafka_gateway.batches import fast_records, scan_batches, to_consumed
from console.kafka_gateway.consumer import OFFSET_OUT_OF_RANGE, TopicReader
from console.messages.filters import RecordFilter

REPORT_EVERY_SECONDS = 0.5


def tail(reader: TopicReader, record_filter: RecordFilter, *, max_shown_per_second: int,
         should_stop: Callable[[], bool], is_paused: Callable[[], bool],
         ) -> Iterator[tuple[str, object]]:
    """Yield ("started", positions) once the starting positions are known (records produced
    after that are shown), ("record", ConsumedRecord) for shown records and ("stats", dict)
    twice a second."""
    positions = {p: o.high_watermark for p, o in reader.offsets().items()}
    yield "started", dict(positions)
    seen = shown = not_shown = matched = 0
    window_start = last_report = started = time.monotonic()
    shown_in_window = 0
    seen_at_last_report = 0
    while not should_stop():
        if is_paused():
            time.sleep(0.1)
            continue
        fetched = reader.fetch(positions, partition_max_bytes=1 << 20, max_bytes=8 << 20, max_wait_ms=300)
        for partition, answer in fetched.items():
            if answer.error_code == OFFSET_OUT_OF_RANGE:
                positions[partition] = answer.log_start_offset if answer.fetch_offset < answer.log_start_offset \
                    else answer.high_watermark
                continue
            for info, batch in scan_batches(answer.records, from_offset=positions[partition]):
                if batch is not None:
                    fast = fast_records(answer.records, info)
                    for r in batch if fast is None else fast:
                        if r.offset < positions[partition]:
                            continue
                        seen += 1
                        if not record_filter.match(r):
                            continue
                        matched += 1
                        now = time.monotonic()
                        if now - window_start >= 1.0:
                            window_start, shown_in_window = now, 0
                        if shown_in_window < max_shown_per_second:
                            shown_in_window += 1
                            shown += 1
                            yield "record", to_consumed(partition, r, info.compression, info)
                        else:
                            not_shown += 1
                positions[partition] = max(positions[partition], info.next_offset)
        now = time.monotonic()
        if now - last_report >= REPORT_EVERY_SECONDS:
            rate = (seen - seen_at_last_report) / (now - last_report)
            seen_at_last_report, last_report = seen, now
            yield "stats", {"records_seen": seen, "matches": matched, "shown": shown, "not_shown": not_shown,
                            "records_per_second": int(rate), "elapsed_seconds": round(now - started, 1),
                            "positions": {str(p): o for p, o in sorted(positions.items())}}
