"""A full disk under one broker's log dir, injected through the storage FileSystem seam into
a real in-process engine: the producer gets KAFKA_STORAGE_ERROR instead of a timeout, the log
dir goes offline, its leadership moves to a replica on a healthy dir (where production goes
on and nothing acknowledged is lost), and DescribeLogDirs reports the error."""
from __future__ import annotations

import asyncio
import errno
import threading

import kafka.errors as Errors
from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

from engine.runtime import Engine
from tests.engine.cluster.helpers import create_topic, partition_state
from tests.engine.protocol.test_bad_input import build_batch, produce
from tests.support.engine_process import free_port_range
from tests.support.partition_io import read_values, send_values
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until


class EngineThread:
    """An Engine on its own event loop in a thread of this process: the test's FileSystem is its."""

    def __init__(self, data_dir, brokers: int, configs: dict | None = None) -> None:
        self.port = free_port_range(brokers)
        self.engine = Engine(data_dir, brokers=brokers, port=self.port, admin=False, configs=configs)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.engine.start(), self.loop).result(30)

    @property
    def bootstrap(self) -> str:
        return self.engine.bootstrap_servers

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.engine.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def describe_log_dirs(port: int):
    client = RawClient(port)
    try:
        return client.request(DescribeLogDirsRequest(topics=None), 1, DescribeLogDirsResponse).results
    finally:
        client.close()


def test_a_full_disk_takes_the_log_dir_offline_and_leadership_moves(faulty_fs, tmp_path, topic_name):
    cluster = EngineThread(tmp_path / "data", brokers=3)
    try:
        create_topic(cluster.bootstrap, topic_name, 1, 3, {"min.insync.replicas": "2"})
        before = [f"before-{i}".encode() for i in range(20)]
        send_values(cluster.bootstrap, topic_name, before, acks="all")
        leader = partition_state(cluster.bootstrap, topic_name)[0][0]
        leader_port = cluster.port + leader

        faulty_fs.fail("write", errno.ENOSPC, path_contains=f"/broker-{leader}/")
        client = RawClient(leader_port)
        assert produce(client, topic_name, bytes(build_batch([b"no room"]))) == Errors.KafkaStorageError.errno
        client.close()

        wait_until(lambda: partition_state(cluster.bootstrap, topic_name)[0][0] not in (leader, -1),
                   timeout=30, message="leadership to move off the failed log dir")
        _, _, isr = partition_state(cluster.bootstrap, topic_name)[0]
        assert leader not in isr
        [offline] = describe_log_dirs(leader_port)
        assert offline.error_code == Errors.KafkaStorageError.errno and offline.topics == []
        healthy = (leader + 1) % 3
        assert describe_log_dirs(cluster.port + healthy)[0].error_code == 0

        after = [f"after-{i}".encode() for i in range(20)]
        send_values(cluster.bootstrap, topic_name, after, acks="all", retries=5)
        assert read_values(cluster.bootstrap, topic_name, 40) == before + after
    finally:
        faulty_fs.heal()
        cluster.stop()
