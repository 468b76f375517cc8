"""JSON twins of the message pages (viewers get masked values, as on the pages)."""
import itertools
import json

from django.http import StreamingHttpResponse

from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.messages import selectors
from console.messages.forms import browse_query_from, format_cursor, formats_from, search_query_from
from console.messages.masking import masked_for
from console.web import json_api


@json_api(VIEWER)
def message_browse(request, cluster_id: int, name: str):
    """?partition=all|N&start=newest|oldest|offset|timestamp&offset=&time=&count=&cursor=&dir=next|prev
    &isolation=read_uncommitted|read_committed (offsets' end is the LSO with read_committed)"""
    page = selectors.message_browse(cluster=cluster_get(cluster_id=cluster_id), topic=name,
                                    query=browse_query_from(request.GET), mask=masked_for(request.user),
                                    formats=formats_from(request.GET))
    return {"topic": page.topic, "partitions": page.partitions, "notes": page.notes, "isolation": page.isolation,
            "registry_note": page.registry_note or None,
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


@json_api(VIEWER)
def message_search(request, cluster_id: int, name: str):
    """The search page's fields as a query string; answers JSON Lines as the scan goes:
    {"type": "notes"|"match"|"stats"|"done", ...}, the last line being "done" with the stats."""
    query, formats = search_query_from(request.GET)
    events = selectors.message_search(cluster=cluster_get(cluster_id=cluster_id), topic=name, query=query,
                                      mask=masked_for(request.user), formats=formats)
    first = next(events)   # compiles the filter and opens the reader: bad input is a 400 here, not mid-stream
    return StreamingHttpResponse(_json_lines(first, events), content_type="application/x-ndjson")


def _json_lines(first, events):
    for kind, item in itertools.chain([first], events):
        if kind == "notes":
            line = {"type": "notes", "notes": item}
        elif kind == "match":
            line = {"type": "match", "message": item[1].as_dict()}
        else:
            line = {"type": kind, "stats": item.as_dict()}
        yield json.dumps(line) + "\n"
