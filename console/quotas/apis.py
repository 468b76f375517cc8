"""The quotas JSON API: the same selector as the page."""
from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.errors import InvalidInput
from console.quotas import selectors
from console.quotas.views import list_filters
from console.web import json_api


@json_api(VIEWER)
def quota_list(request, cluster_id: int):
    """?type=user|client-id|ip&q=search. Each entity as Kafka names it: its parts, a null name
    for a type's default, and its values with their units."""
    view = selectors.quota_list(cluster=cluster_get(cluster_id=cluster_id), **list_filters(request))
    if view.error:
        raise InvalidInput(f"{view.error} ({view.kafka_code})" if view.kafka_code else view.error)
    return view
