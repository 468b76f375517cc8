"""Share groups (KIP-932) as a queue: parallel work beyond the partition count.

One topic of ONE partition, records whose processing takes `--work-ms` (1 ms: a sleep, as a
call to another service would take), drained in the same run by
  - one classic consumer (confluent-kafka Consumer, a consumer group), the peer: a partition
    has one consumer, so it cannot go faster than one record per work time;
  - 1, 2 and 4 share consumers (confluent-kafka ShareConsumer, implicit acknowledgement),
    each in its own process.
Then the raw throughput, with no processing, of one share consumer beside one classic
consumer; and, with --profile, where the engine's time goes while a share consumer drains the
topic (cProfile on the engine's event loop, in process).

Each consumer's time runs from the first record any member receives to the moment the last
of them is processed; joining the group is not counted. Every record must be processed once
(a duplicate would be a redelivery) - the run says so if not. The runs with work are repeated
(--rounds, each on a topic of its own) and the medians compared: on a shared machine a single
run moves by tens of percent.

    .venv/bin/python benchmarks/share_groups.py [--records 6000] [--work-ms 1] [--rounds 3] [--raw-records 200000]
                                                [--profile]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.share import set_group_configs  # noqa: E402

VALUE = b"x" * 100


def create_and_fill(bootstrap: str, topic: str, records: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 16384})
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value=VALUE)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def worker(kind: str, bootstrap: str, group: str, topic: str, work_ms: float, target: int, counter, first,
           stop, mine) -> None:
    """One consumer process: poll, `work_ms` per record, until the group processed `target`.
    With work, share consumers take 100 records a poll (max.poll.records, 500 by default), so
    that the last records are not all queued behind one member."""
    if kind == "share":
        config = {"max.poll.records": 100} if work_ms else {}
        consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, **config})
    else:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        while not stop.is_set():
            messages = consumer.poll(0.2) if kind == "share" else consumer.consume(500, 0.2)
            got = [m for m in messages if not m.error()]
            if not got:
                continue
            with first.get_lock():
                if first.value == 0:
                    first.value = time.monotonic()
            for _ in got:
                if work_ms:
                    time.sleep(work_ms / 1000)
            mine.value += len(got)
            with counter.get_lock():
                counter.value += len(got)
                if counter.value >= target:
                    stop.set()
        if kind == "share":
            consumer.commit_sync(10)
    finally:
        consumer.close()


def drain(kind: str, members: int, bootstrap: str, topic: str, group: str, records: int, work_ms: float) -> dict:
    context = multiprocessing.get_context("spawn")
    counter, first, stop = context.Value("q", 0), context.Value("d", 0.0), context.Event()
    shares = [context.Value("q", 0, lock=False) for _ in range(members)]
    processes = [context.Process(target=worker, args=(kind, bootstrap, group, topic, work_ms, records, counter,
                                                      first, stop, share)) for share in shares]
    for process in processes:
        process.start()
    deadline = time.monotonic() + 600
    while not stop.is_set() and time.monotonic() < deadline:
        time.sleep(0.005)
    finished = time.monotonic()
    for process in processes:
        process.join(60)
    elapsed = finished - first.value
    return {"rate": records / elapsed, "elapsed": elapsed, "processed": counter.value,
            "per_member": [s.value for s in shares]}


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=6000, help="records for the runs with work")
    parser.add_argument("--work-ms", type=float, default=1.0)
    parser.add_argument("--raw-records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the runs with work (medians are printed)")
    parser.add_argument("--profile", action="store_true", help="also profile the engine during a raw share drain")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "data", brokers=1, configs={"log.retention.check.interval.ms": "600000"})
        engine.start()
        try:
            run_all(engine.bootstrap, args)
        finally:
            engine.terminate()
    if args.profile:
        from benchmarks.share_groups_profile import profile_share_drain
        profile_share_drain(args.raw_records)
    return 0


def run_all(bootstrap: str, args) -> None:
    print(f"\n{args.records:,} records of {len(VALUE)} B in ONE partition, {args.work_ms} ms of work per record, "
          f"{args.rounds} round(s): a topic and groups of their own each")
    rates: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        topic = f"work-{round_}"
        create_and_fill(bootstrap, topic, args.records)
        classic = drain("classic", 1, bootstrap, topic, f"classic-work-{round_}", args.records, args.work_ms)
        rates.setdefault("classic", []).append(classic["rate"])
        line = [f"classic {classic['rate']:,.0f}"]
        for members in (1, 2, 4):
            group = f"share-work-{members}-{round_}"
            set_group_configs(bootstrap, group, {"share.auto.offset.reset": "earliest"})
            result = drain("share", members, bootstrap, topic, group, args.records, args.work_ms)
            rates.setdefault(f"share {members}", []).append(result["rate"])
            extra = result["processed"] - args.records
            line.append(f"share x{members} {result['rate']:,.0f} (per member {result['per_member']})"
                        + (f" {extra} processed twice" if extra else ""))
        print(f"  round {round_ + 1}: " + "; ".join(line))
    classic = statistics.median(rates["classic"])
    print(f"{'classic consumer, 1':>24}: {classic:>8,.0f} rec/s (median)")
    for members in (1, 2, 4):
        rate = statistics.median(rates[f"share {members}"])
        per_round = ", ".join(f"{s / c:.2f}" for s, c in zip(rates[f"share {members}"], rates["classic"]))
        print(f"{f'share consumers, {members}':>24}: {rate:>8,.0f} rec/s (median)  {rate / classic:.2f}x classic"
              f"  (per round: {per_round})")
    raw = "raw"
    create_and_fill(bootstrap, raw, args.raw_records)
    print(f"\n{args.raw_records:,} records of {len(VALUE)} B in ONE partition, no work")
    classic = drain("classic", 1, bootstrap, raw, "classic-raw", args.raw_records, 0)
    print(f"{'classic consumer, 1':>24}: {classic['rate']:>9,.0f} rec/s")
    for members in (1, 4):
        group = f"share-raw-{members}"
        set_group_configs(bootstrap, group, {"share.auto.offset.reset": "earliest"})
        result = drain("share", members, bootstrap, raw, group, args.raw_records, 0)
        print(f"{f'share consumers, {members}':>24}: {result['rate']:>9,.0f} rec/s  "
              f"{result['rate'] / classic['rate']:.2f}x classic")


if __name__ == "__main__":
    sys.exit(main())
