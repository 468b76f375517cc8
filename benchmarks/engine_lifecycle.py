"""The engine's lifecycle at fleet scale: start, clean SIGTERM shutdown, restart, restart after SIGKILL.

Runs `python -m engine serve` (3 brokers by default) on a private data dir, times its start
on an empty dir, creates 10,000 topics of 4 partitions (40,000 partitions, RF 1) in
CreateTopics batches (benchmarks/console_pages.py's helper) and writes `--records` records
to every partition (one batch each, in raw Produce requests to the leaders). Then, each timed from outside the process (wall time and the engine's
CPU seconds, with the load average, since the machine may be shared):

1. a clean shutdown: SIGTERM until the process exits (it must exit 0);
2. the restart after it (until every broker answers ApiVersions), with the engine's own
   count of logs loaded and segments recovered (0 expected: the clean-shutdown marker);
3. another `--records` per partition, SIGKILL, and the restart after it: crash recovery,
   which validates every segment above its recovery point; the benchmark then checks that
   every partition's end offset holds every acknowledged record.

No peer runs beside it (librdkafka's mock cluster keeps everything in memory and has no
start-up or shutdown to compare); compare with this benchmark's figures on other code (the
latest are in docs/benchmarks/index.md, earlier ones in its git history).

    .venv/bin/python benchmarks/engine_lifecycle.py                  # 10,000 topics x 4
    .venv/bin/python benchmarks/engine_lifecycle.py --topics 1000
    .venv/bin/python benchmarks/engine_lifecycle.py --keep /tmp/lc  # reuse the scale kept there
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kafka.protocol.metadata import MetadataRequest, MetadataResponse  # noqa: E402
from kafka.protocol.producer import ProduceRequest, ProduceResponse  # noqa: E402
from kafka.record.default_records import DefaultRecordBatchBuilder  # noqa: E402

from benchmarks.console_pages import PARTITIONS, create_topics  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

TIMEOUT_S = 3600          # generous: the old code took minutes to stop at this scale
CHUNK = 2000              # partitions per Produce request
RETRIABLE = {3, 6}        # UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER: not applied yet
LOADED = re.compile(r"Loaded (\d+) logs .*?: (\d+) segments recovered")


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def engine_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def report(label: str, wall: float, cpu: float, load_before: str, extra: str = "") -> None:
    print(f"{label:<34} {wall:>8.1f} s wall {cpu:>8.1f} s CPU   load {load_before} -> {load()}"
          f"{'   ' + extra if extra else ''}", flush=True)


def timed_start(engine: EngineProcess, label: str) -> None:
    before, log_start = load(), engine.log_path.stat().st_size if engine.log_path.exists() else 0
    started = time.perf_counter()
    engine.start(timeout=TIMEOUT_S)
    wall = time.perf_counter() - started
    report(label, wall, engine_cpu_s(engine.process.pid), before, recovered_summary(engine, log_start))


def timed_stop(engine: EngineProcess, label: str) -> None:
    before, cpu_before = load(), engine_cpu_s(engine.process.pid)
    children_before = children_cpu_s()
    started = time.perf_counter()
    code = engine.terminate(timeout=TIMEOUT_S)
    wall = time.perf_counter() - started
    # The engine's whole life ended in children_cpu_s(); what it had used before SIGTERM is known.
    cpu = children_cpu_s() - children_before - cpu_before
    report(label, wall, cpu, before, f"exit code {code}")
    assert code == 0, f"SIGTERM exited with {code}:\n{engine.log_text()}"


def recovered_summary(engine: EngineProcess, log_start: int) -> str:
    """The engine's own count of the logs it loaded and the segments crash recovery validated."""
    with open(engine.log_path, "rb") as f:
        f.seek(log_start)
        found = [LOADED.search(line) for line in f.read().decode(errors="replace").splitlines()]
    counts = [(int(m.group(1)), int(m.group(2))) for m in found if m]
    if not counts:
        return "(no load summary in the engine's log)"
    return f"{sum(c[0] for c in counts)} logs loaded, {sum(c[1] for c in counts)} segments recovered"


def leaders(engine: EngineProcess, names: list[str]) -> dict[int, list[tuple[str, int]]]:
    """Broker id -> the partitions of `names` it leads, from one all-topics Metadata request."""
    client = RawClient(engine.ports[0], timeout=300)
    try:
        response = client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12,
                                   MetadataResponse)
    finally:
        client.close()
    wanted, led = set(names), {}
    for topic in response.topics:
        if topic.name in wanted:
            for partition in topic.partitions:
                led.setdefault(partition.leader_id, []).append((topic.name, partition.partition_index))
    return led


