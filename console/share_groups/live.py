"""The share group page's live fragment: state, members, share partitions (offsets, lag,
records in flight) and queue health, re-rendered by the cluster's live feed (console.live)
while a socket watches the group, and pushed only when it changed. Route:
`ws/clusters/<id>/share-groups/<group id>/` (console/routing.py)."""
from __future__ import annotations

from django.template.loader import render_to_string

from console import live
from console.clusters.selectors import cluster_get
from console.share_groups import selectors

SHARE_GROUP_FRAGMENT = "share_groups.group"


@live.fragment(SHARE_GROUP_FRAGMENT)
def share_group_fragment(*, cluster_id: int, group_id: str) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    view = selectors.share_group_detail(cluster=cluster, group_id=group_id)
    return render_to_string("share_groups/_detail_live.html", {"cluster": cluster, "view": view})
