"""Reads for brokers: who is up or down, the CMAK broker table, one broker's config."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from console import formatting
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INLINE, INTERNAL, ClusterRef
from console.clusters.selectors import BrokerStatus, broker_statuses
from console.errors import NotFound
from console.kafka_gateway import BrokerNode, ClusterMetadata, ConfigEntry, EngineBroker, Gateway
from console.kafka_gateway import cache
from console.kafka_gateway.cache import LogDirSnapshot, SnapshotAge
from console.kafka_gateway.errors import NotAuthorized, not_authorized_note
from console.kafka_gateway.log_dirs import log_dir_totals
from console.stats import SKEW_TOLERANCE_PERCENT, broker_loads

PREVIEW_PARTITIONS = 12
# This engine's read-only broker config naming the partitions its log cleaner gave up on
# ("topic-partition", comma-separated). Apache Kafka has no such config: it counts them only
# in the JMX gauge uncleanable-partitions-count, which the Kafka protocol does not carry.
UNCLEANABLE_PARTITIONS = "engine.log.cleaner.uncleanable.partitions"


@dataclass(frozen=True)
class BrokerRow:
    status: BrokerStatus = field(metadata=INLINE)   # id, address, up/stopped/down; its fields read as the row's
    partitions: int = 0                      # replicas assigned to the broker
    leaders: int = 0
    partition_ids: dict[str, list[int]] = field(default_factory=dict)   # {topic: [partition ids]} assigned to it
    leader_ids: dict[str, list[int]] = field(default_factory=dict)      # {topic: [partition ids]} it leads
    partition_ids_preview: str = ""
    is_skewed: bool = False                  # replicas more than SKEW_TOLERANCE_PERCENT off the mean, either way
    is_leader_skewed: bool = False           # leaderships more than SKEW_TOLERANCE_PERCENT off the mean
    log_dir_size: int | None = None          # bytes; None when the broker is down or not collected yet
    offline_partitions: int = 0              # assigned partitions without a leader
    replicas_deviation_percent: float = 0.0  # from the mean of the brokers: + above, - below
    leaders_deviation_percent: float = 0.0

    @property
    def replicas_vs_mean(self) -> str:
        return formatting.percent_change(self.replicas_deviation_percent)

    @property
    def leaders_vs_mean(self) -> str:
        return formatting.percent_change(self.leaders_deviation_percent)

    @property
    def topic_partitions(self) -> list[tuple[str, list[int], list[int]]]:
        """(topic, partition ids assigned, the ones of them it leads): the broker page's rows."""
        return [(topic, ids, self.leader_ids.get(topic, [])) for topic, ids in self.partition_ids.items()]

    def __getattr__(self, name: str):
        # Only for names the row itself lacks: broker_id, host, port, rack, is_up, ... of its status.
        if name == "status":
            raise AttributeError(name)
        return getattr(self.status, name)


def log_dirs_age(snapshot: LogDirSnapshot | None) -> SnapshotAge:
    """When the log dir sizes shown were collected (console.kafka_gateway.cache.LOG_DIRS)."""
    return SnapshotAge.of(snapshot, snapshots=cache.LOG_DIRS, max_age=settings.LOG_DIR_SIZES_MAX_AGE_SECONDS)


NOT_COLLECTED = SnapshotAge(None, None, 0.0)


@dataclass(frozen=True)
class BrokersPage:
    cluster: ClusterRef
    controller_id: int
    brokers: list[BrokerRow]
    can_stop_start: bool
    warnings: list[str]
    offline_partitions: int = 0              # in the whole cluster (Kafka's OfflinePartitionsCount)
    log_dirs: SnapshotAge = NOT_COLLECTED
    skew_tolerance_percent: int = SKEW_TOLERANCE_PERCENT   # replicas or leaders this far off the mean: skewed
    seen_brokers: tuple[BrokerNode | EngineBroker, ...] = field(default=(), metadata=INTERNAL)  # -> cluster_brokers_seen


def broker_list(*, cluster: Cluster) -> BrokersPage:
    """CMAK's broker table: the cached all-topics Metadata, and log dir sizes collected in the
    background (`_log_dirs`), with their age."""
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata(cached=True)
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
        warnings = list(statuses.warnings)
        snapshot = _log_dirs(gw, [b.node_id for b in metadata.brokers], warnings)
    rows = _broker_rows(metadata, statuses.brokers, snapshot)
    return BrokersPage(cluster=ClusterRef.of(cluster), controller_id=metadata.controller_id,
                       offline_partitions=sum(p.is_offline for t in metadata.topics for p in t.partitions),
                       brokers=rows, can_stop_start=statuses.engine_admin_endpoint is not None, warnings=warnings,
                       log_dirs=log_dirs_age(snapshot), seen_brokers=statuses.seen)


@dataclass(frozen=True)
class LogDirUsage:
    log_dir: str
    size: int
    replicas: int


