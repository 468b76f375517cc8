"""The Transactions page, its JSON twin and the abort, against a real engine with transactions
made by confluent-kafka (tests/support/txn_clients.py); with the partitions' open transactions
read by each page (as in the other tests) and from the snapshot collected in the background
(a fake clock moves its time; nothing here waits on one)."""
from __future__ import annotations

import time

import pytest
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.kafka_gateway import cache, transaction_producers
from console.transactions.selectors import NOT_IN_COORDINATOR, PAST_TIMEOUT
from tests.console.transactions.conftest import HANGING_TOPIC, create_topics
from tests.support.snapshots import FakeClock, collection_held
from tests.support.txn_clients import committed_transaction, end_offsets, open_transaction

XSS_ID = '<img src=x onerror=alert(1)>"><script>alert(2)</script>'


def page_view(client, cluster):
    page = client.get(reverse("transactions:list", args=[cluster.pk]))
    assert page.status_code == 200
    return page, page.context["view"]


@pytest.fixture
def snapshots(monkeypatch, settings):
    """The partitions' open transactions collected in the background, on a clock the test moves."""
    fake = FakeClock()
    monkeypatch.setattr(cache, "TRANSACTION_PRODUCERS", cache.TransactionProducers(clock=fake))
    settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS = 30.0
    settings.TRANSACTIONS_PRODUCERS_WAIT_SECONDS = 60.0      # a generous bound for the first collection
    return fake


def _hanging_on(view, topic: str) -> list[tuple[str | None, int, str]]:
    return [(h.transactional_id, h.partition, h.reason) for h in view.hanging if h.topic == topic]


def test_page_lists_transactional_ids_oldest_open_first_and_flags_those_past_their_timeout(
        txn_cluster, txn_engine, viewer_client):
    create_topics(txn_engine.bootstrap, "txn-list", partitions=2)
    committed_transaction(txn_engine.bootstrap, "done", [("txn-list", 0, b"c")])
    late = open_transaction(txn_engine.bootstrap, "late", [("txn-list", 1, b"l")], timeout_ms=1000)
    time.sleep(0.05)
    fresh = open_transaction(txn_engine.bootstrap, "fresh", [("txn-list", 0, b"f"), ("txn-list", 1, b"g")])
    try:
        time.sleep(1.5)        # past "late"'s timeout; this coordinator only aborts hourly
        page, view = page_view(viewer_client, txn_cluster)
        rows = {t.transactional_id: t for t in view.transactions}
        assert [t.transactional_id for t in view.ongoing] == ["late", "fresh"]       # oldest first
        assert list(rows).index("done") > list(rows).index("fresh")
        late_row, fresh_row = rows["late"], rows["fresh"]
        assert (late_row.state, late_row.timeout_ms, late_row.partitions, late_row.hanging) == (
            "Ongoing", 1000, (("txn-list", 1),), True)
        assert (fresh_row.state, fresh_row.timeout_ms, fresh_row.hanging) == ("Ongoing", 600000, False)
        assert fresh_row.partitions == (("txn-list", 0), ("txn-list", 1))
        assert fresh_row.producer_id >= 0 and fresh_row.producer_epoch >= 0 and fresh_row.age_ms >= 1000
        assert rows["done"].state == "CompleteCommit" and not rows["done"].hanging
        # On the partitions: "late" hangs (its coordinator should have aborted it); "fresh" does not.
        hanging = {(h.transactional_id, h.topic, h.partition): h for h in view.hanging}
        assert hanging[("late", "txn-list", 1)].reason == PAST_TIMEOUT
        assert not any(h.transactional_id == "fresh" for h in view.hanging)
        # The partitions table lists every open transaction the sentence counts, hanging or not.
        listed = {(t.transactional_id, t.topic, t.partition): t.hanging for t in view.on_partitions
                  if t.topic == "txn-list"}
        assert listed == {("late", "txn-list", 1): True, ("fresh", "txn-list", 0): False,
                          ("fresh", "txn-list", 1): False}
        body = page.content.decode()
        table = body[body.index('id="partition-transactions"'):body.index("</table>", body.index('id="partition-transactions"'))]
        assert table.count("<tr data-partition=") == view.open_on_partitions
        assert f"{view.open_on_partitions} open transaction" in body
        assert 'data-partition="txn-list-0"' in table and "Its coordinator will finish it" in table
        # No marker written for "fresh" yet: its coordinator epoch (Kafka's -1) reads as a dash.
        fresh_on_0 = table[table.index('data-partition="txn-list-0"'):]
        fresh_on_0 = fresh_on_0[:fresh_on_0.index("</tr>")]
        assert [h.coordinator_epoch for h in view.on_partitions if h.partition == 0 and h.topic == "txn-list"] == [-1]
        assert '<td class="num" data-label="Coordinator epoch"><span title="No transaction marker of this producer' \
               ' on the partition yet">—</span></td>' in fresh_on_0
        assert 'data-transactional-id="late" data-state="Ongoing" data-hanging' in body
        assert "data-admin-action" not in body           # a viewer gets no abort link

        api = viewer_client.get(reverse("api:transactions", args=[txn_cluster.pk])).json()
        listed = {t["transactional_id"]: t for t in api["transactions"]}
        assert listed["late"]["hanging"] is True and listed["fresh"]["partitions"] == [["txn-list", 0], ["txn-list", 1]]
        assert {(h["transactional_id"], h["reason"]) for h in api["hanging"]} >= {("late", PAST_TIMEOUT)}
    finally:
        fresh.abort_transaction(60)
        late.abort_transaction(60)


