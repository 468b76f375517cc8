"""Transaction calls (KIP-98, KIP-664): what the Transactions page and its abort action send.

Use them through a gateway: `with open_gateway(settings) as gw: gw.transactions.list_transactions()`.
A failure of one broker, transactional id or partition is reported in the result (`errors`,
`error`), so one broken coordinator never hides the others; only a failure of the whole call
raises `GatewayError`.

How each Kafka API is sent (what a page costs, whatever the number of transactions):
- ListTransactions (k66): one request to every live broker, all in flight together; each
  broker lists the transactional ids whose `__transaction_state` partition it leads.
- FindCoordinator (key type 1) v4+: one request for every transactional id (groups.py).
- DescribeTransactions (k65): one request per coordinator, naming all of its ids.
- DescribeProducers (k61): one request per partition leader, naming all of its partitions.
- WriteTxnMarkers (k27): the abort of `kafka-transactions.sh abort`, sent to the partition's
  leader as the admin client does (Kafka's `Admin.abortTransaction`): one ABORT marker for one
  partition, with the producer id and epoch and the coordinator epoch the partition reported.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import kafka.errors as Errors
from kafka.protocol.admin.transactions import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
)
from kafka.protocol.producer.transaction import WriteTxnMarkersRequest

from console.kafka_gateway.errors import describe_error_code, error_for_code, readable, translated
from console.kafka_gateway.group_records import Coordinators, TopicPartitionKey
from console.kafka_gateway.groups import TRANSACTION_KEY_TYPE
from console.kafka_gateway.records import PartitionInfo
from console.kafka_gateway.wire import bulk_allocation, send_all

NO_TRANSACTION = -1              # DescribeProducers' current_txn_start_offset without an open transaction
_UNSUPPORTED = (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError)
_NOT_LEADER = Errors.NotLeaderForPartitionError.errno


@dataclass(frozen=True)
class TransactionListing:
    """A transactional id as ListTransactions names it; the broker that listed it coordinates it."""

    transactional_id: str
    producer_id: int
    state: str                       # Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, ...
    coordinator: int


@dataclass(frozen=True)
class TransactionListings:
    listings: tuple[TransactionListing, ...] = ()
    errors: dict[int, str] = field(default_factory=dict)     # broker id -> why it did not list


@dataclass(frozen=True)
class TransactionDescription:
    """DescribeTransactions' answer for one id: the coordinator's view of its current transaction."""

    transactional_id: str
    coordinator: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int               # -1 when no transaction is open
    partitions: tuple[TopicPartitionKey, ...]
    error: str | None = None


@dataclass(frozen=True)
class ActiveProducer:
    """A producer a partition leader keeps state for (DescribeProducers)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int              # the max timestamp of its last batch
    coordinator_epoch: int           # of the last marker the partition saw for it; -1 before any
    current_txn_start_offset: int    # NO_TRANSACTION (-1) when none is open

    @property
    def has_open_transaction(self) -> bool:
        return self.current_txn_start_offset >= 0


@dataclass(frozen=True)
class PartitionProducers:
    topic: str
    partition: int
    leader: int
    producers: tuple[ActiveProducer, ...] = ()
    error: str | None = None
    error_code: int = 0


