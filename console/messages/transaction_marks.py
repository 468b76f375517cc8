"""Transactional records as they are read, and their outcome from the markers read after them.

A record of a transactional batch is decided by its producer's next marker (COMMIT or ABORT
control batch) in the same partition. A reader walking a partition in log order therefore
knows a record's outcome the moment it reaches that marker, with no read of its own:
`PendingTransactions` keeps what waits for a marker per (partition, producer) and hands it
back when the marker comes by (`outcome_of(marker)` says how it ended). Search and tail use it; the browser, whose
page ends before most markers, looks ahead instead (`transactions.transaction_outcomes`).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

from console.kafka_gateway.batches import BatchInfo, ConsumedRecord

PENDING, COMMITTED, ABORTED, OPEN, UNKNOWN = "pending", "committed", "aborted", "open", "unknown"


def in_transaction(record: ConsumedRecord, info: BatchInfo) -> ConsumedRecord:
    """A record of a transactional batch, its outcome still to be read."""
    return dataclasses.replace(record, transaction=PENDING, producer_id=info.producer_id)


def marker_record(partition: int, info: BatchInfo) -> ConsumedRecord:
    """A row for a control batch (COMMIT or ABORT marker): no key, no value, its producer id."""
    return ConsumedRecord(partition, info.base_offset, info.max_timestamp, 0, None, None, (),
                          info.end - info.start, info.compression, control=info.control, producer_id=info.producer_id)


def outcome_of(marker: BatchInfo) -> str:
    return ABORTED if marker.control == "ABORT" else COMMITTED


class PendingTransactions:
    """Items (records, or just offsets) waiting for their producer's next marker, per partition
    and producer. Not thread-safe: one reader owns it."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[int, int], list] = defaultdict(list)

    def __bool__(self) -> bool:
        return any(self._waiting.values())

    def hold(self, partition: int, producer_id: int, item) -> None:
        self._waiting[(partition, producer_id)].append(item)

    def resolve(self, partition: int, marker: BatchInfo) -> list:
        """What the marker decides (all that waits for its producer in its partition), in log order."""
        return self._waiting.pop((partition, marker.producer_id), [])

    def release(self) -> list:
        """Everything still waiting (the read ended before their markers), emptied."""
        items = [item for items in self._waiting.values() for item in items]
        self._waiting.clear()
        return items
