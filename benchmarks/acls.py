"""Produce and fetch throughput with 10,000 ACLs against the same run with no authorizer.

Two 1-broker engines in the same run, identical but for the authorizer: each has a PLAINTEXT
listener for the clients (principal User:ANONYMOUS) and a SASL_PLAINTEXT one for the admin
that writes the ACLs. The authorized engine holds --acls bindings (literal and prefixed topics
and groups of 1,000 other principals, some DENYs among them) plus the ones that let ANONYMOUS
write and read `bench-*` through a prefix, so every Produce and Fetch is decided by a prefix
scan, not by a super-user shortcut. The same confluent-kafka producer and consumer (manual
assignment) as benchmarks/produce_consume.py run against both, in pairs (which goes first
alternates), --rounds times (made even); each pair's throughput ratio is taken, and their
geometric mean printed, with the engine process's own CPU time per record (from /proc: what
another process's load disturbs least on a shared machine). Then the decision itself is timed in-process: a
connection's cached answer, and an uncached StandardAuthorizer.authorize() with those ACLs.
Last, the console's ACL pages are timed with those ACLs (Django's test client, in this process).

    .venv/bin/python benchmarks/acls.py [--records N] [--rounds R] [--acls N]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,  # noqa: E402
                         ResourcePattern, ResourceType)

from benchmarks.produce_consume import consume, create_topic, produce  # noqa: E402
from engine.security import authorize  # noqa: E402
from engine.security.principal import ConnectionIdentity  # noqa: E402
from kafka_rules.acl_index import AclIndex  # noqa: E402
from kafka_rules.acls import ALLOW, CREATE, DENY, GROUP, LITERAL, PREFIXED, READ, TOPIC, WRITE, AclBinding  # noqa: E402
from kafka_rules.authorizer import StandardAuthorizer  # noqa: E402
from tests.support.engine_process import EngineProcess, free_port_range  # noqa: E402

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
LABELS = {0: "no authorizer", 1: "ACLs"}
TARGET_S = 1.0


def other_bindings(count: int, seed: int = 7) -> list[AclBinding]:
    """ACLs of other principals on other resources, literal and prefixed, about 1 in 10 a DENY."""
    rng = random.Random(seed)
    bindings = set()
    while len(bindings) < count:
        name = "".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 12)))
        bindings.add(AclBinding(rng.choice([TOPIC, TOPIC, GROUP]), f"{rng.choice(['app', 'svc', 'be', 'data'])}-{name}",
                                rng.choice([LITERAL, LITERAL, PREFIXED]), f"User:u{rng.randrange(1000)}", "*",
                                rng.choice([READ, WRITE]), DENY if rng.random() < 0.1 else ALLOW))
    return sorted(bindings, key=str)


def to_acl(b: AclBinding) -> ACL:
    return ACL(b.principal, b.host, ACLOperation(b.operation), ACLPermissionType(b.permission_type),
               ResourcePattern(ResourceType(b.resource_type), b.resource_name,
                               ACLResourcePatternType(b.pattern_type)))


def start_engine(directory: Path, *, authorized: bool) -> EngineProcess:
    directory.mkdir(parents=True, exist_ok=True)
    users = directory / "users.properties"
    users.write_text('user_admin="admin-secret"\n')
    port = free_port_range(2)
    configs = {"authorizer.class.name": AUTHORIZER, "super.users": "User:admin"} if authorized else {}
    engine = EngineProcess(directory / "data", brokers=1, admin=False, configs=configs, extra_args=[
        "--listener", f"CLIENTS=PLAINTEXT://127.0.0.1:{port}",
        "--listener", f"ADMIN=SASL_PLAINTEXT://127.0.0.1:{port + 1}",
        "--sasl-users-file", str(users), "--config", "sasl.enabled.mechanisms=PLAIN"])
    engine.port = port
    return engine.start(timeout=120)


def grant_acls(engine: EngineProcess, bindings: list[AclBinding]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{engine.port + 1}", security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="PLAIN", sasl_plain_username="admin", sasl_plain_password="admin-secret",
                             request_timeout_ms=120000)
    try:
        for start in range(0, len(bindings), 2000):
            result = admin.create_acls([to_acl(b) for b in bindings[start:start + 2000]])
            if result["failed"]:
                raise RuntimeError(f"CreateAcls refused {len(result['failed'])} bindings")
    finally:
        admin.close()


@dataclass
class Figures:
    produce: float                    # records/s
    fetch: float
    produce_cpu_us: float             # the engine process's CPU time per record (user + system)
    fetch_cpu_us: float


def cpu_seconds(pid: int) -> float:
    """A process's CPU time (robust to other processes' load): the sum of its threads' time on a
    CPU from /proc/<pid>/task/*/schedstat, in nanoseconds (/proc/<pid>/stat counts ticks of
    10 ms, too coarse for rounds of a second)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):    # a thread that ended meanwhile
            continue
    return total / 1e9


def run(engine: EngineProcess, topic: str, records: int, size: int) -> Figures:
    bootstrap = f"127.0.0.1:{engine.port}"
    create_topic(bootstrap, topic)
    pid = engine.process.pid
    before = cpu_seconds(pid)
    produced = produce(bootstrap, records, size, topic=topic)
    middle = cpu_seconds(pid)
    consumed, count = consume(bootstrap, topic)
    after = cpu_seconds(pid)
    return Figures(produced, consumed, (middle - before) / records * 1e6, (after - middle) / count * 1e6)


def time_decisions(bindings: list[AclBinding]) -> tuple[float, float, float]:
    """µs of: an uncached StandardAuthorizer.authorize() with these ACLs; the check a Produce
    handler makes for one topic (engine/security/authorize.authorize_topics, a connection's
    cached answer); the checks of a Fetch of 6 partitions. Timed in this process."""
    index = AclIndex()
    for b in bindings:
        index.add(str(uuid.uuid4()), b)
    authorizer = StandardAuthorizer(index)
    names = [f"bench-{i}" for i in range(1000)]
    start = time.perf_counter()
    for _ in range(20):
        for name in names:
            authorizer.authorize("User:ANONYMOUS", "127.0.0.1", WRITE, TOPIC, name)
    uncached = (time.perf_counter() - start) / (20 * len(names)) * 1e6
    ctx = SimpleNamespace(broker=SimpleNamespace(authorizer=authorizer), client_host="127.0.0.1",
                          identity=ConnectionIdentity(), kafka_principal="User:ANONYMOUS")
    rounds = 100_000
    start = time.perf_counter()
    for _ in range(rounds):
        authorize.authorize_topics(ctx, WRITE, ["bench-0"])
    produce_check = (time.perf_counter() - start) / rounds * 1e6
    start = time.perf_counter()
    for _ in range(rounds):
        for _ in range(6):
            authorize.authorize_topic(ctx, READ, "bench-0")
    return uncached, produce_check, (time.perf_counter() - start) / rounds * 1e6


def time_console_pages(engine: EngineProcess, directory: Path, runs: int = 5) -> None:
    """The console's ACL pages with these ACLs: each rendered `runs` times through Django's test
    client (selectors, the DescribeAcls round trip, the template), logged in as an admin; the
    first, median and worst times, next to the 1 s target."""
    os.environ.update(DJANGO_SETTINGS_MODULE="console.settings", DATABASE_URL=f"sqlite:///{directory / 'db.sqlite3'}",
                      CONSOLE_SECRET_BENCH_ADMIN="admin-secret", DEBUG="1")
    import django
    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from console.accounts.services import user_create
    from console.clusters.services import cluster_create

    setup_test_environment()
    call_command("migrate", verbosity=0)
    cluster = cluster_create(name="bench", bootstrap_servers=f"127.0.0.1:{engine.port + 1}",
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", sasl_username="admin",
                             sasl_password_env="CONSOLE_SECRET_BENCH_ADMIN")
    client = Client()
    client.force_login(user_create(username="bench", password="bench-password-1", role="admin"))
    pages = {"ACLs, first page (sorted by principal)": (reverse("acls:list", args=[cluster.pk]), {}),
             "ACLs, filtered (a principal)": (reverse("acls:list", args=[cluster.pk]), {"principal": "u42"}),
             "ACLs, sorted by name, last page": (reverse("acls:list", args=[cluster.pk]),
                                                 {"sort": "resource_name", "desc": "1", "page": "100"}),
             "ACLs as CSV (all)": (reverse("acls:export", args=[cluster.pk]), {}),
             "A principal's permissions": (reverse("acls:principal", args=[cluster.pk]),
                                           {"principal": "User:ANONYMOUS", "host": "*"}),
             "ACLs JSON API": (reverse("api:acls", args=[cluster.pk]), {})}
    print(f"Console pages with these ACLs ({runs} runs each; target < {TARGET_S:.0f} s):")
    for label, (url, query) in pages.items():
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            response = client.get(url, query)
            times.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{label}: HTTP {response.status_code}")
        print(f"  {label:>40}: first {times[0]:.2f} s, median {statistics.median(times):.2f} s, "
              f"worst {max(times):.2f} s")


def print_ratios(pairs: list[tuple[Figures, Figures]]) -> None:
    """ACLs / no authorizer: the geometric mean of the pairs' ratios (as many pairs with either
    engine first, so an advantage of going first cancels out), and that mean for each order."""
    mean = statistics.geometric_mean

    def ratios(chosen):
        return (f"produce {mean(a.produce / b.produce for b, a in chosen):.3f}x, "
                f"fetch {mean(a.fetch / b.fetch for b, a in chosen):.3f}x")
    print(f"{'ACLs / no authorizer':>23}: throughput, geometric mean of the {len(pairs)} pairs' ratios: "
          f"{ratios(pairs)}")
    print(f"{'':>23}  (no authorizer first: {ratios(pairs[0::2])}; ACLs first: {ratios(pairs[1::2])})")
    print(f"{'':>23}  engine CPU per record, no authorizer / ACLs: "
          f"produce {mean(b.produce_cpu_us / a.produce_cpu_us for b, a in pairs):.3f}x, "
          f"fetch {mean(b.fetch_cpu_us / a.fetch_cpu_us for b, a in pairs):.3f}x (1.0: the same cost)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--acls", type=int, default=10_000)
    parser.add_argument("--no-console", action="store_true", help="skip the console pages' times")
    args = parser.parse_args()
    args.rounds += args.rounds % 2          # as many pairs with either engine first
    ours = [AclBinding(TOPIC, "bench-", PREFIXED, "User:ANONYMOUS", "*", op, ALLOW) for op in (CREATE, READ, WRITE)]
    ours.append(AclBinding(GROUP, "bench", LITERAL, "User:ANONYMOUS", "*", READ, ALLOW))   # the consumer's group.id
    bindings = other_bindings(args.acls - len(ours)) + ours
    print(f"{args.records:,} records of {args.size} bytes, acks=1, confluent-kafka; {len(bindings):,} ACLs "
          f"({sum(b.permission_type == DENY for b in bindings):,} DENY, "
          f"{sum(b.pattern_type == PREFIXED for b in bindings):,} prefixed); {args.rounds} rounds")
    LABELS[1] = f"{len(bindings):,} ACLs"
    pairs: list[tuple[Figures, Figures]] = []
    with tempfile.TemporaryDirectory(prefix="bench-acls-") as tmp:
        plain = start_engine(Path(tmp) / "plain", authorized=False)
        guarded = start_engine(Path(tmp) / "guarded", authorized=True)
        try:
            started = time.perf_counter()
            grant_acls(guarded, bindings)
            print(f"CreateAcls of {len(bindings):,} bindings (5 requests): {time.perf_counter() - started:.2f} s")
            for round_ in range(args.rounds):
                # ABBA: which engine goes first alternates (an even number of rounds), so
                # neither a drift in the machine's load nor going first favours one.
                order = [(0, plain), (1, guarded)] if round_ % 2 == 0 else [(1, guarded), (0, plain)]
                pair = {}
                for index, engine in order:
                    pair[index] = run(engine, f"bench-{round_}", args.records, args.size)
                    f = pair[index]
                    print(f"{LABELS[index]:>15}: produce {f.produce:>10,.0f} rec/s ({f.produce_cpu_us:.2f} µs CPU/rec)"
                          f"   fetch {f.fetch:>10,.0f} rec/s ({f.fetch_cpu_us:.2f} µs CPU/rec)", flush=True)
                pairs.append((pair[0], pair[1]))
            if not args.no_console:
                time_console_pages(guarded, Path(tmp))
        finally:
            for engine in (plain, guarded):
                engine.terminate(timeout=120)
    median = statistics.median
    for index, label in LABELS.items():
        runs = [pair[index] for pair in pairs]
        print(f"{label + ', median':>23}: produce {median(f.produce for f in runs):>10,.0f} rec/s "
              f"({median(f.produce_cpu_us for f in runs):.2f} µs CPU/rec)   fetch "
              f"{median(f.fetch for f in runs):>10,.0f} rec/s ({median(f.fetch_cpu_us for f in runs):.2f} µs CPU/rec)")
    print_ratios(pairs)
    uncached, produce_check, fetch_check = time_decisions(bindings)
    print(f"with {len(bindings):,} ACLs: one uncached decision {uncached:.1f} µs (StandardAuthorizer); a Produce "
          f"request's check {produce_check:.2f} µs and a 6-partition Fetch's {fetch_check:.2f} µs (a connection's "
          "cached answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
