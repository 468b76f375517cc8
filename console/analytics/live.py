"""The analytics pages' live fragments: the run lines and every result, pushed when a run is
queued, moves or ends (the `analytics.*` events wake the cluster's feed; console.live).

A feed polls each LIVE_POLL_SECONDS too; a fragment re-reads the lake only when the cluster's
runs changed (`selectors.runs_signature`), so a watched page costs one small query per poll.
Routes: console/routing.py."""
from __future__ import annotations

import threading
from collections import OrderedDict

from django.template.loader import render_to_string

from console import live
from console.analytics import pages, selectors
from console.clusters.selectors import cluster_get

CLUSTER, GROUP, TOPIC = "analytics.cluster", "analytics.group", "analytics.topic"
_rendered: OrderedDict[tuple, tuple[tuple, str]] = OrderedDict()
_KEEP = 256                     # fragments remembered per process
_lock = threading.Lock()        # each cluster's feed renders on a thread of its own


def _cached(key: tuple, cluster_id: int, render) -> str:
    signature = selectors.runs_signature(cluster_id=cluster_id)
    with _lock:
        known = _rendered.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    html = render()
    with _lock:
        _rendered[key] = (signature, html)
        _rendered.move_to_end(key)
        while len(_rendered) > _KEEP:
            _rendered.popitem(last=False)
    return html


@live.fragment(CLUSTER)
def cluster_fragment(*, cluster_id: int) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    return _cached((CLUSTER, cluster.pk), cluster.pk, lambda: render_to_string(
        "analytics/_cluster_live.html", pages.cluster_context(cluster=cluster)))


@live.fragment(GROUP)
def group_fragment(*, cluster_id: int, resolution: str, group_id: str) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    return _cached((GROUP, cluster.pk, resolution, group_id), cluster.pk, lambda: render_to_string(
        "analytics/_group_live.html", pages.group_context(cluster=cluster, group_id=group_id, resolution=resolution)))


@live.fragment(TOPIC)
def topic_fragment(*, cluster_id: int, topic: str) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    return _cached((TOPIC, cluster.pk, topic), cluster.pk, lambda: render_to_string(
        "analytics/_topic_live.html", pages.topic_context(cluster=cluster, topic=topic)))