@dataclass(frozen=True)
class BrokerDetail:
    cluster: ClusterRef
    broker: BrokerRow
    configs: list[ConfigEntry]               # empty while the broker is down
    log_dirs: list[LogDirUsage]
    can_stop_start: bool
    warnings: list[str]
    log_dirs_age: SnapshotAge = NOT_COLLECTED
    seen_brokers: tuple[BrokerNode | EngineBroker, ...] = field(default=(), metadata=INTERNAL)
    # Partitions the broker's log cleaner marked uncleanable; None when the broker does not say
    # (down, or not this engine).
    uncleanable_partitions: tuple[str, ...] | None = None
    configs_refused: str = ""                # the cluster refused the console's principal its configs
    skew_tolerance_percent: int = SKEW_TOLERANCE_PERCENT


def broker_detail(*, cluster: Cluster, broker_id: int) -> BrokerDetail:
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata(cached=True)
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
        status = next((b for b in statuses.brokers if b.broker_id == broker_id), None)
        if status is None:
            raise NotFound(f"Cluster {cluster.name} has no broker {broker_id}.")
        warnings = list(statuses.warnings)
        configs: list[ConfigEntry] = []
        snapshot, refused = None, ""
        if status.is_up:
            try:
                configs = gw.broker_config_details(broker_id)
            except NotAuthorized as exc:      # a managed Kafka may refuse broker configs: the rest still shows
                refused = not_authorized_note("Configs", exc)   # said once, in the Configs section
            snapshot = _log_dirs(gw, [b.node_id for b in metadata.brokers], warnings)
    usage = [LogDirUsage(d.log_dir, d.size, d.replicas) for d in (snapshot.dirs.get(broker_id, ()) if snapshot else ())]
    row = _broker_rows(metadata, [status], snapshot, known=[s.broker_id for s in statuses.brokers])[0]
    return BrokerDetail(cluster=ClusterRef.of(cluster), broker=row, configs=configs, log_dirs=usage,
                        can_stop_start=statuses.engine_admin_endpoint is not None, warnings=warnings,
                        log_dirs_age=log_dirs_age(snapshot), seen_brokers=statuses.seen,
                        uncleanable_partitions=_uncleanable(configs), configs_refused=refused)


def _uncleanable(configs: list[ConfigEntry]) -> tuple[str, ...] | None:
    entry = next((c for c in configs if c.name == UNCLEANABLE_PARTITIONS), None)
    if entry is None:
        return None
    return tuple(name for name in (entry.value or "").split(",") if name)


def _log_dirs(gw: Gateway, brokers: list[int], warnings: list[str]) -> LogDirSnapshot | None:
    snapshot = log_dir_totals(gw, brokers, max_age=settings.LOG_DIR_SIZES_MAX_AGE_SECONDS,
                              wait_first=settings.LOG_DIR_SIZES_WAIT_SECONDS)
    # None: the first collection is still running, and the page's age note says so.
    if snapshot is not None and snapshot.errors:
        warnings.append(f"Log dir sizes: {next(iter(snapshot.errors.values()))}")
    return snapshot


def _broker_rows(metadata: ClusterMetadata, statuses: list[BrokerStatus], snapshot: LogDirSnapshot | None, *,
                 known: list[int] | None = None) -> list[BrokerRow]:
    """One row per status; `known`: every broker of the cluster, when `statuses` is only some
    of them (the skew bounds count them all)."""
    partitions = [p for t in metadata.topics for p in t.partitions]
    loads = broker_loads(partitions, known if known is not None else [s.broker_id for s in statuses])
    led: dict[int, dict[str, list[int]]] = {}
    for p in sorted(partitions, key=lambda p: (p.topic, p.partition)):
        led.setdefault(p.leader, {}).setdefault(p.topic, []).append(p.partition)
    rows = []
    for s in statuses:
        load = loads.get(s.broker_id)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in (load.replicas if load else ()):
            by_topic.setdefault(topic, []).append(partition)
        rows.append(BrokerRow(
            status=s, partitions=len(load.replicas) if load else 0,
            leaders=load.leaders if load else 0, partition_ids=by_topic, leader_ids=led.get(s.broker_id, {}),
            partition_ids_preview=_preview(load.replicas if load else ()),
            is_skewed=bool(load and load.is_skewed), is_leader_skewed=bool(load and load.is_leader_skewed),
            log_dir_size=snapshot.size_of(s.broker_id) if s.is_up and snapshot else None,
            offline_partitions=load.offline if load else 0,
            replicas_deviation_percent=round(load.replicas_deviation_percent, 1) if load else 0.0,
            leaders_deviation_percent=round(load.leaders_deviation_percent, 1) if load else 0.0))
    return rows


def _preview(replicas) -> str:
    """`orders-0, orders-3, clicks-1 … (+40 more)`: the table stays small with thousands of topics."""
    shown = ", ".join(f"{t}-{p}" for t, p in replicas[:PREVIEW_PARTITIONS])
    extra = len(replicas) - PREVIEW_PARTITIONS
    return f"{shown} … (+{extra} more)" if extra > 0 else shown
