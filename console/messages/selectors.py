"""Reads for messages: browse pages, one record, search, tail and export.

Everything reads through `console.kafka_gateway.consumer.TopicReader` (manual assignment, no
group, no commits). Browse pages are addressed by a cursor, the first offset shown in each
partition, so a page can be linked, reloaded and paged forwards or backwards.
`mask=True` (the viewer role) applies the topic's masking rules to everything returned.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace

from django.conf import settings

from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.kafka_gateway.batches import ConsumedRecord, to_consumed
from console.kafka_gateway.consumer import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    TopicReader,
    UnknownTopic,
    open_topic_reader,
)
from console.messages.deserializers import Deserializers
from console.messages.filters import FilterSpec, RecordFilter
from console.messages.masking import Masker, Rule
from console.messages.models import MaskingRule, RegisteredSchema, TopicMessageSettings
from console.messages.presenting import MessageView, Presenter, iso_time
from console.messages.scan import ReadProgress, SearchLimits, initial_progress, read_forward, search
from console.messages.transaction_marks import PENDING, PendingTransactions, in_transaction, marker_record, outcome_of
from console.messages.transactions import transaction_outcomes
from console.schema_registry import resolver as schema_resolver
from console.schema_registry.selectors import registry_decoder

MAX_PAGE = 500
BROWSE_FETCH_BYTES = 256 << 10
START_MODES = ("newest", "oldest", "offset", "timestamp")
# The browser reads as Kafka's consumer does by default (and kcat, kafka-console-consumer):
# read_uncommitted shows every record up to the high watermark, with the markers and the
# records of aborted and open transactions marked as such; read_committed is a switch away.
ISOLATION_LEVELS = {"read_uncommitted": READ_UNCOMMITTED, "read_committed": READ_COMMITTED}
DEFAULT_ISOLATION = "read_uncommitted"


@contextmanager
def topic_reader(*, cluster: Cluster, topic: str) -> Iterator[TopicReader]:
    try:
        with open_topic_reader(cluster.connection_settings(), topic,
                               request_timeout_ms=settings.KAFKA_REQUEST_TIMEOUT_MS,
                               bootstrap_timeout_ms=settings.KAFKA_BOOTSTRAP_TIMEOUT_MS) as reader:
            yield reader
    except UnknownTopic as exc:
        raise NotFound(f"Cluster {cluster.name} has no topic {topic!r}.") from exc


def message_settings_get(*, cluster: Cluster, topic: str) -> TopicMessageSettings:
    """The topic's row, or an unsaved one with the defaults."""
    found = TopicMessageSettings.objects.filter(cluster=cluster, topic=topic).first()
    return found or TopicMessageSettings(cluster=cluster, topic=topic)


def masking_rules(*, cluster: Cluster, topic: str) -> list[MaskingRule]:
    return list(MaskingRule.objects.filter(cluster=cluster, topic=topic))


def registered_schemas() -> list[RegisteredSchema]:
    return list(RegisteredSchema.objects.all())


def presenter_for(*, cluster: Cluster, topic: str, mask: bool, formats: dict | None = None) -> Presenter:
    """The topic's deserializers (formats overridable per request) and, if `mask`, its masks."""
    row = message_settings_get(cluster=cluster, topic=topic)
    schemas = registered_schemas()
    common = {"registered_schemas": {s.schema_id: s.schema for s in schemas},
              "subjects": {s.schema_id: s.subject for s in schemas},
              "protobuf_descriptor_set": bytes(row.protobuf_descriptor_set or b""),
              "protobuf_message_type": row.protobuf_message_type,
              "registry": registry_decoder(cluster=cluster, topic=topic)}
    deserializers = Deserializers(avro_schema=row.avro_schema, **common)
    key_deserializers = Deserializers(avro_schema=row.avro_key_schema, **common)
    formats = formats or {}
    masker = Masker([Rule(r.kind, r.pattern, r.replacement) for r in masking_rules(cluster=cluster, topic=topic)]) \
        if mask else None
    return Presenter(deserializers=deserializers, key_format=formats.get("key") or row.key_format,
                     value_format=formats.get("value") or row.value_format,
                     header_format=formats.get("header") or row.header_format, masker=masker,
                     key_deserializers=key_deserializers,
                     read_formats=(row.key_format, row.value_format, row.header_format))


