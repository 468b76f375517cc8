"""Reads for clusters: the list, one row, and the overview.

`cluster_overview` is the single source of the overview page, its JSON, and (later) the
live updates a websocket consumer pushes: it returns a plain dataclass, cheap to build (one
Metadata request for all topics, plus the engine's broker list when there is one).
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from console.brokers.selectors import BrokerStatus, broker_statuses
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import ClusterRef
from console.errors import NotFound
from console.topics.stats import is_under_replicated


def cluster_list() -> QuerySet[Cluster]:
    return Cluster.objects.all()


def cluster_get(*, cluster_id: int) -> Cluster:
    try:
        return Cluster.objects.get(pk=cluster_id)
    except Cluster.DoesNotExist:
        raise NotFound(f"There is no cluster {cluster_id}.") from None


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
    under_replicated_partitions: int
    offline_partitions: int
    warnings: list[str]


def cluster_overview(*, cluster: Cluster) -> ClusterOverview:
    with cluster_gateway(cluster) as gw:
        metadata = gw.metadata()
        statuses = broker_statuses(cluster=cluster, gateway=gw, metadata=metadata)
    partitions = [p for t in metadata.topics for p in t.partitions]
    up = sum(b.is_up for b in statuses.brokers)
    return ClusterOverview(
        cluster=ClusterRef.of(cluster), cluster_id=metadata.cluster_id, controller_id=metadata.controller_id,
        brokers=statuses.brokers, brokers_up=up, brokers_down=len(statuses.brokers) - up,
        topics=len(metadata.topics), internal_topics=sum(t.is_internal for t in metadata.topics),
        partitions=len(partitions), under_replicated_partitions=sum(map(is_under_replicated, partitions)),
        offline_partitions=sum(p.is_offline for p in partitions), warnings=statuses.warnings)
