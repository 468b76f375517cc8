"""Reading a partition's log for share acquisition: whole batches with their offsets, which
are control batches, and - under read_committed - which belong to aborted transactions.

A share partition acquires records batch by batch (KIP-932's batch-optimized mode) or up to
an exact count (KIP-1206's record_limit mode), and answers the batches' bytes as they are on
disk, so the consumer decodes them as it decodes a Fetch. Control batches (transaction
markers) are never delivered. Under read_committed the read stops at the last stable offset
and a transactional batch of a producer whose transaction was aborted is marked, as a
read_committed consumer would skip it (the aborted-transaction index, Kafka's
collectAbortedTransactions, and the ABORT markers that close each one).
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka.record.default_records import DefaultRecordBatch

from engine.coordinator.offsets_records import control_type
from engine.storage.records import LOG_OVERHEAD, read_header

ABORT = 0
FIRST_READ = 64 * 1024


@dataclass
class LogBatch:
    base_offset: int
    last_offset: int
    data: bytes
    is_control: bool = False
    aborted: bool = False


def read_batches(partition, start_offset: int, bound: int, max_bytes: int, *, read_committed: bool,
                 max_records: int | None = None) -> list[LogBatch]:
    """The batches holding offsets from `start_offset` below `bound`, about `max_bytes` of them
    (at least one whole batch), and no more once they hold `max_records` records. The first may
    begin before `start_offset`."""
    log = partition.log
    out: list[LogBatch] = []
    offset, budget = start_offset, max_bytes
    records_left = max_records if max_records is not None else 2**62
    records_read = 0
    while offset < bound and (budget > 0 or not out) and records_left > 0:
        # Read about what the records still wanted take, judging by the batches read so far
        # (the first read: 64 KiB), not the whole MaxBytes a client allows.
        per_record = (max_bytes - budget) / records_read if records_read else 0
        chunk = min(budget, int(per_record * records_left * 1.25) + FIRST_READ if per_record else FIRST_READ)
        data = log.read(offset, max(chunk, 1), max_offset=bound, min_one_batch=True).read()
        pos, found = 0, False
        while pos + LOG_OVERHEAD <= len(data):
            header = read_header(data, pos)
            if pos + header.size > len(data) or header.base_offset >= bound:
                break
            found = True
            if header.last_offset >= offset:
                out.append(LogBatch(header.base_offset, header.last_offset, bytes(data[pos:pos + header.size]),
                                    is_control=header.is_control))
                budget -= header.size
                if not header.is_control:
                    taken = header.last_offset - max(header.base_offset, offset) + 1
                    records_left -= taken
                    records_read += taken
            offset = header.next_offset
            pos += header.size
            if budget <= 0 or records_left <= 0:
                break
        if not found:
            break
    if read_committed and out:
        _mark_aborted(partition, out, start_offset)
    return out


def _mark_aborted(partition, batches: list[LogBatch], start_offset: int) -> None:
    upper = batches[-1].last_offset + 1
    aborted = sorted(partition.aborted_transactions(start_offset, upper), key=lambda a: a[1])
    if not aborted:
        return
    active: set[int] = set()
    i = 0
    for batch in batches:
        while i < len(aborted) and aborted[i][1] <= batch.last_offset:
            active.add(aborted[i][0])
            i += 1
        header = read_header(batch.data, 0)
        if batch.is_control:
            if header.producer_id in active and _control_type(batch.data) == ABORT:
                active.discard(header.producer_id)
        elif header.is_transactional and header.producer_id in active:
            batch.aborted = True


def _control_type(data: bytes) -> int:
    for record in DefaultRecordBatch(data):
        return control_type(record.key)
    return -1
