"""The overview's health figures: is the cluster well? Records written and consumed per
second, the disk its replicas take and how fast that grows, consumer groups and the ones
lagging, and the Kafka API level of each broker.

Kafka has no metrics over its protocol, so throughput is measured between two collections:
records in is the growth of every partition's high watermark (internal topics left out) (ListOffsets, one request per
leader, in rounds as console.kafka_gateway.group_lag does), records out the growth of the
committed offsets of groups that have members (OffsetFetch per coordinator). Groups without
members are left out of "out": an offset reset moves their offsets without anyone reading.
A partition or group that appears or disappears between the two is left out of both, and a
watermark that went back (a topic deleted and created again) counts as nothing. The disk is
DescribeLogDirs of every broker (console.kafka_gateway.log_dirs), its growth the change over
the collections of the last `GROWTH_WINDOW_SECONDS` (retention deleting segments counts
against it, as an operator sees on the disk). Broker versions come from each broker's
ApiVersions answer (kafka-python infers the Kafka release whose API versions it matches:
an API level, not a build number).

`cluster_health` serves it from `CLUSTER_HEALTH` (a console.kafka_gateway.cache
KeptSnapshots), collected on a background thread
(settings CLUSTER_HEALTH_MAX_AGE_SECONDS, CLUSTER_HEALTH_WAIT_SECONDS) with its time; the
rates need the previous collection, which `HISTORY` keeps per cluster whatever the max age
(with max age 0 each page collects, and measures against the page before it).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone

from console.kafka_gateway import cache
from console.kafka_gateway.cache import CacheKey
from console.kafka_gateway.client import Gateway
from console.kafka_gateway.errors import readable
from console.kafka_gateway.group_lag import GROUPS_PER_ROUND, PARTITIONS_PER_ROUND
from console.kafka_gateway.log_dirs import collect as collect_log_dirs

GROWTH_WINDOW_SECONDS = 3600.0        # disk growth over at most the last hour of collections
LAGGING_SHOWN = 5                     # the groups with the most lag, named on the overview
ACTIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")


@dataclass(frozen=True)
class GroupLag:
    group_id: str
    lag: int                          # over its committed partitions with a known high watermark
    state: str


@dataclass(frozen=True)
class Throughput:
    records_in_per_second: float
    records_out_per_second: float
    seconds: float                    # between the two collections measured


@dataclass(frozen=True)
class DiskGrowth:
    bytes: int                        # change of the total (negative: retention freed more than was written)
    seconds: float                    # over this long

    @property
    def magnitude(self) -> int:
        return abs(self.bytes)


@dataclass(frozen=True)
class HealthSnapshot:
    collected_at: datetime
    groups: int = 0
    lagging: tuple[GroupLag, ...] = ()            # groups with lag > 0, most lag first
    lagging_count: int = 0
    total_lag: int = 0
    disk_bytes: int | None = None                 # every replica on every live broker
    disk_errors: tuple[str, ...] = ()
    broker_versions: tuple[tuple[int, str], ...] = ()   # (broker id, "4.0") of the brokers that answered
    throughput: Throughput | None = None          # None until two collections exist
    disk_growth: DiskGrowth | None = None
    error: str | None = None
    monotonic_at: float = 0.0

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.monotonic_at)


@dataclass
class _Sample:
    at: float
    high_watermarks: dict
    committed: dict                   # {(group, topic, partition): offset} of groups with members


@dataclass
class _History:
    last: _Sample | None = None
    disk: deque = field(default_factory=deque)    # (monotonic time, total bytes)
    lock: threading.Lock = field(default_factory=threading.Lock)


class HealthHistory:
    """Each cluster's previous collection and its disk totals of the last hour. Thread-safe."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._clusters: dict[CacheKey, _History] = {}
        self._lock = threading.Lock()

    def of(self, key: CacheKey) -> _History:
        with self._lock:
            return self._clusters.setdefault(key, _History())

    def clear(self) -> None:
        with self._lock:
            self._clusters.clear()


HISTORY = HealthHistory()


class ClusterHealthSnapshots(cache.KeptSnapshots):
    thread_name = "cluster-health"
    snapshot_type = HealthSnapshot


CLUSTER_HEALTH = ClusterHealthSnapshots()


