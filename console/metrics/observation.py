"""One cluster as the console observes it, for /metrics and the alert rules: metadata, every
partition's oldest and current offset, every group's state, members and committed offsets,
the log dirs with their disks' sizes, and (on our engine, which says so in a broker config) the
partitions the log cleaner gave up on. Collected in one pass of batched requests (each
API once per broker or coordinator, whatever the cluster's size), never per scrape.

`OBSERVATIONS` keeps the last observation of each cluster in the process, collected on a
background thread when older than its max age (console.kafka_gateway.cache's snapshots), and
hands each new one to `assessment.Assessor`, which keeps the short history that time lag,
Burrow's statuses and catch-up estimates need. The alert worker collects in its own thread
(`collect_now`); a web process collects when /metrics is scraped.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from django.conf import settings

from console.kafka_gateway.cache import KeptSnapshots
from console.kafka_gateway.client import Gateway
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, TopicPartitionKey
from console.kafka_gateway.records import ClusterMetadata
from console.kafka_gateway.snapshots import LogDirUsage, log_dirs
from console.kafka_gateway.transaction_producers import open_transactions
from console.kafka_gateway.wire import bulk_allocation

GROUPS_PER_ROUND = 200            # OffsetFetch / DescribeGroups, as console.kafka_gateway.group_lag
PARTITIONS_PER_ROUND = 4000       # ListOffsets


@dataclass(frozen=True, slots=True)
class GroupObservation:
    state: str                                            # Stable, Empty, ... ("" when not described)
    members: int
    committed: dict[TopicPartitionKey, int]               # partitions with a committed offset
    member_of: dict[TopicPartitionKey, tuple[str, str, str]] = field(default_factory=dict)  # client id, host, member id


@dataclass(frozen=True)
class Observation:
    collected_at: datetime                                # when the collection started (UTC)
    metadata: ClusterMetadata | None = None
    oldest: dict[TopicPartitionKey, int] = field(default_factory=dict)     # log start offsets
    current: dict[TopicPartitionKey, int] = field(default_factory=dict)    # high watermarks
    groups: dict[str, GroupObservation] = field(default_factory=dict)
    log_dirs: tuple[LogDirUsage, ...] = ()
    # {(topic, partition): the oldest last-batch time (ms) of a producer with a transaction open there}
    open_transactions: dict[TopicPartitionKey, int] = field(default_factory=dict)
    # {broker id: the partitions its log cleaner gave up on ("topic-partition")}: our engine only
    uncleanable: dict[int, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None                              # why the last collection failed (data kept)
    monotonic_at: float = 0.0
    assessment: Any = None                                # assessment.Assessment, set when stored
    seconds: float = 0.0                                  # how long the collection took

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.monotonic_at)

    @property
    def timestamp(self) -> float:
        return self.collected_at.timestamp()


def collect(gateway: Gateway) -> Observation:
    started_at, started = datetime.now(timezone.utc), time.monotonic()
    with bulk_allocation():
        metadata = gateway.metadata(cached=True)
        partitions = [p for t in metadata.topics for p in t.partitions]
        calls = gateway.groups
        oldest, current = {}, {}
        for i in range(0, len(partitions), PARTITIONS_PER_ROUND):
            chunk = partitions[i:i + PARTITIONS_PER_ROUND]
            oldest.update(calls.log_offsets(chunk, timestamp=EARLIEST_TIMESTAMP).offsets)
            current.update(calls.log_offsets(chunk, timestamp=LATEST_TIMESTAMP).offsets)
        groups = _groups(calls)
        _, dirs = log_dirs(gateway, [b.node_id for b in metadata.brokers])
        transactions = _open_transactions(gateway)
        uncleanable = _uncleanable(gateway, [b.node_id for b in metadata.brokers])
    return Observation(collected_at=started_at, metadata=metadata, oldest=oldest, current=current, groups=groups,
                       log_dirs=tuple(dirs), open_transactions=transactions, uncleanable=uncleanable,
                       seconds=time.monotonic() - started)


def _uncleanable(gateway: Gateway, brokers: list[int]) -> dict[int, tuple[str, ...]]:
    """Each broker's uncleanable partitions, where the cluster says (our engine's broker config:
    one DescribeConfigs per broker)."""
    found = {}
    for broker_id in brokers:
        partitions = gateway.engine_uncleanable_partitions(broker_id)
        if partitions is None:               # not our engine: no broker will say
            return {}
        found[broker_id] = partitions
    return found


def _open_transactions(gateway: Gateway) -> dict[TopicPartitionKey, int]:
    """From the Transactions page's snapshot of every partition's producers (its own max age),
    so that the two never both ask every partition leader; collected now when that is off."""
    if not gateway.transactions.supported():
        return {}
    snapshot = open_transactions(gateway, max_age=settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS,
                                 wait_first=settings.TRANSACTIONS_PRODUCERS_WAIT_SECONDS)
    found = getattr(snapshot, "found", None) or {}
    opened = {}
    for key, partition in found.items():
        times = [p.last_timestamp for p in partition.producers if p.current_txn_start_offset >= 0]
        if times:
            opened[key] = min(times)
    return opened


def _groups(calls) -> dict[str, GroupObservation]:
    listed = calls.list_groups() or []
    coordinators = calls.find_coordinators(g.group_id for g in listed).found
    ids = sorted(coordinators)
    groups: dict[str, GroupObservation] = {}
    for i in range(0, len(ids), GROUPS_PER_ROUND):
        chunk = {g: coordinators[g] for g in ids[i:i + GROUPS_PER_ROUND]}
        described = calls.describe_groups(chunk)
        committed = calls.committed_offsets(chunk).offsets
        for group_id in chunk:
            d = described.get(group_id)
            members = d.members if d is not None and d.error is None else ()
            owners = {tp: (m.client_id, m.client_host, m.member_id) for m in members for tp in m.assignment}
            groups[group_id] = GroupObservation(
                state=d.state if d is not None and d.error is None else "",
                members=len(members),
                committed={tp: c.offset for tp, c in committed.get(group_id, {}).items() if c.offset >= 0},
                member_of=owners)
    return groups


class Observations(KeptSnapshots):
    """The last observation per cluster; each new one is assessed against the ones before."""

    thread_name = "observation"
    snapshot_type = Observation

    def __init__(self) -> None:
        super().__init__()
        from console.metrics.assessment import Assessor
        self._assessors: dict[Any, Assessor] = {}
        self._new_assessor = Assessor
        self._after: dict[Any, Any] = {}

    def after_each(self, key, then) -> None:
        """Run `then(observation)` on the collecting thread after each background observation
        of `key` is stored (the web process renders its /metrics part there, not in a scrape)."""
        self._after[key] = then

    def collect_now(self, gateway: Gateway) -> Observation:
        """Collect in this thread, keep and return it (the alert worker's round)."""
        started = self._clock()
        try:
            observation = collect(gateway)
        except Exception as exc:  # noqa: BLE001 - kept and shown, as the background collections do
            observation = self._failed(self._snapshots.get(gateway.cache_key), exc)
        observation = self._stamped(observation, started=started, ended=self._clock(), key=gateway.cache_key)
        self._snapshots[gateway.cache_key] = observation
        return observation

    def _collect(self, key, collect_fn, generation: int = 0) -> None:
        """As the base class's (a collection that predates a drop is not kept), with the
        assessment of each new observation and the hook run after it."""
        started = self._clock()
        try:
            snapshot = collect_fn()
        except Exception as exc:  # noqa: BLE001
            snapshot = self._failed(self._snapshots.get(key), exc)
        with self._lock:
            if self._generations.get(key, 0) != generation:
                return
            stored = self._snapshots[key] = self._stamped(snapshot, started=started, ended=self._clock(), key=key)
        then = self._after.get(key)
        if then is not None:
            then(stored)

    def _stamped(self, snapshot: Observation, *, started: float, ended: float, key=None) -> Observation:
        if snapshot.monotonic_at:          # a failure keeping the last data keeps its time and assessment
            return snapshot
        assessor = self._assessors.get(key)
        if assessor is None:
            assessor = self._assessors[key] = self._new_assessor()
        stamped = replace(snapshot, monotonic_at=started)
        return replace(stamped, assessment=assessor.assess(stamped))

    def clear(self) -> None:
        super().clear()
        self._assessors.clear()


OBSERVATIONS = Observations()
