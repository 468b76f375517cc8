"""JSON for scripts: the same selectors as the pages."""
from console.accounts.roles import VIEWER
from console.clusters import selectors, services
from console.web import json_api


@json_api(VIEWER)
def cluster_list(request):
    return [{"id": c.pk, "name": c.name, "bootstrap_servers": c.bootstrap_servers, "is_bundled": c.is_bundled}
            for c in selectors.cluster_list()]


@json_api(VIEWER)
def overview(request, cluster_id: int):
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    overview = selectors.cluster_overview(cluster=cluster)
    services.cluster_brokers_seen(cluster=cluster, brokers=overview.seen_brokers)
    return overview
