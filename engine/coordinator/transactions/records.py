"""Records of `__transaction_state`, in Kafka's format (TransactionLogKey/TransactionLogValue),
so Kafka's tools can read our log.

Both start with an int16 version; strings are int16-length, arrays int32-length (null: -1),
except in the "flexible" value v1: compact lengths (uvarint length + 1) and tagged fields.

    TransactionLogKey   (v0)    transactionalId string
    TransactionLogValue (v0-1)  producerId int64, producerEpoch int16,
                                transactionTimeoutMs int32, transactionStatus int8,
                                transactionPartitions [topic string, partitionIds [int32]]?,
                                transactionLastUpdateTimestampMs int64,
                                transactionStartTimestampMs int64
                                v1 tags: 0 previousProducerId, 1 nextProducerId,
                                         2 clientTransactionVersion

A null value is a tombstone: the transactional id expired. We write value v0 and read v0
and v1. Status bytes are Kafka's TransactionState ids. kafka-python has no codec for these
(they are not wire messages), hence struct.
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field

from engine.coordinator.record_types import Reader, encode_string

KEY_VERSION = 0
VALUE_VERSION = 0
_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class TxnState(enum.Enum):
    """Kafka's TransactionState: (status byte in the log, name in Describe/ListTransactions)."""
    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    @property
    def id(self) -> int:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]

    @classmethod
    def from_id(cls, status: int) -> TxnState:
        for state in cls:
            if state.id == status:
                return state
        raise ValueError(f"unknown transaction status {status}")

    @classmethod
    def from_label(cls, label: str) -> TxnState | None:
        return next((s for s in cls if s.label.lower() == label.lower()), None)


@dataclass
class TxnRecord:
    """The value of one transactional id's record: its state after a transition."""
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: set[tuple[str, int]] = field(default_factory=set)
    last_update_ms: int = -1
    start_ms: int = -1
    previous_producer_id: int = -1


def key(transactional_id: str) -> bytes:
    return _I16.pack(KEY_VERSION) + encode_string(transactional_id)


def value(record: TxnRecord) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(record.partitions):
        by_topic.setdefault(topic, []).append(index)
    out = [_I16.pack(VALUE_VERSION), _I64.pack(record.producer_id), _I16.pack(record.producer_epoch),
           _I32.pack(record.timeout_ms), _I8.pack(record.state.id), _I32.pack(len(by_topic))]
    for topic, indexes in by_topic.items():
        out += [encode_string(topic), _I32.pack(len(indexes)), *(_I32.pack(i) for i in indexes)]
    out += [_I64.pack(record.last_update_ms), _I64.pack(record.start_ms)]
    return b"".join(out)


def decode_key(data: bytes) -> str | None:
    """The transactional id of a key; None for key versions this log does not hold."""
    reader = Reader(data)
    return reader.string() if reader.int16() == KEY_VERSION else None


def decode_value(data: bytes) -> TxnRecord:
    version = _I16.unpack_from(data)[0]
    if version not in (0, 1):
        raise ValueError(f"unknown TransactionLogValue version {version}")
    reader = Reader(data, flexible=version >= 1)
    reader.pos = 2
    producer_id, epoch, timeout = reader.int64(), reader.int16(), reader.int32()
    status = _I8.unpack_from(data, reader.pos)[0]
    reader.pos += 1
    partitions = set()
    for _ in range(max(reader.array_length(), 0)):
        topic = reader.string()
        partitions |= {(topic, reader.int32()) for _ in range(max(reader.array_length(), 0))}
        reader.skip_tags()
    record = TxnRecord(producer_id, epoch, timeout, TxnState.from_id(status), partitions,
                       last_update_ms=reader.int64(), start_ms=reader.int64())
    if version >= 1:
        for _ in range(reader.uvarint()):
            tag, size = reader.uvarint(), reader.uvarint()
            if tag == 0:
                record.previous_producer_id = _I64.unpack_from(data, reader.pos)[0]
            reader.pos += size
    return record
