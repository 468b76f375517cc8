"""The transactional ids of the `__transaction_state` partitions this broker leads, and their
records (Kafka's TransactionStateManager).

A transactional id belongs to partition `abs(hashCode(id)) % partitions` (as on Kafka), and
the leader of that partition is its coordinator. When the broker becomes leader of one, the
store replays its log (synchronously, on the event loop: the topic is compacted, so it stays
small) and the coordinator resumes the transactions it finds half-way through (Prepare*);
when the broker stops leading it, the ids are dropped. The leader epoch at load time is the
coordinator epoch carried by the markers, so a partition fences a deposed coordinator.

Writes go straight to the partition's leader log (Partition.append) and wait, as acks=all
does, until the high watermark covers them; only then does the in-memory state change
(`TransactionMetadata.apply`). Not thread-safe: the engine's event loop owns the store.
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors

from engine.cluster import internal_topics
from engine.coordinator import offsets_records as R
from engine.coordinator.group_store import partition_for
from engine.coordinator.transactions import records
from engine.coordinator.transactions.metadata import TransactionMetadata
from engine.errors import ApiError
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)

TXN_TOPIC = internal_topics.TXN_TOPIC
WRITE_TIMEOUT_S = 30.0


class TransactionStore:
    def __init__(self, broker) -> None:
        self._broker = broker
        self._shards: dict[int, tuple[object, int]] = {}     # partition -> (Partition, coordinator epoch)
        self.transactions: dict[str, TransactionMetadata] = {}
        self.undecodable_records = 0

    # --- ownership --------------------------------------------------------------------------
    def num_partitions(self) -> int:
        """The configured count, never the topic's live one (engine/cluster/internal_topics.py)."""
        return internal_topics.partition_count(TXN_TOPIC, self._broker.config)

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions())

    def owns(self, transactional_id: str) -> bool:
        return self.partition_for(transactional_id) in self._shards

    def coordinator_epoch(self, transactional_id: str) -> int:
        return self._shards[self.partition_for(transactional_id)][1]

    def sync(self) -> tuple[list[TransactionMetadata], list[str]]:
        """Follow the broker's leadership of `__transaction_state`: load gained partitions,
        drop lost ones (or ones led again in a newer epoch). Returns (loaded, unloaded ids)."""
        led = {index: p for (topic, index), p in self._broker.partitions.items()
               if topic == TXN_TOPIC and p.is_leader}
        unloaded, loaded = [], []
        for index in [i for i, (p, epoch) in self._shards.items()
                      if led.get(i) is not p or p.leader_epoch != epoch]:
            unloaded += self._unload(index)
        for index, partition in sorted(led.items()):
            if index not in self._shards:
                loaded += self._load(index, partition)
        return loaded, unloaded

    def unload_all(self) -> list[str]:
        return [tid for index in list(self._shards) for tid in self._unload(index)]

    def _unload(self, index: int) -> list[str]:
        del self._shards[index]
        gone = [tid for tid in self.transactions if self.partition_for(tid) == index]
        for tid in gone:
            del self.transactions[tid]
        log.log(logging.INFO if gone else logging.DEBUG, "Broker %d: no longer transaction coordinator for %s-%d "
                "(%d ids unloaded)", self._broker.node_id, TXN_TOPIC, index, len(gone))
        return gone

    def _load(self, index: int, partition) -> list[TransactionMetadata]:
        found: dict[str, records.TxnRecord | None] = {}

        def skip(offset: int, reason: str) -> None:
            self.undecodable_records += 1
            log.warning("Broker %d: skipped an undecodable record at %s-%d offset %d: %s",
                        self._broker.node_id, TXN_TOPIC, index, offset, reason)

        for offset, key_bytes, value in R.read_log(partition.log, on_undecodable=skip):
            try:
                tid = records.decode_key(key_bytes)
                if tid is not None:
                    found[tid] = None if value is None else records.decode_value(value)
            except R.DECODE_ERRORS as exc:
                skip(offset, f"{type(exc).__name__}: {exc}")
        loaded = [TransactionMetadata.from_record(tid, record) for tid, record in sorted(found.items())
                  if record is not None]
        for meta in loaded:
            self.transactions[meta.transactional_id] = meta
        self._shards[index] = (partition, partition.leader_epoch)
        log.log(logging.INFO if loaded else logging.DEBUG,
                "Broker %d: transaction coordinator for %s-%d (epoch %d), loaded %d ids",
                self._broker.node_id, TXN_TOPIC, index, partition.leader_epoch, len(loaded))
        return loaded

    # --- reads ------------------------------------------------------------------------------
    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.transactions.get(transactional_id)

    def add(self, meta: TransactionMetadata) -> TransactionMetadata:
        return self.transactions.setdefault(meta.transactional_id, meta)

    def all(self) -> list[TransactionMetadata]:
        return sorted(self.transactions.values(), key=lambda m: m.transactional_id)

    # --- writes -----------------------------------------------------------------------------
    async def transition(self, meta: TransactionMetadata, target: TransactionMetadata, now_ms: int) -> None:
        """Write `target` as the id's new state, then apply it to `meta`; raises ApiError.
        Other requests for the id answer CONCURRENT_TRANSACTIONS meanwhile."""
        if meta.pending:
            raise ApiError(Errors.ConcurrentTransactionsError)
        meta.pending = True
        try:
            await self._write(meta.transactional_id, records.value(target.record()), now_ms)
            meta.apply(target)
        except ApiError:
            if not meta.written and self.transactions.get(meta.transactional_id) is meta:
                del self.transactions[meta.transactional_id]   # its first write failed: forget it
            raise
        finally:
            meta.pending = False

    async def remove(self, meta: TransactionMetadata, now_ms: int) -> None:
        """Expire the id: a tombstone, then forget it."""
        meta.pending = True
        try:
            await self._write(meta.transactional_id, None, now_ms)
            if self.transactions.get(meta.transactional_id) is meta:
                del self.transactions[meta.transactional_id]
        finally:
            meta.pending = False

    async def _write(self, transactional_id: str, value: bytes | None, now_ms: int) -> None:
        shard = self._shards.get(self.partition_for(transactional_id))
        partition = shard[0] if shard else None
        if partition is None or not partition.is_leader:
            raise ApiError(Errors.NotCoordinatorError)
        try:
            info = partition.append(R.build_batch([(records.key(transactional_id), value)], now_ms), now_ms)
        except StorageError as exc:
            log.error("Broker %d: cannot write transaction %s to %s: %s", self._broker.node_id, transactional_id,
                      TXN_TOPIC, exc)
            raise ApiError(Errors.NotCoordinatorError, str(exc)) from None
        try:
            replicated = await asyncio.wait_for(partition.wait_for_high_watermark(info.last_offset + 1),
                                                WRITE_TIMEOUT_S)
        except asyncio.TimeoutError:
            raise ApiError(Errors.CoordinatorNotAvailableError, "the write was not replicated in time") from None
        if not replicated:
            raise ApiError(Errors.NotCoordinatorError)
