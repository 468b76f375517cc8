"""A bounded fuzz of every API and version the engine serves, run in CI.

About 20,000 mutated frames (lengths, counts, nulls, varints, bytes) from 8 connections, for
at most 60 s, while a well-behaved client produces and fetches on its own connection.
Afterwards: the engine is up, the client was served every time, RSS stayed bounded, every
reply decoded as the API and version asked (or the connection was closed), and the log
holds no traceback. `benchmarks/fuzz.py` runs the same for 1M frames.

Then records inside compressed batches (tests/support/record_fuzz.py: varints and lengths
mutated before compressing, compressed bytes mutated, trailers), for 20 s, into a compacted
topic, while offsets are committed and a partition poisoned on disk sits beside them: every
request is answered, what is taken reads back whole, and the cleaner keeps cleaning every
other partition, `__consumer_offsets` included.
"""
import asyncio
import os
import threading
import time
import uuid

import pytest

from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.record.default_records import DefaultRecordBatch

import engine.protocol.apis  # noqa: F401 - registers the handlers, so the registry lists every API
from engine.coordinator.group_store import OFFSETS_TOPIC, partition_for
from engine.protocol import registry
from engine.protocol.configs import UNCLEANABLE_PARTITIONS
from engine.storage.records import iter_batches
from tests.engine.protocol.admin_support import admin_client, broker_configs
from tests.engine.protocol.test_bad_input import build_batch, create_topic, fetch_all, produce
from tests.engine.protocol.test_compaction import read_from_zero
from tests.support import fuzz, record_fuzz
from tests.support.engine_process import EngineProcess
from tests.support.groups import GroupClient, create_topic as create_compacted
from tests.support.planted_batches import COMPACTED, POISON_CONFIGS
from tests.support.raw_client import RawClient
from tests.support.sasl import ADMIN, ADMIN_PASSWORD, authenticate, handshake, start_sasl_engine
from tests.support.waiting import wait_until

FUZZ_CONFIGS = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "1",
                "offsets.topic.num.partitions": "3", "max.partitions": "2000"}
RSS_GROWTH_LIMIT = 512 * 1024 * 1024
# Before the login no frame may exceed sasl.server.max.receive.size (512 KiB).
PRE_LOGIN_RSS_GROWTH_LIMIT = 64 * 1024 * 1024


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

    def connect(self) -> RawClient:
        return RawClient(self.port, timeout=30)

    def run(self) -> None:
        client = self.connect()
        try:
            while not self.stopping.is_set():
                try:
                    assert produce(client, self.topic, bytes(build_batch([b"canary"]))) == 0
                    assert fetch_all(client, self.topic).count(b"canary") == self.served + 1
                    self.served += 1
                except Exception as exc:  # noqa: BLE001 - recorded, asserted by the test
                    self.failures.append(repr(exc))
                    client.close()
                    client = self.connect()
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


