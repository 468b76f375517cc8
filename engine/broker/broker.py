"""A broker: a node id, a listener, a log directory, and the partitions it leads.

The broker follows the controller's metadata image: when a topic appears or grows it opens
logs for the partitions it leads, and when a topic is deleted it deletes their logs.
Everything runs on the engine's single event loop, which owns all broker state.
"""
from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import kafka.errors as Errors

from engine.broker.network import BrokerListener
from engine.broker.partition import Partition
from engine.cluster.controller import Controller
from engine.cluster.metadata import MetadataImage, TopicState
from engine.config import BrokerConfig, log_config_for
from engine.errors import ApiError
from engine.storage.log_manager import LogManager

log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    def __init__(self, node_id: int, host: str, port: int, log_dir: Path, controller: Controller) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.log_dir = log_dir
        self.controller = controller
        self.config: BrokerConfig = controller.broker_config_for(node_id)
        self.log_manager = LogManager(log_dir)
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.listener = BrokerListener(self, host, port, self.config.get("socket.request.max.bytes"))
        self._tasks: list[asyncio.Task] = []
        self.running = False

    @property
    def image(self) -> MetadataImage:
        return self.controller.image

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_manager.load(self._log_config_for_topic, now_ms())
        self.controller.add_listener(self.on_metadata_change)
        self._sync_partitions(set(self.image.topics), [])
        self._drop_orphan_logs()
        await self.listener.start()
        self._tasks = [asyncio.create_task(self._periodic(self._retention_interval_s, self._run_retention)),
                       asyncio.create_task(self._periodic(lambda: 1.0, self._flush_dirty)),
                       asyncio.create_task(self._periodic(self._checkpoint_interval_s, self._checkpoint))]
        self.running = True
        log.info("Broker %d listening on %s:%d", self.node_id, self.host, self.port)

    async def stop(self) -> None:
        """Clean shutdown: close the listener, then flush, checkpoint and close every log."""
        self.running = False
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.listener.stop()
        self.log_manager.shutdown()
        self.partitions.clear()

    # --- metadata -------------------------------------------------------------------------

    def _log_config_for_topic(self, topic: str):
        state = self.image.topics.get(topic)
        return log_config_for(state.configs if state else {}, self.config)

    def on_metadata_change(self, changed: set[str], deleted: list[TopicState]) -> None:
        self.config = self.controller.broker_config_for(self.node_id)
        self._sync_partitions(changed, deleted)

    def _sync_partitions(self, changed: set[str], deleted: list[TopicState]) -> None:
        for topic in deleted:
            for index in topic.partitions:
                self.partitions.pop((topic.name, index), None)
                self.log_manager.delete_log(topic.name, index)
        for name in changed:
            topic = self.image.topics.get(name)
            if topic is None:
                continue
            config = log_config_for(topic.configs, self.config)
            for index, state in topic.partitions.items():
                if state.leader != self.node_id:
                    continue
                partition = self.partitions.get((name, index))
                if partition is None:
                    log_ = self.log_manager.get_or_create_log(name, index, config, now_ms())
                    self.partitions[(name, index)] = Partition(name, index, topic.topic_id, log_, state.leader_epoch)
                else:
                    partition.log.update_config(config)
                    partition.leader_epoch = state.leader_epoch

    def _drop_orphan_logs(self) -> None:
        """Delete logs of topics that no longer exist (deleted while this broker was down)."""
        for (topic, index) in list(self.log_manager.all_logs()):
            if (topic, index) not in self.partitions and topic not in self.image.topics:
                self.log_manager.delete_log(topic, index)

    # --- lookups for the API handlers -----------------------------------------------------

    def leader_partition(self, topic: str, index: int) -> Partition:
        partition = self.partitions.get((topic, index))
        if partition is not None:
            return partition
        state = self.image.partition(topic, index)
        if state is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        raise ApiError(Errors.NotLeaderForPartitionError)

    # --- background work ------------------------------------------------------------------

    def _retention_interval_s(self) -> float:
        return self.config.get("log.retention.check.interval.ms") / 1000

    def _checkpoint_interval_s(self) -> float:
        return self.config.get("log.flush.offset.checkpoint.interval.ms") / 1000 or 60.0

    def _run_retention(self) -> None:
        self.log_manager.run_retention(now_ms())

    def _flush_dirty(self) -> None:
        self.log_manager.flush_dirty_logs(now_ms())

    def _checkpoint(self) -> None:
        self.log_manager.checkpoint()

    async def _periodic(self, interval_s, action) -> None:
        while True:
            await asyncio.sleep(interval_s())
            try:
                action()
            except Exception:  # noqa: BLE001 - keep the broker alive; the next round retries
                log.exception("Broker %d: background task %s failed", self.node_id, action.__name__)
