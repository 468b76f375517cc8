"""What the messages socket sends, as generators of JSON-able events (blocking: they read the
cluster). Records are plain data, previewed; the page writes them with textContent.

search_events: {"type": "notes"}, {"type": "matches", "messages": [...]} (up to
MATCHES_PER_FRAME a frame), {"type": "stats"} four times a second, {"type": "done"}.
tail_events: {"type": "tailing"} once the start positions are known, {"type": "record"} (a
record or, in read_uncommitted, a transaction marker's row), {"type": "outcome", "partition",
"offsets", "transaction"} when a marker decides "pending" records already sent, and
{"type": "tail_stats"} twice a second, and {"type": "tail_stopped", "positions": "0:12,1:40"}
last: where it stopped, so that the next tail on the socket continues there.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from console.clusters.selectors import cluster_get
from console.messages import selectors
from console.messages.forms import (
    filter_spec_from,
    format_cursor,
    formats_from,
    isolation_from,
    parse_cursor,
    search_query_from,
)
from console.messages.tail import tail

MATCHES_PER_FRAME = 50
TAIL_SHOWN_PER_SECOND = 100


def search_events(*, cluster_id: int, topic: str, command: dict, mask: bool,
                  should_stop: Callable[[], bool]) -> Iterator[dict]:
    query, formats = search_query_from(command)
    pending: list[dict] = []
    for kind, item in selectors.message_search(cluster=cluster_get(cluster_id=cluster_id), topic=topic, query=query,
                                               mask=mask, formats=formats, should_stop=should_stop):
        if kind == "notes":
            yield {"type": "notes", "notes": item}
        elif kind == "match":
            pending.append(item[1].as_dict(preview=True))
            if len(pending) >= MATCHES_PER_FRAME:
                yield {"type": "matches", "messages": pending}
                pending = []
        else:
            if pending:
                yield {"type": "matches", "messages": pending}
                pending = []
            yield {"type": "done" if kind == "done" else "stats", "stats": item.as_dict()}


def tail_events(*, cluster_id: int, topic: str, command: dict, mask: bool, should_stop: Callable[[], bool],
                is_paused: Callable[[], bool]) -> Iterator[dict]:
    isolation = isolation_from(command)
    cluster = cluster_get(cluster_id=cluster_id)
    presenter = selectors.presenter_for(cluster=cluster, topic=topic, mask=mask, formats=formats_from(command))
    record_filter = selectors.record_filter(spec=filter_spec_from(command), presenter=presenter)
    start = parse_cursor(str(command.get("positions") or ""))
    with selectors.topic_reader(cluster=cluster, topic=topic) as reader:
        for kind, item in tail(reader, record_filter, max_shown_per_second=TAIL_SHOWN_PER_SECOND,
                               should_stop=should_stop, is_paused=is_paused,
                               isolation_level=selectors.ISOLATION_LEVELS[isolation], start_positions=start):
            if kind == "record":
                yield {"type": "record", "message": presenter.present(item).as_dict(preview=True)}
            elif kind == "outcome":
                partition, offsets, outcome = item
                yield {"type": "outcome", "partition": partition, "offsets": offsets, "transaction": outcome}
            elif kind == "started":
                yield {"type": "tailing", "isolation": isolation, "positions": {str(p): o for p, o in item.items()},
                       "continued": bool(start)}
            elif kind == "stopped":
                yield {"type": "tail_stopped", "positions": format_cursor(item)}
            else:
                yield {"type": "tail_stats", "stats": item}
