"""The Kafka data source reads a topic exactly as a confluent-kafka consumer does."""
from __future__ import annotations

import json
import math

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from console.kafka_gateway.spark_source import NAME
from tests.support.spark import spark  # noqa: F401 - the session-wide Spark fixture

BASE_TS = 1_767_000_000_000
RECORDS = 300


@pytest.fixture(scope="module")
def topic(engine_cluster):
    """Three partitions of records with and without keys, values, headers; explicit timestamps."""
    name = "spark-source"
    admin = AdminClient({"bootstrap.servers": engine_cluster.bootstrap})
    admin.create_topics([NewTopic(name, 3, 1)])[name].result(timeout=30)
    producer = Producer({"bootstrap.servers": engine_cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(RECORDS):
        producer.produce(name, partition=i % 3, timestamp=BASE_TS + 1000 * i,
                         key=None if i % 50 == 0 else f"key-{i % 37}".encode(),
                         value=None if i % 41 == 0 else f"value-{i}".encode() * (1 + i % 5),
                         headers=[("trace", f"t{i}".encode()), ("empty", None)] if i % 3 == 0 else None)
    assert producer.flush(30) == 0
    return name


def consumer_records(bootstrap: str, topic: str) -> set[tuple]:
    """What a plain confluent-kafka consumer reads, from the start to the end of every partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reference", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(3)])
    seen, at_end = set(), set()
    while len(at_end) < 3:
        for m in consumer.consume(500, timeout=5):
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                at_end.add(m.partition())
                continue
            kind, ms = m.timestamp()
            headers = tuple((k, v) for k, v in m.headers()) if m.headers() else None
            seen.add((m.key(), m.value(), m.topic(), m.partition(), m.offset(), ms, kind - 1, headers))
    consumer.close()
    return seen


def spark_records(frame) -> set[tuple]:
    return {(r.key, r.value, r.topic, r.partition, r.offset, round(r.timestamp.timestamp() * 1000), r.timestampType,
             tuple((h.key, h.value) for h in r.headers) if r.headers is not None else None)
            for r in frame.collect()}


def read(spark, bootstrap, **options):  # noqa: F811
    reader = spark.read.format(NAME).option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_reads_every_record_as_a_confluent_consumer_does(spark, engine_cluster, topic):  # noqa: F811
    frame = read(spark, engine_cluster.bootstrap, subscribe=topic)
    assert frame.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    expected = consumer_records(engine_cluster.bootstrap, topic)
    assert len(expected) == RECORDS
    assert spark_records(frame) == expected
    assert frame.rdd.getNumPartitions() == 3          # one Spark partition per Kafka partition
    # Keys, null values and headers survive: spot-check what was produced.
    assert (None, None) in {(r[0], r[1]) for r in expected}                       # record 0: no key, no value
    assert any(r[7] == (("trace", b"t3"), ("empty", None)) for r in expected)


def test_big_partitions_split_into_offset_ranges(spark, engine_cluster, topic):  # noqa: F811
    frame = read(spark, engine_cluster.bootstrap, subscribe=topic, maxRecordsPerPartition="30")
    assert frame.rdd.getNumPartitions() == 3 * math.ceil(RECORDS / 3 / 30)
    assert spark_records(frame) == consumer_records(engine_cluster.bootstrap, topic)


def test_starting_and_ending_offsets_and_timestamps(spark, engine_cluster, topic):  # noqa: F811
    everything = consumer_records(engine_cluster.bootstrap, topic)
    frame = read(spark, engine_cluster.bootstrap, subscribe=topic,
                 startingOffsets=json.dumps({topic: {"0": 10, "2": -1}}), endingOffsets=json.dumps({topic: {"0": 20}}))
    assert spark_records(frame) == {r for r in everything if (r[3] == 0 and 10 <= r[4] < 20) or r[3] == 1}
    start, end = BASE_TS + 100_000, BASE_TS + 130_000      # records 100..129, by timestamp
    frame = read(spark, engine_cluster.bootstrap, assign=json.dumps({topic: [0, 1, 2]}),
                 startingTimestamp=str(start), endingTimestamp=str(end))
    assert spark_records(frame) == {r for r in everything if start <= r[5] < end}


def test_bad_options_get_a_clear_error(spark, engine_cluster, topic):  # noqa: F811
    with pytest.raises(Exception, match="kafka.bootstrap.servers is required"):
        spark.read.format(NAME).option("subscribe", topic).load().collect()
    with pytest.raises(Exception, match="exactly one of the options subscribe and assign"):
        read(spark, engine_cluster.bootstrap).collect()
    with pytest.raises(Exception, match="startingOffsets must be earliest, latest or JSON"):
        read(spark, engine_cluster.bootstrap, subscribe=topic, startingOffsets="{nope").collect()
