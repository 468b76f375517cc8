"""The transaction coordinator of one broker (Kafka's TransactionCoordinator): what the
transaction APIs call.

It coordinates the transactional ids whose `__transaction_state` partition this broker leads
(store.py). Each request is validated against the id's state (metadata.py) and every change
is written to the log before it is answered. Ending a transaction writes PrepareCommit or
PrepareAbort, answers the client, then writes the markers to every partition of the
transaction (markers.py), retrying while leaders move, and finally writes CompleteCommit or
CompleteAbort; a coordinator that loads an id half-way (Prepare*) finishes the job.

Background work: transactions open longer than their timeout are aborted, with the epoch
bumped so the stalled producer is fenced
(`transaction.abort.timed.out.transaction.cleanup.interval.ms`); ids idle for
`transactional.id.expiration.ms` are removed (`transaction.remove.expired.transaction.cleanup.interval.ms`).
Failures are raised as ApiError. Not thread-safe: the engine's event loop owns it.
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors
import re2

from engine.clock import now_ms
from engine.cluster import internal_topics
from engine.coordinator.transactions.channel import PeerChannel
from engine.coordinator.transactions.markers import FINAL_ERRORS, send_markers
from engine.coordinator.transactions.metadata import MAX_EPOCH, TransactionMetadata
from engine.coordinator.transactions.records import TxnState
from engine.coordinator.transactions.store import TXN_TOPIC, TransactionStore
from engine.errors import ApiError

log = logging.getLogger(__name__)
TopicPartition = tuple[str, int]
S = TxnState
MARKER_TIMEOUT_MS = 10_000
RETRY_BACKOFF_S = (0.02, 1.0)


class TransactionCoordinator:
    def __init__(self, broker) -> None:
        self._broker = broker
        self.store = TransactionStore(broker)
        self.channel = PeerChannel(broker)
        self._tasks: list[asyncio.Task] = []
        self._completions: dict[str, asyncio.Task] = {}

    def config(self, name: str):
        return self._broker.config.get(name)

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._every("transaction.abort.timed.out.transaction.cleanup.interval.ms",
                                         self.abort_timed_out)),
            loop.create_task(self._every("transaction.remove.expired.transaction.cleanup.interval.ms",
                                         self.expire_transactional_ids))]

    def shutdown(self) -> None:
        for task in [*self._tasks, *self._completions.values()]:
            task.cancel()
        self._tasks, self._completions = [], {}
        self.channel.close()
        self.store.unload_all()

    def on_partitions_changed(self) -> None:
        """The broker gained or lost `__transaction_state` partitions: load or unload them, and
        finish the transactions a previous coordinator left in PrepareCommit/PrepareAbort."""
        internal_topics.report_count_mismatch(TXN_TOPIC, self._broker.image, self._broker.config)
        loaded, unloaded = self.store.sync()
        for tid in unloaded:
            task = self._completions.pop(tid, None)
            if task is not None:
                task.cancel()
        for meta in loaded:
            if meta.in_prepare:
                self._start_completion(meta)

    async def _every(self, interval_config: str, action) -> None:
        while True:
            await asyncio.sleep(self.config(interval_config) / 1000)
            try:
                await action(now_ms())
            except Exception:  # noqa: BLE001 - keep the task alive; the next round retries
                log.exception("Broker %d: %s failed", self._broker.node_id, action.__name__)

    # --- coordinator lookup -------------------------------------------------------------------
    def ensure_topic(self) -> bool:
        """Create `__transaction_state` on first use, as Kafka does; True once it exists.
        Replication: min(transaction.state.log.replication.factor, live brokers)."""
        if TXN_TOPIC in self._broker.image.topics:
            return True
        controller = self._broker.controller
        replication = max(min(self.config("transaction.state.log.replication.factor"),
                              len(controller.live_brokers())), 1)
        configs = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                   "segment.bytes": self.config("transaction.state.log.segment.bytes"),
                   "min.insync.replicas": min(self.config("transaction.state.log.min.isr"), replication)}
        try:
            controller.create_topic(TXN_TOPIC, self.config("transaction.state.log.num.partitions"), replication,
                                    configs=configs)
        except ApiError as exc:
            if exc.code != Errors.TopicAlreadyExistsError.errno:
                log.error("Cannot create %s: %s", TXN_TOPIC, exc)
                return False
        return TXN_TOPIC in self._broker.image.topics

    def coordinator_for(self, transactional_id: str) -> int | None:
        state = self._broker.image.partition(TXN_TOPIC, self.store.partition_for(transactional_id))
        if state is None or state.leader not in self._broker.image.brokers:
            return None
        return state.leader

    def _check(self, transactional_id: str | None) -> None:
        if not transactional_id:
            raise ApiError(Errors.InvalidRequestError, "Empty transactional id")
        if not self._broker.running:
            raise ApiError(Errors.CoordinatorNotAvailableError)
        if not self.store.owns(transactional_id):
            if self.coordinator_for(transactional_id) == self._broker.node_id:
                raise ApiError(Errors.CoordinatorLoadInProgressError)
            raise ApiError(Errors.NotCoordinatorError)

    def _validated(self, transactional_id: str, producer_id: int, producer_epoch: int) -> TransactionMetadata:
        """The id's state, checked against the producer that sent a request of its transaction."""
        meta = self._producers_state(transactional_id, producer_id, producer_epoch)
        if meta.pending:
            raise ApiError(Errors.ConcurrentTransactionsError)
        return meta

    def _producers_state(self, transactional_id: str, producer_id: int, producer_epoch: int) -> TransactionMetadata:
        """The id's state if the producer is its current one; raises otherwise."""
        self._check(transactional_id)
        meta = self.store.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            raise ApiError(Errors.InvalidProducerIdMappingError)
        if producer_epoch != meta.producer_epoch:
            raise ApiError(Errors.ProducerFencedError)
        return meta

    # --- InitProducerId -----------------------------------------------------------------------
    async def init_producer_id(self, transactional_id: str, timeout_ms: int, producer_id: int = -1,
                               producer_epoch: int = -1) -> tuple[int, int]:
        """(producer id, epoch) for a transactional producer: the epoch bumped, fencing older
        instances; an open transaction is aborted first (CONCURRENT_TRANSACTIONS until done)."""
        self._check(transactional_id)
        if not 0 < timeout_ms <= self.config("transaction.max.timeout.ms"):
            raise ApiError(Errors.InvalidTransactionTimeoutError)
        now = now_ms()
        meta = self.store.get(transactional_id)
        if meta is None:
            meta = self.store.add(TransactionMetadata(transactional_id, self._new_producer_id(), -1, timeout_ms,
                                                      last_update_ms=now))
        if meta.pending or meta.in_prepare:
            raise ApiError(Errors.ConcurrentTransactionsError)
        if producer_id >= 0 and not _may_recover(meta, producer_id, producer_epoch):
            raise ApiError(Errors.ProducerFencedError)
        if meta.state is S.ONGOING:
            await self.store.transition(meta, meta.fenced(now).copy(state=S.PREPARE_ABORT), now)
            self._start_completion(meta)
            raise ApiError(Errors.ConcurrentTransactionsError)
        target = meta.bumped(now, self._new_producer_id).copy(state=S.EMPTY, partitions=set(), timeout_ms=timeout_ms,
                                                              start_ms=-1)
        await self.store.transition(meta, target, now)
        return meta.producer_id, meta.producer_epoch

    def _new_producer_id(self) -> int:
        return self._broker.controller.allocate_producer_id()

    # --- the transaction ----------------------------------------------------------------------
    async def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             partitions: set[TopicPartition]) -> None:
        """Add partitions to the transaction, starting it if none is open."""
        meta = self._validated(transactional_id, producer_id, producer_epoch)
        if meta.in_prepare:
            raise ApiError(Errors.ConcurrentTransactionsError)
        if meta.state is S.ONGOING and partitions <= meta.partitions:
            return
        now = now_ms()
        target = meta.copy(state=S.ONGOING, partitions=meta.partitions | partitions, last_update_ms=now,
                           start_ms=meta.start_ms if meta.state is S.ONGOING else now)
        await self.store.transition(meta, target, now)

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """AddPartitionsToTxn's verify-only form (KIP-890): 0 for each partition in the producer's
        open transaction, INVALID_TXN_STATE for the others; raises for a stale producer, and
        CONCURRENT_TRANSACTIONS while the transaction is being committed or aborted.

        As Kafka's handleVerifyPartitionsInTransaction, a write in flight for the id (another
        AddPartitionsToTxn) does not make it answer CONCURRENT_TRANSACTIONS: partitions join
        `meta.partitions` only once written. Refusing there lost records: the Produce answers
        NOT_ENOUGH_REPLICAS, and when the producer's next batch to that partition (already in
        flight) is appended, librdkafka takes the refused batch as implicitly acknowledged,
        since a broker refuses a sequence gap, except on a partition with no state of the
        producer yet."""
        meta = self._producers_state(transactional_id, producer_id, producer_epoch)
        if meta.in_prepare:
            raise ApiError(Errors.ConcurrentTransactionsError)
        ongoing = meta.state is S.ONGOING
        return {tp: 0 if ongoing and tp in meta.partitions else Errors.InvalidTxnStateError.errno
                for tp in partitions}

    async def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool) -> None:
        meta = self._validated(transactional_id, producer_id, producer_epoch)
        if meta.state is S.ONGOING:
            now = now_ms()
            await self.store.transition(
                meta, meta.copy(state=S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, last_update_ms=now), now)
            self._start_completion(meta)
            return
        if meta.state is (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT):
            return   # a retry of an EndTxn that completed
        if meta.state is (S.PREPARE_COMMIT if commit else S.PREPARE_ABORT):
            raise ApiError(Errors.ConcurrentTransactionsError)
        raise ApiError(Errors.InvalidTxnStateError,
                       f"Cannot {'commit' if commit else 'abort'} in state {meta.state.label}")

    # --- completing a transaction: markers, then Complete* -------------------------------------
    def _start_completion(self, meta: TransactionMetadata) -> None:
        task = self._completions.get(meta.transactional_id)
        if task is None or task.done():
            self._completions[meta.transactional_id] = asyncio.get_running_loop().create_task(self._complete(meta))

    def _still_ours(self, meta: TransactionMetadata) -> bool:
        return self._broker.running and self.store.get(meta.transactional_id) is meta

    async def _complete(self, meta: TransactionMetadata) -> None:
        commit = meta.state is S.PREPARE_COMMIT
        remaining, backoff = set(meta.partitions), RETRY_BACKOFF_S[0]
        while remaining:
            if not self._still_ours(meta):
                return
            results = await send_markers(
                self._broker, self.channel, producer_id=meta.producer_id, producer_epoch=meta.producer_epoch,
                coordinator_epoch=self.store.coordinator_epoch(meta.transactional_id), commit=commit,
                partitions=remaining, timeout_ms=MARKER_TIMEOUT_MS)
            if Errors.TransactionCoordinatorFencedError.errno in results.values():
                log.warning("Broker %d: a newer coordinator owns transaction %s; stopping its markers",
                            self._broker.node_id, meta.transactional_id)
                return
            remaining = {tp for tp, code in results.items() if code not in FINAL_ERRORS}
            if remaining:
                log.debug("Transaction %s: markers to retry: %s", meta.transactional_id, results)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, RETRY_BACKOFF_S[1])
        while self._still_ours(meta):
            now = now_ms()
            try:
                await self.store.transition(meta, meta.copy(state=S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT,
                                                            partitions=set(), last_update_ms=now), now)
                return
            except ApiError as exc:
                if exc.code == Errors.NotCoordinatorError.errno:
                    return   # the next coordinator loads the Prepare* record and finishes
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, RETRY_BACKOFF_S[1])

    # --- background: timeouts and expiry -------------------------------------------------------
    async def abort_timed_out(self, now: int) -> int:
        """Abort transactions open longer than their timeout, fencing their producer's epoch."""
        aborted = 0
        for meta in self.store.all():
            if meta.state is S.ONGOING and not meta.pending and meta.start_ms + meta.timeout_ms < now:
                log.info("Broker %d: aborting transaction %s (producer %d epoch %d): open for more than %d ms",
                         self._broker.node_id, meta.transactional_id, meta.producer_id, meta.producer_epoch,
                         meta.timeout_ms)
                target = meta.fenced(now) if meta.producer_epoch < MAX_EPOCH else meta.copy(last_update_ms=now)
                try:
                    await self.store.transition(meta, target.copy(state=S.PREPARE_ABORT), now)
                except ApiError as exc:
                    log.warning("Aborting timed-out transaction %s failed: %s", meta.transactional_id, exc)
                    continue
                self._start_completion(meta)
                aborted += 1
        return aborted

    async def expire_transactional_ids(self, now: int) -> int:
        expiration = self.config("transactional.id.expiration.ms")
        expired = 0
        for meta in self.store.all():
            if meta.completed and not meta.pending and meta.last_update_ms + expiration <= now:
                try:
                    await self.store.remove(meta, now)
                    expired += 1
                except ApiError as exc:
                    log.warning("Expiring transactional id %s failed: %s", meta.transactional_id, exc)
        return expired

    # --- DescribeTransactions, ListTransactions ----------------------------------------------
    def describe(self, transactional_id: str) -> TransactionMetadata:
        self._check(transactional_id)
        meta = self.store.get(transactional_id)
        if meta is None or not meta.written:
            raise ApiError(Errors.TransactionalIdNotFoundError)
        return meta

    def list_transactions(self, *, states: set[TxnState] | None = None, producer_ids: set[int] | None = None,
                          min_duration_ms: int = -1, pattern: str | None = None) -> list[TransactionMetadata]:
        """The ids this broker coordinates, filtered by state, producer id, how long the
        transaction has run (KIP-994) and a regular expression on the id."""
        now, regex = now_ms(), re2.compile(pattern) if pattern else None
        return [m for m in self.store.all() if m.written
                and (not states or m.state in states)
                and (not producer_ids or m.producer_id in producer_ids)
                and (min_duration_ms < 0 or (m.start_ms >= 0 and now - m.start_ms >= min_duration_ms))
                and (regex is None or regex.fullmatch(m.transactional_id))]


def _may_recover(meta: TransactionMetadata, producer_id: int, producer_epoch: int) -> bool:
    """KIP-360: a producer that passes its id and epoch may re-initialize only if they are the
    current ones, or those of just before the last bump (its retry, or a timeout abort)."""
    if producer_id == meta.producer_id:
        return producer_epoch in (meta.producer_epoch, meta.last_producer_epoch)
    return producer_id == meta.previous_producer_id
