"""A broker: a node id, a listener, a log directory, and the partition replicas it hosts.

The broker follows the controller's metadata image: for every partition that lists it as a
replica it opens the log and becomes leader or follower as the image says (followers fetch
from their leader through a ReplicaFetcher); replicas it no longer holds are deleted
(replica_sync.py). As leader it proposes ISR changes to the controller. Everything runs on
the engine's single event loop, which owns all broker state.
"""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import kafka.errors as Errors

from engine.clock import now_ms
from engine.broker.mutation_quota import ControllerMutationQuota, quota_of
from engine.broker.byte_rate_quota import FETCH as FETCH_BYTE_RATE, PRODUCE as PRODUCE_BYTE_RATE, ByteRateQuota
from engine.broker.partition import Partition
from engine.broker.replica_fetcher import ReplicaFetcher
from engine.broker.replica_sync import ReplicaSync
from engine.broker.throttle import ReplicationThrottle, is_throttled
from engine.cluster.controller import Controller
from engine.cluster.metadata import MetadataImage
from engine.cluster.replication_control import ReplicaLog
from engine.config import BrokerConfig, InvalidConfigError, log_config_for
from engine.coordinator.coordinator import GroupCoordinator
from engine.coordinator.transactions.coordinator import TransactionCoordinator
from engine.errors import ApiError
from engine.protocol.connection_quotas import ConnectionQuotas
from engine.protocol.connection_rates import ConnectionRates
from engine.protocol.fetch_sessions import FetchSessionCache
from engine.protocol.request_memory import RequestMemoryPool
from engine.protocol.response_cache import ImageResponseCache
from engine.share.coordinator import ShareCoordinator
from engine.share.manager import SharePartitionManager
from engine.share.persister import Persister
from engine.storage.checkpoint import OffsetCheckpointFile
from engine.broker.cleaner_thread import clean_off_loop
from engine.metrics.stats import BrokerStats
from engine.storage.cleaner import LogCleaner
from engine.storage.cleaner_steps import StepRunner
from engine.storage.errors import is_io_failure
from engine.storage.log_manager import LogManager

log = logging.getLogger(__name__)
HW_CHECKPOINT = "replication-offset-checkpoint"


