"""The collector: one snapshot of a cluster into the lake (Celery beat runs it every SNAPSHOT_SECONDS).

A snapshot is a handful of batched requests, whatever the cluster's size: Metadata, ListOffsets
(earliest and latest, one request per leader each), DescribeLogDirs (one per broker: replica
sizes and each log dir's total/usable bytes), one DescribeConfigs for every topic's retention
configs, and the groups pages' batched calls (console.kafka_gateway.groups): ListGroups,
FindCoordinator v4 for every group at once, DescribeGroups and OffsetFetch v8 per coordinator.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

from console.analytics import lake as L
from console.analytics.storage import snapshot_write
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.kafka_gateway import snapshots
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

CONSUMER_PROTOCOLS = ("consumer", "")        # "" : groups that only commit offsets (no members ever)


@dataclass(frozen=True)
class SnapshotSummary:
    cluster_id: int
    taken_at: dt.datetime
    rows: dict[str, int]
    seconds: float


def snapshot_collect(*, cluster: Cluster, lake_url: str, taken_at: dt.datetime | None = None) -> SnapshotSummary:
    started = time.monotonic()
    taken_at = (taken_at or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0)
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        partitions = [p for t in metadata.topics for p in t.partitions]
        starts = gw.groups.log_offsets(partitions, timestamp=EARLIEST_TIMESTAMP).offsets
        ends = gw.groups.log_offsets(partitions, timestamp=LATEST_TIMESTAMP).offsets
        replicas, dirs = snapshots.log_dirs(gw, [b.node_id for b in metadata.brokers])
        configs = snapshots.retention_configs(gw, [t.name for t in metadata.topics])
        group_ids = [g.group_id for g in gw.groups.list_groups() or () if g.protocol_type in CONSUMER_PROTOCOLS]
        coordinators = gw.groups.find_coordinators(group_ids).found if group_ids else {}
        committed = gw.groups.committed_offsets(coordinators).offsets if coordinators else {}
        members = {g: len(d.members) for g, d in gw.groups.describe_groups(coordinators).items()} \
            if coordinators else {}
    sizes = {(r.broker_id, r.topic, r.partition): r.size for r in replicas}
    tables = {
        L.PARTITIONS: [{L.TS: taken_at, L.TOPIC: p.topic, L.PARTITION: p.partition, L.LEADER: p.leader,
                        L.LOG_START_OFFSET: starts[p.topic, p.partition], L.LOG_END_OFFSET: ends[p.topic, p.partition],
                        L.SIZE_BYTES: sizes.get((p.leader, p.topic, p.partition), 0)}
                       for p in partitions if (p.topic, p.partition) in starts and (p.topic, p.partition) in ends],
        L.GROUP_OFFSETS: [{L.TS: taken_at, L.GROUP: group, L.TOPIC: topic, L.PARTITION: partition,
                           L.COMMITTED_OFFSET: committed_offset.offset, L.LOG_END_OFFSET: ends[topic, partition],
                           L.MEMBERS: members.get(group, 0)}
                          for group, by_partition in committed.items()
                          for (topic, partition), committed_offset in by_partition.items()
                          if (topic, partition) in ends and committed_offset.offset >= 0],
        L.LOG_DIRS: [{L.TS: taken_at, L.BROKER: d.broker_id, L.LOG_DIR: d.log_dir, L.TOTAL_BYTES: d.total_bytes,
                      L.USABLE_BYTES: d.usable_bytes, L.SIZE_BYTES: d.size_bytes} for d in dirs],
        L.TOPIC_CONFIGS: [{L.TS: taken_at, L.TOPIC: c.topic, L.CLEANUP_POLICY: c.cleanup_policy,
                           L.RETENTION_MS: c.retention_ms, L.RETENTION_BYTES: c.retention_bytes,
                           L.SEGMENT_BYTES: c.segment_bytes} for c in configs],
    }
    written = {table: snapshot_write(lake_url=lake_url, cluster_id=cluster.pk, table=table, rows=rows,
                                     taken_at=taken_at)
               for table, rows in tables.items()}
    return SnapshotSummary(cluster.pk, taken_at, written, time.monotonic() - started)
