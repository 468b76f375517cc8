"""What the broker checks of a whole Produce request before any partition is appended to
(Kafka's ProduceRequest.validateRecords, RequestUtils.hasTransactionalRecords and the
producer check of ReplicaManager.handleProduceAppend).

- From v3 on, a partition's data is exactly one batch of magic 2 (INVALID_RECORD otherwise);
  zstd only from v7 (UNSUPPORTED_COMPRESSION_TYPE). One batch per partition is what makes a
  Produce answer true: the answer carries one base offset and one error per partition, so a
  second batch could only be acknowledged along with the first, written or not.
- Transactional batches need the request's `transactional_id` (TRANSACTIONAL_ID_AUTHORIZATION_FAILED
  for the whole request, as Kafka answers a client it cannot authorize for that id), and all
  of them must be one producer's, at one epoch (INVALID_PRODUCER_ID_MAPPING for the whole request).

Pure functions over the request: the batches are only read, never copied.
"""
from __future__ import annotations

import kafka.errors as Errors

from engine.storage.errors import CorruptRecordError
from engine.storage.records import MAGIC, iter_batches, read_header

ZSTD = 4
ZSTD_FROM_VERSION = 7


class RequestRefused(Exception):
    """The whole request is answered with one error on every partition."""

    def __init__(self, error, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def partition_data_error(version: int, records) -> tuple[int, str] | None:
    """(error code, message) if a partition's data breaks the request's own rules (Kafka's
    validateRecords), else None: the append checks the batches themselves."""
    if not records:
        return Errors.InvalidRecordError.errno, f"Produce v{version} needs one record batch per partition"
    try:
        first = read_header(records)
    except CorruptRecordError:
        return None    # the append answers CORRUPT_MESSAGE
    if first.magic != MAGIC:
        return Errors.InvalidRecordError.errno, f"Produce v{version} takes only record batches of magic 2"
    if version < ZSTD_FROM_VERSION and first.compression_type == ZSTD:
        return Errors.UnsupportedCompressionTypeError.errno, f"Produce v{version} may not carry zstd batches (v7+)"
    try:
        for count, _ in enumerate(iter_batches(records), 1):
            if count > 1:
                return Errors.InvalidRecordError.errno, (f"Produce v{version} takes exactly one record batch per "
                                                         f"partition; this one holds more")
    except CorruptRecordError:
        pass           # the append answers CORRUPT_MESSAGE
    return None


def transactional_producer(request) -> tuple[int, int] | None:
    """The (producer id, epoch) of the request's transactional batches, every batch of every
    partition looked at; None if it has none. Raises RequestRefused as Kafka refuses the request."""
    producers = set()
    for topic in request.topic_data:
        for data in topic.partition_data:
            try:
                producers.update((h.producer_id, h.producer_epoch) for _, h in iter_batches(data.records or b"")
                                 if h.is_transactional)
            except CorruptRecordError:
                continue   # the append answers CORRUPT_MESSAGE for this partition
    if not producers:
        return None
    if request.transactional_id is None:
        raise RequestRefused(Errors.TransactionalIdAuthorizationFailedError,
                             "Transactional batches need the request's transactional id")
    if len(producers) > 1:
        raise RequestRefused(Errors.InvalidProducerIdMappingError,
                             "Transactional records contained more than one producer id or epoch")
    return next(iter(producers))
