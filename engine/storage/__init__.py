"""Kafka's storage design: an append-only log per partition, cut into segments.

No sockets and no asyncio in this package: callers own the threads and the event loop.

    LogManager (one per log dir) -> Log (one per partition) -> LogSegment (.log/.index/.timeindex
                                     |                                      /.txnindex)
                                     `-> ProducerStateManager (.snapshot: idempotence, open transactions)

Transactions: control_records (COMMIT/ABORT markers), log_transactions (staging, replay,
aborted-transaction lookups), transaction_index (.txnindex), cleaner_txns (compaction's rule).
Around them: log_validator (+ batch_records, record_stream, decompression: every record of a
client's batch parsed, compressed ones inflated as a bounded stream), cleaner (+ cleaner_batches,
cleaner_steps: compaction in steps a worker thread can run), and filesystem, the seam every
write goes through (FaultyFileSystem injects ENOSPC, EIO and torn writes in tests).
"""
from .errors import (CorruptIndexError, CorruptRecordError, InvalidProducerEpochError,
                     InvalidRecordError, OffsetOutOfRangeError, OutOfOrderSequenceError,
                     RecordTooLargeError, StorageError)
from .file_records import FileSlice
from .log import Log
from .log_config import LogConfig
from .log_manager import LogManager
from .log_validator import LogAppendInfo

__all__ = [
    "CorruptIndexError", "CorruptRecordError", "FileSlice", "InvalidProducerEpochError",
    "InvalidRecordError", "Log", "LogAppendInfo", "LogConfig", "LogManager",
    "OffsetOutOfRangeError", "OutOfOrderSequenceError", "RecordTooLargeError", "StorageError",
]