def cluster_health(gateway: Gateway, *, max_age: float, wait_first: float) -> HealthSnapshot | None:
    """The health figures, at most `max_age` seconds old unless a collection runs late; None
    while the first collection of this process is still running after `wait_first` seconds."""
    return CLUSTER_HEALTH.get_for(gateway, collect, max_age=max_age, wait_first=wait_first)


def collect(gateway: Gateway) -> HealthSnapshot:
    started = time.monotonic()
    collected_at = datetime.now(timezone.utc)
    metadata = gateway.metadata(cached=True)
    calls = gateway.groups
    # Internal topics are left out: every commit and transaction marker writes to them.
    leaders = [p for t in metadata.topics if not t.is_internal for p in t.partitions if not p.is_offline]
    high_watermarks: dict = {}
    for i in range(0, len(leaders), PARTITIONS_PER_ROUND):
        high_watermarks.update(calls.log_offsets(leaders[i:i + PARTITIONS_PER_ROUND]).offsets)

    listed = calls.list_groups() or []
    states = {g.group_id: g.state for g in listed}
    coordinators = calls.find_coordinators(states).found
    ids = sorted(coordinators)
    committed: dict = {}
    for i in range(0, len(ids), GROUPS_PER_ROUND):
        part = calls.committed_offsets({g: coordinators[g] for g in ids[i:i + GROUPS_PER_ROUND]})
        committed.update(part.offsets)
    lags = []
    for group_id, offsets in committed.items():
        lag = sum(max(0, high_watermarks[tp] - c.offset) for tp, c in offsets.items() if tp in high_watermarks)
        lags.append(GroupLag(group_id, lag, states.get(group_id, "")))
    lagging = sorted((g for g in lags if g.lag > 0), key=lambda g: (-g.lag, g.group_id))

    brokers = [b.node_id for b in metadata.brokers]
    disk = collect_log_dirs(gateway, brokers)
    disk_bytes = sum(d.size for dirs in disk.dirs.values() for d in dirs) if disk.dirs else None
    active = {(g, t, p): c.offset for g, offsets in committed.items() if states.get(g) in ACTIVE_STATES
              for (t, p), c in offsets.items()}
    sample = _Sample(started, high_watermarks, active)
    throughput, growth = _measure(gateway.cache_key, sample, disk_bytes)
    return HealthSnapshot(
        collected_at=collected_at, groups=len(listed), lagging=tuple(lagging[:LAGGING_SHOWN]),
        lagging_count=len(lagging), total_lag=sum(g.lag for g in lags), disk_bytes=disk_bytes,
        disk_errors=tuple(sorted(set(disk.errors.values()))), broker_versions=_versions(gateway, brokers),
        throughput=throughput, disk_growth=growth)


def _growth(before: dict, after: dict) -> int:
    """What the counters grew by, over the keys in both; a counter that went back adds nothing."""
    return sum(max(0, value - before[key]) for key, value in after.items() if key in before)


def _measure(key: CacheKey | None, sample: _Sample, disk_bytes: int | None):
    if key is None:
        return None, None
    history = HISTORY.of(key)
    with history.lock:
        last, history.last = history.last, sample
        throughput = None
        if last is not None and sample.at > last.at:
            seconds = sample.at - last.at
            throughput = Throughput(_growth(last.high_watermarks, sample.high_watermarks) / seconds,
                                    _growth(last.committed, sample.committed) / seconds, seconds)
        growth = None
        if disk_bytes is not None:
            history.disk.append((sample.at, disk_bytes))
            while history.disk and sample.at - history.disk[0][0] > GROWTH_WINDOW_SECONDS:
                history.disk.popleft()
            first_at, first_bytes = history.disk[0]
            if sample.at > first_at:
                growth = DiskGrowth(disk_bytes - first_bytes, sample.at - first_at)
    return throughput, growth


def _versions(gateway: Gateway, brokers: list[int]) -> tuple[tuple[int, str], ...]:
    """Each broker's Kafka API level, from the ApiVersions answer of its connection."""
    found = []
    for broker_id in brokers:
        try:
            data = gateway._admin.get_broker_version_data(broker_id)
        except Exception as exc:  # noqa: BLE001 - kafka-python raises many kinds; the page says why
            found.append((broker_id, f"unknown ({readable(exc)})"))
            continue
        version = getattr(data, "broker_version", None)
        found.append((broker_id, ".".join(map(str, version[:2])) if version else "unknown"))
    return tuple(found)
