"""Errors raised by the storage layer, each carrying the Kafka error code to answer with.

The broker maps an exception to a response by reading `error_code`; it never needs to
know which module raised it.
"""
from __future__ import annotations


class StorageError(Exception):
    """An I/O or state failure of the log dir itself (KAFKA_STORAGE_ERROR)."""

    error_code = 56


def is_io_failure(exc: BaseException) -> bool:
    """An error of the log dir itself (the disk), not of the data a client sent."""
    return isinstance(exc, OSError) or type(exc) is StorageError


class CorruptRecordError(StorageError):
    """A batch failed its CRC, has the wrong magic, or a bad or truncated length."""

    error_code = 2  # CORRUPT_MESSAGE


class InvalidRecordError(StorageError):
    """A well-formed batch that a client may not write (control batch, bad count)."""

    error_code = 87  # INVALID_RECORD


class InvalidTimestampError(StorageError):
    """A CreateTime record's timestamp is outside message.timestamp.before/after.max.ms of the
    broker's clock; `record_errors` lists (index in the batch, message), as Kafka's LogValidator."""

    error_code = 32  # INVALID_TIMESTAMP

    def __init__(self, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(f"One or more records have been rejected due to invalid timestamp: {record_errors[0][1]}")
        self.record_errors = record_errors


class RecordTooLargeError(StorageError):
    """A batch is larger than the topic's max.message.bytes."""

    error_code = 10  # MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(StorageError):
    """An append is larger than the topic's segment.bytes: no segment could hold it."""

    error_code = 18  # RECORD_BATCH_TOO_LARGE


class OffsetOutOfRangeError(StorageError):
    """The requested offset lies outside [log_start_offset, log_end_offset]."""

    error_code = 1  # OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(
            f"offset {offset} is outside [{log_start_offset}, {log_end_offset}]"
        )
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class OutOfOrderSequenceError(StorageError):
    """An idempotent producer's batch does not follow its last sequence number."""

    error_code = 45  # OUT_OF_ORDER_SEQUENCE_NUMBER


class DuplicateSequenceError(StorageError):
    """A batch repeats one already written, inside an append whose other batches are new."""

    error_code = 46  # DUPLICATE_SEQUENCE_NUMBER


class InvalidProducerEpochError(StorageError):
    """A producer wrote with an epoch older than the one the log already saw."""

    error_code = 47  # INVALID_PRODUCER_EPOCH


class CorruptIndexError(StorageError):
    """An .index or .timeindex file is inconsistent; the segment rebuilds it from its .log."""


class InvalidTxnStateError(StorageError):
    """A producer with an open transaction wrote a non-transactional batch, or a transactional
    batch came for a transaction its coordinator does not know (KIP-890)."""

    error_code = 48  # INVALID_TXN_STATE


class TransactionCoordinatorFencedError(StorageError):
    """A transaction marker from a coordinator epoch older than the partition has seen."""

    error_code = 52  # TRANSACTION_COORDINATOR_FENCED
