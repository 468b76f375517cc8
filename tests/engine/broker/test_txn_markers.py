"""write_txn_markers on a real in-process engine: markers are replicated before the listeners
run, every replica ends with the same transaction state and LSO, and per-partition errors."""
from __future__ import annotations

import asyncio

import kafka.errors as Errors
import pytest

from engine.broker.txn_markers import write_txn_markers
from tests.engine.broker.test_log_dir_failure import EngineThread
from tests.engine.cluster.helpers import create_topic, partition_state
from tests.support.raw_client import RawClient
from tests.support.txn_wire import new_producer_id, produce, txn_batch
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    # The test writes markers itself, playing the coordinator: Produce must not ask the real one.
    engine = EngineThread(tmp_path_factory.mktemp("txn-markers"), brokers=3,
                          configs={"transaction.partition.verification.enable": "false"})
    yield engine
    engine.stop()


def on_loop(running, coro_or_fn):
    async def call():
        return await coro_or_fn() if asyncio.iscoroutinefunction(coro_or_fn) else coro_or_fn()
    return asyncio.run_coroutine_threadsafe(call(), running.loop).result(60)


def test_markers_are_replicated_before_listeners_run_and_replicas_agree(running, topic_name):
    create_topic(running.bootstrap, topic_name, 1, 3)
    leader_id, replicas, _ = partition_state(running.bootstrap, topic_name)[0]
    wait_until(lambda: sorted(partition_state(running.bootstrap, topic_name)[0][2]) == sorted(replicas), timeout=30)
    client = RawClient(running.port + leader_id)
    pid, epoch = new_producer_id(client)
    assert produce(client, topic_name, txn_batch(pid, epoch, 0, [b"a", b"b"])) == (0, 0)
    client.close()
    leader = running.engine.broker(leader_id)
    key = (topic_name, 0)
    seen = []

    def listener(topic, partition, producer_id, commit):
        p = leader.partitions[(topic, partition)]
        seen.append((topic, partition, producer_id, commit, p.high_watermark, p.log_end_offset))

    on_loop(running, lambda: leader.txn_marker_listeners.append(listener))
    assert on_loop(running, lambda: leader.partitions[key].ongoing_transaction_first_offset(pid)) == 0
    assert on_loop(running, lambda: leader.partitions[key].last_stable_offset) == 0

    async def write():
        return await write_txn_markers(leader, producer_id=pid, producer_epoch=epoch, coordinator_epoch=3,
                                       commit=True, partitions=[key, (topic_name, 7), ("no-such-topic", 0)],
                                       timeout_ms=30_000)
    assert on_loop(running, write) == {key: 0, (topic_name, 7): Errors.UnknownTopicOrPartitionError.errno,
                                       ("no-such-topic", 0): Errors.UnknownTopicOrPartitionError.errno}
    # Called once, for the partition written, with the marker (offset 2) already below the HW.
    assert seen == [(topic_name, 0, pid, True, 3, 3)]
    assert on_loop(running, lambda: leader.partitions[key].last_stable_offset) == 3

    def replica_states():
        return [(b.partitions[key].last_stable_offset, b.partitions[key].ongoing_transaction_first_offset(pid),
                 b.partitions[key].log.producer_state.producers[pid].coordinator_epoch)
                for b in (running.engine.broker(r) for r in replicas)]
    wait_until(lambda: on_loop(running, replica_states) == [(3, None, 3)] * 3, timeout=30)

    follower = running.engine.broker(next(r for r in replicas if r != leader_id))

    async def on_follower():
        return await write_txn_markers(follower, producer_id=pid, producer_epoch=epoch, coordinator_epoch=3,
                                       commit=False, partitions=[key], timeout_ms=1000)
    assert on_loop(running, on_follower) == {key: Errors.NotLeaderForPartitionError.errno}
    on_loop(running, lambda: leader.txn_marker_listeners.remove(listener))
