"""What one alert evaluation round costs the worker at fleet scale: 1,000 rules over 2,000
consumer groups (40,000 committed partitions) and 10,000 topics (40,000 partitions).

The round is what `console.alerts.tasks.alerts_evaluate_all` does after the observation is
in: the assessment of the new observation against the ones before (time lag, Burrow's
windows, catch-up; `console.metrics.assessment`), then `alerts_evaluate` (every rule against
it, the alerts' state changes, the history, the outbox, one sparkline point per rule) on a
real database (SQLite in WAL mode, as `make run`). The observation itself is built here, as
the collector would build it from the cluster (its collection is a handful of batched
requests measured by benchmarks/console_pages.py, "metrics scrape": the observation's own
duration is printed there). Every tenth group falls behind at every round, so rules fire,
stay firing and resolve as a real fleet's would.

Rules: 400 lag rules (one group each, by name), 200 time lag (by prefix), 150 Burrow status
(RE2 regexes), 100 catch-up, 50 under-replicated and 25 offline (by topic prefix), 25
hanging transactions, 25 broker down, 25 log dir usage.

Prints the CPU seconds of each round (assessment, evaluation, total) beside the target
(under 2 s), and the database rows written.

    .venv/bin/python benchmarks/alert_rules.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS, PARTITIONS, GROUPS, TOPICS_PER_GROUP, RULES = 10_000, 4, 2000, 5, 1000
TARGET_S = 2.0


def observation(round_no: int):
    from console.kafka_gateway.records import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
    from console.kafka_gateway.snapshots import LogDirUsage
    from console.metrics.observation import GroupObservation, Observation

    topics = []
    current = {}
    for t in range(TOPICS):
        name = f"topic-{t:05d}"
        parts = tuple(PartitionInfo(name, p, (t + p) % 3, ((t + p) % 3, (t + p + 1) % 3),
                                    ((t + p) % 3,) if t % 500 == 0 else ((t + p) % 3, (t + p + 1) % 3))
                      for p in range(PARTITIONS))
        topics.append(TopicInfo(name, False, parts))
        for p in range(PARTITIONS):
            current[name, p] = 1000 + round_no * 100
    metadata = ClusterMetadata("bench", 0, tuple(BrokerNode(b, "127.0.0.1", 9092 + b) for b in range(3)),
                               tuple(topics))
    groups = {}
    for g in range(GROUPS):
        behind = g % 10 == 0
        committed = {}
        for k in range(TOPICS_PER_GROUP):
            topic = f"topic-{(g * TOPICS_PER_GROUP + k) % TOPICS:05d}"
            for p in range(PARTITIONS):
                committed[topic, p] = 1000 if behind else current[topic, p]
        groups[f"group-{g:05d}"] = GroupObservation("Stable", 3, committed)
    dirs = tuple(LogDirUsage(b, f"/data/broker-{b}", 10**12, 10**11 * (1 + b), 10**11) for b in range(3))
    taken = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=30 * round_no)
    return Observation(collected_at=taken, metadata=metadata, oldest={k: 0 for k in current}, current=current,
                       groups=groups, log_dirs=dirs, open_transactions={("topic-00001", 0): 0})


def rules(cluster) -> None:
    from console.alerts.models import AlertRule

    specs = []
    for i in range(400):
        specs.append(("group_lag", "exact", f"group-{i * 5:05d}", 50.0, ""))
    for i in range(200):
        specs.append(("group_time_lag", "prefix", f"group-{i % 20:03d}", 60.0, ""))
    for i in range(150):
        specs.append(("group_status", "regex", rf"group-0{i % 10}\d{{3}}", 0.0, "WARN,ERR,STALL,STOP"))
    for i in range(100):
        specs.append(("catch_up", "prefix", f"group-0{i % 20:02d}", 600.0, ""))
    specs += [("under_replicated", "prefix", f"topic-0{i % 10}", 0.0, "") for i in range(50)]
    specs += [("offline", "prefix", f"topic-0{i % 10}", 0.0, "") for i in range(25)]
    specs += [("hanging_transaction", "all", "", 900.0, "") for _ in range(25)]
    specs += [("broker_down", "all", "", 0.0, "") for _ in range(25)]
    specs += [("log_dir_usage", "all", "", 0.75, "") for _ in range(25)]
    assert len(specs) == RULES
    AlertRule.objects.bulk_create([AlertRule(cluster=cluster, name=f"rule-{n:04d}", kind=kind, target_type=tt,
                                             target=target, threshold=threshold, statuses=statuses, for_seconds=60)
                                   for n, (kind, tt, target, threshold, statuses) in enumerate(specs)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3", DJANGO_SETTINGS_MODULE="console.settings",
                          SECRET_KEY="benchmark-only-secret-key")
        import django
        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from console.alerts import services
        from console.alerts.models import Alert, AlertEvent, RuleValue
        from console.clusters.models import Cluster
        from console.metrics.assessment import Assessor

        call_command("migrate", verbosity=0)
        cluster = Cluster.objects.create(name="fleet", bootstrap_servers="127.0.0.1:1")
        rules(cluster)
        assessor = Assessor()
        print(f"{RULES:,} rules; {GROUPS:,} groups with {GROUPS * TOPICS_PER_GROUP * PARTITIONS:,} committed "
              f"partitions; {TOPICS * PARTITIONS:,} partitions; SQLite {connection.Database.sqlite_version}")
        print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores\n")
        print(f"{'round':>5} {'assess':>8} {'evaluate':>9} {'total':>8} {'wall':>8}  changes")
        totals = []
        for round_no in range(args.rounds):
            built = observation(round_no)
            wall, c0 = time.perf_counter(), time.process_time()
            from dataclasses import replace
            assessed = replace(built, monotonic_at=1.0, assessment=assessor.assess(built))
            c1 = time.process_time()
            changes = services.alerts_evaluate(cluster=cluster, observation=assessed, now=built.collected_at)
            c2 = time.process_time()
            totals.append(c2 - c0)
            print(f"{round_no + 1:>5} {c1 - c0:>7.2f}s {c2 - c1:>8.2f}s {c2 - c0:>7.2f}s "
                  f"{time.perf_counter() - wall:>7.2f}s  {changes}", flush=True)
        steady = sorted(totals[1:])[len(totals[1:]) // 2] if len(totals) > 1 else totals[0]
        print(f"\nworst round {max(totals):.2f} CPU-s, median after the first {steady:.2f} CPU-s; target: "
              f"under {TARGET_S:.0f} s ({'met' if max(totals) < TARGET_S else 'NOT met'})")
        print(f"rows: {Alert.objects.count():,} alerts, {AlertEvent.objects.count():,} events, "
              f"{RuleValue.objects.count():,} sparkline points")
        print("peers: Burrow, kafka-lag-exporter and kafka_exporter evaluate no rules (Alertmanager does, on "
              "Prometheus); kafka-ui and AKHQ have no alerts.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
