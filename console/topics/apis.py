from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.topics import selectors
from console.topics.forms import list_filters
from console.web import json_api


@json_api(VIEWER)
def topic_list(request, cluster_id: int):
    """?q=search&status=under_replicated|offline|not_preferred&internal=1&page=N"""
    return selectors.topic_list(cluster=cluster_get(cluster_id=cluster_id), **list_filters(request))


@json_api(VIEWER)
def topic_detail(request, cluster_id: int, name: str):
    return selectors.topic_detail(cluster=cluster_get(cluster_id=cluster_id), name=name)