def produce_everywhere(engine: EngineProcess, names: list[str], records: int, round_: int) -> int:
    """One batch of `records` 100-byte records to every partition, acks=all, as Produce requests of
    CHUNK partitions sent straight to each leader (librdkafka spends minutes on metadata for
    10,000 topics); returns the records acknowledged."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i in range(records):
        builder.append(i, timestamp=None, key=None, value=b"x" * 96 + f"{round_:04d}".encode(), headers=[])
    batch = bytes(builder.build())
    acked, pending = 0, leaders(engine, names)
    deadline = time.monotonic() + TIMEOUT_S
    while pending:
        retry: dict[int, list[tuple[str, int]]] = {}
        for leader, partitions in pending.items():
            client = RawClient(engine.ports[leader], timeout=300)
            try:
                for i in range(0, len(partitions), CHUNK):
                    for key, error in send_batch(client, partitions[i:i + CHUNK], batch).items():
                        if error == 0:
                            acked += records
                        elif error in RETRIABLE and time.monotonic() < deadline:
                            retry.setdefault(leader, []).append(key)
                        else:
                            raise RuntimeError(f"produce to {key} failed with error {error}")
            finally:
                client.close()
        pending = retry
        if pending:
            time.sleep(0.5)      # new partitions are applied by the brokers in slices: not yet led
    return acked


def send_batch(client: RawClient, partitions: list[tuple[str, int]], batch: bytes) -> dict[tuple[str, int], int]:
    P = ProduceRequest.TopicProduceData
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=300_000, topic_data=[
        P(name=t, partition_data=[P.PartitionProduceData(index=p, records=batch) for p in indexes])
        for t, indexes in by_topic.items()])
    response = client.request(request, 9, ProduceResponse)
    return {(t.name, r.index): r.error_code for t in response.responses for r in t.partition_responses}


def end_offsets_sum(bootstrap: str, names: list[str]) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=300_000)
    try:
        tps = [TopicPartition(n, p) for n in names for p in range(PARTITIONS)]
        return sum(consumer.end_offsets(tps).values())
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--records", type=int, default=1, help="records per partition per round (default 1)")
    parser.add_argument("--keep", default="", help="keep the data dir here and reuse the scale found there")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.keep or scratch)
        root.mkdir(parents=True, exist_ok=True)
        names = [f"bench-{i:05d}" for i in range(args.topics)]
        marker = root / f"scale-{args.topics}x{PARTITIONS}-{args.brokers}-brokers"
        engine = EngineProcess(root / "engine", brokers=args.brokers)
        print(f"{os.cpu_count()} cores; {args.topics} topics x {PARTITIONS} partitions = "
              f"{args.topics * PARTITIONS} partitions (RF 1) on {args.brokers} brokers")
        try:
            if marker.exists() and marker.read_text() == "0":
                sys.exit(f"{root} was left by an interrupted run (its record count is unknown): delete it")
            written = int(marker.read_text()) if marker.exists() else 0
            if not written:
                timed_start(engine, "start on an empty data dir")
                started = time.perf_counter()
                create_topics(engine.bootstrap, names, 1)
                print(f"created the topics in {time.perf_counter() - started:.1f} s", flush=True)
                started = time.perf_counter()
                written = produce_everywhere(engine, names, args.records, 0)
                print(f"wrote {written} records in {time.perf_counter() - started:.1f} s", flush=True)
            else:
                timed_start(engine, f"start (reused {root})")
            marker.write_text("0")        # unknown while the engine runs
            timed_stop(engine, "clean shutdown (SIGTERM)")
            marker.write_text(str(written))
            timed_start(engine, "restart after the clean shutdown")

            written += produce_everywhere(engine, names, args.records, 1)
            marker.write_text("0")
            engine.kill()
            timed_start(engine, "restart after SIGKILL (recovery)")
            stored = end_offsets_sum(engine.bootstrap, names)
            print(f"after recovery: {stored} records held, {written} acknowledged "
                  f"({'every acknowledged record is there' if stored >= written else 'RECORDS LOST'})")
            timed_stop(engine, "clean shutdown (SIGTERM) again")
            marker.write_text(str(written))
        finally:
            engine.kill()
    print(f"engine log: {engine.log_path}" if args.keep else "")


if __name__ == "__main__":
    main()
