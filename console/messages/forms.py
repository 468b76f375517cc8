"""Parsing what the pages send: query strings (browse, search, export) and websocket commands
share these functions; each bad field raises InvalidInput with a readable reason."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from django import forms
from django.utils.html import escape

from console.errors import InvalidInput
from console.formatting import iso_datetime_text
from console.messages.filters import FIELDS, JSON_OPS, FilterSpec
from console.messages.models import FORMAT_CHOICES, FORMATS, MaskingRule
from console.messages.scan import SearchLimits
from console.messages.selectors import DEFAULT_ISOLATION, ISOLATION_LEVELS, START_MODES, BrowseQuery, SearchQuery
from console.messages.serializers import SERIALIZERS

MAX_SEARCH_SECONDS = 600
MAX_SEARCH_RECORDS = 100_000_000


def _get(data: Mapping, name: str) -> str:
    value = data.get(name, "")
    return "" if value is None else str(value).strip()


def _int(data: Mapping, name: str, *, minimum: int | None = 0, label: str | None = None) -> int | None:
    raw = _get(data, name)
    if raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{label or name.replace('_', ' ').capitalize()} must be a whole number, not {raw!r}.") from None
    if minimum is not None and value < minimum:
        raise InvalidInput(f"{label or name.replace('_', ' ').capitalize()} must be at least {minimum}.")
    return value


def parse_time(raw: str, *, label: str) -> int | None:
    """Milliseconds since the epoch, from digits or an ISO date and time (UTC unless it says)."""
    raw = raw.strip()
    if not raw:
        return None
    if raw.isdigit():
        return int(raw)
    try:
        moment = datetime.fromisoformat(iso_datetime_text(raw))
    except ValueError:
        raise InvalidInput(f"{label} must be a date and time like 2026-01-31T12:00:00 (UTC), not {raw!r}.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def parse_cursor(raw: str) -> dict[int, int] | None:
    """`0:120,1:98` -> {0: 120, 1: 98}."""
    if not raw:
        return None
    try:
        return {int(p): int(o) for p, o in (part.split(":") for part in raw.split(",") if part)}
    except ValueError:
        raise InvalidInput(f"{raw!r} is not a cursor (partition:offset pairs).") from None


def format_cursor(cursor: Mapping[int, int] | None) -> str:
    return ",".join(f"{p}:{o}" for p, o in sorted(cursor.items())) if cursor else ""


def _partition(data: Mapping) -> int | None:
    raw = _get(data, "partition")
    return None if raw in ("", "all") else _int(data, "partition")


def formats_from(data: Mapping) -> dict:
    formats = {}
    for part in ("key", "value", "header"):
        fmt = _get(data, f"{part}_format")
        if fmt:
            if fmt not in FORMATS:
                raise InvalidInput(f"Unknown {part} format {fmt!r}: use one of {', '.join(FORMATS)}.")
            formats[part] = fmt
    return formats


def browse_query_from(data: Mapping) -> BrowseQuery:
    start = _get(data, "start") or "newest"
    if start not in START_MODES:
        raise InvalidInput(f"Start from one of {', '.join(START_MODES)}.")
    direction = _get(data, "dir") or "next"
    if direction not in ("next", "prev"):
        raise InvalidInput("Page direction is next or prev.")
    return BrowseQuery(partition=_partition(data), start=start, offset=_int(data, "offset"),
                       timestamp_ms=parse_time(_get(data, "time"), label="The start time"),
                       count=_int(data, "count", minimum=1) or 50, cursor=parse_cursor(_get(data, "cursor")),
                       direction=direction, isolation=isolation_from(data))


ORDERS = ("newest_first", "oldest_first")


def order_from(data: Mapping, *, start: str) -> str:
    """How a page lists its records: newest first when it starts from the newest (as kafbat
    does), oldest first when it starts from a point and reads forward; `order` switches."""
    order = _get(data, "order") or ("newest_first" if start == "newest" else "oldest_first")
    if order not in ORDERS:
        raise InvalidInput(f"List records {' or '.join(o.replace('_', ' ') for o in ORDERS)}.")
    return order


def format_query(data: Mapping) -> str:
    """The decoders chosen on a page, as a query string for links to its records (they open
    with the same decoders)."""
    from urllib.parse import urlencode
    return urlencode({f"{part}_format": data[f"{part}_format"] for part in ("key", "value", "header")
                      if data.get(f"{part}_format") in FORMATS})


def isolation_from(data: Mapping) -> str:
    isolation = _get(data, "isolation") or DEFAULT_ISOLATION
    if isolation not in ISOLATION_LEVELS:
        raise InvalidInput(f"Read with one of {', '.join(ISOLATION_LEVELS)}.")
    return isolation


def filter_spec_from(data: Mapping) -> FilterSpec:
    field = _get(data, "field") or "value"
    if field not in FIELDS:
        raise InvalidInput(f"Search in one of {', '.join(FIELDS)}.")
    op = _get(data, "json_op") or "=="
    if op not in JSON_OPS:
        raise InvalidInput(f"Compare with one of {', '.join(JSON_OPS)}.")
    mode = _get(data, "mode") or ("substring" if _get(data, "text") else "")
    start = parse_time(_get(data, "from_time"), label="The start time")
    end = parse_time(_get(data, "to_time"), label="The end time")
    if start is not None and end is not None and end < start:
        raise InvalidInput("The end time is before the start time.")
    return FilterSpec(field=field, mode=mode, text=str(data.get("text") or ""), json_path=_get(data, "json_path"),
                      json_op=op, json_literal=str(data.get("json_value") or "").strip(),
                      start_time_ms=start, end_time_ms=end)


def search_query_from(data: Mapping) -> tuple[SearchQuery, dict]:
    start, end = _int(data, "from_offset"), _int(data, "to_offset")
    if start is not None and end is not None and end < start:
        raise InvalidInput("The last offset is before the first.")
    max_records = _int(data, "max_records", minimum=1) or 10_000_000
    max_seconds = _int(data, "max_seconds", minimum=1) or 60
    max_matches = _int(data, "max_matches", minimum=1) or 500
    limits = SearchLimits(max_records=min(max_records, MAX_SEARCH_RECORDS),
                          max_seconds=min(max_seconds, MAX_SEARCH_SECONDS), max_matches=min(max_matches, 100_000))
    query = SearchQuery(filter=filter_spec_from(data), partition=_partition(data), start_offset=start,
                        end_offset=end, positions=parse_cursor(_get(data, "positions")), limits=limits,
                        isolation=isolation_from(data))
    return query, formats_from(data)


class ProduceForm(forms.Form):
    partition = forms.IntegerField(required=False, min_value=0, help_text="Empty: the client chooses.")
    key = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}))
    key_null = forms.BooleanField(required=False, label="Null key")
    key_serializer = forms.ChoiceField(choices=[(s, s) for s in SERIALIZERS], initial="string")
    value = forms.CharField(required=False, strip=False,
                            widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}))
    value_null = forms.BooleanField(required=False, label="Null value (tombstone)")
    value_serializer = forms.ChoiceField(choices=[(s, s) for s in SERIALIZERS] + [("registry", "schema registry")],
                                         initial="json")
    schema_id = forms.IntegerField(required=False, min_value=1, label="Local schema id",
                                   help_text="Avro, without a schema registry: write in Confluent's framing with "
                                             "this schema of the console's Local schemas.")
    # Help text is HTML to Django's form renderers: escape() keeps "<topic>" as text (it returns a safe string,
    # so the console's own _field.html, which escapes, does not escape it twice).
    subject = forms.CharField(required=False, max_length=1024,
                              help_text=escape("Schema registry: the subject (empty: <topic>-value, "
                                               "TopicNameStrategy)."))
    schema_version = forms.IntegerField(required=False, min_value=1, label="Subject version",
                                        help_text="Schema registry: empty for the latest version.")
    message_type = forms.CharField(required=False, max_length=300,
                                   help_text="Schema registry, Protobuf: the message (empty: the file's first).")
    headers = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                              help_text="One header per line: name=value.")
    copies = forms.IntegerField(min_value=1, max_value=1000, initial=1)

    def clean_headers(self) -> list[tuple[str, str]]:
        pairs = []
        for line in self.cleaned_data["headers"].splitlines():
            if not line.strip():
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise forms.ValidationError(f"{line!r} is not name=value.")
            pairs.append((name.strip(), value))
        return pairs


class MessageSettingsForm(forms.Form):
    key_format = forms.ChoiceField(choices=FORMAT_CHOICES)
    value_format = forms.ChoiceField(choices=FORMAT_CHOICES)
    header_format = forms.ChoiceField(choices=FORMAT_CHOICES)
    avro_schema = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 6}),
                                  help_text="Avro schema (JSON) of the values; empty: none.")
    avro_key_schema = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}),
                                      help_text="Avro schema (JSON) of the keys; empty: none.")
    protobuf_descriptor_set = forms.FileField(required=False, help_text="A FileDescriptorSet "
                                              "(protoc --descriptor_set_out=… --include_imports).")
    protobuf_message_type = forms.CharField(required=False, max_length=300)


class MaskingRuleForm(forms.Form):
    kind = forms.ChoiceField(choices=MaskingRule.KINDS)
    pattern = forms.CharField(max_length=500)
    replacement = forms.CharField(max_length=100, initial="***", required=False)


class SchemaForm(forms.Form):
    schema_id = forms.IntegerField(min_value=1)
    subject = forms.CharField(max_length=300)
    schema = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}))
