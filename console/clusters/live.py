"""The overview's live fragment (see console.live for the machinery other pages share)."""
from __future__ import annotations

from django.template.loader import render_to_string

from console import live
from console.clusters import selectors, services

OVERVIEW = "clusters.overview"


@live.fragment(OVERVIEW)
def overview_html(*, cluster_id: int) -> str:
    """The overview partial, as the page renders it. NotFound (cluster removed) and
    GatewayError (cluster unreachable) go up to the feed, which knows what to do with them."""
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    overview = selectors.cluster_overview(cluster=cluster)
    services.cluster_brokers_seen(cluster=cluster, brokers=overview.seen_brokers)
    return render_to_string("clusters/_overview_body.html", {"overview": overview, "cluster": cluster})
