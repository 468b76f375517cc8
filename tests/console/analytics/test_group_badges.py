"""Burrow-style badges in the consumer groups list, from the last analytics run's results."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import Consumer, TopicPartition
from django.urls import reverse

from console.analytics import lake as L
from console.analytics.jobs import lag
from tests.console.conftest import make_topic


def test_groups_list_shows_each_groups_lag_trend_with_its_reason(settings, tmp_path, cluster, engine_cluster,
                                                              unique_topic, viewer_client):
    settings.ANALYTICS_LAKE = str(tmp_path)
    topic = make_topic(cluster, unique_topic())
    stalled, unseen = unique_topic("stalled"), unique_topic("unseen")
    for group in (stalled, unseen):
        consumer = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": group})
        consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
        consumer.close()
    results = tmp_path / L.RESULTS / "group_status" / f"{L.CLUSTER}={cluster.pk}"
    results.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{L.GROUP: stalled, lag.STATUS: lag.STALL, lag.SEVERITY: 3, L.LAG: 7,
                                          lag.REASON: f"{topic}-0: commits stuck at offset 0"}]),
                   results / "part-0.parquet")

    page = viewer_client.get(reverse("groups:list", args=[cluster.pk]), {"q": topic[:40]}).content.decode()
    row = page.split(f'<tr data-group="{stalled}">')[1].split("</tr>")[0]
    assert 'data-status="STALL"' in row and f'title="{topic}-0: commits stuck at offset 0"' in row
    assert f'href="/clusters/{cluster.pk}/analytics/groups/{stalled}/"' in row and 'data-sort="3"' in row
    # A group the jobs have not judged says so in muted words: no badge, which would read as fine.
    unseen_row = page.split(f'<tr data-group="{unseen}">')[1].split("</tr>")[0]
    cell = unseen_row[unseen_row.index("data-analytics-status"):]
    assert "not judged yet</small>" in cell and 'class="badge' not in cell and "—" not in cell
    assert 'data-sort=""' in cell                            # sorted after every judged group
    # The column says what it is, and its heading explains it.
    heads = page[page.index('<table class="data" id="groups">'):page.index("<tbody>")]
    assert ">Lag trend</span></th>" in heads and ">Status</th>" not in heads
    assert "Burrow-style evaluation of the lag over the analytics lake's last 10 snapshots" in heads


def test_an_unreadable_result_costs_the_badges_not_the_page(db, tmp_path):
    from console.analytics.selectors import group_statuses
    from console.clusters.models import Cluster

    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    results = tmp_path / L.RESULTS / "group_status" / f"{L.CLUSTER}={cluster.pk}"
    results.mkdir(parents=True)
    (results / "part-0.parquet").write_bytes(b"not parquet at all")
    assert group_statuses(lake_url=str(tmp_path), cluster=cluster) == {}
    assert group_statuses(lake_url=str(tmp_path / "missing"), cluster=cluster) == {}
