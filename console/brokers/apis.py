from console.accounts.roles import VIEWER
from console.brokers import selectors
from console.clusters.selectors import cluster_get
from console.clusters.services import cluster_brokers_seen
from console.web import json_api


@json_api(VIEWER)
def broker_list(request, cluster_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.broker_list(cluster=cluster)
    cluster_brokers_seen(cluster=cluster, brokers=view.seen_brokers)
    return view


@json_api(VIEWER)
def broker_detail(request, cluster_id: int, broker_id: int):
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.broker_detail(cluster=cluster, broker_id=broker_id)
    cluster_brokers_seen(cluster=cluster, brokers=view.seen_brokers)
    return view
