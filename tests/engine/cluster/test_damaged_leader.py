"""A leader's log is damaged (a bad batch in the middle, a cut tail) and the engine is
killed under acks=all load: at restart the replica with the longest log leads, the damaged
one re-fetches as a follower, and every acknowledged record reads back (KIP-966's idea)."""
import time
from collections import defaultdict

from confluent_kafka import Producer

from engine.storage.records import HEADER_SIZE, iter_batches
from tests.engine.cluster.helpers import create_topic, partition_state, wait_until
from tests.engine.cluster.test_broker_failure import PARTITIONS, consume_all
from tests.engine.cluster.test_crash import high_watermark


def test_a_damaged_leader_does_not_spread_its_loss(engine_factory, topic_name, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=3, configs={"replica.lag.time.max.ms": "3000"}, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, PARTITIONS, 3, {"min.insync.replicas": "2"})
    leaders = {p: leader for p, (leader, _, _) in partition_state(engine.bootstrap, topic_name).items()}
    acked = _produce_until_killed(engine, topic_name)

    for partition, leader in leaders.items():
        segment = sorted((data_dir / f"broker-{leader}" / f"{topic_name}-{partition}").glob("*.log"))[-1]
        data = bytearray(segment.read_bytes())
        batches = list(iter_batches(data))
        assert len(batches) > 4, "too little load to damage the middle of the log"
        position, _ = batches[len(batches) // 2]
        data[position + HEADER_SIZE + 2] ^= 0xFF     # inside the records: a CRC error in the middle
        segment.write_bytes(bytes(data[:-37]))       # and a torn tail

    engine.start()
    wait_until(lambda: all(len(isr) == 3 for _, _, isr in partition_state(engine.bootstrap, topic_name).values()),
               timeout=60, message="all replicas back in sync")
    wait_until(lambda: all(high_watermark(engine.bootstrap, topic_name, p) > max(acked[p], default=-1)
                           for p in range(PARTITIONS)), timeout=60, message="high watermarks to recover")
    stored = consume_all(engine.bootstrap, topic_name)
    for partition, records in acked.items():
        kept = dict(stored[partition])
        lost = [offset for offset, value in records.items() if kept.get(offset) != value]
        assert not lost, f"partition {partition}: {len(lost)} acknowledged records lost, e.g. {lost[:5]}"
    assert sum(len(r) for r in acked.values()) > 0
    for partition, leader in leaders.items():   # it led again only once back in sync (preferred replica)
        assert f"{topic_name}-{partition} after recovery: leader {leader} -> " in engine.log_path.read_text()


def _produce_until_killed(engine, topic: str) -> dict[int, dict[int, bytes]]:
    """acks=all load in small batches until every partition has many acknowledged ones (however
    slow the machine), then kill -9 with more in flight."""
    acked: dict[int, dict[int, bytes]] = defaultdict(dict)
    producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 2, "batch.num.messages": 50, "message.timeout.ms": 1500})

    def on_delivery(err, message):
        if err is None:
            acked[message.partition()][message.offset()] = message.value()

    deadline = time.monotonic() + 60
    i = 0
    while time.monotonic() < deadline and min(len(acked[p]) for p in range(PARTITIONS)) < 1000:
        try:
            producer.produce(topic, value=f"v{i}".encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
            i += 1
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    engine.kill()
    producer.flush(3)
    return acked