def test_the_page_finds_suspects_in_the_snapshot_reads_them_again_live_and_never_aborts_on_the_snapshot(
        txn_cluster, txn_engine, console_admin_client, snapshots):
    create_topics(txn_engine.bootstrap, "txn-snapshot", partitions=2)
    stuck = open_transaction(txn_engine.bootstrap, "snap-stuck", [("txn-snapshot", 0, b"s")], timeout_ms=1000)
    late = None
    try:
        time.sleep(1.5)        # past its timeout; this coordinator only aborts hourly
        page, view = page_view(console_admin_client, txn_cluster)     # the first collection is waited for
        assert cache.TRANSACTION_PRODUCERS.collections == 1
        assert (view.producers_age.age_seconds, view.producers_age.max_age_seconds) == (0, 30.0)
        assert _hanging_on(view, "txn-snapshot") == [("snap-stuck", 0, PAST_TIMEOUT)]
        [found] = [h for h in view.hanging if h.topic == "txn-snapshot"]
        assert "Open transactions on partitions as of" in page.content.decode()

        # Since the snapshot: its producer ends the transaction, and another one opens.
        stuck.abort_transaction(60)
        late = open_transaction(txn_engine.bootstrap, "snap-late", [("txn-snapshot", 1, b"l")], timeout_ms=1000)
        time.sleep(1.5)
        snapshots.now += 10                # young: the same snapshot, 10 s old
        page, view = page_view(console_admin_client, txn_cluster)
        assert cache.TRANSACTION_PRODUCERS.collections == 1 and view.producers_age.age_seconds == 10
        assert _hanging_on(view, "txn-snapshot") == []      # the suspect was read again: gone; the new one unseen
        assert "renewed when older than 30 s." in page.content.decode()
        api = console_admin_client.get(reverse("api:transactions", args=[txn_cluster.pk])).json()
        assert api["producers_age"]["age_seconds"] == 10 and api["producers_age"]["max_age_seconds"] == 30.0
        assert not [h for h in api["hanging"] if h["topic"] == "txn-snapshot"]

        # The snapshot still holds the ended transaction open: the abort reads the partition itself.
        abort_url = reverse("transactions:abort", args=[txn_cluster.pk])
        query = {"topic": "txn-snapshot", "partition": 0, "start_offset": found.start_offset}
        assert console_admin_client.get(abort_url, query).status_code == 400
        assert console_admin_client.post(abort_url, query).status_code == 400
        assert end_offsets(txn_engine.bootstrap, "txn-snapshot", 0) == (2, 2)     # the record and its ABORT only
        assert AuditLogEntry.objects.get(action="transaction.abort").result == AuditLogEntry.FAILED

        snapshots.now += 25                # 35 s: too old to show; the page waits for the renewal
        _, renewed = page_view(console_admin_client, txn_cluster)
        assert cache.TRANSACTION_PRODUCERS.collections == 2
        assert renewed.producers_age.age_seconds == 0 and not renewed.producers_age.renewing
        assert _hanging_on(renewed, "txn-snapshot") == [("snap-late", 1, PAST_TIMEOUT)]
    finally:
        if late is not None:
            late.abort_transaction(60)


def test_while_the_first_collection_runs_the_page_says_so_and_flags_nothing(
        txn_cluster, viewer_client, snapshots, settings, monkeypatch):
    settings.TRANSACTIONS_PRODUCERS_WAIT_SECONDS = 0.0
    with collection_held(monkeypatch, transaction_producers):
        page, view = page_view(viewer_client, txn_cluster)
        assert view.producers_age.collected_at is None and view.hanging == [] and view.open_on_partitions == 0
        assert view.producers_age.renewing and 'data-renewing' in page.content.decode()
        assert "Open transactions on partitions are being collected: they show here as soon" in page.content.decode()
        api = viewer_client.get(reverse("api:transactions", args=[txn_cluster.pk])).json()
        assert api["producers_age"]["collected_at"] is None and api["hanging"] == []
    cache.TRANSACTION_PRODUCERS.wait(cache.cache_key(txn_cluster.connection_settings()), timeout=60)
    _, view = page_view(viewer_client, txn_cluster)
    assert view.producers_age.collected_at is not None and view.warnings == []
    assert _hanging_on(view, HANGING_TOPIC) == [(None, 0, NOT_IN_COORDINATOR)]


