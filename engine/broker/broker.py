"""A broker: a node id, a listener, a log directory, and the partition replicas it hosts.

The broker follows the controller's metadata image: for every partition that lists it as a
replica it opens the log and becomes leader or follower as the image says (followers fetch
from their leader through a ReplicaFetcher); replicas it no longer holds are deleted. As
leader it proposes ISR changes to the controller. Everything runs on the engine's single
event loop, which owns all broker state.
"""
from __future__ import annotations

import asyncio
import logging
import shutil
import time
from pathlib import Path

import kafka.errors as Errors

from engine.clock import now_ms
from engine.broker.mutation_quota import ControllerMutationQuota, quota_of
from engine.broker.byte_rate_quota import FETCH as FETCH_BYTE_RATE, PRODUCE as PRODUCE_BYTE_RATE, ByteRateQuota
from engine.broker.partition import Partition
from engine.broker.replica_fetcher import ReplicaFetcher
from engine.broker.throttle import ReplicationThrottle, is_throttled
from engine.cluster import slices
from engine.cluster.controller import Controller
from engine.cluster.metadata import MetadataImage, TopicState
from engine.cluster.replication_control import ReplicaLog
from engine.config import BrokerConfig, log_config_for
from engine.coordinator.coordinator import GroupCoordinator
from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.coordinator.transactions.coordinator import TransactionCoordinator
from engine.coordinator.transactions.store import TXN_TOPIC
from engine.errors import ApiError
from engine.protocol.response_cache import ImageResponseCache
from engine.storage.checkpoint import OffsetCheckpointFile
from engine.broker.cleaner_thread import clean_off_loop
from engine.storage.cleaner import LogCleaner
from engine.storage.cleaner_steps import StepRunner
from engine.storage.errors import is_io_failure
from engine.storage.log_manager import LogManager

log = logging.getLogger(__name__)
HW_CHECKPOINT = "replication-offset-checkpoint"
# A metadata change of more replicas than this is applied in slices (engine/cluster/slices.py).
INLINE_PARTITIONS = 256
DELETE_CHUNK = 50      # logs renamed per fsync when a deletion runs in slices (a rename costs ~0.1 ms)


def _remove_dirs(paths: list[Path]) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


