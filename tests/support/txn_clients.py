"""Transactions made with real clients for the console, CLI and browser tests.

`hanging_transaction` builds what Kafka calls a hanging transaction honestly: a transaction
opened on a partition by a real transactional producer, whose coordinator then loses its
state (the engine is killed and its `__transaction_state` logs are deleted before the
restart, as after losing that topic's only replica). The partition keeps the open
transaction (its producer state snapshot and log survive), and no coordinator will ever
write its marker: its last stable offset stays pinned until an admin aborts it.
"""
from __future__ import annotations

import shutil

from confluent_kafka import Producer
from kafka.admin import KafkaAdminClient
from kafka.protocol.consumer import IsolationLevel, OffsetSpec
from kafka.structs import TopicPartition as KafkaTopicPartition

# Transactions that must stay open for the length of a test.
LONG_TIMEOUT_MS = 600_000


def open_transaction(bootstrap: str, transactional_id: str, records: list[tuple[str, int, bytes]], *,
                     timeout_ms: int = LONG_TIMEOUT_MS) -> Producer:
    """A producer with an open transaction holding `records` ((topic, partition, value)), all
    acknowledged; the caller commits, aborts or abandons it."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": timeout_ms})
    producer.init_transactions(60)
    producer.begin_transaction()
    for topic, partition, value in records:
        producer.produce(topic, value=value, partition=partition)
    assert producer.flush(60) == 0
    return producer


def committed_transaction(bootstrap: str, transactional_id: str, records: list[tuple[str, int, bytes]],
                          *, commit: bool = True) -> None:
    producer = open_transaction(bootstrap, transactional_id, records)
    if commit:
        producer.commit_transaction(60)
    else:
        producer.abort_transaction(60)


def hanging_transaction(engine, transactional_id: str, records: list[tuple[str, int, bytes]]) -> None:
    """An open transaction whose coordinator state is lost (see the module docstring)."""
    producer = open_transaction(engine.bootstrap, transactional_id, records)
    engine.kill()
    del producer       # librdkafka sends nothing more once its broker is gone
    state_logs = list(engine.data_dir.glob("*/__transaction_state-*"))
    assert state_logs, "the engine keeps no __transaction_state logs"
    for path in state_logs:
        shutil.rmtree(path)
    engine.start()


def end_offsets(bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
    """(last stable offset, high watermark): ListOffsets latest, read_committed and read_uncommitted."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        tp = KafkaTopicPartition(topic, partition)
        return tuple(admin.list_partition_offsets({tp: OffsetSpec.LATEST}, isolation_level=level)[tp].offset
                     for level in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED))
    finally:
        admin.close()
