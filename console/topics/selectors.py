"""Reads for topics: the CMAK topic list and one topic in detail.

Both pages start from one Metadata request; everything per topic or per partition (offsets,
log dir sizes) is asked only for what the page shows, batched by the gateway (one
ListOffsets per leader, one DescribeLogDirs per broker). A failing secondary request leaves
its columns empty and adds a warning instead of failing the page.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Paginator

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import ClusterRef
from console.errors import NotFound
from console.kafka_gateway import ConfigEntry, Gateway, GatewayError, TopicInfo
from console.stats import TopicStats, is_preferred_leader, is_under_replicated, topic_stats

STATUS_FILTERS = {
    "": "all topics",
    "under_replicated": "with under-replicated partitions",
    "offline": "with offline partitions",
    "not_preferred": "with leaders off their preferred replica",
}


@dataclass(frozen=True)
class TopicRow:
    name: str
    is_internal: bool
    stats: TopicStats


@dataclass(frozen=True)
class TopicsPage:
    cluster: ClusterRef
    topics: list[TopicRow]
    search: str
    status: str
    include_internal: bool
    page: int
    pages: int
    per_page: int
    matching: int                   # topics that pass the filters
    total: int                      # topics in the cluster
    warnings: list[str]


def _matches(topic: TopicInfo, search: str, status: str, include_internal: bool) -> bool:
    if topic.is_internal and not include_internal:
        return False
    if search and search not in topic.name.lower():
        return False
    if status == "under_replicated":
        return any(map(is_under_replicated, topic.partitions))
    if status == "offline":
        return any(p.is_offline for p in topic.partitions)
    if status == "not_preferred":
        return not all(map(is_preferred_leader, topic.partitions))
    return True


def topic_list(*, cluster: Cluster, search: str = "", status: str = "", include_internal: bool = False,
               page: int | str = 1, per_page: int | None = None) -> TopicsPage:
    if status not in STATUS_FILTERS:
        status = ""
    per_page = per_page or settings.TOPICS_PER_PAGE
    warnings: list[str] = []
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        needle = search.strip().lower()
        matching = [t for t in metadata.topics if _matches(t, needle, status, include_internal)]
        shown = Paginator(matching, per_page).get_page(page)
        offsets = None
        try:
            offsets = gw.high_watermarks(p for t in shown.object_list for p in t.partitions)
        except GatewayError as exc:
            warnings.append(f"Offsets: {exc}")
    live = len(metadata.brokers)
    live_ids = {b.node_id for b in metadata.brokers}
    rows = [TopicRow(name=t.name, is_internal=t.is_internal,
                     stats=topic_stats(t.partitions, cluster_brokers=live, live_brokers=live_ids,
                                       latest_offsets=None if offsets is None else
                                       {p.partition: offsets[(t.name, p.partition)] for p in t.partitions
                                        if (t.name, p.partition) in offsets}))
            for t in shown.object_list]
    return TopicsPage(cluster=ClusterRef.of(cluster), topics=rows, search=search.strip(), status=status,
                      include_internal=include_internal, page=shown.number, pages=shown.paginator.num_pages,
                      per_page=per_page, matching=len(matching), total=len(metadata.topics), warnings=warnings)


@dataclass(frozen=True)
class PartitionRow:
    partition: int
    leader: int                     # -1: offline
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    is_preferred_leader: bool
    is_under_replicated: bool
    log_start_offset: int | None
    high_watermark: int | None
    size: int | None                # bytes on the leader's log dir


@dataclass(frozen=True)
class GroupPartitionRow:
    partition: int
    committed_offset: int | None
    high_watermark: int | None
    lag: int | None


@dataclass(frozen=True)
class GroupRow:
    group_id: str
    state: str
    members: int
    partitions: list[GroupPartitionRow]
    total_lag: int | None           # over the partitions with a commit and a known high watermark
    no_commit: int = 0              # partitions assigned to the group without a committed offset
    lag_unknown: int = 0            # committed partitions whose high watermark is unknown (offline)


@dataclass(frozen=True)
class TopicDetail:
    cluster: ClusterRef
    name: str
    topic_id: str | None
    is_internal: bool
    stats: TopicStats
    partitions: list[PartitionRow]
    configs: list[ConfigEntry]
    consumer_groups: list[GroupRow] | None    # None: the cluster has no consumer group APIs
    warnings: list[str]


def topic_detail(*, cluster: Cluster, name: str) -> TopicDetail:
    warnings: list[str] = []
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata([name])
        topic = metadata.topic(name)
        if topic is None:
            raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
        offsets, sizes, groups = {}, {}, None
        try:
            offsets = gw.partition_offsets(topic.partitions)
        except GatewayError as exc:
            warnings.append(f"Offsets: {exc}")
        try:
            sizes = {(r.broker_id, r.partition): r.size for r in gw.replica_log_dirs(
                {name: [p.partition for p in topic.partitions]}, [b.node_id for b in metadata.brokers])}
        except GatewayError as exc:
            warnings.append(f"Log dir sizes: {exc}")
        configs = gw.topic_configs(name)
        try:
            groups = _groups_reading(gw, topic, {k[1]: v.high_watermark for k, v in offsets.items()})
        except GatewayError as exc:
            warnings.append(f"Consumer groups: {exc}")
            groups = []
    rows = []
    for p in topic.partitions:
        o = offsets.get((name, p.partition))
        rows.append(PartitionRow(
            partition=p.partition, leader=p.leader, replicas=p.replicas, isr=p.isr,
            offline_replicas=p.offline_replicas, is_preferred_leader=is_preferred_leader(p),
            is_under_replicated=is_under_replicated(p), log_start_offset=o.log_start_offset if o else None,
            high_watermark=o.high_watermark if o else None, size=sizes.get((p.leader, p.partition))))
    latest = {r.partition: r.high_watermark for r in rows if r.high_watermark is not None} if offsets else None
    return TopicDetail(cluster=ClusterRef.of(cluster), name=name, topic_id=topic.topic_id,
                       is_internal=topic.is_internal,
                       stats=topic_stats(topic.partitions, cluster_brokers=len(metadata.brokers),
                                         latest_offsets=latest, live_brokers={b.node_id for b in metadata.brokers}),
                       partitions=rows, configs=configs, consumer_groups=groups, warnings=warnings)


def _groups_reading(gw: Gateway, topic: TopicInfo, high_watermarks: dict[int, int]) -> list[GroupRow] | None:
    """Groups with committed offsets on the topic, or with a member assigned one of its partitions.

    Batched (console.kafka_gateway.groups): OffsetFetch asks every group for this topic's
    partitions only, and only groups that can have members (not Empty or Dead) or that
    committed here are described."""
    listed = gw.groups.list_groups()
    if listed is None:
        return None
    coordinators = gw.groups.find_coordinators(g.group_id for g in listed).found
    mine = [(topic.name, p.partition) for p in topic.partitions]
    committed = gw.groups.committed_offsets(coordinators, {g: mine for g in coordinators}).offsets
    may_have_members = {g.group_id for g in listed if g.state not in ("Empty", "Dead")}
    described = gw.groups.describe_groups({g: c for g, c in coordinators.items()
                                           if g in may_have_members or committed.get(g)})
    rows = []
    for group in listed:
        offsets = {p: c.offset for (_, p), c in committed.get(group.group_id, {}).items()}
        description = described.get(group.group_id)
        assigned = {p for m in description.members for t, p in m.assignment if t == topic.name} if description else set()
        if not offsets and not assigned:
            continue
        partitions = []
        for p in sorted(set(offsets) | assigned):
            hw, offset = high_watermarks.get(p), offsets.get(p)
            partitions.append(GroupPartitionRow(partition=p, committed_offset=offset, high_watermark=hw,
                                                lag=hw - offset if hw is not None and offset is not None else None))
        # Never fold partitions without a commit into the total: they are counted apart.
        committed_rows = [r for r in partitions if r.committed_offset is not None]
        known = [r.lag for r in committed_rows if r.lag is not None]
        rows.append(GroupRow(group_id=group.group_id,
                             state=description.state if description and description.state else group.state,
                             members=len(description.members) if description else 0, partitions=partitions,
                             total_lag=sum(known) if known else None,
                             no_commit=len(partitions) - len(committed_rows),
                             lag_unknown=len(committed_rows) - len(known)))
    return rows
