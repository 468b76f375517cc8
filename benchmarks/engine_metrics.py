"""What the engine's metrics cost produce throughput, in the same run:

- **counting off**: the engine with its metric hooks replaced by empty functions (a
  `sitecustomize` in the engine's PYTHONPATH; the calls themselves stay), no metrics port;
- **counting**: the engine as shipped, no metrics port;
- **counting + scraped**: `--metrics-port`, every broker scraped once a second (Prometheus
  scrapes every 15-60 s: this is the heavy end) while the producer runs.

Each is confluent-kafka producing N records of 100 bytes, acks=1, to 6 partitions of a
3-broker engine (one process), in rounds that alternate the three, so that a drift of the
machine hits them alike. Prints each round, the median records/s of each and their ratios.

    .venv/bin/python benchmarks/engine_metrics.py [--records 300000] [--rounds 3]

First, the hooks' worst case, measured on CPU rather than throughput (throughput on a shared
machine moves by more than the hooks cost): one record per Produce request, the engine's CPU
per request beside the hooks' cost per request (timeit), and one scrape's CPU.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.produce_consume import create_topic, produce  # noqa: E402
from tests.support.engine_process import EngineProcess, free_port_range  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NO_COUNTING = """
from engine.metrics import stats
def _nothing(*args, **kwargs):
    return None
for name in ("produced", "fetched", "handled", "completed"):
    setattr(stats.BrokerStats, name, _nothing)