# --- browse ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class BrowseQuery:
    partition: int | None = None     # None: all partitions
    start: str = "newest"            # newest | oldest | offset | timestamp
    offset: int | None = None
    timestamp_ms: int | None = None
    count: int = 50
    cursor: dict[int, int] | None = None   # paging: first offset of the page in each partition
    direction: str = "next"          # with a cursor: next (from it) or prev (the page before it)
    isolation: str = DEFAULT_ISOLATION     # read_uncommitted | read_committed


@dataclass(frozen=True)
class BrowsePage:
    topic: str
    partitions: list[int]
    messages: list[MessageView]
    next_cursor: dict[int, int] | None
    prev_cursor: dict[int, int] | None      # the current page's start: "prev" reads before it
    notes: list[str] = field(default_factory=list)
    offsets: dict[int, tuple[int, int]] = field(default_factory=dict)   # {p: (log start, end)}
    isolation: str = DEFAULT_ISOLATION     # the end is the high watermark, or the LSO for read_committed
    registry_note: str = ""                # the schema registry's failure, said once for the page


def message_browse(*, cluster: Cluster, topic: str, query: BrowseQuery, mask: bool,
                   formats: dict | None = None) -> BrowsePage:
    if query.start not in START_MODES:
        raise InvalidInput(f"Start from one of {', '.join(START_MODES)}.")
    if query.isolation not in ISOLATION_LEVELS:
        raise InvalidInput(f"Read with one of {', '.join(ISOLATION_LEVELS)}.")
    isolation = ISOLATION_LEVELS[query.isolation]
    count = max(1, min(query.count, MAX_PAGE))
    presenter = presenter_for(cluster=cluster, topic=topic, mask=mask, formats=formats)
    with _reader(cluster, topic) as reader:
        partitions = _partitions(reader, query.partition)
        offsets = reader.offsets(partitions, isolation_level=isolation)
        notes: list[str] = []
        if query.count > MAX_PAGE:
            notes.append(f"A page holds at most {MAX_PAGE} records: showing {MAX_PAGE}, not {query.count:,}. "
                         "Page on with Older and Newer, or use Search to read or export more.")
        if query.cursor is not None:
            cursor = {p: _clamp(p, o, offsets, notes) for p, o in query.cursor.items() if p in offsets}
            backwards = query.direction == "prev"
        elif query.start == "newest":
            cursor, backwards = {p: offsets[p].high_watermark for p in partitions}, True
        elif query.start == "oldest":
            cursor, backwards = {p: offsets[p].log_start_offset for p in partitions}, False
        elif query.start == "offset":
            if query.offset is None:
                raise InvalidInput("Give an offset to start from.")
            cursor, backwards = {p: _clamp(p, query.offset, offsets, notes) for p in partitions}, False
        else:
            if query.timestamp_ms is None:
                raise InvalidInput("Give a date and time to start from.")
            found = reader.offsets_for_timestamp(query.timestamp_ms, partitions)
            cursor = {p: offsets[p].high_watermark if found[p] is None else found[p] for p in partitions}
            backwards = False
            if all(o is None for o in found.values()):
                notes.append(f"No record has a timestamp at or after {iso_time(query.timestamp_ms)}.")
        if backwards:
            records, start = _page_backward(reader, cursor, offsets, count, isolation)
        else:
            records, start = _page_forward(reader, cursor, offsets, count, isolation), cursor
        if isolation == READ_UNCOMMITTED:
            records = transaction_outcomes(reader, records, {p: o.high_watermark for p, o in offsets.items()})
    after = dict(start)
    for r in records:
        after[r.partition] = r.offset + 1
    has_more = any(after[p] < offsets[p].high_watermark for p in after)
    has_before = any(start[p] > offsets[p].log_start_offset for p in start)
    return BrowsePage(topic=topic, partitions=partitions, messages=[presenter.present(r) for r in records],
                      next_cursor=after if has_more else None, prev_cursor=start if has_before else None,
                      notes=notes, offsets={p: (o.log_start_offset, o.high_watermark) for p, o in offsets.items()},
                      isolation=query.isolation, registry_note=_registry_note(presenter))


