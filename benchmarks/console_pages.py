"""Console pages at fleet scale: server-side time of every list and detail page and its JSON twin.

Starts a private engine (3 brokers by default), creates 10,000 topics of 4 partitions each
(40,000 partitions, RF 1, spread over the brokers) in CreateTopics batches, and 2,000
consumer groups, each with committed offsets on the 20 partitions of 5 topics (40,000
committed offsets, made with admin OffsetCommits as AlterConsumerGroupOffsets does), and
keeps TRANSACTIONS transactions open (confluent-kafka producers, one partition each, on
different brokers) while the pages run, for the Transactions page. Then,
for each page, a *fresh console process* renders it `--runs` times through Django's test
Client with a logged-in user (the whole view: selectors, gateway requests to the engine,
template or JSON), so the first figure is always the first request of a new console
process, right after the start-up warm-up of console/asgi.py (console/warmup.py: code
imported, templates compiled, caches filled; its time is printed too). Prints first, median and worst (worst
of all runs, the first included) next to the target (< 1 s) and the peers' published
figures, and the load average, because the machine may be shared.

    .venv/bin/python benchmarks/console_pages.py              # the full scale: 10,000 topics, 2,000 groups
    .venv/bin/python benchmarks/console_pages.py --topics 1000 --groups 200 --runs 3
    .venv/bin/python benchmarks/console_pages.py --profile topics   # + cProfile of matching pages

Then the first load of a page with a chart in Chromium, cold cache, over loopback, with static
files collected as `make run` serves them and, beside it, not collected (benchmarks/chart_load.py;
--no-browser skips it).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PARTITIONS = 4
BATCH = 2000
TARGET_S = 1.0
TOPICS_PER_GROUP = 5
TRANSACTIONS = 3
METRICS_TOKEN = "benchmark-only-metrics-token"
PEERS = ("AKHQ: 65 s to list 1,000 topics (published)",
         "kafka-ui: 90 s per refresh at 9k topics (published)",
         "kafka-ui: 90 s per consumer groups refresh at 9k topics and 2.2k groups (kafbat #1776)",
         "Redpanda Console: about 5 minutes to list 45k groups (#292)")


def create_topics(bootstrap: str, names: list[str], replication_factor: int) -> None:
    """CreateTopics in batches of BATCH, all sent before any answer is awaited."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=300_000)
    try:
        for i in range(0, len(names), BATCH):
            admin.create_topics([NewTopic(n, PARTITIONS, replication_factor) for n in names[i:i + BATCH]],
                                timeout_ms=300_000)
    finally:
        admin.close()


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


def open_transactions(bootstrap: str, topic: str) -> list:
    """TRANSACTIONS producers, each with a transaction open on its own partition of `topic`
    (the caller aborts them)."""
    from tests.support.txn_clients import open_transaction

    return [open_transaction(bootstrap, f"bench-txn-{p}", [(topic, p, b"open")]) for p in range(TRANSACTIONS)]


def pages(cluster_id: int, topics: int, groups: int) -> dict[str, str]:
    """Every list and detail page and its JSON twin."""
    c = f"/clusters/{cluster_id}"
    a = f"/api/clusters/{cluster_id}"
    topic = f"bench-{topics // 2:05d}"
    group = f"bench-group-{groups // 2:05d}"
    return {"topics": f"{c}/topics/", "topics api": f"{a}/topics",
            "topics search": f"{c}/topics/?q=bench-049&status=not_preferred",
            "brokers": f"{c}/brokers/", "brokers api": f"{a}/brokers",
            "one broker": f"{c}/brokers/0/", "one broker api": f"{a}/brokers/0",
            "one topic": f"{c}/topics/{topic}/", "one topic api": f"{a}/topics/{topic}",
            "topic consumers tab": f"{c}/topics/{topic}/consumers", "topic configs tab": f"{c}/topics/{topic}/configs",
            "overview": f"{c}/", "overview api": f"{a}/overview",
            "groups": f"{c}/groups/", "groups api": f"{a}/groups",
            "groups by lag": f"{c}/groups/?sort=lag&state=Empty", "groups by lag api": f"{a}/groups?sort=lag",
            "one group": f"{c}/groups/{group}/", "one group api": f"{a}/groups/{group}/",
            "topic consumers": f"{c}/groups/?topic={topic}", "topic consumers api": f"{a}/groups?topic={topic}",
            "transactions": f"{c}/transactions/", "transactions api": f"{a}/transactions",
            # Prometheus's scrape of every series (plain, and gzip as Prometheus asks for it).
            "metrics scrape": "/metrics", "metrics scrape gzip": "/metrics?gzip"}


