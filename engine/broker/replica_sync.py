"""A broker's replicas kept in step with the controller's metadata image.

For every partition that lists the broker as a replica, the broker opens the log and becomes
leader or follower as the image says (followers fetch from their leader through a
ReplicaFetcher); replicas it no longer holds are deleted, and logs the image does not know
are set aside. Big changes are applied in slices of the event loop (engine/cluster/slices.py).

`ReplicaSync` is a part of `broker.Broker` (its base class), kept in its own module; the
state it reads and changes (`partitions`, `fetchers`, `log_manager`, the pending and doomed
replicas) belongs to the broker and lives on the single event loop.
"""
from __future__ import annotations

import asyncio
import logging
import shutil
import time
from pathlib import Path

from engine.broker.partition import Partition
from engine.broker.replica_fetcher import ReplicaFetcher
from engine.clock import now_ms
from engine.cluster import slices
from engine.cluster.metadata import TopicState
from engine.config import log_config_for
from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.coordinator.transactions.store import TXN_TOPIC
from engine.share.coordinator import SHARE_STATE_TOPIC
from engine.storage.errors import is_io_failure

log = logging.getLogger(__name__)
# A metadata change of more replicas than this is applied in slices (engine/cluster/slices.py).
INLINE_PARTITIONS = 256
DELETE_CHUNK = 50      # logs renamed per fsync when a deletion runs in slices (a rename costs ~0.1 ms)


def _remove_dirs(paths: list[Path]) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


class ReplicaSync:
    """The broker's replicas following the metadata image (see the module docstring)."""

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
        if deleted:
            self._doom(self._replicas_of(deleted))
            self.group_coordinator.on_topics_deleted({topic.name for topic in deleted})
        work = [(name, index) for name in changed if name in self.image.topics
                for index in self.image.topics[name].partitions]
        internal = (OFFSETS_TOPIC, TXN_TOPIC, SHARE_STATE_TOPIC)
        offsets = [key for key in work if key[0] in internal]
        others = [key for key in work if key[0] not in internal and key not in self._pending]
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
        if any(k[0] == SHARE_STATE_TOPIC for k in offsets) or any(t.name == SHARE_STATE_TOPIC for t in deleted):
            self.share_coordinator.on_partitions_changed()
        self.share_manager.on_partitions_changed()

    def _replicas_of(self, deleted: list[TopicState]) -> set[tuple[str, int]]:
        """The replicas of deleted topics this broker may hold: their partitions, and any
        replica open under one of their names (one walk over the broker's replicas for the
        whole commit, not one per topic)."""
        names = {topic.name for topic in deleted}
        keys = {(topic.name, index) for topic in deleted for index in topic.partitions}
        return keys | {key for key in self.partitions if key[0] in names}

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
                while self._pending:     # at least one replica a slice, however late it began
                    key = next(iter(self._pending))
                    del self._pending[key]
                    try:
                        self._apply_replica(key, configs)
                    except Exception:  # noqa: BLE001 - one replica's failure must not stall the rest
                        log.exception("Broker %d: applying the metadata of %s-%d failed", self.node_id, *key)
                    if time.monotonic() >= deadline:
                        break
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
                while self._doomed:      # at least one log a slice, however late it began
                    keys.append(next(iter(self._doomed)))
                    self._close_doomed(keys[-1])
                    if time.monotonic() >= deadline or len(keys) >= DELETE_CHUNK:
                        break
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
