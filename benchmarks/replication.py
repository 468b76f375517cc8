"""The cost of replication: produce throughput with RF=3 and acks=all against RF=1 and acks=1.

Both run in the same run on one 3-broker engine, with the same confluent-kafka producer:
1M records of 100 bytes to 6 partitions. Kafka's own 2014 benchmark lost about 49% of its
throughput going to synchronous 3x replication; the target here is to keep at least 0.6 of
the RF=1 figure.

    .venv/bin/python benchmarks/replication.py [--records N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.produce_consume import create_topic, produce  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="alternate RF=1 and RF=3 this many times (medians)")
    args = parser.parse_args()
    print(f"{args.records:,} records of {args.size} bytes, 6 partitions, 3-broker engine, confluent-kafka "
          f"producer, {args.rounds} rounds")
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-replication-") as data_dir:
        engine = EngineProcess(Path(data_dir) / "data", brokers=3).start()
        try:
            for i in range(args.rounds):
                create_topic(engine.bootstrap, f"rf1-{i}", replication=1)
                create_topic(engine.bootstrap, f"rf3-{i}", replication=3, configs={"min.insync.replicas": "2"})
                single = produce(engine.bootstrap, args.records, args.size, topic=f"rf1-{i}", acks=1)
                replicated = produce(engine.bootstrap, args.records, args.size, topic=f"rf3-{i}", acks="all")
                ratios.append(replicated / single)
                print(f"round {i}: RF=1 acks=1 {single:>10,.0f} rec/s   RF=3 acks=all {replicated:>10,.0f} rec/s   "
                      f"{replicated / single:.2f}x", flush=True)
        finally:
            started = time.perf_counter()
            engine.terminate(timeout=600)
            print(f"clean shutdown: {time.perf_counter() - started:.1f} s (flush and checkpoints)")
    print(f"RF=3 / RF=1, median: {statistics.median(ratios):.2f}x   (Kafka 2014: ~0.51x; target >= 0.6x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
