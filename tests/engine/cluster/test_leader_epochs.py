"""A follower's diverged tail is truncated by leader epoch (KIP-101), built deliberately:
the leader appends a record that is never replicated, then stops; an unclean election makes
the other replica leader, which writes a different record at the same offset; when the old
leader returns it must throw its record away and take the new leader's."""
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient

from engine.storage.log import Log
from engine.storage.log_config import LogConfig
from tests.engine.cluster.helpers import create_topic, partition_state, start_broker, stop_broker, wait_until


def produce(bootstrap: str, topic: str, value: bytes, acks) -> int:
    offsets = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "enable.idempotence": False,
                         "message.timeout.ms": 10000})
    producer.produce(topic, value, partition=0, on_delivery=lambda err, m: offsets.append(err or m.offset()))
    producer.flush(15)
    return offsets[0]


def read_values(bootstrap: str, topic: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "read", "enable.auto.commit": False})
    tp = TopicPartition(topic, 0, OFFSET_BEGINNING)
    high = consumer.get_watermark_offsets(tp, timeout=10)[1]
    consumer.assign([tp])
    values = []
    for _ in range(50):
        values += [m.value() for m in consumer.consume(100, timeout=0.5) if m.error() is None]
        if len(values) >= high:
            break
    consumer.close()
    return values


def test_diverged_tail_is_truncated_by_leader_epoch(engine_factory, topic_name):
    engine = engine_factory(brokers=3, configs={"replica.lag.time.max.ms": "2000"})
    create_topic(engine.bootstrap, topic_name, 1, 2, {"unclean.leader.election.enable": "true"})
    old_leader, replicas, _ = partition_state(engine.bootstrap, topic_name)[0]
    other = next(r for r in replicas if r != old_leader)
    assert produce(engine.bootstrap, topic_name, b"both-have-this", "all") == 0

    stop_broker(engine, other)                                               # only the leader is left
    assert produce(engine.bootstrap, topic_name, b"never-replicated", 1) == 1
    stop_broker(engine, old_leader)                                          # ...and it stops too
    start_broker(engine, other)                                              # unclean election: other leads
    wait_until(lambda: partition_state(engine.bootstrap, topic_name)[0][0] == other, message="new leader")
    assert produce(engine.bootstrap, topic_name, b"written-by-new-leader", 1) == 1

    start_broker(engine, old_leader)                                         # returns as a follower
    wait_until(lambda: sorted(partition_state(engine.bootstrap, topic_name)[0][2]) == sorted(replicas),
               timeout=60, message="the old leader back in the ISR")
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    admin.elect_leaders(0, {topic_name: [0]}, raise_errors=False)           # let it lead again if preferred
    admin.close()
    assert read_values(engine.bootstrap, topic_name) == [b"both-have-this", b"written-by-new-leader"]

    engine.terminate()                                                       # the old leader's own log agrees
    log = Log.open(engine.data_dir / f"broker-{old_leader}" / f"{topic_name}-0", LogConfig(), now_ms=0,
                   had_clean_shutdown=True)
    assert log.log_end_offset == 2
    assert [epoch for epoch, _ in log.leader_epoch_cache.entries][-1] >= 1
    assert b"never-replicated" not in b"".join(p.read_bytes() for p in log.dir.glob("*.log"))
