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
from console.kafka_gateway.cache import SnapshotAge
from console.kafka_gateway.errors import NotAuthorized, not_authorized_note
from console.kafka_gateway.group_lag import groups_committed_on
from console.stats import TopicStats, is_preferred_leader, is_under_replicated, topic_stats
from kafka_rules.config_docs import topic_config_doc
from kafka_rules.lag import total_lag

STATUS_FILTERS = {
    "": "all topics",
    "under_replicated": "with under-replicated partitions",
    "offline": "with offline partitions",
    "not_preferred": "with leaders off their preferred replica",
}


LIST_CONFIGS = ("retention.ms", "retention.bytes", "cleanup.policy")
# What the Overview tab's first cards show of the topic's configs (the Configs tab has them all).
OVERVIEW_CONFIGS = LIST_CONFIGS + ("min.insync.replicas",)


@dataclass(frozen=True)
class TopicRow:
    name: str
    is_internal: bool
    stats: TopicStats
    size: int | None = None              # bytes on disk, all replicas on live brokers
    # High watermark - log start offset, summed: offsets, so an upper bound on the records
    # (compaction, transaction markers and aborted records take offsets no consumer reads).
    messages: int | None = None
    retention_ms: str | None = None
    retention_bytes: str | None = None
    cleanup_policy: str | None = None

    @property
    def cleanup_policies(self) -> list[str]:
        """"compact,delete" as ["compact", "delete"]: the list's cell may wrap between them."""
        return [p.strip() for p in (self.cleanup_policy or "").split(",") if p.strip()]

    @property
    def retention_applies(self) -> bool:
        """False for a compact-only topic: Kafka deletes none of its records for their age or the
        partition's size, whatever retention.ms and retention.bytes say."""
        return self.cleanup_policy is None or "delete" in [p.strip() for p in self.cleanup_policy.split(",")]

    @property
    def is_compacted(self) -> bool:
        """Compaction leaves offsets without records: Messages is an upper bound, and says so."""
        return "compact" in self.cleanup_policies

    @property
    def offsets_differ(self) -> bool:
        """CMAK's sum of partition offsets says something Messages does not: records were
        deleted before some partition's latest offset (retention, delete-records)."""
        summed = self.stats.summed_offsets
        return summed is not None and self.messages is not None and summed != self.messages


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
        metadata = gw.metadata(cached=True)
        needle = search.strip().lower()
        matching = [t for t in metadata.topics if _matches(t, needle, status, include_internal)]
        shown = Paginator(matching, per_page).get_page(page)
        extras = _list_extras(gw, list(shown.object_list), [b.node_id for b in metadata.brokers], warnings)
    live = len(metadata.brokers)
    live_ids = {b.node_id for b in metadata.brokers}
    rows = [_topic_row(t, extras, cluster_brokers=live, live_brokers=live_ids) for t in shown.object_list]
    return TopicsPage(cluster=ClusterRef.of(cluster), topics=rows, search=search.strip(), status=status,
                      include_internal=include_internal, page=shown.number, pages=shown.paginator.num_pages,
                      per_page=per_page, matching=len(matching), total=len(metadata.topics), warnings=warnings)


@dataclass
class _ListExtras:
    offsets: dict | None = None          # {(topic, partition): PartitionOffsets}
    sizes: dict | None = None            # {topic: bytes}
    configs: dict | None = None          # {topic: {key: value}}


def _list_extras(gw: Gateway, topics: list[TopicInfo], brokers: list[int], warnings: list[str]) -> _ListExtras:
    """Offsets, sizes and a few configs of the topics shown: one batched request each
    (ListOffsets per leader, DescribeLogDirs per broker, one DescribeConfigs). A failure
    empties its columns and adds a warning."""
    extras = _ListExtras()
    partitions = [p for t in topics for p in t.partitions]
    try:
        extras.offsets = gw.partition_offsets(partitions)
    except GatewayError as exc:
        warnings.append(f"Offsets: {exc}")
    try:
        sizes: dict[str, int] = {}
        for replica in gw.replica_log_dirs({t.name: [p.partition for p in t.partitions] for t in topics}, brokers):
            sizes[replica.topic] = sizes.get(replica.topic, 0) + replica.size
        extras.sizes = sizes
    except GatewayError as exc:
        warnings.append(f"Log dir sizes: {exc}")
    try:
        extras.configs = gw.topics_config_values([t.name for t in topics], LIST_CONFIGS)
    except GatewayError as exc:
        warnings.append(f"Configs: {exc}")
    return extras


