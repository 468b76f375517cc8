"""kill -9 the whole replicated engine under acks=all load, restart, repeat: nothing
acknowledged is lost and every replica agrees again."""
import threading
from collections import defaultdict

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.engine.cluster.helpers import create_topic, partition_state, wait_until
from tests.engine.cluster.test_broker_failure import PARTITIONS, consume_all


def test_kill_nine_cycles_lose_no_acknowledged_record(engine_factory, topic_name, tmp_path):
    engine = engine_factory(brokers=3, configs={"replica.lag.time.max.ms": "3000"}, data_dir=tmp_path / "data")
    create_topic(engine.bootstrap, topic_name, PARTITIONS, 3, {"min.insync.replicas": "2"})
    acked: dict[int, dict[int, bytes]] = defaultdict(dict)
    for cycle in range(3):
        producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 2, "message.timeout.ms": 1500})

        def on_delivery(err, message):
            if err is None:
                acked[message.partition()][message.offset()] = message.value()

        deadline = threading.Event()
        threading.Timer(1.5, deadline.set).start()
        i = 0
        while not deadline.is_set() and i < 300_000:
            try:
                producer.produce(topic_name, value=f"c{cycle}-{i}".encode(), partition=i % PARTITIONS,
                                 on_delivery=on_delivery)
                i += 1
            except BufferError:
                producer.poll(0.01)
            producer.poll(0)
        engine.kill()
        producer.flush(3)
        engine.start()
        wait_until(lambda: all(len(isr) == 3 for _, _, isr in partition_state(engine.bootstrap, topic_name).values()),
                   timeout=60, message="all replicas back in sync")
        # After a restart the high watermark comes back from its checkpoint and advances as the
        # followers fetch again (as in Kafka); wait for it to cover what was acknowledged.
        wait_until(lambda: all(high_watermark(engine.bootstrap, topic_name, p) > max(acked[p], default=-1)
                               for p in range(PARTITIONS)), timeout=60, message="high watermarks to recover")
        stored = consume_all(engine.bootstrap, topic_name)
        for partition, records in acked.items():
            kept = dict(stored[partition])
            lost = [offset for offset, value in records.items() if kept.get(offset) != value]
            assert not lost, f"cycle {cycle}: acked records of partition {partition} lost: {lost[:5]}"
        for records in stored.values():
            assert [o for o, _ in records] == list(range(len(records)))
    assert sum(len(v) for v in acked.values()) > 0


def high_watermark(bootstrap: str, topic: str, partition: int) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=5)[1]
    finally:
        consumer.close()
