"""Reads of what the console observes: the last observation of each cluster in this process."""
from __future__ import annotations

from django.conf import settings

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.kafka_gateway import GatewayError
from console.metrics.observation import OBSERVATIONS, Observation


def observation_latest(*, cluster: Cluster) -> Observation | None:
    """The last observation (renewed in the background when older than METRICS_MAX_AGE_SECONDS;
    the first one of a process is waited for up to METRICS_WAIT_SECONDS). None: none yet, or
    the cluster cannot be reached to start one."""
    try:
        with cluster_gateway(cluster) as gw:
            from console.metrics.observation import collect
            return OBSERVATIONS.get_for(gw, collect, max_age=settings.METRICS_MAX_AGE_SECONDS,
                                        wait_first=settings.METRICS_WAIT_SECONDS)
    except GatewayError:
        return None


def observation_now(*, cluster: Cluster) -> Observation:
    """A new observation collected in this thread and kept (the alert worker's round). Raises
    GatewayError when the cluster cannot be reached at all."""
    with cluster_gateway(cluster) as gw:
        return OBSERVATIONS.collect_now(gw)
