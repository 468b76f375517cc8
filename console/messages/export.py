"""Export a range or a search result as JSON Lines or CSV, one line per record as it is read,
so a million records never sit in memory (the view wraps this in a StreamingHttpResponse)."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from console.messages.presenting import export_row

CSV_COLUMNS = ["partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
               "key_base64", "value_base64", "headers_base64", "transaction", "value_schema_id", "value_subject"]
EXPORT_FORMATS = ("jsonl", "csv")


def export_lines(events, *, fmt: str) -> Iterator[str]:
    """Lines from message_search's events; the last line of a JSON Lines export is not a record
    but {"_export": stats} when the scan stopped at a limit, so a truncated file says so."""
    if fmt == "csv":
        yield _csv_line(CSV_COLUMNS)
    for kind, item in events:
        if kind == "match":
            record, view = item
            row = export_row(record, view)
            if fmt == "jsonl":
                yield json.dumps(row, ensure_ascii=False) + "\n"
            else:
                yield _csv_line([_cell(row.get(c)) for c in CSV_COLUMNS])
        elif kind == "done" and item.stopped_by and fmt == "jsonl":
            yield json.dumps({"_export": {"stopped_by": item.stopped_by, "positions": item.as_dict()["positions"]}}) + "\n"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _csv_line(cells: list) -> str:
    out = io.StringIO()
    csv.writer(out).writerow(cells)
    return out.getvalue()