def test_admin_aborts_a_hanging_transaction_with_a_confirmation_and_an_audit_row(
        txn_cluster, txn_engine, console_admin_client):
    stable, high = end_offsets(txn_engine.bootstrap, HANGING_TOPIC, 0)
    assert (stable, high) == (1, 4)       # "before" at 0, the hanging transaction's 3 records from 1
    page, view = page_view(console_admin_client, txn_cluster)
    [lost] = [h for h in view.hanging if h.topic == HANGING_TOPIC]
    assert (lost.partition, lost.start_offset, lost.transactional_id, lost.reason) == (0, 1, None, NOT_IN_COORDINATOR)
    abort_url = reverse("transactions:abort", args=[txn_cluster.pk])
    assert f"{abort_url}?topic={HANGING_TOPIC}&amp;partition=0&amp;start_offset=1" in page.content.decode()

    query = {"topic": HANGING_TOPIC, "partition": 0, "start_offset": 1}
    confirm = console_admin_client.get(abort_url, query)
    assert confirm.status_code == 200 and confirm.context["found"].producer_id == lost.producer_id
    assert end_offsets(txn_engine.bootstrap, HANGING_TOPIC, 0) == (1, 4)     # asking changed nothing

    done = console_admin_client.post(abort_url, query)
    assert done.status_code == 302 and done["Location"] == reverse("transactions:list", args=[txn_cluster.pk])
    assert end_offsets(txn_engine.bootstrap, HANGING_TOPIC, 0) == (5, 5)     # the ABORT marker at 4
    entry = AuditLogEntry.objects.get(action="transaction.abort")
    assert (entry.result, entry.target, entry.actor_name) == (AuditLogEntry.OK, f"{HANGING_TOPIC}-0", "admin")
    assert entry.details["producer_id"] == lost.producer_id and entry.details["start_offset"] == 1
    _, after = page_view(console_admin_client, txn_cluster)
    assert not [h for h in after.hanging if h.topic == HANGING_TOPIC]

    # Once gone, a second abort is refused (and audited as failed).
    again = console_admin_client.post(reverse("api:transaction_abort", args=[txn_cluster.pk]), query)
    assert again.status_code == 400 and "No hanging transaction" in again.json()["error"]
    assert AuditLogEntry.objects.filter(action="transaction.abort", result=AuditLogEntry.FAILED).count() == 1


def test_a_transaction_its_coordinator_will_finish_is_not_aborted(txn_cluster, txn_engine, console_admin_client):
    create_topics(txn_engine.bootstrap, "txn-healthy")
    producer = open_transaction(txn_engine.bootstrap, "healthy", [("txn-healthy", 0, b"a")])
    try:
        answer = console_admin_client.post(reverse("api:transaction_abort", args=[txn_cluster.pk]),
                                           {"topic": "txn-healthy", "partition": 0, "start_offset": 0})
        assert answer.status_code == 400
        assert end_offsets(txn_engine.bootstrap, "txn-healthy", 0) == (0, 1)      # still open
        producer.commit_transaction(60)
        assert end_offsets(txn_engine.bootstrap, "txn-healthy", 0) == (2, 2)
    finally:
        del producer


def test_transactional_ids_are_escaped(txn_cluster, txn_engine, viewer_client):
    create_topics(txn_engine.bootstrap, "txn-xss")
    committed_transaction(txn_engine.bootstrap, XSS_ID, [("txn-xss", 0, b"x")])
    page, view = page_view(viewer_client, txn_cluster)
    assert XSS_ID in {t.transactional_id for t in view.transactions}
    body = page.content.decode()
    assert "<img src=x" not in body and "<script>alert(2)" not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body


def test_ids_of_every_coordinator_of_a_three_broker_cluster_are_listed(cluster, engine_cluster, viewer_client):
    from console.clusters.gateway import cluster_gateway
    create_topics(engine_cluster.bootstrap, "txn-three")
    ids = [f"three-{i}" for i in range(8)]
    for transactional_id in ids:
        committed_transaction(engine_cluster.bootstrap, transactional_id, [("txn-three", 0, b"v")])
    _, view = page_view(viewer_client, cluster)
    rows = {t.transactional_id: t for t in view.transactions if t.transactional_id in ids}
    assert set(rows) == set(ids) and {r.state for r in rows.values()} == {"CompleteCommit"}
    with cluster_gateway(cluster) as gw:
        coordinators = gw.transactions.find_coordinators(ids).found
    assert {i: rows[i].coordinator for i in ids} == coordinators
    assert all(r.error is None and r.producer_id >= 0 for r in rows.values())