def _registry_note(presenter: Presenter) -> str:
    """The registry's failure while decoding, as the page says it once (each record only notes it)."""
    failure = presenter.registry_failure
    if not failure:
        return ""
    return (f"{failure.rstrip('.')}: values that may be in Confluent's wire format are shown as they are, "
            f"not decoded with a schema. The console asks the registry again in "
            f"{schema_resolver.UNREACHABLE_SECONDS:.0f} s at the most.")


def _reader(cluster: Cluster, topic: str) -> AbstractContextManager[TopicReader]:
    return topic_reader(cluster=cluster, topic=topic)


def _partitions(reader: TopicReader, partition: int | None) -> list[int]:
    if partition is None:
        return reader.partitions
    if partition not in reader.partitions:
        raise InvalidInput(f"Topic {reader.topic} has no partition {partition} (it has {len(reader.partitions)}).")
    return [partition]


def _clamp(partition: int, offset: int, offsets, notes: list[str]) -> int:
    o = offsets[partition]
    if offset < o.log_start_offset:
        notes.append(f"Offset {offset} is before the start of partition {partition}; "
                     f"showing from its first offset, {o.log_start_offset}.")
        return o.log_start_offset
    if offset > o.high_watermark:
        notes.append(f"Offset {offset} is past the end of partition {partition}; "
                     f"showing from its high watermark, {o.high_watermark}.")
        return o.high_watermark
    return offset


def _order(record: ConsumedRecord):
    return (record.timestamp, record.partition, record.offset)


def _read(reader: TopicReader, starts: dict[int, int], ends: dict[int, int], per_partition: int,
          isolation: int | None = None) -> list[ConsumedRecord]:
    """Up to `per_partition` records of each partition from `starts` (inclusive) to `ends`.
    With an isolation level (the browser), transaction markers come as rows of their own in
    read_uncommitted, and records of aborted transactions are left out in read_committed."""
    progress = ReadProgress(positions=dict(starts), ends=dict(ends))
    taken: dict[int, list[ConsumedRecord]] = {p: [] for p in starts}
    # A page needs few records: small fetches, so a page of 100 partitions moves ~MBs, not 32 MB.
    for partition, _raw, info, batch in read_forward(reader, progress, partition_bytes=BROWSE_FETCH_BYTES,
                                                     isolation_level=isolation or READ_UNCOMMITTED):
        mine = taken[partition]
        if isolation == READ_UNCOMMITTED and info.control and len(mine) < per_partition \
                and starts[partition] <= info.base_offset < ends[partition]:
            mine.append(marker_record(partition, info))
        if batch is None or len(mine) >= per_partition:
            continue
        from_offset = progress.positions[partition]
        pending = isolation == READ_UNCOMMITTED and info.transactional
        for r in batch:
            if from_offset <= r.offset < ends[partition] and len(mine) < per_partition:
                record = to_consumed(partition, r, info.compression)
                mine.append(in_transaction(record, info) if pending else record)
        if len(mine) >= per_partition:
            progress.ends[partition] = progress.positions[partition]
    return [r for records in taken.values() for r in records]


def _page_forward(reader, cursor, offsets, count, isolation) -> list[ConsumedRecord]:
    ends = {p: offsets[p].high_watermark for p in cursor}
    return sorted(_read(reader, cursor, ends, count, isolation), key=_order)[:count]


