"""`python -m engine serve`: ports P..P+N-1, clean SIGTERM, and recovery after SIGKILL."""
import threading

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient

PARTITIONS = 3


def make_topic(bootstrap: str, name: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference until the future resolves
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)


def read_everything(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> dict[int, list[tuple[int, bytes]]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
    wanted = {tp.partition: consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps}
    consumer.assign(tps)
    seen: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    idle = 0
    while any(len(seen[p]) < wanted[p] for p in seen) and idle < 30:
        messages = consumer.consume(5000, timeout=1.0)
        idle = 0 if messages else idle + 1
        for message in messages:
            assert message.error() is None, message.error()
            seen[message.partition()].append((message.offset(), message.value()))
    consumer.close()
    return seen


def test_brokers_listen_on_consecutive_ports(engine_factory):
    engine = engine_factory(brokers=3)
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{engine.port + 2}")  # bootstrap from the last one
    cluster = admin.describe_cluster()
    admin.close()
    ports = sorted((b["broker_id"], b["port"]) for b in cluster["brokers"])
    assert ports == [(0, engine.port), (1, engine.port + 1), (2, engine.port + 2)]


def test_sigterm_exits_zero_and_restart_keeps_everything(engine_factory, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=2, data_dir=data_dir)
    make_topic(engine.bootstrap, "kept")
    producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all"})
    for i in range(3000):
        producer.produce("kept", value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    before = read_everything(engine.bootstrap, "kept")
    assert engine.terminate() == 0
    assert (data_dir / "broker-0" / ".kafka_cleanshutdown").exists() or \
        (data_dir / "broker-1" / ".kafka_cleanshutdown").exists()

    engine.start()
    after = read_everything(engine.bootstrap, "kept")
    assert after == before
    assert sum(len(v) for v in after.values()) == 3000


def test_sigkill_under_load_loses_no_acknowledged_record(engine_factory, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=1, data_dir=data_dir)
    make_topic(engine.bootstrap, "crashy")
    for cycle in range(3):
        acked: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 2, "message.timeout.ms": 1500})

        def on_delivery(err, message):
            if err is None:
                acked[message.partition()].append((message.offset(), message.value()))

        stop = threading.Event()
        killer = threading.Timer(1.5, stop.set)
        killer.start()
        i = 0
        while not stop.is_set() and i < 500_000:
            try:
                producer.produce("crashy", value=f"c{cycle}-{i}".encode(), partition=i % PARTITIONS,
                                 on_delivery=on_delivery)
            except BufferError:
                producer.poll(0.01)  # the local queue is full: let deliveries drain
                continue
            i += 1
            producer.poll(0)
        engine.kill()  # SIGKILL in the middle of the load
        producer.flush(3)  # deliveries now fail; only callbacks for records acked before the kill count
        assert sum(len(v) for v in acked.values()) > 0
        engine.start()
        stored = read_everything(engine.bootstrap, "crashy")
        for partition, records in acked.items():
            stored_map = dict(stored[partition])
            for offset, value in records:
                assert stored_map.get(offset) == value, f"acked record {partition}@{offset} lost after SIGKILL"
        for partition, records in stored.items():
            offsets = [offset for offset, _ in records]
            assert offsets == list(range(len(offsets)))  # dense, no holes after recovery
