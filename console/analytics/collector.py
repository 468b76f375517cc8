"""The collector: one snapshot of a cluster into the lake (Celery beat runs it every SNAPSHOT_SECONDS).

A snapshot is a handful of batched requests, whatever the cluster's size: Metadata, ListOffsets
(earliest and latest, one request per leader each), DescribeLogDirs (one per broker: replica
sizes and each log dir's total/usable bytes), one DescribeConfigs for every topic's retention
configs, and the groups pages' batched calls (console.kafka_gateway.groups): ListGroups,
FindCoordinator v4 for every group at once, DescribeGroups and OffsetFetch v8 per coordinator.
Share groups (KIP-932) beside them: ShareGroupDescribe and DescribeShareGroupOffsets per
coordinator (the share lag, KIP-1226), and, on the bundled engine, one call to its admin
interface for every share partition's counters (share_groups.py).
"""
from __future__ import annotations

import bisect
import datetime as dt
import time
from dataclasses import dataclass

import pyarrow as pa

from console.analytics import lake as L
from console.analytics.share_groups import SHARE_TYPE, share_partition_rows
from console.analytics.storage import snapshot_write
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.kafka_gateway import snapshots
from console.kafka_gateway.wire import bulk_allocation
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

CONSUMER_PROTOCOLS = ("consumer", "")        # "" : groups that only commit offsets (no members ever)


@dataclass(frozen=True)
class SnapshotSummary:
    cluster_id: int
    taken_at: dt.datetime
    rows: dict[str, int]
    seconds: float


# Topic configs change rarely, and one DescribeConfigs for 10,000 topics was the largest
# share of a snapshot's console time (measured: ~40 %). So each snapshot asks for the topics
# it has not seen and for the next 1/CONFIGS_REFRESH_SNAPSHOTS of the others, in turn: every
# topic's configs are at most that many snapshots old (5 minutes at the default 30 s), and no
# snapshot pays for all of them. The lake keeps one config row per topic per snapshot either way.
CONFIGS_REFRESH_SNAPSHOTS = 10


@dataclass
class _KnownConfigs:
    configs: dict[str, snapshots.RetentionConfig]
    after: str = ""                 # the last topic asked again: the next slice starts after it, by name


_configs_cache: dict[tuple[int, str], _KnownConfigs] = {}


def snapshot_collect(*, cluster: Cluster, lake_url: str, taken_at: dt.datetime | None = None) -> SnapshotSummary:
    started = time.monotonic()
    taken_at = (taken_at or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0)
    # Tens of thousands of rows of acyclic objects: the cyclic GC would rescan the growing heap.
    with bulk_allocation(), cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        partitions = [p for t in metadata.topics for p in t.partitions]
        starts = gw.groups.log_offsets(partitions, timestamp=EARLIEST_TIMESTAMP).offsets
        ends = gw.groups.log_offsets(partitions, timestamp=LATEST_TIMESTAMP).offsets
        replicas, dirs = snapshots.log_dirs(gw, [b.node_id for b in metadata.brokers])
        configs = _retention_configs(gw, (cluster.pk, cluster.bootstrap_servers), [t.name for t in metadata.topics])
        listed = gw.groups.list_groups() or ()
        group_ids = [g.group_id for g in listed if g.protocol_type in CONSUMER_PROTOCOLS]
        coordinators = gw.groups.find_coordinators(group_ids).found if group_ids else {}
        committed = gw.groups.committed_offsets(coordinators).offsets if coordinators else {}
        members = {g: len(d.members) for g, d in gw.groups.describe_groups(coordinators).items()} \
            if coordinators else {}
        share_groups = share_partition_rows(gw, [g.group_id for g in listed if g.group_type == SHARE_TYPE], ends)
        tables = {
            L.PARTITIONS: _partition_table(taken_at, partitions, starts, ends, replicas),
            L.GROUP_OFFSETS: _group_offsets_table(taken_at, committed, ends, members),
            L.LOG_DIRS: [{L.TS: taken_at, L.BROKER: d.broker_id, L.LOG_DIR: d.log_dir, L.TOTAL_BYTES: d.total_bytes,
                          L.USABLE_BYTES: d.usable_bytes, L.SIZE_BYTES: d.size_bytes} for d in dirs],
            L.TOPIC_CONFIGS: _columns(L.TOPIC_CONFIGS, taken_at, {
                L.TOPIC: [c.topic for c in configs], L.CLEANUP_POLICY: [c.cleanup_policy for c in configs],
                L.RETENTION_MS: [c.retention_ms for c in configs],
                L.RETENTION_BYTES: [c.retention_bytes for c in configs],
                L.SEGMENT_BYTES: [c.segment_bytes for c in configs]}),
            L.SHARE_GROUP_PARTITIONS: pa.Table.from_pylist([{L.TS: taken_at, **row} for row in share_groups],
                                                           schema=L.SCHEMAS[L.SHARE_GROUP_PARTITIONS]),
        }
    written = {table: snapshot_write(lake_url=lake_url, cluster_id=cluster.pk, table=table, rows=rows,
                                     taken_at=taken_at)
               for table, rows in tables.items()}
    return SnapshotSummary(cluster.pk, taken_at, written, time.monotonic() - started)


