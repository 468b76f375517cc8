"""One transactional id's state on its coordinator (Kafka's TransactionMetadata).

    Empty ──AddPartitions──> Ongoing ──EndTxn──> PrepareCommit ──markers──> CompleteCommit
                               │                 PrepareAbort  ──markers──> CompleteAbort
                               └─ InitProducerId / timeout: epoch bumped, then PrepareAbort
    Empty, Complete* ──InitProducerId──> Empty (epoch + 1)
    Empty, Complete* ──transactional.id.expiration.ms──> Dead (tombstone)

A transition is written to `__transaction_state` before it takes effect: `pending` is set
while the write is in flight, and other requests for the id meanwhile answer
CONCURRENT_TRANSACTIONS. Not thread-safe: the engine's event loop owns it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.coordinator.transactions.records import TxnRecord, TxnState

MAX_EPOCH = 32767   # Short.MAX_VALUE: an epoch at MAX_EPOCH - 1 moves to a new producer id


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    previous_producer_id: int = -1
    last_producer_epoch: int = -1      # the epoch before the last bump (KIP-360 recovery), memory only
    pending: bool = False
    written: bool = False               # False until the id's first record is in the log

    def record(self) -> TxnRecord:
        return TxnRecord(self.producer_id, self.producer_epoch, self.timeout_ms, self.state, set(self.partitions),
                         self.last_update_ms, self.start_ms, self.previous_producer_id)

    @classmethod
    def from_record(cls, transactional_id: str, record: TxnRecord) -> TransactionMetadata:
        return cls(transactional_id, record.producer_id, record.producer_epoch, record.timeout_ms, record.state,
                   set(record.partitions), record.start_ms, record.last_update_ms, record.previous_producer_id,
                   written=True)

    def copy(self, **changes) -> TransactionMetadata:
        changes.setdefault("partitions", set(self.partitions))
        return replace(self, **changes)

    def apply(self, target: TransactionMetadata) -> None:
        """Take the state of `target`, a copy this one was transitioned to and written as."""
        for name in ("producer_id", "producer_epoch", "timeout_ms", "state", "partitions", "start_ms",
                     "last_update_ms", "previous_producer_id", "last_producer_epoch"):
            setattr(self, name, getattr(target, name))
        self.written = True

    @property
    def in_prepare(self) -> bool:
        return self.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    @property
    def completed(self) -> bool:
        return self.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

    def fenced(self, now_ms: int) -> TransactionMetadata:
        """A copy with the epoch bumped under the same producer id, to abort the open
        transaction with: the old producer's requests now answer PRODUCER_FENCED."""
        return self.copy(producer_epoch=min(self.producer_epoch + 1, MAX_EPOCH), last_producer_epoch=self.producer_epoch,
                         last_update_ms=now_ms)

    def bumped(self, now_ms: int, new_producer_id) -> TransactionMetadata:
        """A copy with the epoch bumped; past MAX_EPOCH - 1 a fresh producer id with epoch 0."""
        if self.producer_epoch >= MAX_EPOCH - 1:
            return self.copy(producer_id=new_producer_id(), producer_epoch=0, previous_producer_id=self.producer_id,
                             last_producer_epoch=-1, last_update_ms=now_ms)
        return self.copy(producer_epoch=self.producer_epoch + 1, last_producer_epoch=self.producer_epoch,
                         last_update_ms=now_ms)
