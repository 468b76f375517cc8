"""Transactions where the console reads data: the message browser's isolation switch, and
consumer lag from the last stable offset beside the high watermark's."""
from __future__ import annotations

import json

from django.urls import reverse

from tests.console.groups.conftest import commit
from tests.console.transactions.conftest import create_topics
from tests.support.txn_clients import committed_transaction, open_transaction

TOPIC = "txn-browse"


def browse(client, cluster, **params):
    page = client.get(reverse("messages:browse", args=[cluster.pk, TOPIC]),
                      {"partition": "0", "start": "oldest", "count": "50", **params})
    assert page.status_code == 200, page.content
    return page


def rows(page) -> list[tuple]:
    return [(m.offset, m.control or (m.value.text, m.transaction)) for m in page.context["result"].messages]


def test_isolation_switch_shows_or_hides_aborted_records_and_markers(txn_cluster, txn_engine, viewer_client):
    create_topics(txn_engine.bootstrap, TOPIC)
    committed_transaction(txn_engine.bootstrap, "browse-a", [(TOPIC, 0, b"kept-1"), (TOPIC, 0, b"kept-2")])
    committed_transaction(txn_engine.bootstrap, "browse-a", [(TOPIC, 0, b"dropped")], commit=False)
    producer = open_transaction(txn_engine.bootstrap, "browse-b", [(TOPIC, 0, b"pending")])
    try:
        uncommitted = browse(viewer_client, txn_cluster)      # the default
        assert rows(uncommitted) == [(0, ("kept-1", "committed")), (1, ("kept-2", "committed")), (2, "COMMIT"),
                                     (3, ("dropped", "aborted")), (4, "ABORT"), (5, ("pending", "open"))]
        body = uncommitted.content.decode()
        assert 'data-offset="3" data-transaction="aborted"' in body and ">aborted</span>" in body
        assert 'data-control="ABORT"' in body and "ABORT marker" in body and "read_uncommitted" in body

        committed = browse(viewer_client, txn_cluster, isolation="read_committed")
        assert rows(committed) == [(0, ("kept-1", "")), (1, ("kept-2", ""))]
        assert committed.context["result"].offsets[0] == (0, 5)      # ends at the last stable offset
        assert "data-control" not in committed.content.decode()

        api = viewer_client.get(reverse("api:messages", args=[txn_cluster.pk, TOPIC]),
                                {"partition": "0", "start": "oldest", "isolation": "read_committed"}).json()
        assert [m["value"]["text"] for m in api["messages"]] == ["kept-1", "kept-2"]
        assert api["isolation"] == "read_committed"
        for isolation, found in (("read_uncommitted", ["dropped"]), ("read_committed", [])):
            search = viewer_client.get(reverse("api:message_search", args=[txn_cluster.pk, TOPIC]),
                                       {"field": "value", "text": "drop", "isolation": isolation})
            lines = [json.loads(line) for line in b"".join(search.streaming_content).splitlines()]
            assert [m["message"]["value"]["text"] for m in lines if m["type"] == "match"] == found, isolation
            assert lines[-1]["stats"]["ends"] == {"0": 6 if isolation == "read_uncommitted" else 5}
        bad = viewer_client.get(reverse("messages:browse", args=[txn_cluster.pk, TOPIC]), {"isolation": "dirty"})
        assert bad.status_code == 400 and "read_committed" in bad.content.decode()
    finally:
        producer.commit_transaction(60)
    newest = browse(viewer_client, txn_cluster, start="newest")
    assert rows(newest)[-2:] == [(5, ("pending", "committed")), (6, "COMMIT")]


def test_group_page_shows_lag_from_the_high_watermark_and_from_the_last_stable_offset(
        txn_cluster, txn_engine, viewer_client):
    create_topics(txn_engine.bootstrap, "txn-lag")
    committed_transaction(txn_engine.bootstrap, "lag-a", [("txn-lag", 0, b"1"), ("txn-lag", 0, b"2")])
    producer = open_transaction(txn_engine.bootstrap, "lag-b", [("txn-lag", 0, b"3"), ("txn-lag", 0, b"4")])
    try:
        commit(txn_cluster, "txn-lag-group", {("txn-lag", 0): 1})
        page = viewer_client.get(reverse("groups:detail", args=[txn_cluster.pk, "txn-lag-group"]))
        [row] = page.context["view"].partitions
        # 0-1 committed data, 2 its COMMIT marker, 3-4 the open transaction: LSO 3, high watermark 5.
        assert (row.committed_offset, row.log_end_offset, row.lag, row.last_stable_offset, row.lag_read_committed) == (
            1, 5, 4, 3, 2)
        assert page.context["view"].total_lag_read_committed == 2
        assert 'id="lag-basis"' in page.content.decode() and "high watermark" in page.content.decode()
    finally:
        producer.abort_transaction(60)
