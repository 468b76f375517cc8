"""The retention what-if and the topic-contents run against a real engine: the collector's
snapshots of a topic whose segments are known on disk, the what-if run by the real Spark
session, and the page and JSON API that show it. Kafka deletes whole segments, so the
estimate must name exactly the bytes of the segment files that retention would delete."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from confluent_kafka import Producer
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.analytics.collector import snapshot_collect
from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_run_execute, analytics_run_request, what_if_request
from tests.console.conftest import make_topic

KEYS = 5                      # records cycle through 5 keys: compaction keeps 5 of them
SEGMENT_BATCHES = 4           # segment.bytes holds exactly 4 one-record batches


def produce_one_by_one(bootstrap: str, topic: str, first: int, count: int) -> None:
    """One record per batch (flushed each time), all the same size: segments fill exactly."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    for i in range(first, first + count):
        producer.produce(topic, key=f"k{i % KEYS}".encode(), value=b"v" * 100, partition=0)
        assert producer.flush(30) == 0


def segment_files(engine, topic: str) -> list[Path]:
    [directory] = [d for d in engine.data_dir.glob(f"broker-*/{topic}-0") if d.is_dir()]
    return sorted(directory.glob("*.log"))


def kafka_deletes_for_bytes(sizes: list[int], retention_bytes: int) -> list[int]:
    """Kafka's rule on the real files: delete the oldest segment while the log without it still
    holds at least retention.bytes."""
    deleted, left = [], sum(sizes)
    for size in sizes:
        if left - size < retention_bytes:
            break
        deleted.append(size)
        left -= size
    return deleted


@pytest.fixture
def measured_topic(cluster, engine_cluster, unique_topic, settings, tmp_path):
    """A topic whose segments hold exactly SEGMENT_BATCHES batches, and three snapshots of it:
    10 records 10 minutes ago, still 10 five minutes ago, 19 now."""
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    probe = make_topic(cluster, unique_topic("probe"), configs={"retention.ms": "-1"})
    produce_one_by_one(engine_cluster.bootstrap, probe, 0, 1)
    [probe_file] = segment_files(engine_cluster, probe)
    batch = probe_file.stat().st_size
    topic = make_topic(cluster, unique_topic(), configs={"retention.ms": "-1",
                                                         "segment.bytes": str(SEGMENT_BATCHES * batch)})
    now = dt.datetime.now(dt.timezone.utc)
    produce_one_by_one(engine_cluster.bootstrap, topic, 0, 10)
    snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=now - dt.timedelta(minutes=10))
    snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=now - dt.timedelta(minutes=5))
    produce_one_by_one(engine_cluster.bootstrap, topic, 10, 9)
    snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=now)
    return topic, batch


def run_what_if(spark, cluster, actor, topic: str, **limits) -> dict:
    run = what_if_request(cluster=cluster, actor=actor, topic=topic, **limits)
    analytics_run_execute(run_id=run.pk, spark=spark)
    run.refresh_from_db()
    assert (run.state, run.error) == (AnalyticsRun.DONE, "")
    return run.result


def test_the_what_if_names_the_bytes_of_the_segments_kafka_would_delete(
        spark, cluster, engine_cluster, users, measured_topic, viewer_client):
    topic, batch = measured_topic
    sizes = [f.stat().st_size for f in segment_files(engine_cluster, topic)]
    assert sizes == [4 * batch, 4 * batch, 4 * batch, 4 * batch, 3 * batch]       # 19 records

    # retention.bytes: Kafka drops the three oldest segments (7 batches left >= 6, 3 would not be).
    by_size = run_what_if(spark, cluster, users["operator"], topic, retention_ms=None, retention_bytes=6 * batch)
    freed = sum(kafka_deletes_for_bytes(sizes, 6 * batch))
    assert freed == 3 * 4 * batch
    assert (by_size["size_bytes"], by_size["freed_bytes"], by_size["kept_bytes"]) == (sum(sizes), freed,
                                                                                    sum(sizes) - freed)
    [partition] = by_size["partitions"]
    assert (partition["segments"], partition["freed_segments"]) == (len(sizes), 3)

    # retention.ms = 7.5 min: the records older than that are the first 10 (the log end offset
    # stayed at 10 between the snapshots 10 and 5 minutes ago); only the two segments made
    # wholly of them go, the third still holds newer records.
    by_time = run_what_if(spark, cluster, users["operator"], topic, retention_ms=450_000, retention_bytes=-1)
    assert (by_time["freed_bytes"], by_time["kept_bytes"]) == (sizes[0] + sizes[1], sum(sizes[2:]))
    assert "whole segments" in by_time["method"]

    page = viewer_client.get(reverse("analytics:topic", args=[cluster.pk, topic])).content.decode()
    assert f'data-what-if-kept="{sum(sizes[2:])}" data-what-if-freed="{sizes[0] + sizes[1]}"' in page
    assert "<code>retention.ms</code> = 450000" in page and "Kafka deletes whole segments" in page
    assert 'id="what-if-form"' not in page                         # viewers cannot start one
    api = viewer_client.get(f"/api/clusters/{cluster.pk}/analytics/topics/{topic}/what-if").json()["what_if"]
    assert api["result"]["freed_bytes"] == sizes[0] + sizes[1] and api["params"]["retention_ms"] == 450_000


