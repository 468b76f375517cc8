"""Configs that must change what the broker does, not only what DescribeConfigs says:
retention by size and by time, set at creation, altered on a running topic, or inherited from
the cluster-wide broker default. Each test runs a private engine whose retention check runs
every 200 ms, and waits for the log start offset to move."""
import time

import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaProducer
from kafka.admin import AlterConfigOp, ConfigResource

from tests.engine.protocol.admin_support import (admin_client, alter_cluster_default, consume_from_beginning,
                                                 create_topic, offsets, produce, segment_files, topic_configs,
                                                 wait_until)

SEGMENT_BYTES = 1024
HOUR_MS = 3600 * 1000


@pytest.fixture
def engine(engine_factory):
    return engine_factory(brokers=1, configs={"log.retention.check.interval.ms": "200"})


@pytest.fixture
def admin(engine):
    client = admin_client(engine.bootstrap)
    yield client
    client.close()


def values(count: int, tag: str) -> list[bytes]:
    return [f"{tag}-{i:03d}-".encode() + b"x" * 100 for i in range(count)]


def test_retention_bytes_deletes_the_oldest_segments(engine, admin, topic_name):
    retention_bytes = 2 * SEGMENT_BYTES
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1, configs={
        "segment.bytes": str(SEGMENT_BYTES), "retention.bytes": str(retention_bytes)})["error_code"] == 0
    sent = values(40, "v")
    assert produce(engine.bootstrap, topic_name, sent, partition=0) == list(range(40))
    log_dir = engine.data_dir / "broker-0" / f"{topic_name}-0"

    def trimmed():
        start, end = offsets(engine.bootstrap, topic_name)
        files = segment_files(log_dir)
        total = sum(f.stat().st_size for f in files)
        # Kafka keeps deleting the oldest segment while the rest alone still reach retention.bytes.
        settled = start > 0 and start == int(files[0].stem) and total - files[0].stat().st_size < retention_bytes
        return settled and (start, end)

    start, end = wait_until(trimmed, message="retention.bytes to delete old segments")
    assert end == 40
    records = consume_from_beginning(engine.bootstrap, topic_name)
    assert [(r.offset, r.value) for r in records] == list(enumerate(sent))[start:]


def test_retention_ms_altered_on_a_running_topic_takes_effect(engine, admin, topic_name):
    """Records two hours old outlive the default week; after IncrementalAlterConfigs sets
    retention.ms to an hour, their segments go, and the recent records stay."""
    changed, untouched = topic_name + "-changed", topic_name + "-untouched"
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR_MS
    for name in (changed, untouched):
        assert create_topic(admin, name, num_partitions=1, replication_factor=1,
                            configs={"segment.bytes": str(SEGMENT_BYTES)})["error_code"] == 0
        produce(engine.bootstrap, name, values(20, "old"), partition=0, timestamp_ms=two_hours_ago)
        assert produce(engine.bootstrap, name, values(5, "new"), partition=0) == list(range(20, 25))
        assert offsets(engine.bootstrap, name) == (0, 25)

    resource = ConfigResource("TOPIC", changed, {"retention.ms": (AlterConfigOp.SET, str(HOUR_MS))})
    assert admin.alter_configs([resource], incremental=True) == {"topic": {changed: "OK"}}
    assert topic_configs(admin, changed)["retention.ms"] == (str(HOUR_MS), "DYNAMIC_TOPIC_CONFIG")

    start = wait_until(lambda: offsets(engine.bootstrap, changed)[0], message="retention.ms to delete old segments")
    assert 0 < start <= 20
    records = consume_from_beginning(engine.bootstrap, changed)
    assert [r.offset for r in records] == list(range(start, 25))
    assert [r.value for r in records[-5:]] == values(5, "new")
    # The retention round that trimmed `changed` also saw `untouched`, still on the week default.
    assert offsets(engine.bootstrap, untouched) == (0, 25)


def test_cluster_default_retention_applies_to_topics_without_an_override(engine, admin, topic_name):
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR_MS
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"segment.bytes": str(SEGMENT_BYTES)})["error_code"] == 0
    produce(engine.bootstrap, topic_name, values(20, "old"), partition=0, timestamp_ms=two_hours_ago)
    produce(engine.bootstrap, topic_name, values(5, "new"), partition=0)
    assert offsets(engine.bootstrap, topic_name) == (0, 25)

    assert alter_cluster_default(engine.ports[0], {"log.retention.ms": (AlterConfigOp.SET.value, str(HOUR_MS))}) == 0
    assert topic_configs(admin, topic_name)["retention.ms"] == (str(HOUR_MS), "DYNAMIC_DEFAULT_BROKER_CONFIG")
    start = wait_until(lambda: offsets(engine.bootstrap, topic_name)[0], message="the cluster default to apply")
    assert 0 < start <= 20
    assert [r.value for r in consume_from_beginning(engine.bootstrap, topic_name)][-5:] == values(5, "new")


def test_record_timestamps_out_of_the_topics_bounds_are_refused(engine, admin, topic_name):
    """message.timestamp.after.max.ms (Kafka 4.0's default: one hour) and before.max.ms: a record
    stamped too far ahead or behind the broker's clock is INVALID_TIMESTAMP, whatever the client
    or the batch's compression; a topic may widen the bounds."""
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"message.timestamp.before.max.ms": str(24 * HOUR_MS)})["error_code"] == 0
    now = int(time.time() * 1000)
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, retries=0)
    try:
        assert producer.send(topic_name, b"now", timestamp_ms=now).get(timeout=30).offset == 0
        for stamp in (now + 2 * HOUR_MS, now - 48 * HOUR_MS):
            with pytest.raises(Errors.InvalidTimestampError):
                producer.send(topic_name, b"out of bounds", timestamp_ms=stamp).get(timeout=30)
    finally:
        producer.close()
    compressed = Producer({"bootstrap.servers": engine.bootstrap, "compression.type": "lz4", "retries": 0})
    reports: list = []
    compressed.produce(topic_name, b"ahead, lz4", timestamp=now + 2 * HOUR_MS,
                       on_delivery=lambda error, message: reports.append(error))
    compressed.flush(30)
    assert [e.code() for e in reports] == [KafkaError.INVALID_TIMESTAMP]

    wider = ConfigResource("TOPIC", topic_name, configs={"message.timestamp.after.max.ms": (AlterConfigOp.SET,
                                                                                          str(3 * HOUR_MS))})
    assert admin.alter_configs([wider], incremental=True) == {"topic": {topic_name: "OK"}}
    assert topic_configs(admin, topic_name)["message.timestamp.after.max.ms"] == (str(3 * HOUR_MS),
                                                                                  "DYNAMIC_TOPIC_CONFIG")
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, retries=0)
    try:
        assert producer.send(topic_name, b"ahead", timestamp_ms=now + 2 * HOUR_MS).get(timeout=30).offset == 1
    finally:
        producer.close()