def _topic_row(t: TopicInfo, extras: _ListExtras, *, cluster_brokers: int, live_brokers: set[int]) -> TopicRow:
    offsets = None if extras.offsets is None else {
        p.partition: extras.offsets[(t.name, p.partition)] for p in t.partitions if (t.name, p.partition) in extras.offsets}
    configs = (extras.configs or {}).get(t.name, {})
    return TopicRow(
        name=t.name, is_internal=t.is_internal,
        stats=topic_stats(t.partitions, cluster_brokers=cluster_brokers, live_brokers=live_brokers,
                          latest_offsets=None if offsets is None else {k: o.high_watermark for k, o in offsets.items()}),
        size=None if extras.sizes is None else extras.sizes.get(t.name, 0),
        messages=None if offsets is None else sum(o.high_watermark - o.log_start_offset for o in offsets.values()),
        retention_ms=configs.get("retention.ms"), retention_bytes=configs.get("retention.bytes"),
        cleanup_policy=configs.get("cleanup.policy"))


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
    lag: int | None                 # negative: the committed offset is past the log end

    @property
    def is_past_log_end(self) -> bool:
        return self.lag is not None and self.lag < 0


@dataclass(frozen=True)
class GroupRow:
    group_id: str
    state: str
    members: int
    partitions: list[GroupPartitionRow]
    total_lag: int | None           # over the partitions with a commit and a known high watermark
    no_commit: int = 0              # partitions of the topic without a committed offset of the group
    lag_unknown: int = 0            # committed partitions whose high watermark is unknown (offline)

    @property
    def is_active(self) -> bool:
        """Consumers are in the group now (a group without members only keeps its offsets)."""
        return self.members > 0

    @property
    def past_log_end(self) -> int:
        """Partitions whose committed offset is past the high watermark (counted as 0 lag in the total)."""
        return sum(p.is_past_log_end for p in self.partitions)


@dataclass(frozen=True)
class TopicDetail:
    cluster: ClusterRef
    name: str
    topic_id: str | None
    is_internal: bool
    stats: TopicStats
    partitions: list[PartitionRow]
    configs: list[ConfigRow]
    consumer_groups: list[GroupRow] | None    # None: the cluster has no consumer group APIs
    warnings: list[str]
    # When the background lag snapshot that named the groups committed here was taken; None: all read now.
    consumers_age: SnapshotAge | None = None
    # As the topics list has them: every replica's bytes on the live brokers, high watermark
    # minus log start offset summed (None: not known), and a few configs (None: not read).
    size: int | None = None
    messages: int | None = None
    retention_ms: str | None = None
    retention_bytes: str | None = None
    cleanup_policy: str | None = None
    min_insync_replicas: str | None = None

    @property
    def retention_applies(self) -> bool:
        """False for a compact-only topic: Kafka deletes none of its records for their age or the
        partition's size, whatever retention.ms and retention.bytes say."""
        return self.cleanup_policy is None or "delete" in [p.strip() for p in self.cleanup_policy.split(",")]

    @property
    def is_compacted(self) -> bool:
        """Compaction leaves offsets without records: Messages is an upper bound, and says so."""
        return "compact" in [p.strip() for p in (self.cleanup_policy or "").split(",")]

    @property
    def replica_brokers(self) -> list[int]:
        """The brokers the topic's replicas are assigned to, up or not."""
        return sorted({b for p in self.partitions for b in p.replicas})

    @property
    def min_insync_out_of_reach(self) -> bool:
        """min.insync.replicas above the replication factor: every acks=all write is refused
        (NOT_ENOUGH_REPLICAS)."""
        try:
            return int(self.min_insync_replicas or 0) > self.stats.replication_factor > 0
        except ValueError:
            return False


@dataclass(frozen=True)
class PartitionRange:
    """What a partition holds: offsets from its log start to its high watermark (None: no leader)."""

    partition: int
    log_start_offset: int | None
    high_watermark: int | None

    @property
    def records(self) -> int | None:          # an upper bound when compacted
        if self.log_start_offset is None or self.high_watermark is None:
            return None
        return self.high_watermark - self.log_start_offset


def topic_ranges(*, cluster: Cluster, name: str) -> list[PartitionRange]:
    """Each partition's log start offset and high watermark, for the delete-records page."""
    with cluster_gateway(cluster) as gw:
        topic = gw.metadata([name]).topic(name)
        if topic is None:
            raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
        offsets = gw.partition_offsets(topic.partitions)
    found = {p: o for (_, p), o in offsets.items()}
    return [PartitionRange(p.partition, getattr(found.get(p.partition), "log_start_offset", None),
                           getattr(found.get(p.partition), "high_watermark", None))
            for p in sorted(topic.partitions, key=lambda p: p.partition)]


