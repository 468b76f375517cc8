"""acks=all load until a kill -9, and the check that everything acknowledged came back."""
from __future__ import annotations

from typing import Callable

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.engine.cluster.helpers import partition_state, wait_until
from tests.engine.cluster.test_broker_failure import PARTITIONS, consume_all

Acked = dict[int, dict[int, bytes]]   # partition -> offset -> value


def produce_then_kill(engine, topic: str, acked: Acked, keep_going: Callable[[], bool], *, tag: str,
                      **producer_configs) -> None:
    """Idempotent acks=all load over PARTITIONS partitions while `keep_going()`, then kill -9
    the engine with more in flight; `acked` collects what was acknowledged."""
    producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 2, "message.timeout.ms": 1500, **producer_configs})

    def on_delivery(err, message):
        if err is None:
            acked[message.partition()][message.offset()] = message.value()

    i = 0
    while keep_going():
        try:
            producer.produce(topic, value=f"{tag}-{i}".encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
            i += 1
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    engine.kill()
    producer.flush(3)


def assert_acked_records_back(engine, topic: str, acked: Acked, label: str) -> dict:
    """Wait for the replicas and the high watermarks to recover, then read every partition:
    each acknowledged record is there at its offset. Returns what was read."""
    wait_until(lambda: all(len(isr) == 3 for _, _, isr in partition_state(engine.bootstrap, topic).values()),
               timeout=60, message="all replicas back in sync")
    # After a restart the high watermark comes back from its checkpoint and advances as the
    # followers fetch again (as in Kafka); wait for it to cover what was acknowledged.
    wait_until(lambda: all(high_watermark(engine.bootstrap, topic, p) > max(acked[p], default=-1)
                           for p in range(PARTITIONS)), timeout=60, message="high watermarks to recover")
    stored = consume_all(engine.bootstrap, topic)
    for partition, records in acked.items():
        kept = dict(stored[partition])
        lost = [offset for offset, value in records.items() if kept.get(offset) != value]
        assert not lost, f"{label}: {len(lost)} acked records of partition {partition} lost, e.g. {lost[:5]}"
    return stored


def high_watermark(bootstrap: str, topic: str, partition: int) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=5)[1]
    finally:
        consumer.close()