def _page_backward(reader, cursor, offsets, count, isolation) -> tuple[list[ConsumedRecord], dict[int, int]]:
    """The `count` newest records before `cursor`; also the page's own start cursor."""
    starts = {p: max(offsets[p].log_start_offset, o - count) for p, o in cursor.items()}
    records = sorted(_read(reader, starts, dict(cursor), count, isolation), key=_order)[-count:]
    start = dict(cursor)
    for r in records:
        start[r.partition] = min(start[r.partition], r.offset)
    return records, start


# --- one record -----------------------------------------------------------------------------

NEIGHBOUR_WINDOWS = (8, 512)      # offsets looked back for the record before one (compaction leaves gaps)


@dataclass(frozen=True)
class RecordPage:
    """One record as its page shows it, with the offsets of the records around it in its
    partition (None: there is none, or none within NEIGHBOUR_WINDOWS)."""
    record: ConsumedRecord
    view: MessageView
    presenter: Presenter
    previous_offset: int | None
    next_offset: int | None
    log_start_offset: int
    high_watermark: int
    registry_note: str = ""


def message_get_raw(*, cluster: Cluster, topic: str, partition: int, offset: int) -> ConsumedRecord:
    with _reader(cluster, topic) as reader:
        _bounds(reader, partition, offset)
        found = _read(reader, {partition: offset}, {partition: offset + 1}, 1)
    return _the_record(found, partition, offset)


def _bounds(reader: TopicReader, partition: int, offset: int):
    if partition not in reader.partitions:          # a record's address, not a form's field
        raise NotFound(f"Topic {reader.topic} has no partition {partition} (it has {len(reader.partitions)}).")
    bounds = reader.offsets([partition])[partition]
    if not bounds.log_start_offset <= offset < bounds.high_watermark:
        raise NotFound(f"Partition {partition} holds offsets {bounds.log_start_offset} to "
                       f"{bounds.high_watermark - 1}; there is no offset {offset}.")
    return bounds


def _the_record(found: list[ConsumedRecord], partition: int, offset: int) -> ConsumedRecord:
    record = next((r for r in found if r.offset == offset), None)
    if record is None:
        raise NotFound(f"No record at offset {offset} of partition {partition} (compacted away or a transaction marker).")
    return record


def message_get(*, cluster: Cluster, topic: str, partition: int, offset: int, mask: bool,
                formats: dict | None = None) -> tuple[ConsumedRecord, MessageView, Presenter]:
    record = message_get_raw(cluster=cluster, topic=topic, partition=partition, offset=offset)
    presenter = presenter_for(cluster=cluster, topic=topic, mask=mask, formats=formats)
    return record, presenter.present(record), presenter


def message_detail(*, cluster: Cluster, topic: str, partition: int, offset: int, mask: bool,
                   formats: dict | None = None) -> RecordPage:
    """The record at `offset` and the offsets of its partition's records before and after it
    (the record page's previous and next links), read in one pass: from a few offsets before it
    to the record after it."""
    with _reader(cluster, topic) as reader:
        bounds = _bounds(reader, partition, offset)
        start, end = bounds.log_start_offset, bounds.high_watermark
        before = max(start, offset - NEIGHBOUR_WINDOWS[0])
        # Enough records to pass the record itself and reach the one after it, gaps or not.
        found = _read(reader, {partition: before}, {partition: end}, offset - before + 2)
        record = _the_record(found, partition, offset)
        previous = max((r.offset for r in found if r.offset < offset), default=None)
        if previous is None and before > start:      # a gap left by compaction: look further back
            further = max(start, offset - NEIGHBOUR_WINDOWS[1])
            previous = max((r.offset for r in _read(reader, {partition: further}, {partition: before},
                                                     before - further)), default=None)
    following = min((r.offset for r in found if r.offset > offset), default=None)
    presenter = presenter_for(cluster=cluster, topic=topic, mask=mask, formats=formats)
    view = presenter.present(record)
    return RecordPage(record=record, view=view, presenter=presenter, previous_offset=previous,
                      next_offset=following, log_start_offset=start, high_watermark=end,
                      registry_note=_registry_note(presenter))


