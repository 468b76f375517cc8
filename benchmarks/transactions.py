"""Transactions: what committing every 100 ms costs a producer, and what read_committed costs a consumer.

1. Throughput: the same confluent-kafka producer (idempotent, acks=all, 100-byte records,
   6 partitions) sends N records twice on the same broker in the same run: once without
   transactions, once with `transactional.id`, committing a transaction every 100 ms. The
   ratio (transactional / plain) is the figure; Kafka's target for us is >= 0.8.
2. End-to-end latency: a transactional producer committing every 100 ms sends records at a
   steady rate while two consumers read the topic, one read_committed and one
   read_uncommitted; each record's latency is its arrival minus its CreateTime. A
   read_committed consumer waits for the commit, so it sees the transaction interval on top.

Both run against our engine (one broker, on disk) and, as the peer, librdkafka's in-memory
mock cluster (it implements the transaction APIs), in the same run.

    .venv/bin/python benchmarks/transactions.py [--records N] [--seconds S] [--rate R]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.produce_consume import (PARTITIONS, create_topic, produce_waiting,  # noqa: E402
                                        start_mock_cluster)
from tests.support.engine_process import EngineProcess  # noqa: E402

COMMIT_EVERY_SECONDS = 0.1
PRODUCER = {"acks": "all", "enable.idempotence": True, "linger.ms": 5, "queue.buffering.max.messages": 1_000_000}


def produce(bootstrap: str, topic: str, records: int, size: int, *, transactional_id: str | None) -> float:
    """Records per second; with a transactional id, a commit every COMMIT_EVERY_SECONDS."""
    config = {"bootstrap.servers": bootstrap, **PRODUCER}
    if transactional_id:
        config["transactional.id"] = transactional_id
    producer = Producer(config)
    value = os.urandom(size)
    delivered = [0]

    def on_delivery(err, _message):
        if err is None:
            delivered[0] += 1

    if transactional_id:
        producer.init_transactions(30)
    _warm_up(producer, topic, value, transactional=bool(transactional_id))
    start = last_commit = time.perf_counter()
    if transactional_id:
        producer.begin_transaction()
    for i in range(records):
        produce_waiting(producer, topic, value, i % PARTITIONS, on_delivery)
        if i % 1000 == 0:
            producer.poll(0)
            if transactional_id and time.perf_counter() - last_commit >= COMMIT_EVERY_SECONDS:
                producer.commit_transaction(60)     # flushes, then EndTxn
                producer.begin_transaction()
                last_commit = time.perf_counter()
    if transactional_id:
        producer.commit_transaction(60)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    if delivered[0] != records:
        raise RuntimeError(f"only {delivered[0]} of {records} records were delivered")
    return records / elapsed


def _warm_up(producer: Producer, topic: str, value: bytes, *, transactional: bool) -> None:
    """Connections, metadata and producer id before the clock starts, for both producers alike."""
    if transactional:
        producer.begin_transaction()
    for p in range(PARTITIONS):
        producer.produce(topic, value=value, partition=p)
    if transactional:
        producer.commit_transaction(60)
    producer.flush(60)


class LatencyReader(threading.Thread):
    """Reads the topic from its end with the given isolation level; keeps each record's latency."""

    def __init__(self, bootstrap: str, topic: str, isolation: str) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{isolation}",
                                  "enable.auto.commit": False, "isolation.level": isolation,
                                  "fetch.wait.max.ms": 10, "fetch.min.bytes": 1})
        # From each partition's end, looked up now: OFFSET_END would be resolved at the first
        # fetch, after the producer may have started.
        ends = [self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(PARTITIONS)]
        self.consumer.assign([TopicPartition(topic, p, end) for p, end in enumerate(ends)])
        self.latencies_ms: list[float] = []
        self.stop = threading.Event()
        self.ready = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            messages = self.consumer.consume(1000, timeout=0.05)
            self.ready.set()
            now_ms = time.time() * 1000
            for m in messages:
                if m.error() is None:
                    self.latencies_ms.append(now_ms - m.timestamp()[1])
        self.consumer.close()