class Broker(ReplicaSync):
    def __init__(self, node_id: int, host: str, port: int, log_dir: Path, controller: Controller) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.log_dir = log_dir
        self.controller = controller
        self.config: BrokerConfig = controller.broker_config_for(node_id)
        controller.broker_config_checks[node_id] = self._check_listener_tls
        self.log_manager = LogManager(log_dir)
        self._logs_loaded = False
        self.log_dir_error: str | None = None   # set once an I/O error takes the log dir offline
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self.leader_throttle = ReplicationThrottle(lambda: self.config.get("leader.replication.throttled.rate"))
        self.follower_throttle = ReplicationThrottle(lambda: self.config.get("follower.replication.throttled.rate"))
        self.mutation_quota = ControllerMutationQuota(quota_of(lambda: self.image, lambda: self.config))
        # Client byte-rate quotas (KIP-13) by key: producer_byte_rate, consumer_byte_rate.
        self.byte_rate_quotas = {key: ByteRateQuota(key, lambda: self.image, lambda: self.config)
                                 for key in (PRODUCE_BYTE_RATE, FETCH_BYTE_RATE)}
        # Connection creation rates (KIP-612): broker-wide, per listener and per address, for its listeners.
        self.connection_rates = ConnectionRates(lambda: self.image, lambda: self.config)
        # Connection limits (KIP-402): max.connections broker-wide and per listener, and per address.
        self.connection_quotas = ConnectionQuotas(lambda: self.config, self._listeners)
        # Request quotas (KIP-124): the loop's and worker threads' time on a client's requests (request_quota.py).
        self.request_quota = ByteRateQuota("request_percentage", lambda: self.image, lambda: self.config)
        # Incremental fetch sessions of this broker's clients (KIP-227).
        self.fetch_sessions = FetchSessionCache(lambda: self.config.get("max.incremental.fetch.session.cache.slots"))
        self.listener = None   # the first of `listeners` (tests and tools ask it for the client port)
        self.listeners: list = []   # one protocol listener per named listener, attached by engine/runtime.py
        # What its listeners hold of requests being read and handled (queued.max.request.bytes).
        self.request_memory = RequestMemoryPool(lambda: self.config.get("queued.max.request.bytes"))
        self.inter_broker = None   # the InterBrokerNetwork to the other brokers, attached by engine/runtime.py
        self.authorizer = None   # kafka_rules.authorizer.StandardAuthorizer, set by engine/runtime.py when on
        self.metrics = BrokerStats()   # what the hot paths count for --metrics-port (engine/metrics)
        self._tasks: list[asyncio.Task] = []
        self._pending: dict[tuple[str, int], None] = {}     # replicas a sliced metadata change still has to apply
        self._pending_task: asyncio.Task | None = None
        # Deleted replicas, out of `partitions` already, whose logs a sliced task closes and renames aside.
        self._doomed: dict[tuple[str, int], Partition | None] = {}
        self._doomed_task: asyncio.Task | None = None
        self._applied_states: dict[tuple[str, int], object] = {}   # the partition record each replica follows
        self._controller_epoch = -1
        self.running = False
        self._isr_proposals: dict[tuple[str, int], tuple[Partition, list[int]]] = {}
        self.admin_endpoint: str | None = None   # the engine's admin interface, advertised in DescribeConfigs
        self.response_cache = ImageResponseCache()  # answers that depend only on the metadata image
        self.group_coordinator = GroupCoordinator(self)   # consumer groups: see the section at the end
        self.txn_coordinator = TransactionCoordinator(self)
        # Share groups (KIP-932): the `__share_group_state` partitions this broker leads, the
        # client that reaches any share coordinator, and the share partitions it leads.
        self.share_coordinator = ShareCoordinator(self)
        self.share_persister = Persister(self, self.share_coordinator)
        self.share_manager = SharePartitionManager(self, self.share_persister)
        # Called with (topic, partition, producer_id, commit) after a transaction marker is replicated.
        self.txn_marker_listeners: list = [self.group_coordinator.on_txn_marker]

    @property
    def image(self) -> MetadataImage:
        return self.controller.image

    # --- lifecycle ------------------------------------------------------------------------

    def load_logs(self) -> None:
        """Open and recover every log of the log dir; `start` does it unless done already."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_manager = LogManager(self.log_dir)
        self.log_manager.load(self._log_config_for_topic, now_ms(), threads=self._recovery_threads())
        self._checkpointed_hw = OffsetCheckpointFile(self.log_dir / HW_CHECKPOINT).read_or_ignore(
            "high watermarks restart from 0 and advance as followers fetch")
        self._logs_loaded = True

    def _recovery_threads(self) -> int:
        return self.config.get("num.recovery.threads.per.data.dir")

    def recovered_replicas(self) -> dict[tuple[str, int], ReplicaLog]:
        """What each loaded log holds, for the controller's longest-log election."""
        return {key: ReplicaLog(log_.leader_epoch_cache.latest_epoch, log_.log_end_offset,
                                self._checkpointed_hw.get(key, 0))
                for key, log_ in self.log_manager.all_logs().items()}

    async def start(self) -> None:
        if not self._logs_loaded:
            self.load_logs()
        self._logs_loaded = False   # a later restart (stop, start) loads again
        self.log_dir_error = None
        self.running = True
        self.controller.add_listener(self.on_metadata_change)
        self._sync_partitions(set(self.image.topics), [])
        self._set_aside_stray_logs()
        self.config = self.controller.broker_config_for(self.node_id)
        self._reload_listener_tls()            # stores set at run time before a restart
        for listener in self._listeners():
            await listener.start()
        self._tasks = [asyncio.create_task(self._periodic(self._retention_interval_s, self._run_retention)),
                       asyncio.create_task(self._periodic(lambda: 1.0, self._flush_dirty)),
                       asyncio.create_task(self._periodic(self._checkpoint_interval_s, self._checkpoint)),
                       asyncio.create_task(self._periodic(self._isr_check_interval_s, self._shrink_isrs)),
                       asyncio.create_task(self._periodic(self._producer_expiry_interval_s, self._expire_producers)),
                       *self._start_groups_and_compaction()]
        log.info("Broker %d listening on %s", self.node_id,
                 ", ".join(f"{listener.name}://{listener.host}:{listener.port}" for listener in self._listeners()))

    def _listeners(self) -> list:
        return self.listeners or ([self.listener] if self.listener is not None else [])

    # --- TLS key stores and trust stores and connection limits set at run time ----------------

    def on_metadata_change(self, changed, deleted, controller_epoch: int = 0) -> None:
        super().on_metadata_change(changed, deleted, controller_epoch)
        self._reload_listener_tls()
        self.connection_quotas.reconfigured()      # a limit raised frees waiting acceptors, one lowered closes the excess

    def _reload_listener_tls(self) -> None:
        for listener in self._listeners():
            update = listener.tls_update(self.config.dynamic)
            if update is None:
                continue
            try:
                listener.reload_tls(update)
            except InvalidConfigError as exc:   # checked before it was taken; a file may have changed since
                log.error("Broker %d: listener %s keeps its TLS: %s", self.node_id, listener.name, exc)

    def _check_listener_tls(self, dynamic: dict) -> None:
        """A change of this broker's dynamic configs: its listeners' stores must load (and keep
        the certificate's subject) before it is taken; raises InvalidConfigError."""
        for listener in self._listeners():
            update = listener.tls_update(dynamic)
            if update is not None:
                listener.check_tls(update)

    async def stop(self) -> None:
        """Clean shutdown: close the listener, stop fetching, then flush, checkpoint and close every log."""
        self.running = False
        self.controller.remove_listener(self.on_metadata_change)
        self._pending.clear()
        sliced = [t for t in (self._pending_task, self._doomed_task) if t is not None]
        for task in [*self._tasks, *sliced]:
            task.cancel()
        await asyncio.gather(*self._tasks, *sliced, return_exceptions=True)
        self._pending_task = self._doomed_task = None
        self._delete_doomed(list(self._doomed))     # a deletion in progress completes before the logs close
        for listener in self._listeners():
            await listener.stop()
        self.group_coordinator.shutdown()
        self.txn_coordinator.shutdown()
        self.share_manager.shutdown()
        self.share_coordinator.shutdown()
        self.share_persister.close()
        for fetcher in self.fetchers.values():
            await fetcher.stop()
        self.fetchers.clear()
        for partition in self.partitions.values():
            partition.close()
        self._write_hw_checkpoint()
        self.log_manager.shutdown(threads=self._recovery_threads())
        self.partitions.clear()
        self._applied_states.clear()

    # --- log dir failure (Kafka's LogDirFailureChannel) ----------------------------------------

    def log_dir_failed(self, exc: BaseException) -> None:
        """An I/O error (a full disk, EIO) hit the log dir: it is offline until the broker
        restarts. Its replicas stop - the controller moves their leaderships to replicas on
        healthy dirs and drops this broker from the ISRs, as when it is fenced - while the
        broker keeps answering (KAFKA_STORAGE_ERROR, NOT_LEADER_OR_FOLLOWER), and
        DescribeLogDirs reports the error."""
        if self.log_dir_error is not None:
            return
        self.log_dir_error = str(exc)
        log.error("Broker %d: log dir %s is offline after an I/O error (%s); its leaderships move to replicas "
                  "on healthy log dirs until this broker restarts", self.node_id, self.log_dir, exc)
        try:
            self.controller.fence_broker(self.node_id)
        except OSError as fence_error:   # the metadata journal shares the failed disk
            log.error("Broker %d: cannot record the offline log dir in the metadata: %s", self.node_id, fence_error)

    # --- metadata -------------------------------------------------------------------------

    def _log_config_for_topic(self, topic: str):
        state = self.image.topics.get(topic)
        return log_config_for(state.configs if state else {}, self.config)

    # --- lookups for the API handlers -----------------------------------------------------

    def leader_partition(self, topic: str, index: int) -> Partition:
        partition = self.partitions.get((topic, index))
        if partition is not None and partition.is_leader:
            return partition
        if self.image.partition(topic, index) is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        raise ApiError(Errors.NotLeaderForPartitionError)

    def hosted_partition(self, topic: str, index: int) -> Partition:
        """This broker's replica of the partition, leader or follower (Kafka's
        getPartitionOrError): UNKNOWN_TOPIC_OR_PARTITION, else NOT_LEADER_OR_FOLLOWER when this
        broker holds no replica of it."""
        partition = self.partitions.get((topic, index))
        if partition is not None:
            return partition
        if self.image.partition(topic, index) is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        raise ApiError(Errors.NotLeaderForPartitionError)

    def read_for_fetch(self, topic: str, index: int, *, fetch_offset: int, max_bytes: int, current_leader_epoch: int,
                       replica_id: int, min_one_batch: bool, isolation_level: int = 0):
        """One partition's share of a Fetch: (the leader Partition, a FileSlice or None).

        Consumers read up to the high watermark (read_committed, isolation_level 1: up to
        the last stable offset); a follower (replica_id >= 0, proven by the caller: k01_fetch)
        reads up to the log end, and its fetch offset moves the high watermark and may grow the ISR; a
        throttled follower gets no data while the leader throttle is exceeded. The slice's
        descriptor belongs to the segment: a caller that keeps it past this turn of the event
        loop takes `dup()`. Raises ApiError (NOT_LEADER, fencing...) or StorageError."""
        partition = self.leader_partition(topic, index)
        partition.check_leader_epoch(current_leader_epoch)
        if replica_id >= 0:
            max_offset = None
            if self.leader_throttle.exceeded() and self.is_throttled_leader(partition, replica_id):
                max_offset = fetch_offset      # throttled: answer with no data this time
        else:
            max_offset = partition.last_stable_offset if isolation_level == 1 else partition.high_watermark
        # Outside the log (past its end) raises OFFSET_OUT_OF_RANGE before anything changes:
        # a follower's position is recorded only once the read succeeded, as in Kafka.
        file_slice = partition.log.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)
        if replica_id >= 0:
            self.on_follower_fetch(partition, replica_id, fetch_offset)
            if file_slice is not None and self.is_throttled_leader(partition, replica_id):
                self.leader_throttle.record(file_slice.size)
        return partition, file_slice

    def is_throttled_leader(self, partition: Partition, follower_id: int) -> bool:
        configs = self.image.topics[partition.topic].configs
        return is_throttled(configs.get("leader.replication.throttled.replicas", ""), partition.index, follower_id) \
            or is_throttled(configs.get("leader.replication.throttled.replicas", ""), partition.index, self.node_id)

    def is_throttled_follower(self, partition: Partition) -> bool:
        configs = self.image.topics.get(partition.topic)
        return configs is not None and is_throttled(
            configs.configs.get("follower.replication.throttled.replicas", ""), partition.index, self.node_id)

    # --- ISR maintenance (leader side) ------------------------------------------------------

    def on_follower_fetch(self, partition: Partition, replica_id: int, fetch_offset: int) -> None:
        partition.record_follower_fetch(replica_id, fetch_offset, now_ms())
        grown = partition.isr_to_expand(self.controller.live_brokers)
        if grown is not None:
            self.metrics.isr_expands += 1
            self._propose_isr(partition, grown)

    def _shrink_isrs(self) -> None:
        lag_max = self.config.get("replica.lag.time.max.ms")
        now = now_ms()
        for partition in list(self.partitions.values()):
            shrunk = partition.isr_to_shrink(now, lag_max)
            if shrunk is not None:
                self.metrics.isr_shrinks += 1
                self._propose_isr(partition, shrunk)

    def _propose_isr(self, partition: Partition, isr: list[int]) -> None:
        """Queue an ISR change; all proposals of one event-loop turn go to the controller as one
        batch (one metadata commit), as Kafka's AlterPartition requests batch partitions."""
        partition.pending_isr = isr
        self._isr_proposals[(partition.topic, partition.index)] = (partition, isr)
        if len(self._isr_proposals) == 1:
            asyncio.get_running_loop().call_soon(self._send_isr_proposals)

    def _send_isr_proposals(self) -> None:
        proposals, self._isr_proposals = list(self._isr_proposals.values()), {}
        for partition, _ in proposals:
            partition.pending_isr = None
        if not self.running:
            return
        refused = self.controller.alter_isrs(
            [(p.topic, p.index, self.node_id, p.leader_epoch, p.partition_epoch, isr) for p, isr in proposals])
        for (topic, index), exc in refused.items():
            log.info("Broker %d: ISR change for %s-%d refused: %s", self.node_id, topic, index, exc)

    # --- background work ------------------------------------------------------------------

    def _retention_interval_s(self) -> float:
        return self.config.get("log.retention.check.interval.ms") / 1000

    def _checkpoint_interval_s(self) -> float:
        return self.config.get("log.flush.offset.checkpoint.interval.ms") / 1000 or 60.0

    def _isr_check_interval_s(self) -> float:
        return max(self.config.get("replica.lag.time.max.ms") / 2000, 0.05)

    def _producer_expiry_interval_s(self) -> float:
        return self.config.get("producer.id.expiration.check.interval.ms") / 1000

    def _expire_producers(self) -> None:
        self.log_manager.remove_expired_producers(now_ms(), self.config.get("producer.id.expiration.ms"))

    def _run_retention(self) -> None:
        self.log_manager.run_retention(now_ms(), self._high_watermarks())

    def _high_watermarks(self) -> dict[tuple[str, int], int]:
        """Retention and compaction stay below each replica's high watermark, as in Kafka."""
        return {key: partition.high_watermark for key, partition in self.partitions.items()}

    def _flush_dirty(self) -> None:
        self.log_manager.flush_dirty_logs(now_ms())

    def _checkpoint(self) -> None:
        self.log_manager.checkpoint()
        self._write_hw_checkpoint()

    def _write_hw_checkpoint(self) -> None:
        OffsetCheckpointFile(self.log_dir / HW_CHECKPOINT).write(
            {key: partition.high_watermark for key, partition in self.partitions.items()})

    async def _periodic(self, interval_s, action) -> None:
        while True:
            await asyncio.sleep(interval_s())
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - keep the broker alive; the next round retries
                if is_io_failure(exc):
                    self.log_dir_failed(exc)
                log.exception("Broker %d: background task %s failed", self.node_id, action.__name__)

    # --- consumer groups and log compaction -------------------------------------------------
    # The group coordinator follows this broker's __consumer_offsets leaderships through
    # `_sync_partitions`; the log cleaner compacts this broker's logs in the background.

    def _start_groups_and_compaction(self) -> list[asyncio.Task]:
        self.group_coordinator.start()
        self.txn_coordinator.start()
        self.share_coordinator.start()
        self.share_manager.start()
        self.log_cleaner = LogCleaner(self.log_dir, dedupe_buffer_size=self.config.get("log.cleaner.dedupe.buffer.size"),
                                      io_buffer_size=self.config.get("log.cleaner.io.buffer.size"))
        return [asyncio.create_task(self._run_log_cleaner())]

    async def _run_log_cleaner(self) -> None:
        """Every log.cleaner.backoff.ms, compact the logs that are due. The cleaning runs on a
        worker thread, off the event loop; only its segment swaps come back to the loop."""
        while True:
            await asyncio.sleep(self.config.get("log.cleaner.backoff.ms") / 1000)
            if not self.config.get("log.cleaner.enable"):
                continue
            try:
                # Compaction stays below the last stable offset (as Kafka): an open transaction's
                # data is not known yet to be kept or dropped.
                bounds = {key: partition.last_stable_offset for key, partition in self.partitions.items()}
                for tp, log_ in self.log_cleaner.logs_to_clean(self.log_manager.all_logs(), now_ms(), bounds):
                    await clean_off_loop(StepRunner(self.log_cleaner.clean(tp, log_, now_ms(), bounds[tp])))
            except Exception:  # noqa: BLE001 - keep the broker alive; the next round retries
                log.exception("Broker %d: log cleaner failed", self.node_id)
