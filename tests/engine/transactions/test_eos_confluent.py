"""Exactly-once consume-transform-produce with confluent-kafka over 100k records while the
engine is killed with SIGKILL at random points and restarted: the output holds every input
record exactly once, and the group's committed offsets are the end of the input."""
from __future__ import annotations

import random
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.eos import Pipeline, duplicates_and_missing, read_committed
from tests.support.groups import create_topic
from tests.support.transactions import TXN_TEST_CONFIGS
from tests.support.waiting import wait_until

RECORDS = 100_000
PARTITIONS = 3


def _produce_input(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1 << 20,
                         "enable.idempotence": True})
    for i in range(RECORDS):
        while True:
            try:
                producer.produce(topic, key=str(i % 97).encode(), value=b"%d" % i)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0


def test_exactly_once_survives_kill_9(engine_factory):
    engine = engine_factory(brokers=3, configs=TXN_TEST_CONFIGS)
    create_topic(engine.bootstrap, "eos-in", PARTITIONS, replication=3)
    create_topic(engine.bootstrap, "eos-out", PARTITIONS, replication=3)
    _produce_input(engine.bootstrap, "eos-in")

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    kill_points = sorted(rng.sample(range(RECORDS // 10, RECORDS * 9 // 10), 2))
    pipeline = Pipeline(engine.bootstrap, "eos-in", "eos-out", "eos-group", RECORDS, "eos-pipeline")
    pipeline.start()
    for point in kill_points:
        wait_until(lambda: pipeline.committed >= point or pipeline.error, timeout=180,
                   message=f"the pipeline to pass {point} (seed {seed})")
        time.sleep(rng.random() * 0.3)      # somewhere inside the next transaction
        engine.kill()
        engine.start()
    pipeline.join(300)
    assert pipeline.error is None, f"seed {seed}: {pipeline.error!r}"
    assert not pipeline.is_alive() and pipeline.committed == RECORDS, f"seed {seed}"

    values = read_committed(engine.bootstrap, "eos-out", PARTITIONS)
    duplicated, missing = duplicates_and_missing(values, {b"%d" % i for i in range(RECORDS)})
    assert (len(values), len(duplicated), missing) == (RECORDS, 0, 0), f"seed {seed}"

    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": "eos-group"})
    committed = consumer.committed([TopicPartition("eos-in", p) for p in range(PARTITIONS)], timeout=30)
    ends = [consumer.get_watermark_offsets(TopicPartition("eos-in", p), timeout=30)[1] for p in range(PARTITIONS)]
    consumer.close()
    assert [tp.offset for tp in committed] == ends and sum(ends) == RECORDS
    print(f"seed {seed}: {pipeline.commits} commits, {pipeline.aborts} aborts, {pipeline.restarts} new producers, "
          f"{pipeline.hung} stuck send_offsets_to_transaction")
