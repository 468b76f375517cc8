"""Reads for a share group's page (KIP-932): members, share partitions, configs, queue health,
lag history, and the preview of a start offset reset.

One page costs: FindCoordinator, ShareGroupDescribe and DescribeShareGroupOffsets at the
coordinator, ListOffsets for the high watermarks, DescribeConfigs of the GROUP resource and,
on the bundled engine, one call to its admin interface for the share partitions' counts
(records in flight by state, lock expiries, archived). The queue health is read from the
analytics lake's last snapshots (pyarrow), the lag history from the analytics job's result.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import pyarrow as pa
from django.conf import settings

from console.analytics import lake as L
from console.analytics.selectors import result_rows
from console.analytics.storage import recent_snapshot_rows
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import ClusterRef
from console.errors import NotFound
from console.kafka_gateway import Gateway, GatewayError
from console.kafka_gateway.records import ConfigEntry
from console.kafka_gateway.share_records import ShareGroupInfo, ShareMember
from console.share_groups import health
from console.share_groups.reset import SharePlan, ShareResetSpec, share_reset_plan

RESOLUTIONS = ("1m", "5m", "1h")


@dataclass(frozen=True)
class SharePartitionRow:
    topic: str
    partition: int
    start_offset: int | None          # None: no state at the share coordinator yet
    end_offset: int | None            # the last offset handed out (SPEO); from the engine only
    high_watermark: int | None
    lag: int | None
    members: int                      # members assigned the partition
    available: int | None             # the engine's counts of the records in flight
    acquired: int | None
    acknowledged: int | None
    archived: int | None
    in_flight: int | None
    deliveries: int | None            # counters since the partition's leader took it
    lock_expiries: int | None
    archived_total: int | None        # archived for any reason (delivery limit, rejected, gaps, aborted)
    archived_poison_total: int | None
    status: str = health.UNKNOWN
    flags: tuple[health.Flag, ...] = ()


@dataclass(frozen=True)
class ShareGroupDetail:
    cluster: ClusterRef
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    coordinator: int
    members: tuple[ShareMember, ...]
    partitions: list[SharePartitionRow]
    configs: list[ConfigEntry]
    total_lag: int | None
    health_status: str
    health_as_of: object | None       # the newest snapshot judged (a datetime), None without any
    counters_known: bool              # the cluster told the in-flight counts (the bundled engine)
    warnings: list[str]

    @property
    def is_empty(self) -> bool:
        return not self.members


def share_group_detail(*, cluster: Cluster, group_id: str) -> ShareGroupDetail:
    warnings: list[str] = []
    with cluster_gateway(cluster) as gw:
        info, coordinator = _describe(gw, cluster, group_id)
        offsets = gw.share_groups.offsets({group_id: coordinator})
        if group_id in offsets.errors:
            raise GatewayError(f"The offsets of share group {group_id!r} could not be read: "
                               f"{offsets.errors[group_id]}")
        rows = offsets.offsets.get(group_id, [])
        high_watermarks = _high_watermarks(gw, [(o.topic, o.partition) for o in rows], warnings)
        stats = _partition_stats(gw, group_id, warnings)
        configs = _configs(gw, group_id, warnings)
    assigned: dict[tuple[str, int], int] = defaultdict(int)
    for member in info.members:
        for tp in member.assignment:
            assigned[tp] += 1
    judged, as_of = _health(cluster, group_id, configs, warnings)
    partitions = []
    for o in rows:
        s = stats.get((o.topic, o.partition)) if stats is not None else None
        status, flags = judged.get((o.topic, o.partition), (health.UNKNOWN, (health.Flag(
            health.UNKNOWN, "No snapshot of this share partition in the analytics lake yet: the console takes one "
                            f"every {settings.SNAPSHOT_SECONDS} s while Celery beat runs."),)))
        partitions.append(SharePartitionRow(
            topic=o.topic, partition=o.partition, start_offset=o.start_offset if o.start_offset >= 0 else None,
            end_offset=s.end_offset if s else None, high_watermark=high_watermarks.get((o.topic, o.partition)),
            lag=o.lag, members=assigned.get((o.topic, o.partition), 0),
            available=s.available if s else None, acquired=s.acquired if s else None,
            acknowledged=s.acknowledged if s else None, archived=s.archived if s else None,
            in_flight=s.in_flight if s else None, deliveries=s.deliveries if s else None,
            lock_expiries=s.lock_expiries if s else None,
            archived_total=sum(s.archived_total.values()) if s else None,
            archived_poison_total=(s.archived_total.get("delivery_limit", 0) + s.archived_total.get("rejected", 0))
            if s else None, status=status, flags=flags))
    lags = [p.lag for p in partitions if p.lag is not None]
    return ShareGroupDetail(
        cluster=ClusterRef.of(cluster), group_id=group_id, state=info.state, group_epoch=info.group_epoch,
        assignment_epoch=info.assignment_epoch, assignor=info.assignor, coordinator=coordinator,
        members=info.members, partitions=partitions, configs=configs, total_lag=sum(lags) if lags else None,
        health_status=health.group_status([health.PartitionHealth(p.topic, p.partition, p.status, p.flags)
                                           for p in partitions]),
        health_as_of=as_of, counters_known=stats is not None, warnings=warnings)


def _describe(gw: Gateway, cluster: Cluster, group_id: str) -> tuple[ShareGroupInfo, int]:
    if not gw.share_groups.supported():
        raise GatewayError(f"Cluster {cluster.name} does not offer share groups (ShareGroupDescribe v1, "
                           "Kafka 4.1 and later).")
    found = gw.groups.find_coordinators([group_id])
    if group_id not in found.found:
        raise GatewayError(f"No coordinator for group {group_id!r}: {found.errors.get(group_id, 'unknown')}")
    coordinator = found.found[group_id]
    info = gw.share_groups.describe({group_id: coordinator})[group_id]
    if info.error is not None:
        if "GROUP_ID_NOT_FOUND" in info.error:
            raise NotFound(f"Cluster {cluster.name} has no share group {group_id!r}.")
        raise GatewayError(f"Share group {group_id!r} could not be described: {info.error}")
    return info, coordinator


def _high_watermarks(gw: Gateway, partitions: list[tuple[str, int]], warnings: list[str]) -> dict:
    if not partitions:
        return {}
    metadata = gw.metadata(sorted({t for t, _ in partitions}))
    wanted = [p for t in metadata.topics for p in t.partitions if (p.topic, p.partition) in set(partitions)]
    try:
        return gw.high_watermarks(wanted)
    except GatewayError as exc:
        warnings.append(f"The high watermarks could not be read: {exc}")
        return {}


def _partition_stats(gw: Gateway, group_id: str, warnings: list[str]) -> dict | None:
    try:
        stats = gw.share_groups.partition_stats(group_id)
    except GatewayError as exc:
        warnings.append(f"The records in flight could not be read from the engine: {exc}")
        return None
    return None if stats is None else {(s.topic, s.partition): s for s in stats}


def _configs(gw: Gateway, group_id: str, warnings: list[str]) -> list[ConfigEntry]:
    try:
        return gw.share_groups.configs(group_id)
    except GatewayError as exc:
        warnings.append(f"The group's configs could not be read: {exc}")
        return []


def _health(cluster: Cluster, group_id: str, configs: list[ConfigEntry], warnings: list[str]):
    """{(topic, partition): (status, flags)} from the lake's last snapshots, and their time. A
    lake that cannot be read costs the health, never the page."""
    try:
        rows = recent_snapshot_rows(lake_url=settings.ANALYTICS_LAKE, cluster_id=cluster.pk,
                                    table=L.SHARE_GROUP_PARTITIONS, snapshots=health.WINDOW,
                                    where={L.GROUP: group_id})
    except (OSError, pa.ArrowException) as exc:
        warnings.append(f"The queue health could not be read from the analytics lake: {exc}")
        return {}, None
    lock = next((int(c.value) for c in configs if c.name == "share.record.lock.duration.ms" and c.value), None)
    by_partition: dict[tuple[str, int], list[health.Sample]] = defaultdict(list)
    for r in rows:
        by_partition[(r[L.TOPIC], r[L.PARTITION])].append(health.Sample(
            r[L.TS].timestamp(), r[L.START_OFFSET], r[L.LAG], r[L.ARCHIVED_POISON], r[L.LOCK_EXPIRIES]))
    judged = {tp: health.evaluate(samples, lock_duration_ms=lock) for tp, samples in by_partition.items()}
    return judged, max((r[L.TS] for r in rows), default=None)


def share_lag_history(*, cluster: Cluster, group_id: str, resolution: str = "5m") -> list[dict]:
    """The analytics job's lag history of the group (empty before its first run)."""
    resolution = resolution if resolution in RESOLUTIONS else "5m"
    return result_rows(lake_url=settings.ANALYTICS_LAKE, job=f"share_group_lag_{resolution}", cluster_id=cluster.pk,
                       where={L.GROUP: group_id}, sort=L.BUCKET)


def share_reset_preview(*, cluster: Cluster, group_id: str, spec: ShareResetSpec) -> SharePlan:
    with cluster_gateway(cluster) as gw:
        return share_reset_plan(gw, cluster_name=cluster.name, group_id=group_id, spec=spec)
