"""Reads of what the console observes: the last observation of each cluster in this process."""
from __future__ import annotations

from django.conf import settings

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import ConsoleError
from console.kafka_gateway import GatewayError
from console.kafka_gateway.cache import cache_key
from console.metrics.exposition import cluster_exposition
from console.metrics.observation import OBSERVATIONS, Observation, collect


def observation_latest(*, cluster: Cluster, wait_first: float | None = None) -> Observation | None:
    """The last observation (renewed in the background when older than METRICS_MAX_AGE_SECONDS;
    the first one of a process is waited for up to METRICS_WAIT_SECONDS). None: none yet, or
    the cluster's settings are incomplete (a missing secret). Max age 0: collected now, in
    this thread. Nothing here connects to the cluster unless max age is 0: the background
    collection opens its own gateway, so a scrape never waits for a cluster that is down."""
    try:
        key = cache_key(cluster.connection_settings())
    except ConsoleError:
        return None
    if settings.METRICS_MAX_AGE_SECONDS <= 0:
        try:
            with cluster_gateway(cluster) as gw:
                return OBSERVATIONS.collect_now(gw)
        except GatewayError:
            return None

    def in_background() -> Observation:
        with cluster_gateway(cluster) as gw:
            return collect(gw)
    # Each new observation's part of /metrics is written on the collecting thread, so that a
    # scrape only joins parts already written.
    name = cluster.name
    OBSERVATIONS.after_each(key, lambda observation: cluster_exposition(name, observation))
    return OBSERVATIONS.get(key, max_age=settings.METRICS_MAX_AGE_SECONDS,
                            wait_first=settings.METRICS_WAIT_SECONDS if wait_first is None else wait_first,
                            collect=in_background)


def observation_now(*, cluster: Cluster) -> Observation:
    """A new observation collected in this thread and kept (the alert worker's round). Raises
    GatewayError when the cluster cannot be reached at all."""
    with cluster_gateway(cluster) as gw:
        return OBSERVATIONS.collect_now(gw)