class LoggedInCanary(Canary):
    """The well-behaved client of a SASL listener: it logs in first (PLAIN)."""

    def connect(self) -> RawClient:
        client = RawClient(self.port, timeout=30)
        assert handshake(client, "PLAIN").error_code == 0
        assert authenticate(client, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
        return client


@pytest.fixture(scope="module")
def sasl_fuzz_engine(tmp_path_factory):
    engine = start_sasl_engine(tmp_path_factory.mktemp("sasl-fuzz"), brokers=1)
    yield engine
    engine.kill()


def test_mutated_frames_before_the_sasl_login_get_an_answer_or_a_closed_connection(sasl_fuzz_engine):
    """Unauthenticated connections of a SASL listener: mutated requests of every API, mutated
    SaslAuthenticate frames and bare tokens after a good handshake, and size prefixes over
    sasl.server.max.receive.size; a logged-in client produces and fetches meanwhile."""
    port, pid = sasl_fuzz_engine.ports[0], sasl_fuzz_engine.process.pid
    topic = f"canary-{uuid.uuid4().hex[:8]}"
    canary = LoggedInCanary(port, topic, pid)
    setup = canary.connect()
    try:
        assert create_topic(setup, topic) == 0
    finally:
        setup.close()
    log_start = sasl_fuzz_engine.log_path.stat().st_size
    rss_before = rss_bytes(pid)
    canary.start()
    plan = fuzz.templates(registry.all_apis())
    try:
        outcomes = asyncio.run(fuzz.run_before_login(port, plan, frames=3000, seconds=30, connections=8, seed=11,
                                                     mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")))
    finally:
        canary.stopping.set()
        canary.join(60)

    assert sasl_fuzz_engine.alive()
    assert outcomes.counts["timeout"] == 0 and outcomes.counts["bad_reply"] == 0, outcomes.bad[:10]
    assert outcomes.counts["closed"] > 0 and outcomes.counts["reply"] > 0, outcomes.counts
    assert canary.failures == [] and canary.served > 0
    assert max(canary.rss) - rss_before < PRE_LOGIN_RSS_GROWTH_LIMIT
    with open(sasl_fuzz_engine.log_path, "rb") as log:
        log.seek(log_start)
        text = log.read().decode(errors="replace")
    assert "Traceback" not in text
    assert "sasl.server.max.receive.size, before authentication" in text
    print(f"\npre-login fuzz: {outcomes.frames} connections, {dict(outcomes.counts)}, canary served {canary.served} "
          f"times, RSS {rss_before >> 20} -> {max(canary.rss) >> 20} MiB")


# --- records inside compressed batches, while compacted topics are cleaned -------------------

def every_record(port: int, topic: str, partition: int) -> int:
    """Read the partition from its start with kafka.record (pure Python, the strictest reader
    here); every record must decode. Returns how many there were."""
    client = RawClient(port, timeout=30)
    count, offset = 0, 0
    try:
        while True:
            data = fetch_from(client, topic, partition, offset)
            if data.error_code == 1:                         # compacted past it meanwhile
                offset = data.log_start_offset
                continue
            assert data.error_code == 0
            records = bytes(data.records or b"")
            if not records:
                return count
            for position, header in iter_batches(records):
                count += sum(1 for _ in DefaultRecordBatch(records[position:position + header.size]))
                offset = header.next_offset
    finally:
        client.close()


def fetch_from(client: RawClient, topic: str, partition: int, offset: int):
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic=topic, partitions=[F.FetchPartition(
                               partition=partition, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                               partition_max_bytes=1 << 22)])], forgotten_topics_data=[], rack_id="")
    return client.request(request, 11, FetchResponse).responses[0].partitions[0]


def test_mutated_records_inside_compressed_batches_while_compacted_topics_are_cleaned(poisoned_engine):
    poisoned = poisoned_engine
    engine = poisoned.engine
    port, topic = engine.ports[0], "record-fuzz"
    create_compacted(engine.bootstrap, topic, 2, configs=COMPACTED)
    log_start = engine.log_path.stat().st_size
    committer = GroupClient(engine, "fuzz-offsets")
    stopping, commits = threading.Event(), []

    def commit_offsets():      # __consumer_offsets gets dirty meanwhile: the cleaner must keep up with it
        while not stopping.is_set():
            commits.append(committer.commit({(poisoned.healthy, 0): len(commits) + 1}))
            time.sleep(0.02)
    thread = threading.Thread(target=commit_offsets, daemon=True)
    thread.start()
    try:
        outcomes = asyncio.run(record_fuzz.run(port, topic, 2, seconds=20, connections=4, seed=23))
    finally:
        stopping.set()
        thread.join(30)
        committer.close()

    assert engine.alive() and outcomes.bad == [], outcomes.bad[:3]
    answers = outcomes.answers
    assert answers[("valid", 0)] > 0 and answers[("records", 87)] > 0 and answers[("trailer", 2)] > 0, answers
    assert all(c == {(poisoned.healthy, 0): 0} for c in commits) and len(commits) > 50
    # What was taken reads back whole, with the strictest reader, and the cleaner reads it too:
    # the only partition it gave up on is the one poisoned on disk before the run.
    taken = sum(every_record(port, topic, p) for p in (0, 1))
    assert taken > 0
    shard = partition_for("fuzz-offsets", int(POISON_CONFIGS["offsets.topic.num.partitions"]))
    wait_until(lambda: len([r for r in read_from_zero(engine.bootstrap, OFFSETS_TOPIC, shard)
                            if b"fuzz-offsets" in r[1]]) < len(commits) // 2, message="__consumer_offsets cleaned")
    for partition in (0, 1):
        wait_until(lambda: len(read_from_zero(engine.bootstrap, poisoned.healthy, partition)) < 30,
                   message=f"{poisoned.healthy}-{partition} cleaned")
    admin = admin_client(engine.bootstrap)
    try:
        assert broker_configs(admin, 0)[UNCLEANABLE_PARTITIONS]["value"] == f"{poisoned.topic}-0"
    finally:
        admin.close()
    with open(engine.log_path, "rb") as log:
        log.seek(log_start)
        assert "Traceback" not in log.read().decode(errors="replace")
    print(f"\nrecord fuzz: {outcomes.requests} produce requests, {dict(answers)}, {taken} records taken and read back, "
          f"{len(commits)} offset commits")