def topic_detail(*, cluster: Cluster, name: str, with_configs: bool = True, with_groups: bool = True) -> TopicDetail:
    """The topic's partitions and stats; its configs and the groups reading it unless left out
    (the Overview tab leaves them to their own tabs: `configs` and `consumer_groups` are then empty)."""
    warnings: list[str] = []
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata([name])
        topic = metadata.topic(name)
        if topic is None:
            raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
        offsets, sizes, groups, consumers_age = {}, {}, None, None
        try:
            offsets = gw.partition_offsets(topic.partitions)
        except GatewayError as exc:
            warnings.append(f"Offsets: {exc}")
        size = None
        try:
            sizes = {(r.broker_id, r.partition): r.size for r in gw.replica_log_dirs(
                {name: [p.partition for p in topic.partitions]}, [b.node_id for b in metadata.brokers])}
            size = sum(sizes.values())
        except GatewayError as exc:
            warnings.append(f"Log dir sizes: {exc}")
        configs, overview_configs = [], {}
        if with_configs:
            try:
                configs = [_config_row(e) for e in gw.topic_config_details(name)]
            except NotAuthorized as exc:
                warnings.append(not_authorized_note("Configs", exc))
            overview_configs = {c.name: c.value for c in configs}
        else:
            try:
                overview_configs = gw.topics_config_values([name], OVERVIEW_CONFIGS).get(name, {})
            except GatewayError as exc:
                warnings.append(f"Configs: {exc}")
        groups = []
        if with_groups:
            try:
                groups, consumers_age = _groups_reading(gw, topic, {k[1]: v.high_watermark for k, v in offsets.items()})
            except GatewayError as exc:
                warnings.append(f"Consumer groups: {exc}")
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
                       partitions=rows, configs=configs, consumer_groups=groups, warnings=warnings,
                       consumers_age=consumers_age, size=size,
                       messages=sum(o.high_watermark - o.log_start_offset for o in offsets.values()) if offsets
                       else None,
                       retention_ms=overview_configs.get("retention.ms"),
                       retention_bytes=overview_configs.get("retention.bytes"),
                       cleanup_policy=overview_configs.get("cleanup.policy"),
                       min_insync_replicas=overview_configs.get("min.insync.replicas"))


@dataclass(frozen=True)
class TopicConsumers:
    cluster: ClusterRef
    name: str
    partitions: int
    consumer_groups: list[GroupRow] | None    # None: the cluster has no consumer group APIs
    warnings: list[str]
    # When the background lag snapshot that named the groups committed here was taken; None: all read now.
    consumers_age: SnapshotAge | None = None

    @property
    def active_groups(self) -> int:
        return sum(g.is_active for g in self.consumer_groups or ())


def topic_consumers(*, cluster: Cluster, name: str) -> TopicConsumers:
    """The groups reading the topic (committed offsets on it, or members assigned to it), each
    partition's committed offset against its high watermark, live."""
    warnings: list[str] = []
    consumers_age = None
    with cluster_gateway(cluster) as gw:
        topic = gw.metadata([name]).topic(name)
        if topic is None:
            raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
        try:
            high_watermarks = {p: hw for (_, p), hw in gw.high_watermarks(topic.partitions).items()}
        except GatewayError as exc:
            warnings.append(f"Offsets: {exc}")
            high_watermarks = {}
        try:
            groups, consumers_age = _groups_reading(gw, topic, high_watermarks)
        except GatewayError as exc:
            warnings.append(f"Consumer groups: {exc}")
            groups = []
    return TopicConsumers(cluster=ClusterRef.of(cluster), name=name, partitions=len(topic.partitions),
                          consumer_groups=groups, warnings=warnings, consumers_age=consumers_age)


def topic_partition_count(*, cluster: Cluster, name: str) -> int:
    with cluster_gateway(cluster) as gw:
        topic = gw.metadata([name]).topic(name)
    if topic is None:
        raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
    return len(topic.partitions)


@dataclass(frozen=True)
class CreateDefaults:
    """What a topic created without saying gets from the cluster: the brokers' num.partitions and
    default.replication.factor (None when the console may not read them), and the brokers up."""
    partitions: int | None
    replication_factor: int | None
    brokers: int


def topic_create_defaults(*, cluster: Cluster) -> CreateDefaults:
    """Read from one live broker (every broker carries the cluster's defaults; a broker's own
    override is rare and is what a topic created through that broker would get)."""
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata(cached=True)
        ids = [b.node_id for b in metadata.brokers]
        if not ids:
            return CreateDefaults(partitions=None, replication_factor=None, brokers=0)
        asked = metadata.controller_id if metadata.controller_id in ids else ids[0]
        try:
            values = {c.name: c.value for c in gw.broker_configs(asked)}
        except GatewayError:          # NotAuthorized among them: the form keeps its own defaults
            values = {}

    def number(name: str) -> int | None:
        try:
            return int(values[name])
        except (KeyError, TypeError, ValueError):
            return None
    return CreateDefaults(partitions=number("num.partitions"), replication_factor=number("default.replication.factor"),
                          brokers=len(ids))


