"""Two claims with no test before: a follower that stops fetching leaves the ISR after
replica.lag.time.max.ms and rejoins once it catches up (the leader's lag check, not a broker
stop), and the periodic automatic leader rebalance hands leadership back to preferred replicas."""
from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient, TopicPartition

from engine.broker.replica_fetcher import ReplicaFetcher
from tests.engine.cluster.helpers import create_topic, partition_state, wait_until
from tests.support.in_process_engine import InProcessEngine

STALLED = 2   # the follower whose fetches the test holds back


class FetchGate:
    """The seam: wraps ReplicaFetcher._fetch so that broker STALLED's fetches wait while closed.
    A fetch held at the gate is a follower that has gone quiet, as a GC pause or a slow disk makes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.opened = asyncio.Event()
        self.opened.set()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.opened.clear)

    def open(self) -> None:
        self.loop.call_soon_threadsafe(self.opened.set)

    def wrap(self, fetch):
        gate = self

        async def gated_fetch(fetcher: ReplicaFetcher, connection):
            if fetcher.broker.node_id == STALLED:
                await gate.opened.wait()
            return await fetch(fetcher, connection)
        return gated_fetch


@pytest.fixture
def gated_engine(tmp_path, monkeypatch):
    """A 3-broker Engine on a background event loop in this process, with the fetch gate in place."""
    running = InProcessEngine(tmp_path, brokers=3, configs={"replica.lag.time.max.ms": "1000",
                                                            "auto.leader.rebalance.enable": "false"})
    gate = FetchGate(running.loop)
    monkeypatch.setattr(ReplicaFetcher, "_fetch", gate.wrap(ReplicaFetcher._fetch))
    with running:
        yield running.engine, gate
        gate.open()


def test_a_quiet_follower_leaves_the_isr_after_the_lag_time_and_rejoins_once_caught_up(gated_engine, topic_name):
    engine, gate = gated_engine
    bootstrap = engine.bootstrap_servers
    create_topic(bootstrap, topic_name, 3, 3)
    wait_until(lambda: all(len(isr) == 3 for _, _, isr in partition_state(bootstrap, topic_name).values()),
               message="full ISRs")
    led_elsewhere = [p for p, (leader, _, _) in partition_state(bootstrap, topic_name).items() if leader != STALLED]

    gate.close()
    # Only the leaders' lag check can drop a follower that is alive, registered and fetching nothing.
    wait_until(lambda: all(STALLED not in partition_state(bootstrap, topic_name)[p][2] for p in led_elsewhere),
               message=f"broker {STALLED} out of the ISRs it follows")
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for p in led_elsewhere:   # acks=all needs only the shrunken ISR now
        producer.produce(topic_name, value=b"while-stalled", partition=p)
    assert producer.flush(30) == 0

    gate.open()
    wait_until(lambda: all(len(isr) == 3 for _, _, isr in partition_state(bootstrap, topic_name).values()),
               message=f"broker {STALLED} back in every ISR")


def test_the_periodic_rebalance_returns_leadership_to_preferred_replicas(engine_factory, topic_name):
    engine = engine_factory(brokers=3, configs={"leader.imbalance.check.interval.seconds": "1"})
    create_topic(engine.bootstrap, topic_name, 1, 3)
    wait_until(lambda: len(partition_state(engine.bootstrap, topic_name)[0][2]) == 3, message="a full ISR")
    leader, replicas, _ = partition_state(engine.bootstrap, topic_name)[0]
    assert leader == replicas[0]
    # Reorder the replicas: the same set, so nothing moves and no ISR changes, but another broker
    # is now preferred. Only the periodic imbalance check can hand it the leadership.
    reordered = replicas[1:] + replicas[:1]
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    try:
        admin.alter_partition_reassignments({TopicPartition(topic_name, 0): reordered})
        wait_until(lambda: partition_state(engine.bootstrap, topic_name)[0][1] == reordered,
                   message="the reordered replicas")
    finally:
        admin.close()
    wait_until(lambda: partition_state(engine.bootstrap, topic_name)[0][0] == reordered[0],
               message="leadership on the new preferred replica")
    assert "Auto leader rebalance moved 1 leaderships" in engine.log_text()
