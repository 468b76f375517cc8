"""The collector against a real engine with live producers and consumers; Spark reads the lake back."""
from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from console.analytics import lake as L
from console.analytics.collector import snapshot_collect
from console.analytics.launch import lake_frame
from tests.console.conftest import make_topic
from tests.support.waiting import wait_until

T1 = dt.datetime(2026, 11, 1, 10, 0, tzinfo=dt.timezone.utc)
T2 = T1 + dt.timedelta(seconds=30)


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for partition, count in counts.items():
        for i in range(count):
            producer.produce(topic, value=b"x" * 100, key=f"k{i}".encode(), partition=partition)
    assert producer.flush(30) == 0


def consume_and_commit(consumer: Consumer, topic: str, upto: dict[int, int]) -> None:
    """Read until every partition's position reaches `upto`, then commit exactly those offsets."""
    positions = consumer.positions = getattr(consumer, "positions", {})

    def read_enough():
        for m in consumer.consume(100, timeout=0.5):
            if not m.error():
                positions[m.partition()] = m.offset() + 1
        return all(positions.get(p, 0) >= o for p, o in upto.items())
    wait_until(read_enough, timeout=60, message="the consumer to read its records")
    consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in upto.items()], asynchronous=False)


class _Consumer(Consumer):
    """A confluent consumer that can remember how far it read."""


@pytest.fixture
def live_consumer(engine_cluster):
    consumers = []

    def make(group: str, topic: str) -> Consumer:
        consumer = _Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group,
                              "enable.auto.commit": False, "auto.offset.reset": "earliest",
                              "session.timeout.ms": 30000})
        consumer.subscribe([topic])
        consumers.append(consumer)
        return consumer
    yield make
    for consumer in consumers:
        consumer.close()


def test_snapshots_hold_offsets_sizes_groups_and_configs_that_spark_reads_back(
        spark, cluster, engine_cluster, unique_topic, live_consumer, tmp_path):
    topic = make_topic(cluster, unique_topic(), partitions=2, configs={"retention.ms": "3600000",
                                                                      "segment.bytes": "1048576"})
    bootstrap, lake_url, group = engine_cluster.bootstrap, str(tmp_path / "lake"), unique_topic("group")
    produce(bootstrap, topic, {0: 30, 1: 20})
    consumer = live_consumer(group, topic)
    consume_and_commit(consumer, topic, {0: 25, 1: 20})
    first = snapshot_collect(cluster=cluster, lake_url=lake_url, taken_at=T1)
    produce(bootstrap, topic, {0: 10})
    consume_and_commit(consumer, topic, {0: 40, 1: 20})
    second = snapshot_collect(cluster=cluster, lake_url=lake_url, taken_at=T2)
    assert first.rows[L.PARTITIONS] >= 2 and second.rows[L.LOG_DIRS] >= 3

    def rows(table, **where):
        frame = lake_frame(spark, lake_url=lake_url, table=table, cluster_id=cluster.pk)
        for column, value in where.items():
            frame = frame.where(frame[column] == value)
        return [r.asDict() for r in frame.orderBy(*frame.columns).collect()]

    partitions = rows(L.PARTITIONS, topic=topic)
    assert [(r[L.TS].replace(tzinfo=dt.timezone.utc), r[L.PARTITION], r[L.LOG_START_OFFSET], r[L.LOG_END_OFFSET])
            for r in partitions] == [(T1, 0, 0, 30), (T1, 1, 0, 20), (T2, 0, 0, 40), (T2, 1, 0, 20)]
    assert all(r[L.SIZE_BYTES] > 100 * r[L.LOG_END_OFFSET] for r in partitions)      # records plus framing
    assert all(r[L.LEADER] in (0, 1, 2) for r in partitions)
    offsets = rows(L.GROUP_OFFSETS, group_id=group)
    assert [(r[L.PARTITION], r[L.COMMITTED_OFFSET], r[L.LOG_END_OFFSET], r[L.MEMBERS]) for r in offsets] == [
        (0, 25, 30, 1), (1, 20, 20, 1), (0, 40, 40, 1), (1, 20, 20, 1)]               # one live member
    dirs = rows(L.LOG_DIRS)
    assert {r[L.BROKER] for r in dirs} == {0, 1, 2}
    assert all(r[L.TOTAL_BYTES] > r[L.USABLE_BYTES] > 0 for r in dirs)                 # DescribeLogDirs v4
    [config, _] = rows(L.TOPIC_CONFIGS, topic=topic)
    assert (config[L.CLEANUP_POLICY], config[L.RETENTION_MS], config[L.RETENTION_BYTES], config[L.SEGMENT_BYTES]) == (
        "delete", 3_600_000, -1, 1_048_576)


def test_topic_configs_are_asked_again_in_turn_and_at_once_for_new_topics(cluster, unique_topic, tmp_path,
                                                                          monkeypatch):
    """DescribeConfigs for every topic is the costliest request of a snapshot, so each snapshot
    asks for new topics and the next slice of the known ones: every topic is asked again
    within CONFIGS_REFRESH_SNAPSHOTS snapshots (here 2), and a changed config shows then."""
    from console.analytics import collector
    from console.clusters.gateway import cluster_gateway
    from console.kafka_gateway import snapshots
    lake_url = str(tmp_path / "lake")
    first = make_topic(cluster, unique_topic(), configs={"retention.ms": "1000000"})
    monkeypatch.setattr(collector, "CONFIGS_REFRESH_SNAPSHOTS", 2)
    monkeypatch.setattr(collector, "_configs_cache", {})                 # this process has seen no topic yet
    asked: list[list[str]] = []
    real = snapshots.retention_configs

    def recording(gateway, topics):       # the real request; the test only notes which topics it named
        asked.append(list(topics))
        return real(gateway, topics)
    monkeypatch.setattr(collector.snapshots, "retention_configs", recording)

    def snapshot(at: dt.datetime) -> dict[str, int]:
        snapshot_collect(cluster=cluster, lake_url=lake_url, taken_at=at)
        table = pq.read_table(f"{lake_url}/{L.TOPIC_CONFIGS}", filters=[(L.TS, "=", at)]).to_pylist()
        return {r[L.TOPIC]: r[L.RETENTION_MS] for r in table}

    everything = snapshot(T1)
    assert everything[first] == 1_000_000 and set(asked[-1]) == set(everything)
    with cluster_gateway(cluster) as gw:
        gw.alter_topic_configs(first, set_configs={"retention.ms": "2000000"})
    second = make_topic(cluster, unique_topic(), configs={"retention.ms": "3000000"})
    values = [snapshot(T2 + dt.timedelta(seconds=30 * i)) for i in range(2)]
    assert second in asked[-2]                                                         # new: asked at once
    assert set(everything) <= set(asked[-2]) | set(asked[-1])                          # the others in turn
    assert all(v[second] == 3_000_000 for v in values) and values[-1][first] == 2_000_000
