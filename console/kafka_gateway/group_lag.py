"""Every consumer group's lag inputs (committed offsets and their partitions' log end
offsets), for the groups list sorted by lag.

At 2,000 groups committing on 40,000 partitions, reading them costs a page about 1.5 CPU-s
of kafka-python's codec (benchmarks/console_pages.py), while a Kafka operator reads a lag
ranking as a trend. So `group_lags` serves them from `cache.GROUP_LAGS`: collected on a
background thread over a gateway of its own, with the time of collection for the page to
show (see console.kafka_gateway.cache). One group's page reads its offsets live.

The collection asks in rounds of a few thousand offsets rather than all at once: the same
work, but no single answer holds a broker's request loop (or this process) for long, so
pages served meanwhile are not stuck behind it.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from console.kafka_gateway import cache
from console.kafka_gateway.cache import GroupLagSnapshot, SnapshotAge
from console.kafka_gateway.client import Gateway
from console.kafka_gateway.group_records import GroupOffsets, LogOffsets
from console.kafka_gateway.groups import LagSnapshot

GROUPS_PER_ROUND = 200            # OffsetFetch: ~4,000 offsets at 20 partitions a group
PARTITIONS_PER_ROUND = 4000       # ListOffsets


def group_lags(gateway: Gateway, *, max_age: float, wait_first: float) -> GroupLagSnapshot | None:
    """All groups' lag inputs, at most `max_age` seconds old when a collection is not running
    late; None while the first collection of this process is still running after
    `wait_first` seconds. max_age 0: collected now over `gateway`."""
    return cache.GROUP_LAGS.get_for(gateway, collect, max_age=max_age, wait_first=wait_first)


@dataclass(frozen=True)
class CommittedOn:
    """The groups with a committed offset on a topic, and when the snapshot that says so was taken."""

    groups: frozenset[str]
    age: SnapshotAge


def groups_committed_on(gateway: Gateway, topic: str, *, max_age: float, wait_first: float) -> CommittedOn | None:
    """The groups with a committed offset on `topic` in the background snapshot (it holds every
    group's offsets); None when the snapshot is off (max_age 0) or not in yet. A topic's pages
    read live only these groups and those that may have members, not every group of the
    cluster: a group that commits has members, and an empty group's offsets change only by an
    admin's commit (a reset): this console's own drop the snapshot (`GroupCalls` writes), others'
    show once it is renewed, within `max_age` (the page says as of when: `group_lag_age`)."""
    if max_age <= 0:
        return None
    cached = group_lags(gateway, max_age=max_age, wait_first=wait_first)
    if cached is None or cached.lag is None:
        return None
    groups = frozenset(group for group, offsets in cached.lag.committed.offsets.items()
                       if any(t == topic for t, _ in offsets))
    return CommittedOn(groups, SnapshotAge.of(cached, snapshots=cache.GROUP_LAGS, max_age=max_age))


def collect(gateway: Gateway) -> GroupLagSnapshot:
    """ListGroups, FindCoordinator, then OffsetFetch and ListOffsets (each partition once) in
    rounds; no descriptions (the page describes only the groups it shows)."""
    collected_at = datetime.now(timezone.utc)
    calls = gateway.groups
    listed = calls.list_groups() or []
    coordinators = calls.find_coordinators(g.group_id for g in listed)
    committed = GroupOffsets()
    ids = sorted(coordinators.found)
    for i in range(0, len(ids), GROUPS_PER_ROUND):
        part = calls.committed_offsets({g: coordinators.found[g] for g in ids[i:i + GROUPS_PER_ROUND]})
        committed.offsets.update(part.offsets)
        committed.errors.update(part.errors)
    wanted = {tp for offsets in committed.offsets.values() for tp in offsets}
    metadata = gateway.metadata(cached=True) if wanted else None
    leaders = [p for t in metadata.topics for p in t.partitions if (p.topic, p.partition) in wanted] if metadata else []
    log_end = LogOffsets()
    for i in range(0, len(leaders), PARTITIONS_PER_ROUND):
        part = calls.log_offsets(leaders[i:i + PARTITIONS_PER_ROUND])
        log_end.offsets.update(part.offsets)
        log_end.errors.update(part.errors)
    return GroupLagSnapshot(collected_at=collected_at, lag=LagSnapshot(
        coordinators=coordinators, described={}, committed=committed, log_end_offsets=log_end))
