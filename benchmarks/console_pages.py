"""Console pages with thousands of topics: server-side time of the topics, brokers, topic and group pages.

Starts a private 1-broker engine, creates 5,000 topics of 4 partitions each (20,000 partitions,
RF 1) in CreateTopics batches of 500 and 2,000 consumer groups, each with committed offsets on
the 20 partitions of 5 topics (40,000 committed offsets, made with admin OffsetCommits as
AlterConsumerGroupOffsets does), then renders each page through Django's test Client with a
logged-in user (the whole view: selectors, gateway requests to the engine, template). Prints the
figures next to the target (< 1 s each) and the peers' published numbers: the first request
of the console process, then the median and worst of the following ones.

    .venv/bin/python benchmarks/console_pages.py [--topics N] [--groups N] [--runs N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.engine_process import EngineProcess  # noqa: E402

PARTITIONS = 4
BATCH = 500
TARGET_S = 1.0
TOPICS_PER_GROUP = 5
PEERS = ("AKHQ: 65 s to list 1,000 topics (published)",
         "kafka-ui: 90 s per refresh at 9k topics (published)",
         "kafka-ui: 90 s per consumer groups refresh at 9k topics and 2.2k groups (kafbat #1776)",
         "Redpanda Console: about 5 minutes to list 45k groups (#292)")


def create_topics(bootstrap: str, names: list[str]) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120_000)
    try:
        for i in range(0, len(names), BATCH):
            admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names[i:i + BATCH]], timeout_ms=120_000)
    finally:
        admin.close()


def cpu_seconds(pid: int) -> float:
    """CPU time of this console process (all threads) plus the engine's, so that a figure can be
    read on a machine shared with other work: wall time there depends on the load."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return time.process_time() + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_groups(cluster, topics: list[str], count: int) -> None:
    """Group i commits offsets on every partition of TOPICS_PER_GROUP topics, spread over all topics."""
    from console.clusters.gateway import cluster_gateway

    ids = [f"bench-group-{i:05d}" for i in range(count)]
    with cluster_gateway(cluster) as gw:
        coordinators = gw.groups.find_coordinators(ids).found
        for i, group_id in enumerate(ids):
            chosen = [topics[(i * TOPICS_PER_GROUP + k) % len(topics)] for k in range(TOPICS_PER_GROUP)]
            failed = gw.groups.commit_offsets(group_id, coordinator=coordinators[group_id], offsets={
                (t, p): (0, "") for t in chosen for p in range(PARTITIONS)})
            assert not failed, failed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=5000)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "engine", brokers=1).start()
        try:
            os.environ.update(DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3", ENGINE_BOOTSTRAP=engine.bootstrap,
                              ALLOWED_HOSTS="testserver", DJANGO_SETTINGS_MODULE="console.settings")
            import django
            django.setup()
            from django.contrib.auth import get_user_model
            from django.core.management import call_command
            from django.test import Client

            from console.accounts.services import user_create
            from console.clusters.models import Cluster

            call_command("migrate", verbosity=0)
            user_create(username="bench", password="bench-password-1", role="viewer")
            client = Client()
            client.force_login(get_user_model().objects.get(username="bench"))
            cluster = Cluster.objects.get()

            names = [f"bench-{i:05d}" for i in range(args.topics)]
            started = time.perf_counter()
            create_topics(engine.bootstrap, names)
            print(f"created {args.topics} topics / {args.topics * PARTITIONS} partitions "
                  f"in {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            create_groups(cluster, names, args.groups)
            print(f"created {args.groups} groups with {args.groups * TOPICS_PER_GROUP * PARTITIONS} committed "
                  f"offsets in {time.perf_counter() - started:.1f} s")

            pages = {"topics page": f"/clusters/{cluster.pk}/topics/",
                     "brokers page": f"/clusters/{cluster.pk}/brokers/",
                     "broker page": f"/clusters/{cluster.pk}/brokers/0/",
                     "topic page": f"/clusters/{cluster.pk}/topics/{names[len(names) // 2]}/",
                     "topics search": f"/clusters/{cluster.pk}/topics/?q=bench-049&status=not_preferred",
                     "overview": f"/clusters/{cluster.pk}/",
                     "groups page": f"/clusters/{cluster.pk}/groups/",
                     "groups by lag": f"/clusters/{cluster.pk}/groups/?sort=lag&state=Empty",
                     "group page": f"/clusters/{cluster.pk}/groups/bench-group-{args.groups // 2:05d}/"}
            print(f"load average before the pages: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            print(f"\n{'page':<14} {'first':>8} {'median':>8} {'worst':>8} {'cpu':>8}  target < {TARGET_S:.0f} s")
            for label, url in pages.items():
                times, cpu = [], []
                for _ in range(args.runs):
                    t0, c0 = time.perf_counter(), cpu_seconds(engine.process.pid)
                    response = client.get(url)
                    times.append(time.perf_counter() - t0)
                    cpu.append(cpu_seconds(engine.process.pid) - c0)
                    assert response.status_code == 200, (url, response.status_code)
                later = sorted(times[1:]) or times
                verdict = "ok" if max(times) < TARGET_S else "SLOW"
                print(f"{label:<14} {times[0]:>7.3f}s {later[len(later) // 2]:>7.3f}s {max(later):>7.3f}s "
                      f"{sorted(cpu)[len(cpu) // 2]:>7.3f}s  {verdict}")
            print("\nfirst: the first request of this console process, right after the topics were created;"
                  "\nmedian and worst: the requests after it; cpu: median CPU seconds per request, console and"
                  "\nengine together (on an idle 2-core machine the two overlap: wall time is about that or less).")
            print("\npeers, same scale or smaller:")
            for line in PEERS:
                print("  " + line)
        finally:
            engine.kill()


if __name__ == "__main__":
    main()
