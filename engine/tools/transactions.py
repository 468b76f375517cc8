"""Transaction operations over the Kafka protocol only, with kafka-python's KafkaAdminClient (its
KIP-664 calls), as `kafka-transactions.sh` does them; they work against any Kafka 3.0+ cluster.

- `list_transactions`: ListTransactions on every broker (each lists the ids it coordinates).
- `describe_transaction`: FindCoordinator (key type 1), then DescribeTransactions.
- `describe_producers`: DescribeProducers on the partition's leader (or a given replica).
- `find_hanging`: Kafka's FindHangingTransactionsCommand: the open transactions that
  DescribeProducers reports on the partitions searched, older (by the producer's last
  timestamp) than the maximum transaction timeout, whose producer id no coordinator lists
  (ListTransactions filtered by producer id) or whose coordinator's transaction does not
  name the partition (DescribeTransactions).
- `abort`: the open transaction starting at an offset (found with DescribeProducers), or one
  named by producer id, epoch and coordinator epoch, aborted with WriteTxnMarkers sent to
  the partition's leader.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.admin._transactions import AbortTransactionSpec, ProducerState
from kafka.structs import TopicPartition

DEFAULT_MAX_TRANSACTION_TIMEOUT_MINUTES = 15     # Kafka's tool: transaction.max.timeout.ms's default
_BATCH = 500                                     # partitions per DescribeProducers, as Kafka's tool


class TransactionCommandError(Exception):
    """The request cannot be carried out; the message says why."""


@dataclass(frozen=True)
class OpenTransaction:
    topic: str
    partition: int
    producer: ProducerState


def connect(bootstrap: str, **config) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="engine-transactions", **config)


def list_transactions(admin: KafkaAdminClient) -> list[tuple[str, int, int, str]]:
    """(transactional id, coordinator, producer id, state) of every transactional id."""
    rows = []
    for broker, listings in sorted(admin.list_transactions().items()):
        rows += [(t.transactional_id, broker, t.producer_id, t.state.value) for t in listings]
    return sorted(rows)


def describe_transaction(admin: KafkaAdminClient, transactional_id: str):
    try:
        return admin.describe_transactions([transactional_id])[transactional_id]
    except Errors.TransactionalIdNotFoundError:
        raise TransactionCommandError(f"Failed to describe transaction state of transactional-id "
                                      f"`{transactional_id}`: it does not exist.") from None


def describe_producers(admin: KafkaAdminClient, tp: TopicPartition, broker_id: int | None = None) -> list:
    return admin.describe_producers([tp], broker_id=broker_id)[tp].active_producers


def find_hanging(admin: KafkaAdminClient, *, topic: str | None = None, partition: int | None = None,
                 broker_id: int | None = None, max_transaction_timeout_ms: int, now_ms: int | None = None,
                 ) -> list[OpenTransaction]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    candidates = [t for t in _open_transactions(admin, _partitions(admin, topic, partition, broker_id), broker_id)
                  if now_ms - t.producer.last_timestamp > max_transaction_timeout_ms]
    if not candidates:
        return []
    producer_ids = {t.producer.producer_id for t in candidates}
    listed = {t.producer_id: t.transactional_id for listings in admin.list_transactions(
        producer_id_filters=sorted(producer_ids)).values() for t in listings if t.producer_id in producer_ids}
    descriptions = _describe_each(admin, set(listed.values()))
    hanging = []
    for candidate in candidates:
        description = descriptions.get(listed.get(candidate.producer.producer_id))
        # No transactional id, or a coordinator that will not write this partition's marker.
        if description is None or TopicPartition(candidate.topic, candidate.partition) not in \
                description.topic_partitions:
            hanging.append(candidate)
    return hanging


def abort(admin: KafkaAdminClient, tp: TopicPartition, *, start_offset: int | None = None,
          producer_id: int | None = None, producer_epoch: int | None = None,
          coordinator_epoch: int | None = None) -> AbortTransactionSpec:
    if start_offset is not None:
        found = next((p for p in describe_producers(admin, tp) if p.current_transaction_start_offset == start_offset),
                     None)
        if found is None:
            raise TransactionCommandError(f"Could not find any open transactions starting at offset {start_offset} "
                                          f"on partition {tp.topic}-{tp.partition}")
        producer_id, producer_epoch, coordinator_epoch = (found.producer_id, found.producer_epoch,
                                                          found.coordinator_epoch)
    elif producer_id is None or producer_epoch is None or coordinator_epoch is None:
        raise TransactionCommandError("The transaction to abort must be identified either with --start-offset or "
                                      "with --producer-id, --producer-epoch, and --coordinator-epoch")
    # -1 (no marker seen yet) becomes 0, which no partition can have fenced (Kafka's tool).
    spec = AbortTransactionSpec(tp, producer_id, producer_epoch, max(coordinator_epoch, 0))
    admin.abort_transaction(spec)
    return spec


def _partitions(admin: KafkaAdminClient, topic: str | None, partition: int | None,
                broker_id: int | None) -> list[TopicPartition]:
    if topic is not None and partition is not None:
        return [TopicPartition(topic, partition)]
    topics = [topic] if topic is not None else sorted(admin.list_topics())
    found = []
    for i in range(0, len(topics), _BATCH):
        for described in admin.describe_topics(topics[i:i + _BATCH]):
            if described["error_code"]:
                raise TransactionCommandError(f"Failed to describe topic {described['name']!r}: "
                                              f"{Errors.for_code(described['error_code']).__name__}")
            found += [TopicPartition(described["name"], p["partition_index"]) for p in described["partitions"]
                      if broker_id is None or broker_id in p["replica_nodes"]]
    return sorted(found)


def _open_transactions(admin: KafkaAdminClient, partitions: list[TopicPartition],
                       broker_id: int | None) -> list[OpenTransaction]:
    found = []
    for i in range(0, len(partitions), _BATCH):
        states = admin.describe_producers(partitions[i:i + _BATCH], broker_id=broker_id)
        for tp, state in sorted(states.items()):
            found += [OpenTransaction(tp.topic, tp.partition, p) for p in state.active_producers
                      if p.current_transaction_start_offset >= 0]
    return found


def _describe_each(admin: KafkaAdminClient, transactional_ids: set[str]) -> dict:
    """kafka-python raises for the whole call on one unknown id: ask id by id, and treat an
    unknown one as Kafka's tool does (its transactions hang)."""
    described: dict = {}
    for transactional_id in sorted(transactional_ids):
        try:
            described[transactional_id] = admin.describe_transactions([transactional_id])[transactional_id]
        except Errors.TransactionalIdNotFoundError:
            described[transactional_id] = None
    return described
