from console.accounts.roles import VIEWER
from console.brokers import selectors
from console.clusters.selectors import cluster_get
from console.web import json_api


@json_api(VIEWER)
def broker_list(request, cluster_id: int):
    return selectors.broker_list(cluster=cluster_get(cluster_id=cluster_id))


@json_api(VIEWER)
def broker_detail(request, cluster_id: int, broker_id: int):
    return selectors.broker_detail(cluster=cluster_get(cluster_id=cluster_id), broker_id=broker_id)