def _retention_configs(gw, cluster_key: tuple[int, str], topics: list[str]) -> list[snapshots.RetentionConfig]:
    """Every topic's retention configs: new topics and the next slice of known ones (in name
    order, wrapping around; a topic created meanwhile does not shift the turns) asked now."""
    known = _configs_cache.setdefault(cluster_key, _KnownConfigs({}))
    seen = sorted(t for t in topics if t in known.configs)
    chunk = -(-len(seen) // CONFIGS_REFRESH_SNAPSHOTS)
    turn = bisect.bisect_right(seen, known.after)
    again = (seen[turn:] + seen[:turn])[:chunk]
    known.after = again[-1] if again else ""
    asked = [t for t in topics if t not in known.configs] + again
    if asked:
        known.configs.update({c.topic: c for c in snapshots.retention_configs(gw, asked)})
    return [known.configs[t] for t in topics if t in known.configs]


def _columns(table: str, taken_at: dt.datetime, columns: dict[str, list]) -> pa.Table:
    """A table of the snapshot from its columns (faster than a dict per row at 40,000 rows)."""
    rows = len(next(iter(columns.values()))) if columns else 0
    return pa.table({L.TS: pa.array([taken_at] * rows, L.SCHEMAS[table].field(L.TS).type), **columns},
                    schema=L.SCHEMAS[table])


def _partition_table(taken_at, partitions, starts, ends, replicas) -> pa.Table:
    sizes = {(r.broker_id, r.topic, r.partition): r.size for r in replicas}
    known = [p for p in partitions if (p.topic, p.partition) in starts and (p.topic, p.partition) in ends]
    return _columns(L.PARTITIONS, taken_at, {
        L.TOPIC: [p.topic for p in known], L.PARTITION: [p.partition for p in known],
        L.LEADER: [p.leader for p in known],
        L.LOG_START_OFFSET: [starts[p.topic, p.partition] for p in known],
        L.LOG_END_OFFSET: [ends[p.topic, p.partition] for p in known],
        L.SIZE_BYTES: [sizes.get((p.leader, p.topic, p.partition), 0) for p in known]})


def _group_offsets_table(taken_at, committed, ends, members) -> pa.Table:
    rows = [(group, topic, partition, offset.offset, ends[topic, partition])
            for group, by_partition in committed.items()
            for (topic, partition), offset in by_partition.items()
            if (topic, partition) in ends and offset.offset >= 0]
    return _columns(L.GROUP_OFFSETS, taken_at, {
        L.GROUP: [r[0] for r in rows], L.TOPIC: [r[1] for r in rows], L.PARTITION: [r[2] for r in rows],
        L.COMMITTED_OFFSET: [r[3] for r in rows], L.LOG_END_OFFSET: [r[4] for r in rows],
        L.MEMBERS: [members.get(r[0], 0) for r in rows]})
