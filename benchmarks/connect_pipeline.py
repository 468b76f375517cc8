"""Kafka Connect's file pipeline against the same clients with no framework around them.

Both sides move the same N lines (default 100,000) from a file to a topic and from the topic
to another file, on one 1-broker engine started for the run:

- Connect: one distributed worker (`python -m engine connect distributed`), FileStreamSource
  and FileStreamSink, StringConverter, offsets committed every second;
- the peer: the clients the worker itself uses, by hand: a confluent-kafka producer sending
  every line, then a consumer writing them to a file (no converters, no offset commits, no
  statuses): the floor under the framework's cost.

Prints lines per second for each, the ratio, and the worker's resident memory once idle.

    .venv/bin/python benchmarks/connect_pipeline.py [--lines N]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.connect_worker import ConnectWorker, request  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.groups import GROUP_TEST_CONFIGS, create_topic  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _lines(path: Path, count: int) -> None:
    path.write_text("".join(f"line-{i:07d}\n" for i in range(count)))


def _count(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def connect_run(engine, workdir: Path, count: int) -> tuple[float, int]:
    create_topic(engine.bootstrap, "bench-connect", 1)
    source, sink = workdir / "connect-in.txt", workdir / "connect-out.txt"
    worker = ConnectWorker(workdir / "worker", engine.bootstrap, group="bench",
                           settings={"key.converter": STRING, "value.converter": STRING}).start()
    try:
        for name, config in (("bench-sink", {"connector.class": "FileStreamSink", "file": str(sink),
                                             "topics": "bench-connect"}),
                             ("bench-source", {"connector.class": "FileStreamSource", "file": str(source),
                                               "topic": "bench-connect"})):
            assert request(worker, "POST", "/connectors", {"name": name, "config": config})[0] == 201
        wait_until(lambda: all((request(worker, "GET", f"/connectors/{n}/status")[1] or {}).get("tasks")
                               for n in ("bench-sink", "bench-source")), 120, message="tasks running")
        started = time.perf_counter()
        _lines(source, count)
        wait_until(lambda: _count(sink) >= count, 600, interval=0.02, message="every line through Connect")
        elapsed = time.perf_counter() - started
        time.sleep(3)
        rss = int(Path(f"/proc/{worker.process.pid}/status").read_text().split("VmRSS:")[1].split()[0])
        return elapsed, rss
    finally:
        worker.terminate()


def clients_run(engine, workdir: Path, count: int) -> float:
    create_topic(engine.bootstrap, "bench-clients", 1)
    source, sink = workdir / "clients-in.txt", workdir / "clients-out.txt"
    _lines(source, count)
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": "bench-clients",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition("bench-clients", 0, 0)])
    producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": "all", "enable.idempotence": True})
    started = time.perf_counter()
    with open(source, "rb") as f:
        for line in f:
            while True:
                try:
                    producer.produce("bench-clients", value=line.rstrip(b"\n"))
                    break
                except BufferError:
                    producer.poll(0.01)
    producer.flush()
    written = 0
    with open(sink, "wb") as out:
        while written < count:
            batch = [m.value() + b"\n" for m in consumer.consume(500, 0.5) if m.error() is None]
            out.write(b"".join(batch))
            written += len(batch)
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        engine = EngineProcess(workdir / "engine", brokers=1, configs=GROUP_TEST_CONFIGS).start()
        try:
            connect_seconds, rss = connect_run(engine, workdir, args.lines)
            clients_seconds = clients_run(engine, workdir, args.lines)
        finally:
            engine.terminate()
    print(f"lines: {args.lines:,}")
    print(f"Connect (FileStreamSource -> topic -> FileStreamSink): {connect_seconds:.2f} s, "
          f"{args.lines / connect_seconds:,.0f} lines/s")
    print(f"peer, the same clients by hand:                       {clients_seconds:.2f} s, "
          f"{args.lines / clients_seconds:,.0f} lines/s")
    print(f"Connect takes {connect_seconds / clients_seconds:.2f}x the clients' time; worker resident memory "
          f"when idle: {rss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
