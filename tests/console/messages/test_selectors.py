"""Browse and search against a real engine, with records written by real clients."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaProducer

from console.messages import selectors
from console.messages.filters import FilterSpec
from console.messages.models import MaskingRule
from console.messages.scan import SearchLimits
from console.messages.selectors import BrowseQuery, SearchQuery
from tests.console.messages.conftest import create_topic, produce_confluent

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000


def _records(client: str, codec: str, n: int = 20) -> list[dict]:
    return [{"key": f"{client}-{codec}-{i}".encode(), "value": f'{{"i": {i}, "codec": "{codec}"}}'.encode(),
             "headers": [("trace", f"t{i}".encode()), ("bin", b"\x00\xff")], "timestamp": BASE_TS + i * 1000}
            for i in range(n)]


@pytest.fixture(scope="module")
def codec_topics(engine_cluster):
    """A one-partition topic per client and codec, each holding _records() in order."""
    topics = {}
    for codec in CODECS:
        name = create_topic(engine_cluster.bootstrap, f"msg-ck-{codec}")
        produce_confluent(engine_cluster.bootstrap, name, _records("ck", codec), **{"compression.type": codec})
        topics[("ck", codec)] = name
        name = create_topic(engine_cluster.bootstrap, f"msg-kp-{codec}")
        producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap,
                                 compression_type=None if codec == "none" else codec, linger_ms=5)
        for r in _records("kp", codec):
            producer.send(name, key=r["key"], value=r["value"], headers=r["headers"], timestamp_ms=r["timestamp"])
        producer.flush()
        producer.close()
        topics[("kp", codec)] = name
    return topics


@pytest.mark.parametrize("client", ["ck", "kp"])
@pytest.mark.parametrize("codec", CODECS)
def test_browse_by_offset_and_by_timestamp_returns_exactly_what_was_produced(cluster, codec_topics, client, codec):
    topic = codec_topics[(client, codec)]
    expected = _records(client, codec)
    page = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                    query=BrowseQuery(partition=0, start="offset", offset=5, count=10))
    assert [(m.offset, m.key.text, m.value.text, m.timestamp) for m in page.messages] == [
        (i, r["key"].decode(), r["value"].decode(), r["timestamp"]) for i, r in enumerate(expected) if 5 <= i < 15]
    first = page.messages[0]
    assert [(n, d.text) for n, d in first.headers] == [("trace", "t5"), ("bin", "00ff")]
    assert first.compression == codec and first.timestamp_type == "CreateTime"

    by_time = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                       query=BrowseQuery(start="timestamp", timestamp_ms=BASE_TS + 12_000, count=50))
    assert [m.offset for m in by_time.messages] == list(range(12, 20))
    too_late = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                        query=BrowseQuery(start="timestamp", timestamp_ms=BASE_TS + 60_000))
    assert too_late.messages == [] and too_late.notes == ["No record has a timestamp at or after 2023-11-14T22:14:20.000Z."]


@pytest.mark.parametrize("client", ["ck", "kp"])
@pytest.mark.parametrize("codec", CODECS)
def test_search_reads_every_codec_from_both_clients(cluster, codec_topics, client, codec):
    events = list(selectors.message_search(
        cluster=cluster, topic=codec_topics[(client, codec)], mask=False,
        query=SearchQuery(filter=FilterSpec(json_path="codec", json_op="==", json_literal=f'"{codec}"'))))
    found = [(r.offset, r.key, r.value, r.headers, r.timestamp) for kind, (r, _v) in
             (e for e in events if e[0] == "match")]
    assert found == [(i, r["key"], r["value"], tuple(r["headers"]), r["timestamp"])
                     for i, r in enumerate(_records(client, codec))]
    assert events[-1][1].records_scanned == 20


def test_search_by_time_and_offset_ranges(cluster, codec_topics):
    topic = codec_topics[("kp", "lz4")]

    def offsets(**query) -> tuple[list[int], int]:
        events = list(selectors.message_search(cluster=cluster, topic=topic, mask=False, query=SearchQuery(**query)))
        return [r.offset for k, (r, _v) in (e for e in events if e[0] == "match")], events[-1][1].records_scanned
    by_time = FilterSpec(start_time_ms=BASE_TS + 5_000, end_time_ms=BASE_TS + 9_000)
    assert offsets(filter=by_time) == ([5, 6, 7, 8, 9], 5)      # ListOffsets bounds the scan itself
    assert offsets(start_offset=3, end_offset=6) == ([3, 4, 5, 6], 4)
    assert offsets(filter=by_time, start_offset=7) == ([7, 8, 9], 3)


def test_paging_forwards_and_backwards_and_clamping(cluster, codec_topics):
    topic = codec_topics[("ck", "none")]
    newest = selectors.message_browse(cluster=cluster, topic=topic, mask=False, query=BrowseQuery(count=6))
    assert [m.offset for m in newest.messages] == list(range(14, 20)) and newest.next_cursor is None
    older = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                     query=BrowseQuery(count=6, cursor=newest.prev_cursor, direction="prev"))
    assert [m.offset for m in older.messages] == list(range(8, 14))
    newer = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                     query=BrowseQuery(count=6, cursor=older.next_cursor))
    assert [m.offset for m in newer.messages] == list(range(14, 20))
    past = selectors.message_browse(cluster=cluster, topic=topic, mask=False,
                                    query=BrowseQuery(start="offset", offset=999, count=6))
    assert past.messages == [] and "past the end of partition 0" in past.notes[0] and "20" in past.notes[0]


PLANTED = [(p, 7_000 + 11 * p + 13 * k) for p in range(4) for k in range(3)]


@pytest.fixture(scope="module")
def big_topic(engine_cluster):
    """200k records of ~100 bytes over 4 partitions; a few carry the needle."""
    name = create_topic(engine_cluster.bootstrap, "msg-search-200k", partitions=4)
    planted = set(PLANTED)
    filler = b"x" * 70

    def records():
        for p in range(4):
            for i in range(50_000):
                mark = b"NEEDLE-%d-%d" % (p, i) if (p, i) in planted else b"plain"
                yield {"partition": p, "key": b"k%d" % i,
                       "value": b'{"n": %d, "tag": "%s", "pad": "%s"}' % (i, mark, filler)}
    produce_confluent(engine_cluster.bootstrap, name, records(), **{"linger.ms": 50, "batch.num.messages": 2000})
    return name


def test_search_finds_exactly_the_planted_records_and_its_stats_add_up(cluster, big_topic):
    events = list(selectors.message_search(cluster=cluster, topic=big_topic, mask=False, query=SearchQuery(
        filter=FilterSpec(field="value", mode="substring", text="NEEDLE"))))
    matches = sorted((record.partition, record.offset) for kind, (record, _view) in
                     ((k, i) for k, i in events if k == "match"))
    assert matches == sorted(PLANTED)
    kind, stats = events[-1]
    assert kind == "done" and stats.done and not stats.stopped_by
    assert stats.records_scanned == 200_000 and stats.matches == len(PLANTED)
    assert stats.positions == stats.ends == {p: 50_000 for p in range(4)}
    assert stats.batches_skipped > 0        # the batch pre-check kept most batches undecoded


def test_json_path_search_and_a_limit_that_continues_where_it_stopped(cluster, big_topic):
    spec = FilterSpec(json_path="n", json_op="<", json_literal="3")
    first = list(selectors.message_search(cluster=cluster, topic=big_topic, mask=False, query=SearchQuery(
        filter=spec, partition=1, limits=SearchLimits(max_records=20_000))))
    stats = first[-1][1]
    assert stats.stopped_by == "records limit" and not stats.done
    assert [r.offset for k, (r, _v) in (e for e in first if e[0] == "match")] == [0, 1, 2]
    stopped_at = stats.positions[1]
    assert 20_000 <= stopped_at < 50_000
    rest = list(selectors.message_search(cluster=cluster, topic=big_topic, mask=False, query=SearchQuery(
        filter=FilterSpec(json_path="n", json_op=">", json_literal="49997"), partition=1,
        positions={1: stopped_at})))
    assert [r.offset for k, (r, _v) in (e for e in rest if e[0] == "match")] == [49_998, 49_999]
    assert rest[-1][1].records_scanned == 50_000 - stopped_at


def test_search_stop_ends_the_scan_with_exact_positions(cluster, big_topic):
    started = time.monotonic()
    stops = iter([False, False, True])
    events = list(selectors.message_search(cluster=cluster, topic=big_topic, mask=False, query=SearchQuery(
        filter=FilterSpec(field="key", mode="regex", text="^k1$")), should_stop=lambda: next(stops, True)))
    stats = events[-1][1]
    assert stats.stopped_by == "stop" and 0 < stats.records_scanned < 200_000
    assert stats.records_scanned == sum(stats.positions.values())
    assert time.monotonic() - started < 120   # a bound for a hang, not a speed check


def test_viewer_sees_masked_values_and_cannot_search_what_is_masked(cluster, engine_cluster):
    topic = create_topic(engine_cluster.bootstrap, "msg-masked")
    produce_confluent(engine_cluster.bootstrap, topic, [
        {"value": b'{"card": {"number": "4111-1111"}, "email": "ann@example.com"}'}])
    MaskingRule.objects.create(cluster=cluster, topic=topic, kind="json_field", pattern="card.number")
    MaskingRule.objects.create(cluster=cluster, topic=topic, kind="regex", pattern=r"[a-z]+@example\.com")
    masked = selectors.message_browse(cluster=cluster, topic=topic, mask=True, query=BrowseQuery()).messages[0]
    assert "4111" not in masked.value.text and "ann@" not in masked.value.text and "***" in masked.value.text
    plain = selectors.message_browse(cluster=cluster, topic=topic, mask=False, query=BrowseQuery()).messages[0]
    assert "4111-1111" in plain.value.text

    def hits(mask: bool) -> int:
        return sum(1 for k, _ in selectors.message_search(
            cluster=cluster, topic=topic, mask=mask,
            query=SearchQuery(filter=FilterSpec(mode="substring", text="4111"))) if k == "match")
    assert hits(mask=False) == 1 and hits(mask=True) == 0


def test_large_values_are_previewed(cluster, engine_cluster):
    topic = create_topic(engine_cluster.bootstrap, "msg-large", config={"max.message.bytes": str(4 << 20)})
    big = b"A" * (1 << 20) + b"END"
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": big}], **{"message.max.bytes": 4 << 20})
    record, view, presenter = selectors.message_get(cluster=cluster, topic=topic, partition=0, offset=0, mask=False)
    assert view.value_truncated and view.value_size == len(big) and len(view.value.text) < 100_000
    assert presenter.raw_value(record) == (big, "bin")


def test_tail_caps_what_it_shows_and_counts_the_rest(cluster, engine_cluster):
    from console.messages.filters import RecordFilter
    from console.messages.tail import tail
    topic = create_topic(engine_cluster.bootstrap, "msg-tail-cap", partitions=2)
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"before"}])
    events = []
    with selectors.topic_reader(cluster=cluster, topic=topic) as reader:
        for kind, item in tail(reader, RecordFilter(FilterSpec(mode="substring", text="new")), max_shown_per_second=1,
                               should_stop=lambda: bool(events) and events[-1][0] == "stats"
                               and events[-1][1]["matches"] >= 200, is_paused=lambda: False):
            events.append((kind, item))
            if kind == "started":
                produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"new %d" % i} for i in range(200)]
                                  + [{"value": b"other"}] * 50)
    assert events[-1][0] == "stopped"
    stats = [item for kind, item in events if kind == "stats"][-1]
    shown = [item for kind, item in events if kind == "record"]
    assert stats["matches"] == 200 and stats["records_seen"] == 250
    assert stats["shown"] == len(shown) >= 1 and stats["not_shown"] == 200 - len(shown) > 0
    assert all(r.value.startswith(b"new") for r in shown)


def test_a_batch_larger_than_a_partitions_share_is_still_read(cluster, engine_cluster):
    """Partition 1's record is bigger than browse's per-partition fetch size; partition 0's
    comes first in the answer, so only a fetch of partition 1 alone can return it (KIP-74)."""
    topic = create_topic(engine_cluster.bootstrap, "msg-big-batch", partitions=2,
                         config={"max.message.bytes": str(4 << 20)})
    produce_confluent(engine_cluster.bootstrap, topic, [{"partition": 0, "value": b"small"},
                                                        {"partition": 1, "value": b"B" * (2 << 20)}],
                      **{"message.max.bytes": 4 << 20})
    page = selectors.message_browse(cluster=cluster, topic=topic, mask=False, query=BrowseQuery(start="oldest"))
    assert sorted((m.partition, m.value_size) for m in page.messages) == [(0, 5), (1, 2 << 20)]
    assert page.notes == []
