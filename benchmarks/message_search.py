"""Message search throughput: the console's server-side search against a plain consumer.

One engine broker on disk holds N uncompressed records of 100-byte JSON values in 6
partitions (a few carry a rare needle). In the same run it measures:
  - peer: a plain confluent-kafka consumer (librdkafka, manual assignment) reading all of them;
  - the console's search (console.messages.scan over the gateway's raw-Fetch reader) with
    a rare substring, a substring found in every batch, a JSON-path == on a string, and a
    JSON-path > on a number (no batch can be skipped for that one).
Prints records scanned per second for each and the ratio to the peer.

    .venv/bin/python benchmarks/message_search.py [--records N] [--rounds R]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from console.kafka_gateway.consumer import open_topic_reader  # noqa: E402
from console.kafka_gateway.records import ConnectionSettings  # noqa: E402
from console.messages.filters import FilterSpec, RecordFilter  # noqa: E402
from console.messages.scan import SearchLimits, initial_progress, search  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402

TOPIC, PARTITIONS = "search-bench", 6
FILTERS = {
    "substring, rare": FilterSpec(field="value", mode="substring", text="NEEDLE"),
    "substring, in every batch": FilterSpec(field="value", mode="substring", text='"country": "NZ"'),
    "json path ==, rare": FilterSpec(json_path="user.country", json_op="==", json_literal='"AQ"'),
    "json path >": FilterSpec(json_path="amount", json_op=">", json_literal="995"),
}


def value(i: int) -> bytes:
    country = "AQ" if i % 100_000 == 7 else ("NZ" if i % 50 == 0 else "DE")
    tag = "NEEDLE" if i % 100_000 == 7 else "plain"
    body = b'{"id": %d, "user": {"country": "%s"}, "amount": %d, "tag": "%s", "pad": "' % (
        i, country.encode(), i % 997, tag.encode())
    return body + b"x" * (98 - len(body)) + b'"}'


def produce(bootstrap: str, records: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})   # kept alive until the topic exists
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "none"})
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, value=value(i), key=b"%d" % i)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0


def peer_consume(bootstrap: str, records: int) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-peer", "enable.auto.commit": False,
                         "fetch.max.bytes": 32 << 20, "max.partition.fetch.bytes": 4 << 20})
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    count, started = 0, time.perf_counter()
    while count < records:
        for message in consumer.consume(10_000, 1.0):
            if message.error() is None:
                message.value()
                count += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return count / elapsed


def console_search(bootstrap: str, spec: FilterSpec, records: int) -> tuple[float, int, int]:
    with open_topic_reader(ConnectionSettings(bootstrap), TOPIC) as reader:
        progress = initial_progress(reader)
        started = time.perf_counter()
        for kind, stats in search(reader, progress, RecordFilter(spec), SearchLimits(max_matches=10 ** 9,
                                                                                     max_seconds=3600)):
            pass
        elapsed = time.perf_counter() - started
    assert kind == "done" and stats.records_scanned == records, stats
    return stats.records_scanned / elapsed, stats.matches, stats.batches_skipped


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternate peer and console; report medians")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "data", brokers=1).start()
        try:
            produce(engine.bootstrap, args.records)
            peer, figures = [], {name: [] for name in FILTERS}
            for _ in range(args.rounds):
                peer.append(peer_consume(engine.bootstrap, args.records))
                for name, spec in FILTERS.items():
                    figures[name].append(console_search(engine.bootstrap, spec, args.records))
        finally:
            engine.kill()
    peer_rate = statistics.median(peer)
    print(f"{args.records} uncompressed 100-byte records, {PARTITIONS} partitions, 1 engine broker; "
          f"medians of {args.rounds} rounds")
    print(f"{'confluent-kafka consumer (peer)':>32}: {peer_rate:>10,.0f} records/s")
    for name, runs in figures.items():
        rate = statistics.median(r[0] for r in runs)
        matches, skipped = runs[0][1], runs[0][2]
        print(f"{'search: ' + name:>32}: {rate:>10,.0f} records/s  {rate / peer_rate:5.2f}x peer  "
              f"({matches} matches, {skipped} batches skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
