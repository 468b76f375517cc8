from django.conf import settings

from console.accounts.roles import VIEWER
from console.analytics import selectors
from console.clusters.selectors import cluster_get
from console.web import json_api


@json_api(VIEWER)
def cluster_analytics(request, cluster_id: int):
    return selectors.cluster_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id))


@json_api(VIEWER)
def group_analytics(request, cluster_id: int, group_id: str):
    """?resolution=1m|5m|1h"""
    return selectors.group_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id),
                                     group_id=group_id, resolution=request.GET.get("resolution", "5m"))


@json_api(VIEWER)
def topic_analytics(request, cluster_id: int, topic: str):
    return selectors.topic_analytics(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id),
                                     topic=topic)


@json_api(VIEWER)
def group_statuses(request, cluster_id: int):
    """{group_id: {status, severity, reason, lag}}: Burrow-style status of every group."""
    return selectors.group_statuses(lake_url=settings.ANALYTICS_LAKE, cluster=cluster_get(cluster_id=cluster_id))