def _groups_reading(gw: Gateway, topic: TopicInfo, high_watermarks: dict[int, int]
                    ) -> tuple[list[GroupRow] | None, SnapshotAge | None]:
    """Groups with committed offsets on the topic, or with a member assigned one of its partitions.

    Batched (console.kafka_gateway.groups): OffsetFetch asks the groups for this topic's
    partitions only, and only groups that can have members (not Empty or Dead) or that
    committed here are described. With the background lag snapshot on, only the groups it
    shows committed here and those that may have members are asked at all (`groups_committed_on`)."""
    listed = gw.groups.list_groups()
    if listed is None:
        return None, None
    committed_here = groups_committed_on(gw, topic.name, max_age=settings.GROUP_LAG_MAX_AGE_SECONDS,
                                         wait_first=settings.GROUP_LAG_WAIT_SECONDS)
    if committed_here is not None:      # the background snapshot names them: not every group is asked
        listed = [g for g in listed if g.group_id in committed_here.groups or g.state not in ("Empty", "Dead")]
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
        # Every partition of the topic, as the group's page lists them: the ones without a
        # commit are counted apart, so a group that committed on some only never reads as whole.
        for p in sorted({tp.partition for tp in topic.partitions} | set(offsets) | assigned):
            hw, offset = high_watermarks.get(p), offsets.get(p)
            partitions.append(GroupPartitionRow(partition=p, committed_offset=offset, high_watermark=hw,
                                                lag=hw - offset if hw is not None and offset is not None else None))
        # Never fold partitions without a commit into the total: they are counted apart.
        committed_rows = [r for r in partitions if r.committed_offset is not None]
        known = [r.lag for r in committed_rows if r.lag is not None]
        rows.append(GroupRow(group_id=group.group_id,
                             state=description.state if description and description.state else group.state,
                             members=len(description.members) if description else 0, partitions=partitions,
                             total_lag=total_lag(known),
                             no_commit=len(partitions) - len(committed_rows),
                             lag_unknown=len(committed_rows) - len(known)))
    return rows, committed_here.age if committed_here is not None else None


# --- the configs table -----------------------------------------------------------------------

SOURCE_LABELS = {"DYNAMIC_TOPIC_CONFIG": "topic", "DYNAMIC_BROKER_CONFIG": "broker",
                 "DYNAMIC_DEFAULT_BROKER_CONFIG": "broker", "STATIC_BROKER_CONFIG": "broker",
                 "DEFAULT_CONFIG": "default"}


@dataclass(frozen=True)
class ConfigRow:
    name: str
    value: str | None               # None for a sensitive value: never shown
    default_value: str | None       # what applies without the topic's override
    default_from: str | None        # the config that default comes from, when it is another one
    source: str                     # topic, broker or default (Kafka's DescribeConfigs source, in words)
    kafka_source: str
    read_only: bool
    is_sensitive: bool
    config_type: str | None
    doc: str                        # Kafka's documentation line, for the tooltip

    @property
    def is_override(self) -> bool:
        return self.kafka_source == "DYNAMIC_TOPIC_CONFIG"


@dataclass(frozen=True)
class TopicConfigsPage:
    cluster: ClusterRef
    name: str
    configs: list[ConfigRow]
    warnings: list[str]


def topic_configs(*, cluster: Cluster, name: str) -> TopicConfigsPage:
    """Every config of the topic: value, default, source, read-only / sensitive, and doc line."""
    with cluster_gateway(cluster) as gw:
        if gw.metadata([name]).topic(name) is None:
            raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
        entries = gw.topic_config_details(name)
    return TopicConfigsPage(cluster=ClusterRef.of(cluster), name=name, configs=[_config_row(e) for e in entries],
                            warnings=[])


def topic_config(*, cluster: Cluster, name: str, key: str) -> ConfigRow:
    row = next((c for c in topic_configs(cluster=cluster, name=name).configs if c.name == key), None)
    if row is None:
        raise NotFound(f"Topic {name} has no config {key!r}.")
    return row


def _config_row(entry: ConfigEntry) -> ConfigRow:
    hidden = entry.is_sensitive
    return ConfigRow(name=entry.name, value=None if hidden else entry.value,
                     default_value=None if hidden else entry.default_value,
                     default_from=entry.default_from if entry.default_from != entry.name else None,
                     source=SOURCE_LABELS.get(entry.source, entry.source.lower()), kafka_source=entry.source,
                     read_only=entry.read_only, is_sensitive=hidden, config_type=entry.config_type,
                     doc=entry.documentation or topic_config_doc(entry.name) or "")
