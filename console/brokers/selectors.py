"""Reads for brokers: who is up or down, the CMAK broker table, one broker's config."""
from __future__ import annotations

from dataclasses import dataclass, field

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INTERNAL, ClusterRef
from console.clusters.selectors import BrokerStatus, broker_statuses
from console.errors import NotFound
from console.kafka_gateway import BrokerNode, ClusterMetadata, ConfigEntry, EngineBroker, Gateway, GatewayError
from console.stats import broker_loads

PREVIEW_PARTITIONS = 12


@dataclass(frozen=True)
class BrokerRow:
    broker_id: int
    host: str
    port: int
    rack: str | None
    is_up: bool
    is_controller: bool
    state: str                               # up, stopped (by the engine) or down
    partitions: int                          # replicas assigned to the broker
    leaders: int
    partition_ids: dict[str, list[int]]      # {topic: [partition ids]} assigned to the broker
    partition_ids_preview: str
    is_skewed: bool
    is_leader_skewed: bool
    log_dir_size: int | None                 # bytes; None when the broker is down
    offline_partitions: int = 0              # assigned partitions without a leader


@dataclass(frozen=True)
class BrokersPage:
    cluster: ClusterRef
    controller_id: int
    brokers: list[BrokerRow]
    can_stop_start: bool
    warnings: list[str]
    offline_partitions: int = 0              # in the whole cluster (Kafka's OfflinePartitionsCount)
    seen_brokers: tuple[BrokerNode | EngineBroker, ...] = field(default=(), metadata=INTERNAL)  # -> cluster_brokers_seen


def broker_list(*, cluster: Cluster) -> BrokersPage:
    """CMAK's broker table: one Metadata request for all topics, one DescribeLogDirs per live broker."""
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
        warnings = list(statuses.warnings)
        sizes = _log_dir_sizes(gw, [b.node_id for b in metadata.brokers], warnings)
    rows = _broker_rows(metadata, statuses.brokers, sizes)
    return BrokersPage(cluster=ClusterRef.of(cluster), controller_id=metadata.controller_id,
                       offline_partitions=sum(p.is_offline for t in metadata.topics for p in t.partitions),
                       brokers=rows, can_stop_start=statuses.engine_admin_endpoint is not None, warnings=warnings,
                       seen_brokers=statuses.seen)


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
    seen_brokers: tuple[BrokerNode | EngineBroker, ...] = field(default=(), metadata=INTERNAL)


def broker_detail(*, cluster: Cluster, broker_id: int) -> BrokerDetail:
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
        status = next((b for b in statuses.brokers if b.broker_id == broker_id), None)
        if status is None:
            raise NotFound(f"Cluster {cluster.name} has no broker {broker_id}.")
        warnings = list(statuses.warnings)
        configs: list[ConfigEntry] = []
        usage: dict[str, LogDirUsage] = {}
        if status.is_up:
            configs = gw.broker_configs(broker_id)
            try:
                # None = every replica the broker holds: naming 20,000 partitions costs more.
                for r in gw.replica_log_dirs(None, [broker_id]):
                    old = usage.get(r.log_dir, LogDirUsage(r.log_dir, 0, 0))
                    usage[r.log_dir] = LogDirUsage(r.log_dir, old.size + r.size, old.replicas + 1)
            except GatewayError as exc:
                warnings.append(f"Log dirs: {exc}")
    sizes = {broker_id: sum(u.size for u in usage.values())} if usage else {}
    row = next(r for r in _broker_rows(metadata, statuses.brokers, sizes) if r.broker_id == broker_id)
    return BrokerDetail(cluster=ClusterRef.of(cluster), broker=row, configs=configs,
                        log_dirs=sorted(usage.values(), key=lambda u: u.log_dir),
                        can_stop_start=statuses.engine_admin_endpoint is not None, warnings=warnings,
                        seen_brokers=statuses.seen)


def _log_dir_sizes(gw: Gateway, brokers: list[int], warnings: list[str]) -> dict[int, int]:
    sizes = {b: 0 for b in brokers}
    try:
        for replica in gw.replica_log_dirs(None, brokers):
            sizes[replica.broker_id] = sizes.get(replica.broker_id, 0) + replica.size
    except GatewayError as exc:
        warnings.append(f"Log dir sizes: {exc}")
        return {}
    return sizes


def _broker_rows(metadata: ClusterMetadata, statuses: list[BrokerStatus], sizes: dict[int, int]) -> list[BrokerRow]:
    partitions = [p for t in metadata.topics for p in t.partitions]
    loads = broker_loads(partitions, [s.broker_id for s in statuses])
    rows = []
    for s in statuses:
        load = loads.get(s.broker_id)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in (load.replicas if load else ()):
            by_topic.setdefault(topic, []).append(partition)
        rows.append(BrokerRow(
            broker_id=s.broker_id, host=s.host, port=s.port, rack=s.rack, is_up=s.is_up,
            is_controller=s.is_controller, state=s.state, partitions=len(load.replicas) if load else 0,
            leaders=load.leaders if load else 0, partition_ids=by_topic,
            partition_ids_preview=_preview(load.replicas if load else ()),
            is_skewed=bool(load and load.is_skewed), is_leader_skewed=bool(load and load.is_leader_skewed),
            log_dir_size=sizes.get(s.broker_id) if s.is_up else None, offline_partitions=load.offline if load else 0))
    return rows


def _preview(replicas) -> str:
    """`orders-0, orders-3, clicks-1 … (+40 more)`: the table stays small with thousands of topics."""
    shown = ", ".join(f"{t}-{p}" for t, p in replicas[:PREVIEW_PARTITIONS])
    extra = len(replicas) - PREVIEW_PARTITIONS
    return f"{shown} … (+{extra} more)" if extra > 0 else shown
