"""Where the engine's time goes while one share consumer drains a partition with no work:
cProfile on the engine's event loop (an in-process engine, so the profiler sees its thread),
the share consumer in a process of its own. The engine's time is grouped by what it was doing
(self time of the functions in each group), so the cost of a share fetch beside a plain
Fetch shows: acquisition, reading and copying the records, the state writes to the share
coordinator (and their records in __share_group_state), encoding, the network.

    .venv/bin/python benchmarks/share_groups.py --profile     (or this file alone)
"""
from __future__ import annotations

import cProfile
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.share_groups import create_and_fill  # noqa: E402
from tests.support.in_process_engine import InProcessEngine  # noqa: E402
from tests.support.share import coordinator_port, set_group_configs, topic_id_of  # noqa: E402
from engine.share.coordinator import kafka_uuid  # noqa: E402

DRAIN = """
import sys, time
from confluent_kafka import ShareConsumer
consumer = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": "profiled"})
consumer.subscribe(["profiled"])
target, got = int(sys.argv[2]), 0
while got < target:
    got += sum(1 for m in consumer.poll(0.2) if not m.error())
consumer.commit_sync(10)
consumer.close()
"""
GROUPS = [   # (label, path fragments of the functions whose self time counts for it), first match wins
    ("acquisition and acknowledgement (engine/share/partition.py, manager.py)", ("engine/share/partition",
                                                                               "engine/share/manager",
                                                                               "engine/share/sessions")),
    ("reading the log for acquisition (engine/share/acquire.py, storage)", ("engine/share/acquire", "engine/storage",
                                                                           "posix.pread")),
    ("state writes: share coordinator, persister, __share_group_state records",
     ("engine/share/coordinator", "engine/share/persister", "engine/share/state", "record_specs",
      "engine/coordinator/offsets_records", "kafka/record")),
    ("request decoding and response encoding (kafka.protocol)", ("kafka/protocol",)),
    ("dispatch, listener, sockets, event loop", ("engine/protocol", "asyncio", "selectors", "socket")),
]
IDLE = "'poll' of 'select.epoll'"      # the loop waiting for the network: not work


def profile_share_drain(records: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, InProcessEngine(Path(tmp), brokers=1) as running:
        bootstrap = running.engine.bootstrap_servers
        create_and_fill(bootstrap, "profiled", records)
        set_group_configs(bootstrap, "profiled", {"share.auto.offset.reset": "earliest"})
        port = running.engine.ports[0]          # the internal topics exist before the profile starts
        coordinator_port(port, "profiled")
        coordinator_port(port, f"profiled:{kafka_uuid(topic_id_of(port, 'profiled'))}:0", key_type=2)
        profiler = cProfile.Profile()
        running.loop.call_soon_threadsafe(profiler.enable)
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", DRAIN, bootstrap, str(records)], check=True, timeout=600)
        elapsed = time.monotonic() - started
        stopped = threading.Event()      # the profiler stops on the loop's thread, where it runs
        running.loop.call_soon_threadsafe(lambda: (profiler.disable(), stopped.set()))
        stopped.wait(10)
    stats = pstats.Stats(profiler)
    by_group = {label: 0.0 for label, _ in GROUPS}
    other = idle = 0.0
    for (path, _, name), entry in stats.stats.items():
        if IDLE in name:
            idle += entry[2]
            continue
        label = next((label for label, fragments in GROUPS if any(f in path or f in name for f in fragments)), None)
        if label is None:
            other += entry[2]
        else:
            by_group[label] += entry[2]
    total = sum(by_group.values()) + other
    print(f"\nprofile: one share consumer drained {records:,} records in {elapsed:.1f} s "
          f"({records / elapsed:,.0f} rec/s under the profiler); the engine's loop worked {total:.2f} s "
          f"and waited for the network {idle:.2f} s")
    for label, seconds in sorted(by_group.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds / total:>5.0%}  {seconds:>6.2f} s  {label}")
    print(f"  {other / total:>5.0%}  {other:>6.2f} s  everything else")
    print("\ntop functions by self time:")
    stats.sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    profile_share_drain(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
