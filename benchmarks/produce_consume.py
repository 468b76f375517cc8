"""Produce and consume throughput: the engine against librdkafka's in-memory mock cluster.

The same confluent-kafka producer and consumer run against (a) our engine with one broker
on disk and (b) librdkafka's mock cluster (`test.mock.num.brokers`) living in another
process, in the same run. 1M records of 100 bytes, acks=1, 6 partitions; then all of them
are consumed with manual assignment. Prints records/s for each and the ratios.

    .venv/bin/python benchmarks/produce_consume.py [--records N] [--compression lz4]
"""
from __future__ import annotations

import argparse
import statistics
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.engine_process import EngineProcess  # noqa: E402

PARTITIONS = 6
TOPIC = "bench"

# The peer: librdkafka's mock cluster, created through librdkafka's own C API (the copy
# bundled with confluent-kafka), because a mock cluster made with `test.mock.num.brokers`
# cannot be given a topic of 6 partitions from Python: its admin calls wait for a controller.
MOCK_SERVER = """
import ctypes, glob, os, sys
import confluent_kafka
libs = os.path.join(os.path.dirname(confluent_kafka.__file__), os.pardir, "confluent_kafka.libs")
lib = ctypes.CDLL(glob.glob(os.path.join(libs, "librdkafka*.so*"))[0])
lib.rd_kafka_conf_new.restype = ctypes.c_void_p
lib.rd_kafka_new.restype = ctypes.c_void_p
lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
errstr = ctypes.create_string_buffer(512)
rk = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), errstr, 512)
cluster = lib.rd_kafka_mock_cluster_new(rk, 1)
for topic in sys.argv[1].split(","):
    err = lib.rd_kafka_mock_topic_create(cluster, topic.encode(), int(sys.argv[2]), 1)
    assert err == 0, err
print(lib.rd_kafka_mock_cluster_bootstraps(cluster).decode(), flush=True)
sys.stdin.read()  # keep the mock cluster alive until the benchmark closes our stdin
"""


def start_mock_cluster(topics: list[str], partitions: int = PARTITIONS) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-c", MOCK_SERVER, ",".join(topics), str(partitions)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    bootstrap = process.stdout.readline().strip()
    if not bootstrap:
        raise RuntimeError("mock cluster did not start")
    return process, bootstrap


def produce_waiting(producer: Producer, topic: str, value: bytes, partition: int, on_delivery) -> None:
    """Queue one record, serving delivery reports while librdkafka's queue is full."""
    while True:
        try:
            producer.produce(topic, value=value, partition=partition, on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.01)


def create_topic(bootstrap: str, topic: str = TOPIC, replication: int = 1, configs: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, replication, config=configs or {})])[topic].result(30)
    time.sleep(0.5)  # let metadata settle before timing


def produce(bootstrap: str, records: int, size: int, topic: str = TOPIC, acks: int | str = 1,
            compression: str = "none") -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5,
                         "queue.buffering.max.messages": 1_000_000, "enable.idempotence": False,
                         "compression.type": compression})
    value = os.urandom(size)
    delivered = [0]

    def on_delivery(err, _message):
        if err is None:
            delivered[0] += 1

    start = time.perf_counter()
    for i in range(records):
        produce_waiting(producer, topic, value, i % PARTITIONS, on_delivery)
        if i % 1000 == 0:
            producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    if delivered[0] != records:
        raise RuntimeError(f"only {delivered[0]} of {records} records were delivered")
    return records / elapsed


def consume(bootstrap: str, topic: str = TOPIC) -> tuple[float, int]:
    """Consume everything the broker retains; returns (records/s, records consumed).

    The mock cluster keeps only the newest few MB of each partition, so the target is the
    sum of (high - low) watermarks, not the number produced.
    """
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 100})
    partitions = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)]
    retained = sum(high - low for low, high in (consumer.get_watermark_offsets(tp, timeout=10) for tp in partitions))
    consumer.assign(partitions)
    count = 0
    start = time.perf_counter()
    deadline = start + 180
    while count < retained and time.perf_counter() < deadline:
        for message in consumer.consume(10000, timeout=1.0):
            if message.error() is None:
                count += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    if count < retained:
        raise RuntimeError(f"consumed only {count} of {retained} retained records")
    return count / elapsed, count


def run_against(name: str, bootstrap: str, records: int, size: int, *, topic: str,
                create: bool, compression: str = "none") -> tuple[float, float]:
    if create:
        create_topic(bootstrap, topic)
    produced = produce(bootstrap, records, size, topic=topic, compression=compression)
    consumed, count = consume(bootstrap, topic)
    print(f"{name:>28}: produce {produced:>10,.0f} rec/s   consume {consumed:>10,.0f} rec/s "
          f"({count:,} records retained and read)", flush=True)
    return produced, consumed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternate engine and mock this many times and report medians (this VM is noisy)")
    parser.add_argument("--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"],
                        help="the producer's compression.type (the engine checks compressed batches by "
                             "inflating them)")
    args = parser.parse_args()
    print(f"{args.records:,} records of {args.size} bytes, acks=1, {PARTITIONS} partitions, confluent-kafka "
          f"(librdkafka) client, compression {args.compression}, {args.rounds} rounds")
    topics = [f"{TOPIC}-{i}" for i in range(args.rounds)]
    ratios_produce, ratios_consume = [], []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as data_dir:
        engine = EngineProcess(Path(data_dir) / "data", brokers=1).start()
        mock, bootstrap = start_mock_cluster(topics)
        try:
            for topic in topics:
                engine_produce, engine_consume = run_against("engine (1 broker, on disk)", engine.bootstrap,
                                                             args.records, args.size, topic=topic, create=True,
                                                             compression=args.compression)
                mock_produce, mock_consume = run_against("librdkafka mock cluster", bootstrap, args.records,
                                                         args.size, topic=topic, create=False,
                                                         compression=args.compression)
                ratios_produce.append(engine_produce / mock_produce)
                ratios_consume.append(engine_consume / mock_consume)
        finally:
            mock.stdin.close()
            mock.wait(10)
            engine.terminate(timeout=300)
    print(f"{'engine / mock, median':>28}: produce {statistics.median(ratios_produce):>10.2f}x        "
          f"consume {statistics.median(ratios_consume):>10.2f}x")
    print(f"{'per round':>28}: produce {', '.join(f'{r:.2f}' for r in ratios_produce)}; "
          f"consume {', '.join(f'{r:.2f}' for r in ratios_consume)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
