"""librdkafka (confluent-kafka) against the engine: idempotent lz4 producer, manual-assign consumer."""
import time
from collections import defaultdict

from confluent_kafka import Consumer, OFFSET_BEGINNING, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

RECORDS = 100_000
PARTITIONS = 6


def create_topic(bootstrap: str, name: str, partitions: int, configs: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=configs or {})])
    futures[name].result(15)


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout: float = 60.0):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-manual-assign",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = defaultdict(list)
    count = 0
    deadline = time.monotonic() + timeout
    while count < expected and time.monotonic() < deadline:
        for message in consumer.consume(10000, timeout=1.0):
            assert message.error() is None, message.error()
            seen[message.partition()].append((message.offset(), message.key(), message.value()))
            count += 1
    consumer.close()
    return seen


def test_100k_keyed_records_round_trip_identical_and_in_order(engine_cluster, topic_name):
    create_topic(engine_cluster.bootstrap, topic_name, PARTITIONS)
    producer = Producer({"bootstrap.servers": engine_cluster.bootstrap, "acks": "all", "enable.idempotence": True,
                         "compression.type": "lz4", "linger.ms": 5})
    sent = defaultdict(list)
    errors = []

    def on_delivery(err, message):
        if err is not None:
            errors.append(err)
        else:
            sent[message.partition()].append((message.offset(), message.key(), message.value()))

    for i in range(RECORDS):
        key = f"key-{i % 1000}".encode()
        producer.produce(topic_name, key=key, value=f"value-{i}".encode(), on_delivery=on_delivery)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    assert errors == []
    assert sum(len(v) for v in sent.values()) == RECORDS

    received = consume_all(engine_cluster.bootstrap, topic_name, PARTITIONS, RECORDS)
    assert sum(len(v) for v in received.values()) == RECORDS
    for partition, records in sent.items():
        assert received[partition] == records  # same offsets, keys, values, same order
        offsets = [offset for offset, _, _ in records]
        assert offsets == list(range(len(records)))  # dense, no gaps, no duplicates


def test_watermarks_and_offsets_for_times(engine_cluster, topic_name):
    create_topic(engine_cluster.bootstrap, topic_name, 1)
    producer = Producer({"bootstrap.servers": engine_cluster.bootstrap, "linger.ms": 0})
    base = (int(time.time()) - 3600) * 1000  # recent: retention must not delete the records mid-test
    for i in range(10):
        producer.produce(topic_name, value=f"v{i}".encode(), partition=0, timestamp=base + i * 1000)
        producer.flush(10)  # one batch per record so timestamps land in different batches
    consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": "unused"})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
    assert (low, high) == (0, 10)
    found = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 4500)], timeout=10)
    assert found[0].offset == 5
    exact = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 3000)], timeout=10)
    assert exact[0].offset == 3
    beyond = consumer.offsets_for_times([TopicPartition(topic_name, 0, base + 999_999)], timeout=10)
    assert beyond[0].offset == -1  # OFFSET_END: no record at or after that time
    consumer.close()
