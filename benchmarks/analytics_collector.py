"""The analytics collector at 40,000 partitions and 2,000 groups: one snapshot's console time.

Starts a private 1-broker engine, creates 10,000 topics of 4 partitions (40,000 partitions) and
2,000 groups with committed offsets on 20 partitions each (40,000 committed offsets), with the
helpers of benchmarks/console_pages.py, then takes --runs snapshots into a temporary lake with
`snapshot_collect` (the function Celery beat calls). Prints each snapshot's wall time, the
console process's CPU time (the budget: at most 2 s of console time) and the engine's.

    .venv/bin/python benchmarks/analytics_collector.py [--topics N] [--groups N] [--runs N]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.console_pages import PARTITIONS, TOPICS_PER_GROUP, cpu_seconds, create_groups, create_topics  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402

TARGET_CONSOLE_S = 2.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile one more snapshot: where the console time goes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "engine", brokers=1).start()
        try:
            os.environ.update(DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3", ENGINE_BOOTSTRAP=engine.bootstrap,
                              DJANGO_SETTINGS_MODULE="console.settings")
            os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
            import django
            django.setup()
            from django.core.management import call_command

            from console.analytics import lake as L
            from console.analytics.collector import snapshot_collect
            from console.clusters.models import Cluster

            call_command("migrate", verbosity=0)
            cluster = Cluster.objects.get()
            names = [f"bench-{i:05d}" for i in range(args.topics)]
            started = time.perf_counter()
            create_topics(engine.bootstrap, names)
            create_groups(cluster, names, args.groups)
            print(f"{args.topics * PARTITIONS:,} partitions and {args.groups:,} groups "
                  f"({args.groups * TOPICS_PER_GROUP * PARTITIONS:,} committed offsets) made in "
                  f"{time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} cores")
            print(f"\n{'snapshot':<10}{'wall':>9}{'console CPU':>13}{'engine CPU':>12}  rows written")
            for run in range(args.runs):
                wall, cpu, engine_cpu = time.perf_counter(), time.process_time(), cpu_seconds(engine.process.pid)
                summary = snapshot_collect(cluster=cluster, lake_url=f"{tmp}/lake")
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                engine_cpu = cpu_seconds(engine.process.pid) - engine_cpu
                rows = ", ".join(f"{t} {summary.rows[t]:,}" for t in L.TABLES)
                print(f"{run + 1:<10}{wall:>8.2f}s{cpu:>12.2f}s{engine_cpu:>11.2f}s  {rows}", flush=True)
            if args.profile:
                profile_snapshot(lambda: snapshot_collect(cluster=cluster, lake_url=f"{tmp}/lake"))
            print(f"\nconsole CPU per snapshot: the collector's own cost (requests, decoding, Parquet); "
                  f"target < {TARGET_CONSOLE_S:.0f} s")
        finally:
            try:   # a clean stop of 40,000 partitions takes longer than the default 30 s on this VM
                engine.terminate(timeout=300)
            except subprocess.TimeoutExpired:
                engine.kill()


def profile_snapshot(take) -> None:
    import cProfile
    import pstats
    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(take)
    print("\nprofile of one snapshot (console CPU), by own time:")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
