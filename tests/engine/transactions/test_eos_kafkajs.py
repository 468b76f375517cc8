"""Exactly-once consume-transform-produce with kafkajs (`producer.transaction()`, `sendOffsets`)
and a read_committed consumer, run by node (tests/clients/kafkajs/eos_pipeline.js), with one
transaction aborted half-way and the engine killed with SIGKILL and restarted at a random point."""
from __future__ import annotations

import json
import random
import subprocess
import threading
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.eos import duplicates_and_missing, read_committed
from tests.support.groups import create_topic
from tests.support.transactions import TXN_TEST_CONFIGS

RECORDS = 20_000
PARTITIONS = 3
KAFKAJS = Path(__file__).resolve().parents[2] / "clients" / "kafkajs"


def _kafkajs_installed() -> None:
    if not (KAFKAJS / "node_modules" / "kafkajs").exists():   # `make test` installs it; a bare pytest too
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=KAFKAJS, check=True, timeout=300,
                       capture_output=True)


def test_kafkajs_exactly_once_pipeline(engine_factory):
    txn_cluster = engine_factory(brokers=3, configs=TXN_TEST_CONFIGS)
    _kafkajs_installed()
    create_topic(txn_cluster.bootstrap, "js-in", PARTITIONS, replication=3)
    create_topic(txn_cluster.bootstrap, "js-out", PARTITIONS, replication=3)
    producer = Producer({"bootstrap.servers": txn_cluster.bootstrap, "linger.ms": 20})
    for i in range(RECORDS):
        producer.produce("js-in", key=b"%d" % (i % 97), value=b"%d" % i)
        if i % 5000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0

    kill_at = random.randrange(RECORDS // 5, RECORDS // 2)
    node = subprocess.Popen(["node", "eos_pipeline.js", txn_cluster.bootstrap, "js-in", "js-out", "js-group",
                             str(RECORDS)], cwd=KAFKAJS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(240, node.kill)     # a bound for a hung pipeline, not a performance limit
    timer.start()
    lines, killed_at = [], None
    for line in node.stdout:
        lines.append(line.strip())
        if killed_at is None and line.startswith("progress ") and int(line.split()[1]) >= kill_at:
            txn_cluster.kill()
            killed_at = int(line.split()[1])
            txn_cluster.start()
    node.wait()
    timer.cancel()
    assert node.returncode == 0, node.stderr.read()[-3000:]
    outcome = json.loads(lines[-1])
    assert killed_at is not None and killed_at < RECORDS, f"kill at {kill_at}"
    assert (outcome["done"], outcome["aborted"]) == (RECORDS, 1), outcome

    print(f"kill at {kill_at} (progress {killed_at}): {outcome}")
    values = read_committed(txn_cluster.bootstrap, "js-out", PARTITIONS)
    duplicated, missing = duplicates_and_missing(values, {b"%d" % i for i in range(RECORDS)})
    assert (len(values), len(duplicated), missing) == (RECORDS, 0, 0)
    consumer = Consumer({"bootstrap.servers": txn_cluster.bootstrap, "group.id": "js-group"})
    committed = consumer.committed([TopicPartition("js-in", p) for p in range(PARTITIONS)], timeout=30)
    ends = [consumer.get_watermark_offsets(TopicPartition("js-in", p), timeout=30)[1] for p in range(PARTITIONS)]
    consumer.close()
    assert [tp.offset for tp in committed] == ends and sum(ends) == RECORDS