def cpu_seconds(pid: int) -> float:
    """CPU time of this console process (all threads) plus the engine's, so that a figure can be
    read on a machine shared with other work: wall time there depends on the load."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return time.process_time() + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def setup_django(database: str, bootstrap: str) -> None:
    token = Path(database).parent / "engine" / "admin.token"     # the engine's admin token (CONTRACTS.md)
    os.environ.update(DATABASE_URL=f"sqlite:///{database}", ENGINE_BOOTSTRAP=bootstrap, ENGINE_ADMIN_TOKEN_FILE=str(token),
                      ALLOWED_HOSTS="testserver", DJANGO_SETTINGS_MODULE="console.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")   # DEBUG off, as in production
    os.environ.setdefault("CONSOLE_SECRET_METRICS_TOKEN", METRICS_TOKEN)   # /metrics on
    import django
    django.setup()


def measure(args) -> None:
    """Child mode: a fresh console process renders one URL `runs` times; prints JSON."""
    setup_django(args.database, args.bootstrap)
    from django.contrib.auth import get_user_model
    from django.test import Client

    from console.warmup import warm_up
    started = time.perf_counter()
    warm_up()     # what console/asgi.py does when the server starts, before it serves anything
    start_up = time.perf_counter() - started

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    times, cpu, collecting = [], [], 0
    profiler = None
    if args.profile_to:
        import cProfile
        profiler = cProfile.Profile()
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), cpu_seconds(args.engine_pid)
        if profiler:
            profiler.enable()
        response = client.get(args.measure, headers=scrape_headers(args.measure))
        # A streamed answer (/metrics) is timed until its last byte is read.
        content = b"".join(response.streaming_content) if response.streaming else response.content
        if profiler:
            profiler.disable()
        times.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds(args.engine_pid) - c0)
        assert response.status_code == 200, (args.measure, response.status_code, content[:500])
        collecting += b"being collected" in content     # answered before background data came in
        if args.measure.startswith("/metrics"):
            body = content
            if response.get("Content-Encoding") == "gzip":
                import gzip
                body = gzip.decompress(body)
            collecting += b"kafka_consumergroup_lag{" not in body    # no observation yet
            import re
            took = re.search(rb"^kafka_console_observation_duration_seconds\{[^}]*\} (\S+)$", body, re.M)
            scraped = {"bytes": len(body), "sent": int(response["Content-Length"]), "samples": body.count(b"\n")
                       - body.count(b"\n#"), "observation_s": float(took.group(1)) if took else None}
    if profiler:
        profiler.dump_stats(args.profile_to)
    figures = {"times": times, "cpu": cpu, "collecting": collecting, "start_up": start_up}
    if args.measure.startswith("/metrics"):
        figures["scrape"] = scraped
    print(json.dumps(figures))


def scrape_headers(url: str) -> dict:
    if not url.startswith("/metrics"):
        return {}
    headers = {"Authorization": f"Bearer {METRICS_TOKEN}"}
    if url.endswith("?gzip"):
        headers["Accept-Encoding"] = "gzip"
    return headers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--replication-factor", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="", help="measure only pages whose label contains this")
    parser.add_argument("--profile", default="", help="cProfile pages whose label contains this (prints top 25)")
    parser.add_argument("--no-browser", action="store_true", help="skip the first loads in Chromium")
    parser.add_argument("--keep", default="", help="keep the engine's data and the database in this directory, "
                                                   "and reuse them when they are there (skips creating the scale)")
    # child mode (one fresh console process per page)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--engine-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args)
        return

    from tests.support.engine_process import EngineProcess

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        reuse = bool(args.keep) and (Path(tmp) / "db.sqlite3").exists()
        started = time.perf_counter()
        engine = EngineProcess(Path(tmp) / "engine", brokers=args.brokers).start(timeout=600)
        try:
            database = f"{tmp}/db.sqlite3"
            setup_django(database, engine.bootstrap)
            from django.core.management import call_command

            from console.accounts.services import user_create
            from console.clusters.models import Cluster

            names = [f"bench-{i:05d}" for i in range(args.topics)]
            if reuse:
                call_command("migrate", verbosity=0)           # apps added since the data was made
                Cluster.objects.update(bootstrap_servers=engine.bootstrap)
                print(f"reused the engine and database in {tmp} (started in {time.perf_counter() - started:.1f} s)")
                run_pages(args, engine, database, pages(Cluster.objects.get().pk, args.topics, args.groups), tmp)
                return
            call_command("migrate", verbosity=0)
            user_create(username="bench", password="bench-password-1", role="viewer")
            cluster = Cluster.objects.get()
            started = time.perf_counter()
            create_topics(engine.bootstrap, names, args.replication_factor)
            print(f"engine: {args.brokers} brokers; created {args.topics} topics / {args.topics * PARTITIONS} "
                  f"partitions (RF {args.replication_factor}) in {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            create_groups(cluster, names, args.groups)
            print(f"created {args.groups} groups with {args.groups * TOPICS_PER_GROUP * PARTITIONS} committed "
                  f"offsets in {time.perf_counter() - started:.1f} s")
            run_pages(args, engine, database, pages(cluster.pk, args.topics, args.groups), tmp)
        finally:
            engine.terminate(timeout=300) if args.keep else engine.kill()


def run_pages(args, engine, database: str, urls: dict[str, str], tmp: str) -> None:
    producers = open_transactions(engine.bootstrap, f"bench-{args.topics // 2:05d}")
    try:
        measure_pages(args, engine, database, urls, tmp)
        if not args.no_browser:
            from benchmarks.chart_load import measure_chart_loads, print_chart_loads
            charts = {"brokers": (urls["brokers"], "broker-load-chart"),
                      "one topic": (urls["one topic"], "partition-messages-chart")}
            print_chart_loads(measure_chart_loads(dict(os.environ), charts, runs=args.runs, username="bench",
                                                  password="bench-password-1", scratch=Path(tmp)),
                              target_s=TARGET_S)
    finally:
        for producer in producers:
            producer.abort_transaction(60)


def measure_pages(args, engine, database: str, urls: dict[str, str], tmp: str) -> None:
    print(f"load average before the pages: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    print(f"\n{'page':<20} {'first':>8} {'median':>8} {'worst':>8} {'cpu 1st':>8} {'cpu med':>8} {'warm-up':>8}  "
          f"target: worst < {TARGET_S:.0f} s")
    slow = []
    for label, url in urls.items():
        if args.only and args.only not in label:
            continue
        profile_to = f"{tmp}/{label.replace(' ', '_')}.prof" if args.profile and args.profile in label else ""
        command = [sys.executable, __file__, "--measure", url, "--database", database, "--bootstrap",
                   engine.bootstrap, "--engine-pid", str(engine.process.pid), "--runs", str(args.runs)]
        if profile_to:
            command += ["--profile-to", profile_to]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode:
            print(f"{label:<20} failed: {done.stderr.strip().splitlines()[-1:]}")
            slow.append(label)
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        times, cpu = figures["times"], figures["cpu"]
        median = sorted(times)[len(times) // 2]
        verdict = "ok" if max(times) < TARGET_S else "SLOW"
        if verdict != "ok":
            slow.append(label)
        print(f"{label:<20} {times[0]:>7.3f}s {median:>7.3f}s {max(times):>7.3f}s {cpu[0]:>7.3f}s "
              f"{sorted(cpu)[len(cpu) // 2]:>7.3f}s {figures['start_up']:>7.3f}s  {verdict}", flush=True)
        if "scrape" in figures:
            s = figures["scrape"]
            took = f"{s['observation_s']:.1f} s" if s["observation_s"] is not None else "none yet"
            print(f"{'':<20} {s['samples']:,} samples, {s['bytes'] / 1e6:.1f} MB, {s['sent'] / 1e6:.1f} MB sent; "
                  f"the observation served took {took} (collected in the background, never by a scrape)")
        if verdict != "ok" or figures["collecting"]:   # e.g. runs that overlapped a background collection
            print(f"{'':<20} runs: {' '.join(f'{t:.2f}s' for t in times)}; cpu: {' '.join(f'{c:.2f}s' for c in cpu)}"
                  f"; {figures['collecting']} said their data was being collected")
        if profile_to:
            import pstats
            pstats.Stats(profile_to).sort_stats("cumulative").print_stats(25)
    print(f"\nload average after the pages: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("first: the first request of a fresh console process (one process per page, warmed up as"
          "\nconsole/asgi.py does at start, before it serves: code imported, templates compiled, the"
          "\ncluster's metadata, log dir sizes, groups' lag and open transactions fetched); median"
          "\nand worst of all runs, the first included; cpu 1st / med: CPU seconds of the first"
          "\nrequest and the median one,"
          "\nconsole and engine together (they overlap on two cores: on an idle machine wall time is"
          "\nabout that or less; on a loaded one, read the CPU columns); warm-up: that start-up's wall"
          "\ntime, before the first request (console/warmup.py; at most CONSOLE_WARMUP_WAIT_SECONDS).")
    print(f"{'every page under' if not slow else 'over'} {TARGET_S:.0f} s worst of {args.runs}"
          f"{'' if not slow else ': ' + ', '.join(slow)}")
    print("\npeers, same scale or smaller:")
    for line in PEERS:
        print("  " + line)


if __name__ == "__main__":
    main()
