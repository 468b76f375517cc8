"""JSON twins of the message pages (viewers get masked values, as on the pages)."""
from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.messages import selectors
from console.messages.forms import browse_query_from, format_cursor, formats_from
from console.messages.views import masked_for
from console.web import json_api


@json_api(VIEWER)
def message_browse(request, cluster_id: int, name: str):
    """?partition=all|N&start=newest|oldest|offset|timestamp&offset=&time=&count=&cursor=&dir=next|prev"""
    page = selectors.message_browse(cluster=cluster_get(cluster_id=cluster_id), topic=name,
                                    query=browse_query_from(request.GET), mask=masked_for(request.user),
                                    formats=formats_from(request.GET))
    return {"topic": page.topic, "partitions": page.partitions, "notes": page.notes,
            "messages": [m.as_dict(preview=True) for m in page.messages],
            "next_cursor": format_cursor(page.next_cursor) or None,
            "prev_cursor": format_cursor(page.prev_cursor) or None,
            "offsets": {str(p): {"log_start_offset": s, "high_watermark": e} for p, (s, e) in page.offsets.items()}}


@json_api(VIEWER)
def message_detail(request, cluster_id: int, name: str, partition: int, offset: int):
    _record, view, _ = selectors.message_get(cluster=cluster_get(cluster_id=cluster_id), topic=name,
                                             partition=partition, offset=offset, mask=masked_for(request.user),
                                             formats=formats_from(request.GET))
    return view.as_dict()