def record_filter(*, spec: FilterSpec, presenter: Presenter) -> RecordFilter:
    """The compiled filter; for a masked reader it compares the masked text (see masking)."""
    if not presenter.masks:
        if presenter.decodes_framed_values:
            # Values in Confluent's framing are compared decoded (JSON-path filters on Avro and Protobuf).
            return RecordFilter(spec, transform=presenter.decoded_value, header_transform=lambda v: v)
        return RecordFilter(spec)
    return RecordFilter(spec, transform=presenter.compared_value, header_transform=presenter.compared_header)


# --- search, tail and export ------------------------------------------------------------------

@dataclass(frozen=True)
class SearchQuery:
    filter: FilterSpec = FilterSpec()
    partition: int | None = None
    start_offset: int | None = None
    end_offset: int | None = None
    positions: dict[int, int] | None = None    # continue a stopped search from here
    limits: SearchLimits = SearchLimits()
    isolation: str = DEFAULT_ISOLATION     # read_committed: up to the LSO, aborted transactions left out


def message_search(*, cluster: Cluster, topic: str, query: SearchQuery, mask: bool, formats: dict | None = None,
                   should_stop=lambda: False) -> Iterator[tuple[str, object]]:
    """Yield ("notes", [str]) once, then ("match", (record, view)), ("stats", SearchStats)
    and finally ("done", SearchStats); see scan.search.

    In read_uncommitted each match of a transactional batch is held until its outcome is known,
    then yielded with it (committed or aborted), so a match is sent once, final: a page or a
    JSON Lines reader never has to correct one. Its producer's marker is usually a few batches
    later in the same scan; matches still waiting when the scan ends are resolved by the
    browser's bounded look-ahead (open, or unknown past it), just before "done". So a
    transactional match may come after later matches of other producers."""
    started = time.monotonic()
    presenter = presenter_for(cluster=cluster, topic=topic, mask=mask, formats=formats)
    compiled = record_filter(spec=query.filter, presenter=presenter)
    with _reader(cluster, topic) as reader:
        isolation = ISOLATION_LEVELS[query.isolation]
        progress = initial_progress(reader, partitions=None if query.partition is None else [query.partition],
                                    start_offset=query.start_offset, end_offset=query.end_offset,
                                    start_time_ms=query.filter.start_time_ms, end_time_ms=query.filter.end_time_ms,
                                    positions=query.positions, isolation_level=isolation)
        yield "notes", list(progress.notes)
        held = PendingTransactions()
        for kind, item in search(reader, progress, compiled, query.limits, should_stop=should_stop,
                                 isolation_level=isolation):
            if kind == "marker":
                partition, marker = item
                for record in held.resolve(partition, marker):
                    yield "match", _presented(replace(record, transaction=outcome_of(marker)), presenter)
            elif kind == "match" and item.transaction == PENDING:
                held.hold(item.partition, item.producer_id, item)
            elif kind == "match":
                yield kind, _presented(item, presenter)
            else:
                if kind == "done" and held:
                    for record in _outcomes_after_the_scan(reader, held.release(), deadline=started + query.limits.max_seconds):
                        yield "match", _presented(record, presenter)
                yield kind, item


def _presented(record: ConsumedRecord, presenter: Presenter) -> tuple[ConsumedRecord, MessageView]:
    return record, presenter.present(record)


def _outcomes_after_the_scan(reader: TopicReader, records: list[ConsumedRecord], *,
                             deadline: float) -> list[ConsumedRecord]:
    """The held matches' outcomes, looked for within what is left of the search's time budget."""
    partitions = sorted({r.partition for r in records})
    ends = {p: o.high_watermark for p, o in reader.offsets(partitions).items()}
    return sorted(transaction_outcomes(reader, records, ends, deadline=deadline), key=lambda r: (r.partition, r.offset))
