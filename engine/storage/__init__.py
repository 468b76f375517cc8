"""Kafka's storage design: an append-only log per partition, cut into segments.

No sockets and no asyncio in this package: callers own the threads and the event loop.

    LogManager (one per log dir) -> Log (one per partition) -> LogSegment (.log/.index/.timeindex)
                                     `-> ProducerStateManager (.snapshot)
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