def test_the_contents_run_reads_the_topic_through_the_data_source(spark, cluster, users, measured_topic,
                                                                 viewer_client):
    topic, _ = measured_topic
    run = analytics_run_request(cluster=cluster, actor=users["operator"], kind=AnalyticsRun.RECORDS)
    analytics_run_execute(run_id=run.pk, spark=spark)
    run.refresh_from_db()
    assert (run.state, run.error) == (AnalyticsRun.DONE, ""), run.error
    assert set(run.job_seconds) == {"compaction", "record_sizes", "record_ages"}
    view = viewer_client.get(f"/api/clusters/{cluster.pk}/analytics/topics/{topic}").json()
    record = len("k0") + 100
    assert {k: view["compaction"][k] for k in ("records", "distinct_keys", "tombstones", "saved_bytes")} == {
        "records": 19, "distinct_keys": KEYS, "tombstones": 0, "saved_bytes": (19 - KEYS) * record}
    assert view["record_sizes"] == [{"topic": topic, "size_bin_bytes": 100, "count": 19}]
    page = viewer_client.get(reverse("analytics:cluster", args=[cluster.pk])).content.decode()
    assert f'data-topic="{topic}"' in page and 'data-run-kind="records">Topic contents:\n    last run' in page


@pytest.mark.parametrize("fields, message", [
    ({}, "Give retention.ms or retention.bytes"),
    ({"retention_ms": "-1", "retention_bytes": "-1"}, "Give retention.ms or retention.bytes"),
    ({"retention_ms": "a week"}, "“a week” is not a duration: write a number with a unit"),
    ({"retention_ms": "0"}, "retention.ms must be at least 1"),
    ({"retention_bytes": "-7"}, "-7 (-7 B) is below the smallest value allowed, -1 (-1 B)."),
    ({"retention_bytes": str(2**63)}, "is above the largest value allowed, 9223372036854775807 (8 EiB)."),
    ({"retention_ms": "1.5s", "retention_bytes": "1.5B"}, "“1.5B” is 1.5 bytes: a size is a whole number of bytes."),
])
def test_bad_what_if_input_gets_a_readable_message_and_starts_nothing(cluster, users, operator_client, fields,
                                                                      message, settings, tmp_path):
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    page = operator_client.post(reverse("analytics:what_if", args=[cluster.pk, "orders"]), fields)
    assert page.status_code == 400 and message in page.content.decode()
    api = operator_client.post(f"/api/clusters/{cluster.pk}/analytics/topics/orders/what-if", fields)
    assert api.status_code == 400 and message in api.json()["error"]
    assert not AnalyticsRun.objects.exists() and not AuditLogEntry.objects.exists()


def test_what_if_posts_are_role_checked_csrf_protected_and_audited(cluster, users, viewer_client, operator_client,
                                                                   settings, tmp_path):
    from django.test import Client
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    page_url = reverse("analytics:what_if", args=[cluster.pk, "orders"])
    api_url = f"/api/clusters/{cluster.pk}/analytics/topics/orders/what-if"
    fields = {"retention_ms": "3600000"}
    assert viewer_client.post(page_url, fields).status_code == 403
    assert viewer_client.post(api_url, fields).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["operator"])
    assert strict.post(page_url, fields).status_code == 403 and strict.post(api_url, fields).status_code == 403
    assert not AnalyticsRun.objects.exists()

    answer = operator_client.post(api_url, fields)
    assert answer.status_code == 202 and answer.json()["params"] == {
        "topic": "orders", "retention_ms": 3_600_000, "retention_bytes": None}
    busy = operator_client.post(page_url, {"retention_bytes": "1000"})
    assert busy.status_code == 400 and "A retention what-if run is already queued" in busy.content.decode()
    entries = list(AuditLogEntry.objects.filter(action="analytics.what_if").order_by("id"))
    assert [(e.actor_name, e.target, e.result, e.details.get("retention_ms")) for e in entries] == [
        ("operator", "orders", "ok", 3_600_000), ("operator", "orders", "failed", None)]


def test_what_if_takes_retention_in_a_persons_units():
    from console.analytics.forms import WhatIfForm

    form = WhatIfForm({"retention_ms": "3d", "retention_bytes": "1GiB"})
    assert form.is_valid(), form.errors
    assert (form.cleaned_data["retention_ms"], form.cleaned_data["retention_bytes"]) == (259_200_000, 1_073_741_824)
    assert 'data-human-unit="ms"' in str(form["retention_ms"]) and 'data-human-unit="bytes"' in str(form["retention_bytes"])
