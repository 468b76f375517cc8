"""The group page's live fragment: members, lag per topic and per partition, and the lag
chart, re-rendered by the cluster's one live feed (console.live) while a socket watches the
group, and pushed only when it changed: lag falls on the page without a reload. Route:
`ws/clusters/<id>/groups/<group id>/` (console/routing.py)."""
from __future__ import annotations

from django.template.loader import render_to_string

from console import live
from console.clusters.selectors import cluster_get
from console.groups import selectors
from console.groups.charts import partition_lag_chart

GROUP_FRAGMENT = "groups.group"


@live.fragment(GROUP_FRAGMENT)
def group_fragment(*, cluster_id: int, group_id: str) -> str:
    """The fragment's HTML. NotFound when the group is gone; GatewayError when the cluster
    cannot be asked (the feed shows that instead)."""
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.group_detail(cluster=cluster, group_id=group_id)
    return render_to_string("groups/_detail_live.html", {
        "cluster": cluster, "view": view, "lag_chart": partition_lag_chart(partitions=view.partitions)})
