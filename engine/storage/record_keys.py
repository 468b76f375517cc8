"""Kafka's rule that every record of a compacted topic carries a key (LogValidator.validateKey).

A keyless record could never be compacted away, so Kafka refuses the whole batch with
INVALID_RECORD and lists each offending record (its index in the batch and a message) in the
Produce response's `record_errors`.  Compressed batches are decompressed for this check only;
what is stored stays the bytes the client sent.
"""
from __future__ import annotations

import kafka.errors
from kafka.record.default_records import DefaultRecordBatch

from .errors import CorruptRecordError, InvalidRecordError
from .records import BatchHeader


class RecordValidationError(InvalidRecordError):
    """Some records of a batch broke a per-record rule; `record_errors` lists (index, message)."""

    def __init__(self, record_errors: list[tuple[int, str]]) -> None:
        shown = ", ".join(f"RecordError(batchIndex={index}, message='{message}')"
                          for index, message in record_errors[:3])
        super().__init__(f"One or more records have been rejected due to {len(record_errors)} record errors "
                         f"in total, and only showing the first three errors at most: [{shown}]")
        self.record_errors = record_errors


def check_keys(records, batches: list[tuple[int, BatchHeader]], topic_partition: str) -> None:
    """Raise RecordValidationError naming every keyless record of the batches.

    The index counts records from the start of the request's records, which is the index in
    the batch for the single batch a Kafka client sends."""
    errors: list[tuple[int, str]] = []
    index = 0
    for position, header in batches:
        try:
            for record in DefaultRecordBatch(bytes(records[position:position + header.size])):
                if record.key is None:
                    errors.append((index, "Compacted topic cannot accept message without key in topic "
                                          f"partition {topic_partition}."))
                index += 1
        except (kafka.errors.CorruptRecordError, ValueError, IndexError) as exc:
            # The CRC held, so the client signed records that do not parse: CORRUPT_MESSAGE.
            raise CorruptRecordError(f"records of the batch at byte {position} do not parse: {exc}") from None
    if errors:
        raise RecordValidationError(errors)
