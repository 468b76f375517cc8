"""Reads for the Transactions page: every transactional id as its coordinator sees it, and the
open transactions of the partitions that no coordinator will ever finish ("hanging").

Two views of a transaction, because Kafka keeps two:
- The coordinator's (ListTransactions + DescribeTransactions): state, producer id and epoch,
  timeout, start time and partitions of each transactional id. An ongoing transaction older
  than its `transaction.timeout.ms` is flagged "hanging": the coordinator should have aborted
  it by now (it does so every `transaction.abort.timed.out.transaction.cleanup.interval.ms`).
- The partitions' (DescribeProducers): each leader's open transactions, with their first
  offset, which holds back the last stable offset and so every read_committed consumer. One
  is hanging, as in `kafka-transactions.sh find-hanging`, when its coordinator will not write
  its marker: no coordinator lists its producer id, or the coordinator's transaction does
  not name the partition, or the coordinator's transaction is itself past its timeout.

Kafka's tool only considers open transactions older than `transaction.max.timeout.ms`, to
avoid racing with a transaction that is finishing while it reads. The page needs no such
wait: it reads the partitions, then the coordinators, then the candidate partitions again,
and flags only a transaction open at both partition reads, with the same first offset, that
the coordinators did not know in between (a transaction reaches a partition only after its
coordinator added the partition, and leaves it only by a marker).

That rule holds however old the first read is, so the page takes it from a snapshot of every
partition's open transactions collected in the background (console.kafka_gateway.
transaction_producers; TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS) and shows its age: a
transaction opened since shows at the next collection. The coordinators and the second read
are live, and the abort reads its one partition live, start to end (`hanging_transaction`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from django.conf import settings

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INLINE
from console.kafka_gateway import Gateway, cache
from console.kafka_gateway.cache import SnapshotAge
from console.kafka_gateway.group_records import TopicPartitionKey
from console.kafka_gateway.transaction_producers import open_transactions
from console.kafka_gateway.transactions import ActiveProducer, PartitionProducers, TransactionDescription

OPEN_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")
NOT_IN_COORDINATOR = "No coordinator knows this producer id: nothing will ever write its marker."
NOT_IN_TRANSACTION = "Its coordinator's transaction does not name this partition: no marker will come."
PAST_TIMEOUT = "Its coordinator's transaction is older than its timeout and was not aborted."


@dataclass(frozen=True)
class TransactionRow:
    """A transactional id as its coordinator describes it, with what the page works out of that."""

    description: TransactionDescription = field(metadata=INLINE)   # its fields read as the row's
    age_ms: int | None = None        # for open transactions: now minus the start time
    hanging: bool = False            # open for longer than its timeout

    def __getattr__(self, name: str):
        # Only for names the row itself lacks: transactional_id, state, producer_id, ... of its description.
        if name == "description":
            raise AttributeError(name)
        return getattr(self.description, name)

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def started_at(self) -> datetime | None:
        if self.start_time_ms < 0:
            return None
        return datetime.fromtimestamp(self.start_time_ms / 1000, tz=timezone.utc)


@dataclass(frozen=True)
class PartitionTransaction:
    """An open transaction on one partition, as its leader describes it (DescribeProducers, as
    `kafka-transactions.sh describe-producers` prints it); with a reason when it hangs: nothing
    will finish it, and the admin may abort it."""

    topic: str
    partition: int
    leader: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    duration_ms: int                 # now minus the producer's last batch timestamp
    transactional_id: str | None
    reason: str = ""                 # why it hangs; empty: its coordinator will finish it

    @property
    def hanging(self) -> bool:
        return bool(self.reason)


HangingTransaction = PartitionTransaction       # one whose reason is set


@dataclass(frozen=True)
class TransactionsView:
    supported: bool
    transactions: list[TransactionRow] = field(default_factory=list)
    hanging: list[HangingTransaction] = field(default_factory=list)
    # Every open transaction the partition leaders reported, the hanging ones flagged (and as
    # read again now); the page's partitions table lists these, and its sentence counts them.
    on_partitions: list[PartitionTransaction] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # When the partitions' open transactions were collected in the background
    # (console.kafka_gateway.cache.TRANSACTION_PRODUCERS); None: read by this page.
    producers_age: SnapshotAge | None = None

    @property
    def open_on_partitions(self) -> int:
        return len(self.on_partitions)

    @property
    def ongoing(self) -> list[TransactionRow]:
        return [t for t in self.transactions if t.is_open]


def transaction_list(*, cluster: Cluster, now_ms: int | None = None) -> TransactionsView:
    with cluster_gateway(cluster) as gw:
        return transactions_view(gw, now_ms=now_ms)


def transactions_view(gw: Gateway, *, now_ms: int | None = None) -> TransactionsView:
    """The partitions' first read comes from the snapshot collected in the background
    (`open_transactions`); the coordinators and the second read of the suspects are live, so
    a transaction is flagged only if it was open at the snapshot and still is now, with the
    same first offset, and the coordinators did not know it in between (the module docstring:
    the age of the first read does not matter to that rule, only which transactions it finds)."""
    if not gw.transactions.supported():
        return TransactionsView(supported=False)
    max_age = settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS
    snapshot = open_transactions(gw, max_age=max_age, wait_first=settings.TRANSACTIONS_PRODUCERS_WAIT_SECONDS)
    warnings = []
    # None: the first collection is still running, and the page's age note says so.
    if snapshot is not None and snapshot.error:
        warnings.append(f"The partitions' open transactions could not be collected: {snapshot.error}")
    collected = snapshot if snapshot is not None and snapshot.found is not None else None
    view = _read(gw, collected.found if collected else {}, now_ms)
    age = SnapshotAge.of(collected, snapshots=cache.TRANSACTION_PRODUCERS, max_age=max_age) if max_age > 0 else None
    return replace(view, warnings=warnings, producers_age=age)


def hanging_transaction(*, gw: Gateway, topic: str, partition: int, start_offset: int) -> HangingTransaction | None:
    """The hanging transaction that starts at `start_offset` on the partition, if there is one
    (the page's rule, read fresh, never from the background snapshot: the abort service checks
    it again before writing a marker)."""
    info = next((p for t in gw.metadata([topic]).topics for p in t.partitions if p.partition == partition), None)
    if info is None:
        return None
    view = _read(gw, gw.transactions.describe_producers([info]), None)
    return next((h for h in view.hanging if h.start_offset == start_offset), None)


def _read(gw: Gateway, first_answer: dict[TopicPartitionKey, PartitionProducers], now_ms: int | None
          ) -> TransactionsView:
    """The partitions' first answer, then coordinators, then the suspect partitions again
    (the module docstring)."""
    first_read = _open_transactions(first_answer)
    rows, by_producer, errors = _coordinator_rows(gw, now_ms=_now(now_ms))
    if errors:
        # A broker that did not list its transactional ids may know the producer: only the
        # coordinators that answered can say a transaction hangs.
        by_producer = _Unsure(by_producer)
    suspects = {key: pair for key, pair in first_read.items() if _reason(*pair, by_producer) is not None}
    second_read = _read_again(gw, {(topic, number) for topic, number, _ in suspects}) if suspects else {}
    now = _now(now_ms)
    hanging = {key: _hanging(*second_read[key], by_producer, now) for key in suspects if key in second_read}
    # A suspect gone from the second read was finished in between: it is no longer open.
    on_partitions = [hanging.get(key) or _on_partition(*pair, by_producer, now) for key, pair in first_read.items()
                     if key not in suspects or key in hanging]
    errors += [f"{p.topic}-{p.partition}: {p.error}" for p in sorted(first_answer.values(), key=_by_partition)
               if p.error]
    return TransactionsView(supported=True, transactions=rows,
                            hanging=sorted(hanging.values(), key=_partition_order),
                            on_partitions=sorted(on_partitions, key=_partition_order), errors=errors)


def _partition_order(t: PartitionTransaction):
    """Hanging ones first, then the longest idle."""
    return (not t.hanging, -t.duration_ms, t.topic, t.partition)


def _read_again(gw: Gateway, keys: set[TopicPartitionKey]) -> dict:
    """The open transactions of these partitions now, asked of their leaders now."""
    partitions = [p for t in gw.metadata(sorted({topic for topic, _ in keys})).topics for p in t.partitions
                  if (p.topic, p.partition) in keys]
    return _open_transactions(gw.transactions.describe_producers(partitions))


def _by_partition(p: PartitionProducers) -> TopicPartitionKey:
    return (p.topic, p.partition)


# --- the coordinators' view ------------------------------------------------------------------

def _coordinator_rows(gw: Gateway, *, now_ms: int) -> tuple[list[TransactionRow], dict[int, TransactionRow], list]:
    """Every transactional id, described; and the rows by producer id."""
    calls = gw.transactions
    listed = calls.list_transactions()
    errors = [f"Broker {b} did not list its transactions: {why}" for b, why in sorted(listed.errors.items())]
    coordinators = {t.transactional_id: t.coordinator for t in listed.listings}
    described = calls.describe_transactions(coordinators) if coordinators else {}
    rows = []
    for listing in listed.listings:
        d = described.get(listing.transactional_id)
        rows.append(_row(listing, d, now_ms))
    rows.sort(key=_row_order)
    by_producer = {r.producer_id: r for r in rows if r.producer_id >= 0}
    return rows, by_producer, errors


def _row(listing, d: TransactionDescription | None, now_ms: int) -> TransactionRow:
    if d is None or d.error:
        # What the listing says, and why the coordinator could not say more.
        return TransactionRow(TransactionDescription(listing.transactional_id, listing.coordinator, listing.state,
                                                     listing.producer_id, -1, -1, -1, (),
                                                     error=d.error if d else "Not described."))
    is_open = d.state in OPEN_STATES
    age = now_ms - d.start_time_ms if is_open and d.start_time_ms >= 0 else None
    return TransactionRow(d, age, hanging=age is not None and d.timeout_ms >= 0 and age > d.timeout_ms)


def _row_order(row: TransactionRow):
    """Open transactions first, oldest first; then the others by id."""
    return (0, -(row.age_ms or 0), row.transactional_id) if row.is_open else (1, 0, row.transactional_id)


# --- the partitions' view --------------------------------------------------------------------

def _open_transactions(found: dict[TopicPartitionKey, PartitionProducers]
                       ) -> dict[tuple[str, int, tuple[int, int]], tuple[PartitionProducers, ActiveProducer]]:
    """{(topic, partition, (producer id, first offset)): (partition, producer)} of open transactions."""
    return {(p.topic, p.partition, (a.producer_id, a.current_txn_start_offset)): (p, a)
            for p in found.values() if not p.error for a in p.producers if a.has_open_transaction}


class _Unsure(dict):
    """Rows by producer id when some broker did not list its transactions."""


def _reason(partition: PartitionProducers, producer: ActiveProducer, by_producer: dict[int, TransactionRow]) -> str | None:
    row = by_producer.get(producer.producer_id)
    if row is None:
        return None if isinstance(by_producer, _Unsure) else NOT_IN_COORDINATOR
    if row.error:
        return None              # the coordinator could not tell: not flagged on a guess
    if not row.is_open or (partition.topic, partition.partition) not in row.partitions:
        return NOT_IN_TRANSACTION
    if row.hanging:
        return PAST_TIMEOUT
    return None


def _hanging(partition: PartitionProducers, producer: ActiveProducer, by_producer: dict[int, TransactionRow],
             now_ms: int) -> HangingTransaction:
    return replace(_on_partition(partition, producer, by_producer, now_ms),
                   reason=_reason(partition, producer, by_producer) or "")


def _on_partition(partition: PartitionProducers, producer: ActiveProducer, by_producer: dict[int, TransactionRow],
                  now_ms: int) -> PartitionTransaction:
    row = by_producer.get(producer.producer_id)
    return PartitionTransaction(partition.topic, partition.partition, partition.leader, producer.producer_id,
                                producer.producer_epoch, producer.coordinator_epoch,
                                producer.current_txn_start_offset, producer.last_timestamp,
                                max(0, now_ms - producer.last_timestamp), row.transactional_id if row else None)


def _now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else now_ms