stats.log_flushed = _nothing
"""


def run(variant: str, records: int, work: Path) -> float:
    env_before = os.environ.get("PYTHONPATH")
    extra = []
    if variant == "counting off":
        site = work / "no-counting"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(NO_COUNTING)
        os.environ["PYTHONPATH"] = f"{site}:{ROOT}"
    metrics_port = None
    if variant == "counting + scraped":
        metrics_port = free_port_range(3)
        extra = ["--metrics-port", str(metrics_port)]
    engine = EngineProcess(Path(tempfile.mkdtemp(dir=work)) / "data", brokers=3, extra_args=extra).start()
    if env_before is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = env_before
    stop = threading.Event()
    scrapes = [0]

    def scrape_every_second() -> None:
        while not stop.wait(1.0):
            for b in range(3):
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port + b}/metrics", timeout=10) as r:
                    r.read()
                scrapes[0] += 1
    scraper = threading.Thread(target=scrape_every_second, daemon=True) if metrics_port else None
    try:
        create_topic(engine.bootstrap, "bench", replication=1)
        if scraper:
            scraper.start()
        cpu_before = engine_cpu(engine.process.pid)
        rate = produce(engine.bootstrap, records, 100, topic="bench")
        cpu = engine_cpu(engine.process.pid) - cpu_before
        if metrics_port:
            stop.set()
            scraper.join(15)
            PER_REQUEST.append((cpu, produce_requests(metrics_port)))
    finally:
        stop.set()
        if scraper:
            scraper.join(15)
        engine.terminate()
    note = f" ({scrapes[0]} scrapes)" if scraper else ""
    print(f"  {variant:>20}: {rate:>10,.0f} records/s, engine {cpu:.1f} CPU-s{note}", flush=True)
    return rate


PER_REQUEST: list[tuple[float, int]] = []     # (engine CPU-s, Produce requests) of the scraped runs


def engine_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_requests(metrics_port: int) -> int:
    """Produce requests handled by all brokers (from their own metrics)."""
    from prometheus_client.parser import text_string_to_metric_families
    requests = 0
    for b in range(3):
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port + b}/metrics", timeout=10) as r:
            for family in text_string_to_metric_families(r.read().decode()):
                for s in family.samples:
                    if s.name == "kafka_network_requestmetrics_requests_total" and s.labels["request"] == "Produce":
                        requests += int(s.value)
    return requests


def hook_cost_per_request(batches_per_request: float) -> float:
    """CPU seconds the hooks of one Produce request cost: `produced` per batch, `handled`,
    `completed`, and the four clock reads that time the request (CPU time, as the engine's is:
    on a shared machine wall time also counts the other processes' turns)."""
    import timeit
    from engine.metrics.stats import BrokerStats
    stats = BrokerStats()
    calls = 200_000

    def cost(fn) -> float:
        return min(timeit.repeat(fn, number=calls, repeat=3, timer=time.process_time)) / calls
    empty = cost(lambda: None)        # the lambda's own call
    produced = cost(lambda: stats.produced("bench", 100, 10_000)) - empty
    handled = cost(lambda: stats.handled(0, 9, 0.01, 0)) - empty
    completed = cost(lambda: stats.completed(0, 0.5)) - empty
    clock = cost(time.perf_counter) - empty
    return batches_per_request * produced + handled + completed + 4 * clock


def small_requests_and_scrapes(work: Path, records: int = 20_000, scrapes: int = 20) -> None:
    """The hooks' worst case: one record per Produce request (linger.ms=0, batch.num.messages=1),
    the engine's CPU per request against the hooks' cost per request; then what one scrape of a
    broker costs the engine's event loop."""
    from confluent_kafka import Producer

    port = free_port_range(3)
    engine = EngineProcess(Path(tempfile.mkdtemp(dir=work)) / "data", brokers=3,
                           extra_args=["--metrics-port", str(port)]).start()
    try:
        create_topic(engine.bootstrap, "small", replication=1)
        producer = Producer({"bootstrap.servers": engine.bootstrap, "acks": 1, "linger.ms": 0,
                             "batch.num.messages": 1, "enable.idempotence": False})
        before = engine_cpu(engine.process.pid)
        requests_before = produce_requests(port)
        for i in range(records):
            producer.produce("small", value=b"x" * 100, partition=i % 6)
            producer.poll(0)
            if i % 100 == 99:
                producer.flush(30)
        producer.flush(60)
        cpu = engine_cpu(engine.process.pid) - before
        requests = produce_requests(port) - requests_before
        hooks = hook_cost_per_request(batches_per_request=1.0)
        per_request = cpu / max(requests, 1)
        print(f"one record per request: {requests:,} Produce requests, the engine spent {per_request * 1e6:,.0f} us "
              f"of CPU each; the hooks {hooks * 1e6:.2f} us ({hooks / per_request * 100:.2f} %)")
        before = engine_cpu(engine.process.pid)
        size = 0
        for _ in range(scrapes):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                size = len(r.read())
        per_scrape = (engine_cpu(engine.process.pid) - before) / scrapes
        print(f"one scrape of a broker ({size:,} bytes): {per_scrape * 1000:.1f} ms of the engine's CPU, "
              f"{per_scrape / 15 * 100:.3f} % of its loop at Prometheus's 15 s interval")
    finally:
        engine.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    variants = ("counting off", "counting", "counting + scraped")
    rates: dict[str, list[float]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        small_requests_and_scrapes(Path(tmp))
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}:", flush=True)
            order = variants if round_no % 2 == 0 else tuple(reversed(variants))
            for variant in order:
                rates[variant].append(run(variant, args.records, Path(tmp)))
    if PER_REQUEST:
        cpu, requests = PER_REQUEST[-1]
        per_request_cpu = cpu / max(requests, 1)
        # A request carries at most one batch per partition its broker leads: 6 partitions on 3 brokers.
        hooks = hook_cost_per_request(batches_per_request=2.0)
        print(f"\nper Produce request: the engine spent {per_request_cpu * 1e6:,.0f} us of CPU "
              f"({requests:,} requests); its metric hooks cost {hooks * 1e6:.2f} us "
              f"({hooks / per_request_cpu * 100:.2f} % of it, timeit on this machine)")
    base = statistics.median(rates["counting off"])
    print(f"\nmedian of {args.rounds} rounds, {args.records:,} records of 100 bytes, acks=1, 3 brokers:")
    for variant in variants:
        median = statistics.median(rates[variant])
        print(f"  {variant:>20}: {median:>10,.0f} records/s   {median / base:.3f} of counting off "
              f"({(1 - median / base) * 100:+.1f}% cost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