def end_to_end(bootstrap: str, topic: str, *, seconds: float, rate: int) -> dict[str, list[float]]:
    readers = {level: LatencyReader(bootstrap, topic, level) for level in ("read_uncommitted", "read_committed")}
    for reader in readers.values():
        reader.start()
    for reader in readers.values():
        reader.ready.wait(30)
    time.sleep(1.0)     # both assigned at the log end before the first record
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER, "linger.ms": 1,
                         "transactional.id": f"latency-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    start = last_commit = time.perf_counter()
    sent = 0
    while (now := time.perf_counter()) - start < seconds:
        due = int((now - start) * rate)
        while sent < due:
            producer.produce(topic, value=b"x" * 100, partition=sent % PARTITIONS)
            sent += 1
        producer.poll(0)
        if now - last_commit >= COMMIT_EVERY_SECONDS:
            producer.commit_transaction(60)
            producer.begin_transaction()
            last_commit = time.perf_counter()
        time.sleep(0.001)
    producer.commit_transaction(60)
    deadline = time.perf_counter() + 30
    while any(len(r.latencies_ms) < sent for r in readers.values()) and time.perf_counter() < deadline:
        time.sleep(0.05)
    for reader in readers.values():
        reader.stop.set()
        reader.join(30)
    for level, reader in readers.items():
        if len(reader.latencies_ms) < sent:
            raise RuntimeError(f"{level} consumer read {len(reader.latencies_ms)} of {sent} records")
    return {level: reader.latencies_ms for level, reader in readers.items()}


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def run_against(name: str, bootstrap: str, args, *, topics: list[str], create: bool) -> tuple[float, dict]:
    if create:
        for topic in topics:
            create_topic(bootstrap, topic)
    ratios = []
    for round_ in range(args.rounds):
        # Alternating, each round, which of the two goes first: this VM drifts between runs.
        order = [None, f"bench-{topics[1]}-{round_}"] if round_ % 2 == 0 else [f"bench-{topics[1]}-{round_}", None]
        rates = {}
        for transactional_id in order:
            rates[transactional_id is not None] = produce(bootstrap, topics[1] if transactional_id else topics[0],
                                                          args.records, args.size, transactional_id=transactional_id)
        ratios.append(rates[True] / rates[False])
        print(f"{name if round_ == 0 else '':>28}: plain {rates[False]:>9,.0f} rec/s   transactional (commit every "
              f"100 ms) {rates[True]:>9,.0f} rec/s   ratio {ratios[-1]:.2f}", flush=True)
    ratio = statistics.median(ratios)
    print(f"{'':>28}  median ratio {ratio:.2f}", flush=True)
    latencies = end_to_end(bootstrap, topics[2], seconds=args.seconds, rate=args.rate)
    for level, values in latencies.items():
        print(f"{'':>28}  {level:<16} end-to-end p50 {percentile(values, 50):7.1f} ms   "
              f"p99 {percentile(values, 99):7.1f} ms   ({len(values):,} records)", flush=True)
    return ratio, latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of the latency run")
    parser.add_argument("--rate", type=int, default=2000, help="records per second in the latency run")
    parser.add_argument("--rounds", type=int, default=3, help="plain/transactional pairs; the median ratio counts")
    parser.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock cluster peer")
    args = parser.parse_args()
    print(f"{args.records:,} records of {args.size} bytes, acks=all, idempotent, {PARTITIONS} partitions, "
          f"confluent-kafka (librdkafka) client; latency: {args.rate} records/s for {args.seconds:.0f} s")
    topics = ["bench-plain", "bench-txn", "bench-latency"]
    with tempfile.TemporaryDirectory(prefix="bench-txn-") as data_dir:
        engine = EngineProcess(Path(data_dir) / "data", brokers=1).start()
        mock, mock_bootstrap = (None, None) if args.no_mock else start_mock_cluster(topics)
        try:
            engine_ratio, _ = run_against("engine (1 broker, on disk)", engine.bootstrap, args, topics=topics,
                                          create=True)
            if mock is not None:
                run_against("librdkafka mock cluster", mock_bootstrap, args, topics=topics, create=False)
        except KafkaException as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            if mock is not None:
                mock.stdin.close()
                mock.wait(10)
            engine.terminate(timeout=300)
    print(f"{'engine ratio':>28}: {engine_ratio:.2f} (target >= 0.8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
