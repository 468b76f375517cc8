"""Exactly-once consume-transform-produce with kafkajs (`producer.transaction()`, `sendOffsets`)
and a read_committed consumer, run by node (tests/clients/kafkajs/eos_pipeline.js), with one
transaction aborted half-way; once on a steady engine, once with the engine killed with SIGKILL
and restarted at two random points.

kafkajs 2.2.4 (its latest release) can lock up node after a broker restart: when its consumer stops
(disconnect, or the restart after a crash) while its fetch manager is re-creating its fetchers for a
changed broker pool, the new fetchers spin in microtasks on the stopped runner's empty fetches, and
no timer or socket is served again (see eos_pipeline.js). That is kafkajs's bug, not the engine's:
every engine answer in the log before it is one Kafka gives. So the pipeline exits without
disconnecting its consumer, and the kill test restarts a pipeline that prints nothing for
`LIVENESS_S` (90 s), as a liveness probe restarts a stuck kafkajs service; the restarted pipeline resumes
from the group's committed offsets, and exactly-once is asserted on the output and offsets.
kafkajs 2.2.4 can also write a batch twice in one transaction when a send() to several brokers is
retried after a broker restart (it resends partitions already acknowledged, with new sequence
numbers); the pipeline sends one partition per send(), which kafkajs retries with the same
sequence numbers, so the engine's idempotence drops the repeat. kafkajs's connect() sends no
transactional InitProducerId (the first transaction() does), so a replacement producer starts one
before the pipeline reads the committed offsets to decide whether a failed transaction committed."""
from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.eos import duplicates_and_missing, read_committed
from tests.support.groups import create_topic
from tests.support.transactions import TXN_TEST_CONFIGS

RECORDS = 20_000
PARTITIONS = 3
KAFKAJS = Path(__file__).resolve().parents[2] / "clients" / "kafkajs"
LIVENESS_S = 90         # a pipeline silent this long is stuck (a liveness probe, not a performance limit)


def _kafkajs_installed() -> None:
    if not (KAFKAJS / "node_modules" / "kafkajs").exists():   # `make test` installs it; a bare pytest too
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=KAFKAJS, check=True, timeout=300,
                       capture_output=True)


def test_kafkajs_exactly_once_pipeline(txn_cluster, tmp_path):
    _kafkajs_installed()
    _produce_input(txn_cluster.bootstrap, "js")
    errors = tmp_path / "node.stderr"       # a file: kafkajs's log (KAFKAJS_LOG=info) must never block it
    node = subprocess.Popen(["node", "eos_pipeline.js", txn_cluster.bootstrap, "js-in", "js-out", "js-group",
                             str(RECORDS)], cwd=KAFKAJS, stdout=subprocess.PIPE, stderr=errors.open("w"), text=True)
    timer = threading.Timer(240, node.kill)     # a bound for a hung pipeline, not a performance limit
    timer.start()
    lines = [line.strip() for line in node.stdout]
    node.wait()
    timer.cancel()
    assert node.returncode == 0, errors.read_text()[-3000:]
    outcome = json.loads(lines[-1])
    assert (outcome["done"], outcome["aborted"]) == (RECORDS, 1), outcome
    _assert_exactly_once(txn_cluster.bootstrap, "js")


def test_kafkajs_exactly_once_survives_kill_9(engine_factory, tmp_path):
    _kafkajs_installed()
    engine = engine_factory(brokers=3, configs=TXN_TEST_CONFIGS)
    _produce_input(engine.bootstrap, "k9")
    seed = int(os.environ.get("EOS_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    kill_points = sorted(rng.sample(range(RECORDS // 5, RECORDS * 3 // 5), 2))   # well before the end
    outcomes, restarts, seen = [], 0, []
    deadline = time.monotonic() + 400       # a bound for a hung test, not a performance limit
    while not outcomes:
        node, lines = _start_pipeline(engine.bootstrap, "k9", tmp_path / f"node{restarts}.stderr")
        while True:
            try:
                line = lines.get(timeout=LIVENESS_S)
            except queue.Empty:         # stuck (the kafkajs lock-up): restart it, as a liveness probe would
                node.kill()
                node.wait()
                restarts += 1
                break
            if line is None:
                node.wait()
                assert node.returncode == 0, (seed, (tmp_path / f"node{restarts}.stderr").read_text()[-3000:])
                break
            seen.append(line)
            if line.startswith("progress ") and kill_points and int(line.split()[1]) >= kill_points[0]:
                kill_points.pop(0)
                time.sleep(rng.random() * 0.3)      # somewhere inside the next transaction
                engine.kill()
                engine.start()
            elif line.startswith("{"):
                outcomes.append(json.loads(line))
        assert restarts <= 3 and time.monotonic() < deadline, f"seed {seed}: {restarts} restarts"
    assert not kill_points and outcomes[0]["done"] == RECORDS, (seed, kill_points, outcomes, seen[-20:])
    _assert_exactly_once(engine.bootstrap, "k9")
    print(f"seed {seed}: {outcomes[0]}, {restarts} pipeline restarts")


def _produce_input(bootstrap: str, prefix: str) -> None:
    create_topic(bootstrap, f"{prefix}-in", PARTITIONS, replication=3)
    create_topic(bootstrap, f"{prefix}-out", PARTITIONS, replication=3)
    # small input batches: a fetch returns whole batches, so these bound the pipeline's steps
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 16384})
    for i in range(RECORDS):
        producer.produce(f"{prefix}-in", key=b"%d" % (i % 97), value=b"%d" % i)
        if i % 5000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def _start_pipeline(bootstrap: str, prefix: str, errors: Path) -> tuple[subprocess.Popen, queue.Queue]:
    """Starts node's pipeline; its stdout lines arrive on the queue, then None at the end."""
    node = subprocess.Popen(["node", "eos_pipeline.js", bootstrap, f"{prefix}-in", f"{prefix}-out",
                             f"{prefix}-group", str(RECORDS)], cwd=KAFKAJS, stdout=subprocess.PIPE,
                            stderr=errors.open("w"), text=True)
    lines: queue.Queue = queue.Queue()

    def read():
        for line in node.stdout:
            lines.put(line.strip())
        lines.put(None)
    threading.Thread(target=read, daemon=True).start()
    return node, lines


def _assert_exactly_once(bootstrap: str, prefix: str) -> None:
    """Every input record exactly once in the output, and the committed offsets at the input's end."""
    values = read_committed(bootstrap, f"{prefix}-out", PARTITIONS)
    duplicated, missing = duplicates_and_missing(values, {b"%d" % i for i in range(RECORDS)})
    assert (len(values), len(duplicated), missing) == (RECORDS, 0, 0)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-group"})
    topic = f"{prefix}-in"
    committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
    ends = [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(PARTITIONS)]
    consumer.close()
    assert [tp.offset for tp in committed] == ends and sum(ends) == RECORDS
