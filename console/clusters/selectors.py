"""Reads for clusters: the list, one row, which brokers are up or down, and the overview.

`cluster_overview` is the single source of the overview page, its JSON and its live
fragment: one Metadata request for all topics, plus the engine's broker list when there is
one. Selectors only read: the brokers they saw come back in `seen_brokers`, and the caller
(a view, an API or a live fragment) hands them to `services.cluster_brokers_seen`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import QuerySet

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster, KnownBroker
from console.clusters.records import INTERNAL, ClusterRef
from console.errors import NotFound
from console.kafka_gateway import BrokerNode, ClusterMetadata, EngineBroker, Gateway, GatewayError
from console.kafka_gateway.cache import SnapshotAge
from console.kafka_gateway.cluster_health import CLUSTER_HEALTH, HealthSnapshot, cluster_health
from console.stats import is_under_replicated


def cluster_list() -> QuerySet[Cluster]:
    return Cluster.objects.all()


def cluster_get(*, cluster_id: int) -> Cluster:
    try:
        return Cluster.objects.get(pk=cluster_id)
    except Cluster.DoesNotExist:
        raise NotFound(f"There is no cluster {cluster_id}.") from None


UP, STOPPED, DOWN = "up", "stopped", "down"


@dataclass(frozen=True)
class BrokerStatus:
    broker_id: int
    host: str
    port: int
    rack: str | None
    is_up: bool
    is_controller: bool
    state: str = UP        # up; stopped (the engine says so: Start brings it back); down (not answering)


@dataclass(frozen=True)
class BrokerStatuses:
    brokers: list[BrokerStatus]
    engine_admin_endpoint: str | None   # set when the cluster is our engine: stop/start possible
    seen: tuple[BrokerNode | EngineBroker, ...] = ()   # for services.cluster_brokers_seen
    warnings: list[str] = field(default_factory=list)


def broker_statuses(*, cluster: Cluster, gateway: Gateway, metadata: ClusterMetadata) -> BrokerStatuses:
    """Every broker of the cluster, up or down. Metadata lists only live brokers, so the
    others come from what the console saw before (KnownBroker rows), from replica assignments
    that name them, and from the engine's own broker list when the cluster is our engine."""
    live = {b.node_id: b for b in metadata.brokers}
    warnings: list[str] = []
    endpoint = None
    engine_listed: list[EngineBroker] = []
    try:
        endpoint = gateway.engine_admin_endpoint(via_broker=min(live)) if live else None
        engine_listed = gateway.engine_brokers(endpoint) if endpoint else []
    except GatewayError as exc:
        warnings.append(f"Engine admin interface: {exc}")

    addresses = {kb.broker_id: (kb.host, kb.port, kb.rack or None)
                 for kb in KnownBroker.objects.filter(cluster=cluster)}
    addresses.update({e.node_id: (e.host, e.port, None) for e in engine_listed})
    addresses.update({b.node_id: (b.host, b.port, b.rack) for b in live.values()})
    for topic in metadata.topics:
        for p in topic.partitions:
            for replica in p.replicas:
                addresses.setdefault(replica, ("", 0, None))
    stopped = {e.node_id for e in engine_listed if not e.running}
    statuses = [BrokerStatus(broker_id=i, host=host, port=port, rack=rack, is_up=i in live,
                             is_controller=i == metadata.controller_id,
                             state=UP if i in live else STOPPED if i in stopped else DOWN)
                for i, (host, port, rack) in sorted(addresses.items())]
    return BrokerStatuses(brokers=statuses, engine_admin_endpoint=endpoint,
                          seen=(*live.values(), *engine_listed), warnings=warnings)


@dataclass(frozen=True)
class ClusterOverview:
    cluster: ClusterRef
    cluster_id: str | None          # Kafka's cluster id
    controller_id: int
    brokers: list[BrokerStatus]
    brokers_up: int
    brokers_down: int
    topics: int
    internal_topics: int
    partitions: int
    under_replicated_partitions: int   # offline partitions included, as Kafka counts them
    offline_partitions: int            # no leader: Kafka's OfflinePartitionsCount
    warnings: list[str]
    health: HealthSnapshot | None = None     # throughput, disk, groups, versions: background figures
    health_age: SnapshotAge | None = None    # how old `health` is (None: not asked)
    seen_brokers: tuple[BrokerNode | EngineBroker, ...] = field(default=(), metadata=INTERNAL)

    @property
    def brokers_with_versions(self) -> list[tuple[BrokerStatus, str]]:
        """Each broker with its Kafka API level ("" when not collected, or down)."""
        versions = dict(self.health.broker_versions) if self.health else {}
        return [(b, versions.get(b.broker_id, "")) for b in self.brokers]


def cluster_overview(*, cluster: Cluster, with_health: bool = True) -> ClusterOverview:
    """Metadata and broker states (live every time), and the health figures from their
    background snapshot (console.kafka_gateway.cluster_health) with its age."""
    warnings: list[str] = []
    health = health_age = None
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata(cached=True)
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
        if with_health:
            try:
                health = cluster_health(gw, max_age=settings.CLUSTER_HEALTH_MAX_AGE_SECONDS,
                                        wait_first=settings.CLUSTER_HEALTH_WAIT_SECONDS)
            except GatewayError as exc:     # collected in this request (max age 0): the rest still shows
                warnings.append(f"Health figures: {exc}")
            health_age = SnapshotAge.of(health, snapshots=CLUSTER_HEALTH,
                                        max_age=settings.CLUSTER_HEALTH_MAX_AGE_SECONDS)
            if health is not None and health.error:
                warnings.append(f"Health figures not renewed: {health.error}")
    partitions = [p for t in metadata.topics for p in t.partitions]
    up = sum(b.is_up for b in statuses.brokers)
    return ClusterOverview(
        cluster=ClusterRef.of(cluster), cluster_id=metadata.cluster_id, controller_id=metadata.controller_id,
        brokers=statuses.brokers, brokers_up=up, brokers_down=len(statuses.brokers) - up,
        topics=len(metadata.topics), internal_topics=sum(t.is_internal for t in metadata.topics),
        partitions=len(partitions), under_replicated_partitions=sum(map(is_under_replicated, partitions)),
        offline_partitions=sum(p.is_offline for p in partitions), warnings=statuses.warnings + warnings,
        health=health, health_age=health_age, seen_brokers=statuses.seen)


def broker_choices(*, cluster: Cluster) -> list[tuple[int, str]]:
    """(id, "id  host:port") of every broker of the cluster, for pickers: the live ones from the
    cached all-topics Metadata, and the ones the console saw before (a broker that is down)."""
    found = {b.broker_id: (b.host, b.port, b.rack) for b in cluster.known_brokers.all()}
    try:
        with cluster_gateway(cluster) as gw:
            found.update({b.node_id: (b.host, b.port, b.rack) for b in gw.metadata(cached=True).brokers})
    except GatewayError:
        pass                     # the known ones still show; the form also takes typed ids
    return [(i, f"{i}  {host}:{port}{f' (rack {rack})' if rack else ''}") for i, (host, port, rack) in sorted(found.items())]


def topic_names(*, cluster: Cluster, limit: int = 5000) -> list[str]:
    """The cluster's topic names (internal ones left out), sorted, at most `limit`, from the
    cached all-topics Metadata: for topic pickers. Empty when the cluster cannot be asked."""
    try:
        with cluster_gateway(cluster) as gw:
            metadata = gw.metadata(cached=True)
    except GatewayError:
        return []
    return sorted(t.name for t in metadata.topics if not t.is_internal)[:limit]