class Broker:
    def __init__(self, node_id: int, host: str, port: int, log_dir: Path, controller: Controller) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.log_dir = log_dir
        self.controller = controller
        self.config: BrokerConfig = controller.broker_config_for(node_id)
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
        self.listener = None   # the first of `listeners` (tests and tools ask it for the client port)
        self.listeners: list = []   # one protocol listener per named listener, attached by engine/runtime.py
        self.inter_broker_security = None   # the inter-broker listener's SecuritySettings: how fetchers connect
        self.authorizer = None   # engine/security/authorizer.StandardAuthorizer, set by engine/runtime.py when on
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

    def on_metadata_change(self, changed: set[str], deleted: list[TopicState], controller_epoch: int = 0) -> None:
        """Apply the controller's latest metadata; commands from an older controller epoch are ignored."""
        if controller_epoch < self._controller_epoch:
            log.warning("Broker %d ignoring metadata from stale controller epoch %d (current %d)",
                        self.node_id, controller_epoch, self._controller_epoch)
            return
        self._controller_epoch = controller_epoch
        self.config = self.controller.broker_config_for(self.node_id)
        if self.running:
            self._sync_partitions(changed, deleted, sliced=True)

    def resync(self) -> None:
        """Re-apply the whole image (after this broker was unfenced, which may change no record)."""
        if self.running:
            self._sync_partitions(set(self.image.topics), [])

    def _sync_partitions(self, changed: set[str], deleted: list[TopicState], *, sliced: bool = False) -> None:
        """Follow the image: drop deleted topics' replicas, open and (re)state changed ones.

        With `sliced` (metadata changes at run time), a change of more than INLINE_PARTITIONS
        partitions is applied by a background task that yields to the event loop every
        slices.SLICE_S, so that creating thousands of partitions never freezes the other connections;
        only new replicas wait (opening their logs is the cost), and until its turn one answers
        NOT_LEADER_OR_FOLLOWER, as on a broker that has
        not caught up with the metadata yet. Queued partitions are applied from the image as it
        is when their turn comes, so later changes are never overtaken by older ones."""
        for topic in deleted:
            keys = {(topic.name, index) for index in topic.partitions}
            keys |= {k for k in self.partitions if k[0] == topic.name}
            self._doom(keys)
        work = [(name, index) for name in changed if name in self.image.topics
                for index in self.image.topics[name].partitions]
        offsets = [key for key in work if key[0] in (OFFSETS_TOPIC, TXN_TOPIC)]
        others = [key for key in work if key[0] not in (OFFSETS_TOPIC, TXN_TOPIC) and key not in self._pending]
        # Opening a log is the costly part, so only replicas new to this broker wait their turn;
        # the state of open ones (leader or follower) changes at once.
        new = [key for key in others if key not in self.partitions]
        if sliced and len(new) > INLINE_PARTITIONS:
            self._pending.update(dict.fromkeys(new))
            if self._pending_task is None or self._pending_task.done():
                self._pending_task = asyncio.get_running_loop().create_task(self._apply_pending())
            others = [key for key in others if key in self.partitions]
        configs: dict[str, object] = {}
        for key in offsets + others:
            self._apply_replica(key, configs, skip_unchanged=sliced)
        if any(k[0] == OFFSETS_TOPIC for k in offsets) or any(t.name == OFFSETS_TOPIC for t in deleted):
            self.group_coordinator.on_partitions_changed()
        if any(k[0] == TXN_TOPIC for k in offsets) or any(t.name == TXN_TOPIC for t in deleted):
            self.txn_coordinator.on_partitions_changed()

    def _apply_replica(self, key: tuple[str, int], configs: dict[str, object], *, skip_unchanged: bool = False
                       ) -> None:
        """Make one replica match the image now: open, restate, or remove it. With
        `skip_unchanged`, a replica whose partition record is the one applied last keeps its
        state (the image replaces a record on every change; growing a topic by thousands of
        partitions must not restate the thousands it had)."""
        name, index = key
        topic = self.image.topics.get(name)
        state = topic.partitions.get(index) if topic is not None else None
        if state is None or self.node_id not in state.replicas:
            if key in self.partitions:
                self._remove_replica(key, delete_log=True)
            return
        config = configs.get(name)
        if config is None:
            config = configs[name] = log_config_for(topic.configs, self.config)
        if key in self._doomed:      # a re-created partition: its old log goes first
            self._delete_doomed([key])
        partition = self.partitions.get(key) or self._open_partition(topic, index, config)
        partition.log.update_config(config)
        if skip_unchanged and self._applied_states.get(key) is state:
            return
        self._apply_partition_state(partition, state)
        self._applied_states[key] = state

    async def _apply_pending(self) -> None:
        configs: dict[str, object] = {}
        while self._pending and self.running:
            async with slices.turn() as deadline:
                while self._pending and time.monotonic() < deadline:
                    key = next(iter(self._pending))
                    del self._pending[key]
                    try:
                        self._apply_replica(key, configs)
                    except Exception:  # noqa: BLE001 - one replica's failure must not stall the rest
                        log.exception("Broker %d: applying the metadata of %s-%d failed", self.node_id, *key)
            configs.clear()     # configs may change between slices

    def _doom(self, keys) -> None:
        """Deleted replicas stop being served at once; their logs are closed and renamed
        aside by a task that yields to the event loop every SLICE_S (thousands of renames
        took over a second in one turn), with one checkpoint at the end."""
        for key in keys:
            self._pending.pop(key, None)
            self._applied_states.pop(key, None)
            self._doomed[key] = self.partitions.pop(key, None)
        if not self._doomed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._delete_doomed(list(self._doomed))
            return
        if self._doomed_task is None or self._doomed_task.done():
            self._doomed_task = loop.create_task(self._delete_doomed_in_slices())

    async def _delete_doomed_in_slices(self) -> None:
        while self._doomed:
            async with slices.turn() as deadline:
                keys = []
                while self._doomed and time.monotonic() < deadline and len(keys) < DELETE_CHUNK:
                    keys.append(next(iter(self._doomed)))
                    self._close_doomed(keys[-1])
                self._guarded(self._delete_logs, keys, checkpoint=False)
        self._guarded(self.log_manager.checkpoint)

    def _guarded(self, action, *args, **kwargs) -> None:
        try:
            action(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the next start sets aside what is left
            if is_io_failure(exc):
                self.log_dir_failed(exc)
            log.exception("Broker %d: %s failed", self.node_id, action.__name__)

    def _close_doomed(self, key: tuple[str, int]) -> None:
        partition = self._doomed.pop(key)
        self._stop_fetching(key)
        if partition is not None:
            partition.close()

    def _delete_doomed(self, keys: list[tuple[str, int]]) -> None:
        """Finish the deletion of these doomed replicas now (a re-creation, a stop)."""
        keys = [k for k in keys if k in self._doomed]
        for key in keys:
            self._close_doomed(key)
        if keys:
            self._delete_logs(keys)

    def _delete_logs(self, keys: list[tuple[str, int]], *, checkpoint: bool = True) -> None:
        """Deleted topics' logs: renamed aside, with one fsync (and one checkpoint) for all
        of them; their files are removed off the event loop (a restart removes leftovers)."""
        doomed = self.log_manager.delete_logs(keys, checkpoint=checkpoint)
        if not doomed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            _remove_dirs(doomed)
        else:
            loop.run_in_executor(None, _remove_dirs, doomed)

    def _open_partition(self, topic: TopicState, index: int, config) -> Partition:
        log_ = self.log_manager.get_or_create_log(topic.name, index, config, now_ms())
        partition = Partition(topic.name, index, topic.topic_id, log_, self.node_id)
        partition.on_storage_failure = self.log_dir_failed
        partition.high_watermark = min(self._checkpointed_hw.get((topic.name, index), 0), log_.log_end_offset)
        self.partitions[(topic.name, index)] = partition
        return partition

    def _apply_partition_state(self, partition: Partition, state) -> None:
        key = (partition.topic, partition.index)
        if state.leader == self.node_id:
            self._stop_fetching(key)
            partition.make_leader(state.leader_epoch, state.partition_epoch, state.replicas, state.isr, now_ms())
            return
        changed = partition.make_follower(state.leader, state.leader_epoch, state.partition_epoch,
                                          state.replicas, state.isr)
        fetcher = self.fetchers.get(state.leader)
        if state.leader < 0 or state.leader not in self.image.brokers or self.node_id in self.controller.fenced:
            # No leader to follow, or this broker is shutting down: nothing to fetch.
            self._stop_fetching(key)
            return
        if changed or fetcher is None or key not in fetcher.partitions:
            self._stop_fetching(key)
            self._fetcher_for(state.leader).add(partition, truncate=True)

    def _fetcher_for(self, leader_id: int) -> ReplicaFetcher:
        fetcher = self.fetchers.get(leader_id)
        if fetcher is None:
            fetcher = self.fetchers[leader_id] = ReplicaFetcher(self, leader_id)
        return fetcher

    def _stop_fetching(self, key: tuple[str, int]) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove(key)

    def _remove_replica(self, key: tuple[str, int], *, delete_log: bool) -> None:
        self._applied_states.pop(key, None)
        self._stop_fetching(key)
        partition = self.partitions.pop(key, None)
        if partition is not None:
            partition.close()
        if delete_log:
            self.log_manager.delete_log(*key)

    def _set_aside_stray_logs(self) -> None:
        """Logs this broker does not host per the metadata (deleted or moved away while it was
        down, or metadata that lost them) are renamed `-stray`, never deleted (KIP-866): if the
        metadata is what is wrong, the data is still there."""
        for key in list(self.log_manager.all_logs()):
            if key not in self.partitions:
                stray = self.log_manager.mark_stray(*key)
                log.warning("Broker %d: %s-%d is not a replica of this broker in the metadata; its log dir "
                            "was renamed %s and is no longer served (delete it once it is not needed)",
                            self.node_id, *key, stray)

    # --- lookups for the API handlers -----------------------------------------------------

    def leader_partition(self, topic: str, index: int) -> Partition:
        partition = self.partitions.get((topic, index))
        if partition is not None and partition.is_leader:
            return partition
        if self.image.partition(topic, index) is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        raise ApiError(Errors.NotLeaderForPartitionError)

    def read_for_fetch(self, topic: str, index: int, *, fetch_offset: int, max_bytes: int, current_leader_epoch: int,
                       replica_id: int, min_one_batch: bool, isolation_level: int = 0):
        """One partition's share of a Fetch: (the leader Partition, a FileSlice or None).

        Consumers read up to the high watermark (read_committed, isolation_level 1: up to
        the last stable offset); a follower (replica_id >= 0) reads up to the
        log end, and its fetch offset moves the high watermark and may grow the ISR; a
        throttled follower gets no data while the leader throttle is exceeded. The slice's
        descriptor belongs to the segment: a caller that keeps it past this turn of the event
        loop takes `dup()`. Raises ApiError (NOT_LEADER, fencing...) or StorageError."""
        partition = self.leader_partition(topic, index)
        partition.check_leader_epoch(current_leader_epoch)
        max_offset = partition.last_stable_offset if isolation_level == 1 else partition.high_watermark
        if replica_id >= 0:
            self.on_follower_fetch(partition, replica_id, fetch_offset)
            max_offset = None
            if self.is_throttled_leader(partition, replica_id) and self.leader_throttle.exceeded():
                max_offset = fetch_offset      # throttled: answer with no data this time
        file_slice = partition.log.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)
        if replica_id >= 0 and file_slice is not None and self.is_throttled_leader(partition, replica_id):
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
        grown = partition.isr_to_expand(self.controller.live_brokers())
        if grown is not None:
            self._propose_isr(partition, grown)

    def _shrink_isrs(self) -> None:
        lag_max = self.config.get("replica.lag.time.max.ms")
        now = now_ms()
        for partition in list(self.partitions.values()):
            shrunk = partition.isr_to_shrink(now, lag_max)
            if shrunk is not None:
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
