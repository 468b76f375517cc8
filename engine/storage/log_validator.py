"""Checks and stamps the batches of a Produce request before they reach the log
(Kafka's LogValidator).  Works on the request buffer in place; never touches disk.

A client's batch is checked whole: size, CRC, and then every record against its header and
Kafka's record format (batch_records.py: count, offset deltas, every length, header counts,
varints), a compressed batch inflated as a bounded stream with nothing after it
(decompression.py); record_keys.py then checks keys on compacted topics. The batch is still
stored as received: nothing is recompressed."""
from __future__ import annotations

from dataclasses import dataclass

from .batch_records import check_records
from .decompression import decompressed_limit
from .errors import InvalidRecordError, RecordTooLargeError
from .log_config import LogConfig
from .records import (TIMESTAMP_TYPE_MASK, BatchHeader, assign_offsets, iter_batches,
                      set_log_append_time, validate_crc)


@dataclass(frozen=True)
class LogAppendInfo:
    """What an append did, for the Produce response.

    For a duplicate (an idempotent retry of an already-written batch) the offsets and
    timestamp are those of the original write, and nothing was appended.
    """

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int          # -1 unless message.timestamp.type=LogAppendTime
    log_start_offset: int
    num_records: int
    duplicate: bool = False


@dataclass(frozen=True)
class StampedBatches:
    headers: list[BatchHeader]    # as written: offsets and timestamps assigned
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int  # last offset of the first batch reaching max_timestamp
    num_records: int

    @classmethod
    def of(cls, headers: list[BatchHeader]) -> StampedBatches:
        max_timestamp, offset_of_max = -1, -1
        for header in headers:
            if header.max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = header.max_timestamp, header.last_offset
        return cls(headers, headers[0].base_offset, headers[-1].last_offset, max_timestamp,
                   offset_of_max, sum(h.records_count for h in headers))


def analyze_records(records, config: LogConfig, *, from_client: bool, control: bool = False,
                    records_checked: bool = False, now_ms: int | None = None
                    ) -> list[tuple[int, BatchHeader]]:
    """Validate every batch (structure, size, CRC-32C) and return (position, header) pairs.

    All batches are checked before any is written, so a request is taken whole or not at all.
    `control`: the broker's own transaction markers, which must be control batches.
    `records_checked`: the records of compressed batches were parsed already (off the event
    loop, engine/broker/record_checks.py) and are not inflated again.
    `now_ms`: the broker's clock, against which a client's CreateTime timestamps are checked
    (message.timestamp.before/after.max.ms); None checks none.
    """
    bounds = config.timestamp_bounds(now_ms) if from_client and now_ms is not None else None
    batches = list(iter_batches(records))
    for position, header in batches:
        if from_client and header.size > config.max_message_bytes:
            raise RecordTooLargeError(
                f"batch of {header.size} bytes exceeds max.message.bytes="
                f"{config.max_message_bytes}")
        validate_crc(records, position, header)
        if control and not (header.is_control and header.has_producer_id):
            raise InvalidRecordError("a transaction marker must be a control batch with a producer id")
        if from_client:
            _check_client_batch(header)
            if not (records_checked and header.compression_type):
                check_batch_records(records, position, header, config, bounds)
    return batches


def check_batch_records(records, position: int, header: BatchHeader, config: LogConfig,
                        timestamps: tuple[int, int] | None = None) -> None:
    """Every record of one client batch (batch_records.py), inflated at most to what the
    topic's max.message.bytes allows."""
    check_records(records, position, header, decompressed_limit(config.max_message_bytes), timestamps=timestamps)


def _check_client_batch(header: BatchHeader) -> None:
    if header.is_control:
        raise InvalidRecordError("clients may not write control batches")
    if header.records_count < 1 or header.last_offset_delta != header.records_count - 1:
        raise InvalidRecordError(
            f"batch of {header.records_count} records has last offset delta "
            f"{header.last_offset_delta}")
    if header.has_producer_id and (header.producer_epoch < 0 or header.base_sequence < 0):
        raise InvalidRecordError(f"producer {header.producer_id} batch without epoch or sequence")


def assign_offsets_and_timestamps(records: bytearray, batches: list[tuple[int, BatchHeader]], *,
                                  base_offset: int, leader_epoch: int,
                                  log_append_time: int | None) -> StampedBatches:
    """Give the batches consecutive offsets from `base_offset`, stamp the leader epoch,
    and, under LogAppendTime, the broker's clock."""
    offset = base_offset
    headers = []
    for position, header in batches:
        assign_offsets(records, position, offset, leader_epoch)
        if log_append_time is not None:
            set_log_append_time(records, position, log_append_time)
            header = header._replace(attributes=header.attributes | TIMESTAMP_TYPE_MASK,
                                     first_timestamp=log_append_time,
                                     max_timestamp=log_append_time)
        header = header._replace(base_offset=offset, partition_leader_epoch=leader_epoch)
        headers.append(header)
        offset = header.next_offset
    return StampedBatches.of(headers)


def check_follower_offsets(batches: list[tuple[int, BatchHeader]], log_end_offset: int
                           ) -> StampedBatches:
    """Replicated batches keep their offsets, which must move forward from the log end."""
    expected = log_end_offset
    for _, header in batches:
        if header.base_offset < expected or header.last_offset < header.base_offset:
            raise InvalidRecordError(
                f"replicated batch at offset {header.base_offset} does not follow {expected}")
        expected = header.next_offset
    return StampedBatches.of([header for _, header in batches])
