"""What the console derives from a cluster's recent observations: per consumer group its lag,
time lag (kafka-lag-exporter's method), Burrow's statuses and a catch-up estimate; per cluster
its under-replicated and offline partitions and the brokers that are down.

The same rules as the analytics jobs (console/analytics/jobs/lag.py), evaluated incrementally
on the observations the process keeps, so that /metrics and the alert rules see them within
one observation instead of one Spark run:

- **Lag** is the high watermark minus the committed offset, never below 0 (kafka_exporter's).
- **Time lag**: the observation's time minus the time the log end offset reached the
  committed offset, interpolated between the log end offsets seen (each partition keeps the
  first time each new value was seen, up to LEO_POINTS of them); a committed offset older than
  those points is extrapolated with their average rate, as kafka-lag-exporter does; unknown
  (None) until a partition has two points.
- **Burrow's statuses** over the last WINDOW observations of each group partition: REWIND (the
  committed offset went back), OK (lag 0 now), STOP (the offset did not move while lag > 0 and
  the group has no members), STALL (did not move, members present), WARN (lag grew between
  every pair of observations), else OK; fewer than two observations is OK. A group is ERR
  when any partition is STOP, STALL or REWIND, else WARN when any is WARN, else OK (Burrow's
  group rule). Codes as Burrow's: NOTFOUND 0, OK 1, WARN 2, ERR 3, STOP 4, STALL 5, REWIND 6.
- **Catch-up time**: lag / (consume rate - produce rate), both over the group's partitions
  since the oldest observation kept (up to WINDOW); infinite when the group is not gaining,
  None until there are two observations.

Not thread-safe: one Assessor per cluster, fed by the thread that stores its observations.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from console.kafka_gateway.group_records import TopicPartitionKey

WINDOW = 10                       # observations per group partition, as Burrow's `intervals`
LEO_POINTS = 10                   # distinct log end offsets kept per partition for time lag
BURROW_CODES = {"NOTFOUND": 0, "OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}
_BAD_PARTITION = ("STOP", "STALL", "REWIND")


@dataclass(frozen=True, slots=True)
class PartitionLag:
    lag: int
    time_lag: float | None        # seconds; None: not known yet
    status: str                   # Burrow's partition status


@dataclass(frozen=True, slots=True)
class GroupAssessment:
    partitions: dict[TopicPartitionKey, PartitionLag]
    lag: int                                  # summed over the partitions
    max_time_lag: float | None
    status: str                               # OK, WARN or ERR (Burrow's group status)
    partition_statuses: frozenset[str]        # the statuses among its partitions
    catch_up_seconds: float | None            # math.inf: not gaining; None: not known yet

    def lag_by_topic(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for (topic, _), p in self.partitions.items():
            totals[topic] = totals.get(topic, 0) + p.lag
        return totals


@dataclass(frozen=True)
class Assessment:
    groups: dict[str, GroupAssessment] = field(default_factory=dict)
    under_replicated: tuple[TopicPartitionKey, ...] = ()
    offline: tuple[TopicPartitionKey, ...] = ()
    brokers_down: tuple[int, ...] = ()        # named as replicas, absent from the live brokers


class Assessor:
    def __init__(self) -> None:
        self._leo_points: dict[TopicPartitionKey, deque] = {}           # (time, log end offset)
        self._history: dict[tuple[str, str, int], deque] = {}           # (time, committed, log end)

    def assess(self, observation) -> Assessment:
        metadata = observation.metadata
        if metadata is None:
            return Assessment()
        now = observation.timestamp
        current = observation.current
        self._remember_log_ends(now, current)
        groups = {g: self._group(now, g, o, current) for g, o in observation.groups.items()}
        self._forget_gone(observation)
        live = {b.node_id for b in metadata.brokers}
        partitions = [p for t in metadata.topics for p in t.partitions]
        named = {r for p in partitions for r in p.replicas}
        return Assessment(
            groups=groups,
            under_replicated=tuple((p.topic, p.partition) for p in partitions if len(p.isr) < len(p.replicas)),
            offline=tuple((p.topic, p.partition) for p in partitions if p.is_offline),
            brokers_down=tuple(sorted(named - live)))

    def _remember_log_ends(self, now: float, current: dict) -> None:
        points = self._leo_points
        for key, leo in current.items():
            kept = points.get(key)
            if kept is None:
                points[key] = deque([(now, leo)], maxlen=LEO_POINTS)
            elif kept[-1][1] != leo:
                kept.append((now, leo))

    def _group(self, now: float, group_id: str, observed, current: dict) -> GroupAssessment:
        partitions: dict[TopicPartitionKey, PartitionLag] = {}
        consumed = produced = 0.0
        elapsed = 0.0
        for key, committed in observed.committed.items():
            leo = current.get(key)
            if leo is None:
                continue
            history = self._history.get((group_id, *key))
            if history is None:
                history = self._history[(group_id, *key)] = deque(maxlen=WINDOW)
            history.append((now, committed, leo))
            lag = max(leo - committed, 0)
            partitions[key] = PartitionLag(lag, 0.0 if lag == 0 else self._time_lag(now, key, committed),
                                           _partition_status(history, observed.members))
            first = history[0]
            if first[0] < now:
                consumed += committed - first[1]
                produced += leo - first[2]
                elapsed = max(elapsed, now - first[0])
        lag = sum(p.lag for p in partitions.values())
        statuses = frozenset(p.status for p in partitions.values())
        status = "ERR" if statuses & set(_BAD_PARTITION) else "WARN" if "WARN" in statuses else "OK"
        time_lags = [p.time_lag for p in partitions.values() if p.time_lag is not None]
        return GroupAssessment(partitions=partitions, lag=lag, max_time_lag=max(time_lags) if time_lags else None,
                               status=status, partition_statuses=statuses,
                               catch_up_seconds=_catch_up(lag, consumed, produced, elapsed))

    def _time_lag(self, now: float, key: TopicPartitionKey, committed: int) -> float | None:
        points = self._leo_points.get(key)
        if not points or len(points) < 2:
            return None
        previous = None
        for t, leo in points:
            if leo >= committed:
                if previous is None:          # older than every point: extrapolate at the average rate
                    (t0, o0), (t1, o1) = points[0], points[-1]
                    if o1 <= o0 or t1 <= t0:
                        return None
                    reached = t0 - (o0 - committed) * (t1 - t0) / (o1 - o0)
                else:
                    t0, o0 = previous
                    reached = t0 + (committed - o0) * (t - t0) / (leo - o0)
                return max(now - reached, 0.0)
            previous = (t, leo)
        return 0.0

    def _forget_gone(self, observation) -> None:
        current = observation.current
        for key in [k for k in self._leo_points if k not in current]:
            del self._leo_points[key]
        groups = observation.groups
        for key in [k for k in self._history
                    if k[0] not in groups or (k[1], k[2]) not in groups[k[0]].committed]:
            del self._history[key]


def _partition_status(history: deque, members: int) -> str:
    if len(history) < 2:
        return "OK"
    moved = grew_every_time = False
    grew_every_time = True
    previous = None
    for _, committed, leo in history:
        if previous is not None:
            d_offset = committed - previous[0]
            if d_offset < 0:
                return "REWIND"
            moved = moved or d_offset > 0
            if max(leo - committed, 0) - previous[1] <= 0:
                grew_every_time = False
        previous = (committed, max(leo - committed, 0))
    if previous[1] == 0:
        return "OK"
    if not moved:
        return "STOP" if members == 0 else "STALL"
    return "WARN" if grew_every_time else "OK"


def _catch_up(lag: int, consumed: float, produced: float, elapsed: float) -> float | None:
    if lag == 0:
        return 0.0
    if elapsed <= 0:
        return None
    gain = (consumed - produced) / elapsed
    return lag / gain if gain > 0 else math.inf
