"""A GroupCoordinator over a fake broker whose only partition, `__consumer_offsets-0`, is a
real Log: the coordinator's logic and records, without sockets or replication."""
from __future__ import annotations

import asyncio

import pytest

from engine.cluster.metadata import MetadataImage
from engine.config import BrokerConfig
from engine.coordinator.coordinator import GroupCoordinator
from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.storage.log import Log
from engine.storage.log_config import LogConfig

CONFIGS = {"offsets.topic.num.partitions": "1", "group.initial.rebalance.delay.ms": "0",
           "group.min.session.timeout.ms": "10"}


class FakePartition:
    """The Partition surface the coordinator uses; the write is "replicated" at once."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.is_leader = True
        self.leader_epoch = 0

    def append(self, records: bytearray, now_ms: int):
        return self.log.append(records, leader_epoch=self.leader_epoch, now_ms=now_ms)

    def wait_for_high_watermark(self, offset: int) -> asyncio.Future:
        done = asyncio.get_running_loop().create_future()
        done.set_result(self.is_leader)
        return done


class FakeBroker:
    node_id = 0
    running = True

    def __init__(self, log_dir, configs: dict | None = None) -> None:
        self.config = BrokerConfig(static={**CONFIGS, **(configs or {})})
        self.image = MetadataImage()
        self.log_dir = log_dir
        self.partitions = {}

    def lead_offsets_partition(self) -> FakePartition:
        log = Log.open(self.log_dir / f"{OFFSETS_TOPIC}-0", LogConfig(cleanup_policy="compact"), now_ms=0)
        partition = self.partitions[(OFFSETS_TOPIC, 0)] = FakePartition(log)
        return partition


@pytest.fixture
def make_coordinator(tmp_path):
    """make_coordinator(configs) -> a coordinator leading the (persistent) offsets partition;
    call it again to simulate a restart on the same log. Call inside a running loop."""
    made = []

    def make(configs: dict | None = None) -> GroupCoordinator:
        for old in made:
            old.shutdown()
            for partition in old._broker.partitions.values():
                partition.log.close()
        broker = FakeBroker(tmp_path, configs)
        broker.lead_offsets_partition()
        coordinator = GroupCoordinator(broker)
        coordinator.on_partitions_changed()
        made.append(coordinator)
        return coordinator

    yield make
    for coordinator in made:
        coordinator.shutdown()
