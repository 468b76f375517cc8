"""A bounded fuzz of every API and version the engine serves, run in CI.

About 20,000 mutated frames (lengths, counts, nulls, varints, bytes) from 8 connections, for
at most 60 s, while a well-behaved client produces and fetches on its own connection.
Afterwards: the engine is up, the client was served every time, RSS stayed bounded, every
reply decoded as the API and version asked (or the connection was closed), and the log
holds no traceback. `benchmarks/fuzz.py` runs the same for 1M frames.
"""
import asyncio
import os
import threading
import time
import uuid

import pytest

import engine.protocol.apis  # noqa: F401 - registers the handlers, so the registry lists every API
from engine.protocol import registry
from tests.engine.protocol.test_bad_input import build_batch, create_topic, fetch_all, produce
from tests.support import fuzz
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient

FUZZ_CONFIGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "1",
                "offsets.topic.num.partitions": "3", "max.partitions": "2000"}
RSS_GROWTH_LIMIT = 512 * 1024 * 1024


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


class Canary(threading.Thread):
    """A well-behaved client: produce one batch, fetch the partition back, again and again."""

    def __init__(self, port: int, topic: str, pid: int) -> None:
        super().__init__(daemon=True)
        self.port, self.topic, self.pid = port, topic, pid
        self.served, self.failures, self.rss = 0, [], []
        self.stopping = threading.Event()

    def run(self) -> None:
        client = RawClient(self.port, timeout=30)
        try:
            while not self.stopping.is_set():
                try:
                    assert produce(client, self.topic, bytes(build_batch([b"canary"]))) == 0
                    assert fetch_all(client, self.topic).count(b"canary") == self.served + 1
                    self.served += 1
                except Exception as exc:  # noqa: BLE001 - recorded, asserted by the test
                    self.failures.append(repr(exc))
                    client.close()
                    client = RawClient(self.port, timeout=30)
                self.rss.append(rss_bytes(self.pid))
                time.sleep(0.05)
        finally:
            client.close()


@pytest.fixture(scope="module")
def fuzz_engine(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("fuzz") / "data", brokers=1, admin=False,
                           configs=FUZZ_CONFIGS).start()
    yield engine
    engine.kill()


def test_mutated_requests_of_every_api_get_an_answer_or_a_closed_connection(fuzz_engine):
    port, pid = fuzz_engine.ports[0], fuzz_engine.process.pid
    topic = f"canary-{uuid.uuid4().hex[:8]}"
    setup = RawClient(port)
    try:
        assert create_topic(setup, topic) == 0
    finally:
        setup.close()
    log_start = fuzz_engine.log_path.stat().st_size
    rss_before = rss_bytes(pid)
    canary = Canary(port, topic, pid)
    canary.start()
    plan = fuzz.templates(registry.all_apis())
    try:
        outcomes = asyncio.run(fuzz.run(port, plan, frames=20_000, seconds=60, connections=8, seed=10))
    finally:
        canary.stopping.set()
        canary.join(60)

    assert fuzz_engine.alive()
    assert outcomes.counts["timeout"] == 0 and outcomes.counts["bad_reply"] == 0, [b[:3] for b in outcomes.bad]
    assert outcomes.counts["closed"] > 0 and outcomes.counts["reply"] > 0, outcomes.counts
    assert {(t.api_key, t.version) for t in plan} <= set(outcomes.per_api)      # every API and version tried
    assert canary.failures == [] and canary.served > 0
    assert max(canary.rss) - rss_before < RSS_GROWTH_LIMIT
    with open(fuzz_engine.log_path, "rb") as log:
        log.seek(log_start)
        text = log.read().decode(errors="replace")
    assert "Traceback" not in text
    assert "INVALID_REQUEST" in text          # rule breaks were refused, logged as one line each
    print(f"\nfuzz: {outcomes.frames} frames, {dict(outcomes.counts)}, canary served {canary.served} times, "
          f"RSS {rss_before >> 20} -> {max(canary.rss) >> 20} MiB")
