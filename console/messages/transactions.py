"""Transactions in the message browser's read_uncommitted view: which records a transaction
wrote, and how it ended.

Kafka decides a transactional batch's fate by its producer's next marker in the partition: the
COMMIT or ABORT control batch the coordinator writes there. So a record of a transactional
batch is "committed" or "aborted" by the first marker of its producer after it, and "open"
while no such marker exists below the high watermark. Markers are shown as rows of their own.

`transaction_outcomes` reads batch headers from the page's first transactional record forward
(no record is decoded, only markers) until every producer on the page has its marker, the
partition's high watermark, or MAX_LOOKAHEAD_BYTES (then the outcome says "unknown").
"""
from __future__ import annotations

import dataclasses
import time
from collections import defaultdict

from console.kafka_gateway.batches import BatchInfo, ConsumedRecord
from console.kafka_gateway.consumer import TopicReader
from console.messages.scan import ReadProgress, read_forward
from console.messages.transaction_marks import ABORTED, COMMITTED, OPEN, PENDING, UNKNOWN

MAX_LOOKAHEAD_BYTES = 16 << 20
LOOKAHEAD_FETCH_BYTES = 1 << 20


def transaction_outcomes(reader: TopicReader, records: list[ConsumedRecord], high_watermarks: dict[int, int],
                         *, deadline: float | None = None) -> list[ConsumedRecord]:
    """The records with each PENDING outcome replaced by committed, aborted, open or unknown.
    Past `deadline` (time.monotonic(); a search's time budget) the look-ahead stops, and what
    it did not find is "unknown"."""
    first: dict[int, int] = {}                                 # partition -> first pending offset
    last: dict[int, dict[int, int]] = defaultdict(dict)        # partition -> producer -> last pending offset
    for r in records:
        if r.transaction == PENDING:
            first[r.partition] = min(first.get(r.partition, r.offset), r.offset)
            last[r.partition][r.producer_id] = max(last[r.partition].get(r.producer_id, -1), r.offset)
    if not first:
        return records
    markers, cut_short = _markers(reader, first, last, high_watermarks, deadline)
    return [_resolved(r, markers, cut_short) if r.transaction == PENDING else r for r in records]


def _markers(reader: TopicReader, first: dict[int, int], last: dict[int, dict[int, int]],
             high_watermarks: dict[int, int], deadline: float | None) -> tuple[dict, set[int]]:
    """partition -> producer -> [(marker offset, COMMIT/ABORT)] from the first pending record on,
    and the partitions whose read stopped at MAX_LOOKAHEAD_BYTES before every producer's marker."""
    progress = ReadProgress(positions=dict(first), ends={p: high_watermarks[p] for p in first})
    found: dict[int, dict[int, list[tuple[int, str]]]] = {p: defaultdict(list) for p in first}
    read: dict[int, int] = defaultdict(int)
    cut_short: set[int] = set()
    for partition, _raw, info, _batch in read_forward(reader, progress, want=_headers_only,
                                                     partition_bytes=LOOKAHEAD_FETCH_BYTES):
        read[partition] += info.end - info.start
        if info.control:
            found[partition][info.producer_id].append((info.base_offset, info.control))
        waiting = [pid for pid, offset in last[partition].items()
                   if not any(marker > offset for marker, _ in found[partition][pid])]
        if not waiting or read[partition] >= MAX_LOOKAHEAD_BYTES:
            progress.ends[partition] = progress.positions[partition]
            if waiting:
                cut_short.add(partition)
        if deadline is not None and time.monotonic() >= deadline:
            cut_short.update(p for p in first if progress.positions[p] < progress.ends[p])
            break
    return found, cut_short


def _headers_only(_raw: bytes, _info: BatchInfo) -> bool:
    return False


def _resolved(record: ConsumedRecord, markers, cut_short: set[int]) -> ConsumedRecord:
    after = [(offset, kind) for offset, kind in markers.get(record.partition, {}).get(record.producer_id, ())
             if offset > record.offset]
    if after:
        outcome = ABORTED if min(after)[1] == "ABORT" else COMMITTED
    else:
        outcome = UNKNOWN if record.partition in cut_short else OPEN
    return dataclasses.replace(record, transaction=outcome)