class TransactionCalls:
    """The transaction calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._gateway = gateway
        self._manager = gateway._admin._manager

    def supported(self) -> bool:
        """Whether the cluster answers ListTransactions and DescribeTransactions (Kafka 3.0+)."""
        return self._version(ListTransactionsRequest) >= 0 and self._version(DescribeTransactionsRequest) >= 0

    @translated
    def list_transactions(self, *, states: Iterable[str] = (), producer_ids: Iterable[int] = ()) -> TransactionListings:
        """ListTransactions on every live broker, optionally filtered by state and producer id."""
        brokers = [b.node_id for b in self._manager.cluster.brokers()]
        request = ListTransactionsRequest(state_filters=list(states), producer_id_filters=list(producer_ids),
                                          max_version=0)
        listings: dict[str, TransactionListing] = {}
        errors: dict[int, str] = {}
        for broker_id, answer in zip(brokers, self._run([(b, request) for b in brokers])):
            if isinstance(answer, Exception):
                errors[broker_id] = readable(answer)
            elif answer.error_code:
                errors[broker_id] = describe_error_code(answer.error_code)
            else:
                for t in answer.transaction_states:
                    listings[t.transactional_id] = TransactionListing(t.transactional_id, t.producer_id,
                                                                      t.transaction_state, broker_id)
        return TransactionListings(listings=tuple(sorted(listings.values(), key=lambda t: t.transactional_id)),
                                   errors=errors)

    def find_coordinators(self, transactional_ids: Iterable[str]) -> Coordinators:
        return self._gateway.groups.find_coordinators(transactional_ids, key_type=TRANSACTION_KEY_TYPE)

    @translated
    def describe_transactions(self, coordinators: Mapping[str, int]) -> dict[str, TransactionDescription]:
        """DescribeTransactions, one request per coordinator; ids that fail carry `error`."""
        return self._gateway.groups.ask_coordinators(
            coordinators, lambda ids: DescribeTransactionsRequest(transactional_ids=ids), failed=_failed,
            read=lambda node, answer: ((t.transactional_id, _description(t, node)) for t in answer.transaction_states))

    @translated
    def describe_producers(self, partitions: Iterable[PartitionInfo]) -> dict[TopicPartitionKey, PartitionProducers]:
        """DescribeProducers on each partition's leader, one request per leader, all in flight.
        Only partitions with producers or an error are in the answer. Partitions whose leader
        moved are asked again once, after a metadata refresh."""
        found = self._describe_producers(partitions)
        moved = {key for key, p in found.items() if p.error_code == _NOT_LEADER}
        if moved:
            fresh = self._gateway.metadata(sorted({topic for topic, _ in moved}))
            found.update(self._describe_producers([p for t in fresh.topics for p in t.partitions
                                                   if (p.topic, p.partition) in moved]))
        return found

    def _describe_producers(self, partitions: Iterable[PartitionInfo]) -> dict[TopicPartitionKey, PartitionProducers]:
        by_leader: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        found: dict[TopicPartitionKey, PartitionProducers] = {}
        for p in partitions:
            if p.is_offline:
                found[(p.topic, p.partition)] = PartitionProducers(p.topic, p.partition, p.leader,
                                                                   error="The partition has no leader.")
            else:
                by_leader[p.leader][p.topic].append(p.partition)
        topic_cls = DescribeProducersRequest.TopicRequest
        requests = [(leader, DescribeProducersRequest(topics=[topic_cls(name=t, partition_indexes=ps)
                                                              for t, ps in topics.items()]))
                    for leader, topics in by_leader.items()]
        with bulk_allocation():
            for (leader, topics), answer in zip(by_leader.items(), self._run(requests)):
                if isinstance(answer, Exception):
                    reason = readable(answer)
                    found.update({(t, p): PartitionProducers(t, p, leader, error=reason)
                                  for t, ps in topics.items() for p in ps})
                    continue
                for topic in answer.topics:
                    for p in topic.partitions:
                        # Most partitions have no producer state worth a record (a page of 20,000
                        # partitions spent half its time building empty ones).
                        if p.active_producers or p.error_code:
                            found[(topic.name, p.partition_index)] = _partition_producers(topic.name, p, leader)
        return found

    @translated
    def abort(self, *, topic: str, partition: int, leader: int, producer_id: int, producer_epoch: int,
              coordinator_epoch: int) -> None:
        """An ABORT marker for one partition's open transaction, written by its leader."""
        marker_cls = WriteTxnMarkersRequest.WritableTxnMarker
        marker = marker_cls(producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=False,
                            coordinator_epoch=coordinator_epoch,
                            topics=[marker_cls.WritableTxnMarkerTopic(name=topic, partition_indexes=[partition])])
        [answer] = self._run([(leader, WriteTxnMarkersRequest(markers=[marker]))])
        if isinstance(answer, Exception):
            raise answer
        for result in answer.markers:
            for t in result.topics:
                for p in t.partitions:
                    if p.error_code:
                        raise error_for_code(p.error_code)

    # --- plumbing ---------------------------------------------------------------------------

    def _version(self, request_class) -> int:
        try:
            return self._manager.broker_version_data.api_version(request_class)
        except _UNSUPPORTED:
            return -1

    def _run(self, requests: list) -> list:
        if not requests:
            return []
        return self._manager.run(send_all, self._manager, requests)


def _description(raw, coordinator: int) -> TransactionDescription:
    if raw.error_code:
        return _failed(raw.transactional_id, coordinator, describe_error_code(raw.error_code))
    partitions = tuple(sorted((t.topic, p) for t in raw.topics for p in t.partitions))
    return TransactionDescription(raw.transactional_id, coordinator, raw.transaction_state, raw.producer_id,
                                  raw.producer_epoch, raw.transaction_timeout_ms, raw.transaction_start_time_ms,
                                  partitions)


def _failed(transactional_id: str, coordinator: int, reason: str) -> TransactionDescription:
    return TransactionDescription(transactional_id, coordinator, "", -1, -1, -1, -1, (), error=reason)


def _partition_producers(topic: str, raw, leader: int) -> PartitionProducers:
    if raw.error_code:
        return PartitionProducers(topic, raw.partition_index, leader, error_code=raw.error_code,
                                  error=describe_error_code(raw.error_code, raw.error_message))
    producers = tuple(ActiveProducer(p.producer_id, p.producer_epoch, p.last_sequence, p.last_timestamp,
                                     p.coordinator_epoch, p.current_txn_start_offset) for p in raw.active_producers)
    return PartitionProducers(topic, raw.partition_index, leader, producers)

