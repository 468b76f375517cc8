"""A leader's broker stops under acks=all load: nothing acknowledged is lost, leadership
moves, and the broker comes back, catches up and rejoins the ISR."""
import threading
from collections import defaultdict

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from tests.engine.cluster.helpers import create_topic, partition_state, start_broker, stop_broker, wait_until

PARTITIONS = 3
LAG_CONFIG = {"replica.lag.time.max.ms": "2000"}


def consume_all(bootstrap: str, topic: str) -> dict[int, list[tuple[int, bytes]]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False})
    tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)]
    ends = {tp.partition: consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps}
    consumer.assign(tps)
    seen: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    idle = 0
    while any(len(seen[p]) < ends[p] for p in ends) and idle < 20:
        batch = consumer.consume(5000, timeout=1.0)
        idle = 0 if batch else idle + 1
        for message in batch:
            assert message.error() is None, message.error()
            seen[message.partition()].append((message.offset(), message.value()))
    consumer.close()
    return seen


def test_leader_failure_under_acks_all_load(engine_factory, topic_name):
    engine = engine_factory(brokers=3, configs=LAG_CONFIG)
    create_topic(engine.bootstrap, topic_name, PARTITIONS, 3, {"min.insync.replicas": "2"})
    victim = partition_state(engine.bootstrap, topic_name)[0][0]   # the broker leading partition 0

    acked: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    errors = []
    producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 5, "message.timeout.ms": 60000})

    def on_delivery(err, message):
        if err is not None:
            errors.append(err)
        else:
            acked[message.partition()].append((message.offset(), message.value()))

    stopped = threading.Event()

    def stop_victim():
        stop_broker(engine, victim)
        stopped.set()

    sent, after_stop = 0, 0
    while after_stop < 50_000 and sent < 2_000_000:
        if sent == 50_000:
            threading.Thread(target=stop_victim).start()   # the broker stops while records flow
        try:
            producer.produce(topic_name, value=f"m-{sent}".encode(), partition=sent % PARTITIONS,
                             on_delivery=on_delivery)
            sent += 1
            after_stop += stopped.is_set()
        except BufferError:
            producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert stopped.is_set()
    assert errors == []
    assert sum(len(v) for v in acked.values()) == sent   # every record was acknowledged in the end

    state = partition_state(engine.bootstrap, topic_name)
    assert all(leader != victim for leader, _, _ in state.values())   # leadership moved away
    assert all(victim not in isr for _, _, isr in state.values())      # and the ISR shrank

    stored = consume_all(engine.bootstrap, topic_name)
    for partition, records in acked.items():
        assert stored[partition] == sorted(records)                     # all acked, in order
        assert [o for o, _ in stored[partition]] == list(range(len(stored[partition])))  # no gaps

    start_broker(engine, victim)
    wait_until(lambda: all(victim in isr for _, _, isr in partition_state(engine.bootstrap, topic_name).values()),
               timeout=60, message=f"broker {victim} back in every ISR")
