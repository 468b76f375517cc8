"""Fencing and transaction timeouts with confluent-kafka's transactional producer."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from tests.support.groups import create_topic
from tests.support.transactions import coordinator_client, describe
from tests.support.waiting import wait_until


def _producer(cluster, tid: str, **extra) -> Producer:
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid, "linger.ms": 5, **extra})
    producer.init_transactions(60)
    return producer


def _read_committed(cluster, topic: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"r-{topic}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    return consumer


def _values(consumer: Consumer, seconds: float) -> list[bytes]:
    values, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        values += [m.value() for m in consumer.consume(100, timeout=0.2) if not m.error()]
    return values


def test_a_second_producer_fences_the_first_and_aborts_its_transaction(txn_cluster):
    topic = "fencing"
    create_topic(txn_cluster.bootstrap, topic, 1, replication=3)
    first = _producer(txn_cluster, "fenced-id")
    first.begin_transaction()
    first.produce(topic, value=b"zombie")
    assert first.flush(30) == 0
    second = _producer(txn_cluster, "fenced-id")            # aborts the zombie's transaction first
    with pytest.raises(KafkaException) as raised:
        first.produce(topic, value=b"zombie-2")
        first.commit_transaction(30)
    error = raised.value.args[0]
    assert error.fatal() and error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                              KafkaError.INVALID_PRODUCER_EPOCH)
    second.begin_transaction()
    second.produce(topic, value=b"survivor")
    second.commit_transaction(30)
    consumer = _read_committed(txn_cluster, topic)
    assert wait_until(lambda: _values(consumer, 0.5), message="the survivor") == [b"survivor"]
    consumer.close()


def test_a_stalled_transaction_is_aborted_after_its_timeout(txn_cluster):
    topic, tid = "stalled", "stalled-id"
    create_topic(txn_cluster.bootstrap, topic, 1, replication=3)
    stalled = _producer(txn_cluster, tid, **{"transaction.timeout.ms": 3000})
    stalled.begin_transaction()
    stalled.produce(topic, value=b"never-committed")
    assert stalled.flush(30) == 0
    plain = Producer({"bootstrap.servers": txn_cluster.bootstrap})
    plain.produce(topic, value=b"after")                    # behind the open transaction
    assert plain.flush(30) == 0

    consumer = _read_committed(txn_cluster, topic)
    client = coordinator_client(txn_cluster, tid)
    before = describe(client, tid)
    assert before.transaction_state == "Ongoing"
    seen_while_open = _values(consumer, 1.0)
    if describe(client, tid).transaction_state == "Ongoing":   # still open all along: nothing passed the LSO
        assert seen_while_open == []
    aborted = wait_until(lambda: (lambda d: d if d.transaction_state == "CompleteAbort" else None)(
        describe(client, tid)), message="the timed-out transaction to be aborted")
    assert aborted.producer_epoch == before.producer_epoch + 1          # the stalled producer is fenced
    assert wait_until(lambda: _values(consumer, 0.5), message="the record after it") == [b"after"]
    with pytest.raises(KafkaException):
        stalled.commit_transaction(30)
    consumer.close()
    client.close()
